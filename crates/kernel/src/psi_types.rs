//! The state of pressure stall information (`include/linux/psi_types.h`): the 1 ms buckets of
//! stalled time over a 1 s window, totals and running averages. The accounting that feeds it and
//! the triggers lmkd waits on are in `psi`. Other clients' triggers (`PsiMonitor`) live here.

use mobmem_engine::Nanos;
use serde::Serialize;

pub const BUCKET_NS: Nanos = 1_000_000;
const NBUCKETS: u64 = 1000;
const AVG_PERIOD_NS: Nanos = 2_000_000_000;

#[derive(Clone, Debug)]
pub struct Psi {
    some: Vec<u32>,
    full: Vec<u32>,
    /// Newest bucket index seen; buckets (head-999..=head) are the window.
    head: u64,
    win_some: u64,
    win_full: u64,
    pub(crate) some_total_ns: u64,
    pub(crate) full_total_ns: u64,
    pub avg10: [f64; 2],
    pub(crate) avg60: [f64; 2],
    avg_next: Nanos,
    avg_last_total: [u64; 2],
    /// Last time a trigger fired (a trigger fires at most once per window).
    pub(crate) last_trigger: Option<Nanos>,
    /// Triggers registered by other clients than lmkd (ActivityManager's LowMemDetector).
    monitors: Vec<PsiMonitor>,
}

/// A PSI trigger a userspace client registered (`"some 15000 1000000"` written to
/// `/proc/pressure/memory`, then polled): it fires when the stall time of its kind within the
/// window reaches its threshold, at most once per window (`psi.c` `update_triggers`). The window
/// is the ring's 1 s, which is what Android's clients ask for.
#[derive(Clone, Debug, PartialEq)]
pub struct PsiMonitor {
    /// `full` (every user task stalled) rather than `some`.
    pub full: bool,
    pub threshold_ns: Nanos,
    /// When it last fired.
    pub last_event: Option<Nanos>,
    pub events: u64,
}

#[derive(Clone, Copy, Debug, Serialize, Default, PartialEq)]
pub struct PsiSnapshot {
    pub(crate) some_avg10: f64,
    pub(crate) some_avg60: f64,
    pub(crate) some_total_us: u64,
    pub(crate) full_avg10: f64,
    pub(crate) full_avg60: f64,
    pub(crate) full_total_us: u64,
}

impl Default for Psi {
    fn default() -> Self {
        Self::new()
    }
}

impl Psi {
    pub fn new() -> Self {
        Self {
            some: vec![0; NBUCKETS as usize],
            full: vec![0; NBUCKETS as usize],
            head: 0,
            win_some: 0,
            win_full: 0,
            some_total_ns: 0,
            full_total_ns: 0,
            avg10: [0.0; 2],
            avg60: [0.0; 2],
            avg_next: AVG_PERIOD_NS,
            avg_last_total: [0; 2],
            last_trigger: None,
            monitors: Vec::new(),
        }
    }

    /// Move the window's newest bucket to `b`, expiring buckets that fall out.
    fn advance_bucket(&mut self, b: u64) {
        if b <= self.head {
            return;
        }
        let steps = (b - self.head).min(NBUCKETS);
        for k in 1..=steps {
            let i = ((self.head + k) % NBUCKETS) as usize;
            self.win_some -= self.some[i] as u64;
            self.win_full -= self.full[i] as u64;
            self.some[i] = 0;
            self.full[i] = 0;
        }
        self.head = b;
    }

    /// Advance the window to time `now`.
    pub fn advance(&mut self, now: Nanos) {
        self.advance_bucket(now / BUCKET_NS);
    }

    /// A stall of `dur` starting at `start`; `full` for user tasks.
    pub fn record(&mut self, start: Nanos, dur: Nanos, full: bool) {
        let end = start + dur;
        if end > 0 {
            self.advance_bucket((end - 1) / BUCKET_NS);
        }
        let mut t = start;
        while t < end {
            let b = t / BUCKET_NS;
            let bend = ((b + 1) * BUCKET_NS).min(end);
            let d = (bend - t) as u32;
            let in_window = b + NBUCKETS > self.head;
            let i = (b % NBUCKETS) as usize;
            let room_s = if in_window { BUCKET_NS as u32 - self.some[i] } else { d };
            let s_add = d.min(room_s);
            self.some_total_ns += s_add as u64;
            if in_window {
                self.some[i] += s_add;
                self.win_some += s_add as u64;
            }
            if full {
                let room_f = if in_window { BUCKET_NS as u32 - self.full[i] } else { d };
                let f_add = d.min(room_f);
                self.full_total_ns += f_add as u64;
                if in_window {
                    self.full[i] += f_add;
                    self.win_full += f_add as u64;
                }
            }
            t = bend;
        }
    }

    /// Register a trigger (`full` or `some`, `threshold_ns` of stall per 1 s window); returns
    /// its id for `monitor`.
    pub fn add_monitor(&mut self, full: bool, threshold_ns: Nanos) -> usize {
        self.monitors.push(PsiMonitor { full, threshold_ns, last_event: None, events: 0 });
        self.monitors.len() - 1
    }

    pub fn monitor(&self, id: usize) -> &PsiMonitor {
        &self.monitors[id]
    }

    /// Fire the registered triggers whose window threshold is reached at `now`.
    pub fn check_monitors(&mut self, now: Nanos) {
        for m in self.monitors.iter_mut() {
            let stall = if m.full { self.win_full } else { self.win_some };
            if stall >= m.threshold_ns && m.last_event.is_none_or(|t| now >= t + NBUCKETS * BUCKET_NS) {
                m.last_event = Some(now);
                m.events += 1;
            }
        }
    }

    /// Stall time (some, full) within the last second (up to the newest bucket).
    pub fn window(&self) -> (Nanos, Nanos) {
        (self.win_some, self.win_full)
    }

    /// Advance the running averages to `now` (every 2 s, like `update_averages`).
    pub fn update_averages(&mut self, now: Nanos) {
        while self.avg_next <= now {
            let totals = [self.some_total_ns, self.full_total_ns];
            let e10 = (-2.0f64 / 10.0).exp();
            let e60 = (-2.0f64 / 60.0).exp();
            for (k, &total) in totals.iter().enumerate() {
                let pct = (100.0 * (total - self.avg_last_total[k]) as f64 / AVG_PERIOD_NS as f64).min(100.0);
                self.avg10[k] = self.avg10[k] * e10 + pct * (1.0 - e10);
                self.avg60[k] = self.avg60[k] * e60 + pct * (1.0 - e60);
                self.avg_last_total[k] = total;
            }
            self.avg_next += AVG_PERIOD_NS;
        }
    }

    pub fn snapshot(&self) -> PsiSnapshot {
        PsiSnapshot {
            some_avg10: self.avg10[0],
            some_avg60: self.avg60[0],
            some_total_us: self.some_total_ns / 1000,
            full_avg10: self.avg10[1],
            full_avg60: self.avg60[1],
            full_total_us: self.full_total_ns / 1000,
        }
    }
}
