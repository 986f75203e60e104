//! Lightweight prediction-based reclaim (LWP), Acclaim (Li et al., ATC '20): kswapd sized by a
//! prediction of the coming allocation demand instead of always reclaiming up to the high
//! watermark.
//!
//! A sliding window (`kernel.lwp_window_ms`, 100 ms) of sampling slots (`kernel.lwp_slot_ms`,
//! 10 ms) holds the allocation demand; the predicted demand is the current window's sum, the
//! trend the current window's sum over the previous window's. At the start of each kswapd pass
//! the moderator sets the pass's reclaim size — P1 × predicted when trend ≥ T1, else
//! P2 × predicted (P1 = 4, P2 = 2, T1 = 2) — and the level of free pages at which kswapd stops:
//! min(high × (1 + trend), high + T2) when the trend is above 1, else max(high × (1 − trend),
//! low), with T2 = high − low.
//!
//! The model allocates single pages, so a slot's sample is the pages allocated in it (Acclaim
//! samples the size of the first allocation request of each slot; with single-page requests that
//! sample would always be one page). Variant `lwp-code` (its released code): the stop level stays
//! the high watermark and the pass's reclaim target is the high watermark scaled by the ratio of
//! the last two windows, clamped to [1/4, 4] times it (the clamp bounds are an estimate).

use crate::config::LwpConfig;
use crate::mmzone::{KswapdSizing, Watermarks};
use mobmem_engine::Nanos;

/// kswapd reclaims at least this many pages per pass (`SWAP_CLUSTER_MAX`).
const MIN_PASS: u64 = 32;

pub struct Lwp {
    c: LwpConfig,
    code: bool,
    slots: usize,
    /// Ring of 2 × slots-per-window (slot number, pages allocated in it).
    ring: Vec<(u64, u64)>,
    /// The last moderator decision (for reports and tests): (predicted, trend).
    pub(crate) last: (u64, f64),
}

impl Lwp {
    pub fn new(c: LwpConfig, code: bool) -> Result<Self, String> {
        if c.slot_ns == 0 || c.window_ns < c.slot_ns || !c.window_ns.is_multiple_of(c.slot_ns) {
            return Err(format!(
                "kernel.lwp_window_ms: the window ({} ms) must be a whole number of slots of kernel.lwp_slot_ms ({} ms)",
                c.window_ns / 1_000_000,
                c.slot_ns / 1_000_000
            ));
        }
        let slots = (c.window_ns / c.slot_ns) as usize;
        Ok(Self { c, code, slots, ring: vec![(u64::MAX, 0); 2 * slots], last: (0, 0.0) })
    }

    /// Demand in the window ending with slot `s` (`back` = 0) or the one before it (1).
    fn window(&self, s: u64, back: u64) -> u64 {
        let n = self.slots as u64;
        let hi = s.saturating_sub(back * n);
        let lo = (hi + 1).saturating_sub(n);
        self.ring.iter().filter(|&&(slot, _)| slot != u64::MAX && slot >= lo && slot <= hi).map(|&(_, c)| c).sum()
    }
}

impl KswapdSizing for Lwp {
    fn name(&self) -> &'static str {
        if self.code {
            "lwp-code"
        } else {
            "lwp"
        }
    }

    #[inline]
    fn on_alloc(&mut self, now: Nanos) {
        let s = now / self.c.slot_ns;
        let i = (s % self.ring.len() as u64) as usize;
        let e = &mut self.ring[i];
        if e.0 != s {
            *e = (s, 0);
        }
        e.1 += 1;
    }

    fn levels(&mut self, w: &Watermarks, now: Nanos) -> (u64, u64) {
        let s = now / self.c.slot_ns;
        let (this, last) = (self.window(s, 0), if s >= self.slots as u64 { self.window(s, 1) } else { 0 });
        // No demand in the last window: a rising trend if there is some now, flat otherwise.
        let trend = if last > 0 {
            this as f64 / last as f64
        } else if this > 0 {
            self.c.t1
        } else {
            1.0
        };
        self.last = (this, trend);
        let high = w.high as f64;
        if self.code {
            let target = (high * trend).clamp(high / 4.0, high * 4.0) as u64;
            return (w.high, target.max(MIN_PASS));
        }
        let size = if trend >= self.c.t1 { self.c.p1 } else { self.c.p2 } * this as f64;
        let t2 = (w.high - w.low) as f64;
        let stop = if trend > 1.0 { (high * (1.0 + trend)).min(high + t2) } else { (high * (1.0 - trend)).max(w.low as f64) };
        (stop as u64, (size as u64).max(MIN_PASS))
    }
}
