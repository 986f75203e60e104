//! Android's low-memory killer daemon (AOSP `system/memory/lmkd/lmkd.cpp`) as kill policies.
//!
//! A kill policy is a [`KillPolicy`] plus one entry in [`POLICIES`]:
//! - `psi` (Android 11+): woken by PSI triggers (some ≥ 70 ms or full ≥ 700 ms per 1 s window),
//!   then polls every 10 ms for one window. Each poll computes thrashing
//!   (Δworkingset_refault_file × 100 / file LRU at the window start, windows of 1 s, limit
//!   decaying 10% per kill), swap low (free swap < 10%), the watermark free memory is below and
//!   whether direct reclaim ran, and the first matching rule gives the lowest oom_score_adj it
//!   may kill: critical PSI → 0; swap low and thrashing → 201; swap low and below high → 201;
//!   below high and thrashing → 201; direct reclaim and thrashing → 201; below high → 701.
//!   Victim: adj slots from 1000 down; within a slot the least recently used process (largest RSS
//!   at adj ≤ 200). One kill per cycle; it waits for the victim to be reaped. Critical pressure
//!   kills at most once per PSI window (a trigger fires once per window).
//! - `minfree` (legacy): polls every 100 ms; kills at adj ≥ the first minfree level where both
//!   free memory and file cache are below the threshold.
//! - `psi-minfree` (Android 10 with `ro.lmk.use_minfree_levels=true`, as on the Pixel 3): woken by
//!   the same PSI triggers as `psi` (its lowest monitor, some ≥ 70 ms per 1 s window, since every
//!   level leads to the same decision), then checks every 10 ms for one window; each check is the
//!   minfree rule above. Victim: the heaviest process in the highest non-empty adj slot
//!   (`ro.lmk.kill_heaviest_task=true`); a victim still alive 100 ms after its kill blocks the
//!   next one (`ro.lmk.kill_timeout_ms=100`).
//! - `off`: no userspace killer (how the Fleet and Marvin evaluations ran).
//!
//! Left out: lmkd's memcg/per-app limits, swap-utilisation rule, the process-group kill timing.

use crate::mmzone::{Event, Kernel};
pub use crate::mmzone::{KillPolicy, KillRecord};
use crate::page::lru;
use crate::page_alloc::WmarkLevel;
use mobmem_engine::component::{Component, Registry};
use mobmem_engine::Nanos;

type Ctor = fn() -> Box<dyn KillPolicy>;

/// The registry of kill policies (`kernel.lmkd`).
pub static KILLERS: Registry<Ctor> = Registry {
    kind: "kill policy",
    entries: &[
        Component {
            name: "psi",
            help: "Android 11+ lmkd: PSI triggers, thrashing/swap/watermark rules, LRU victim by adj slot",
            build: || Box::new(PsiLmkd::default()),
        },
        Component {
            name: "minfree",
            help: "legacy lmkd: kills at the first minfree level where free memory and file cache are below it",
            build: || Box::new(MinfreeLmkd::default()),
        },
        Component {
            name: "psi-minfree",
            help: "Android 10 lmkd with minfree levels: PSI triggers, then the minfree rule; heaviest victim by adj slot",
            build: || Box::new(PsiMinfreeLmkd::default()),
        },
        Component { name: "off", help: "no user-space killer (the kernel's OOM killer only)", build: || Box::new(Off) },
    ],
};

/// How lmkd picks a victim inside an adj slot.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Pick {
    /// The least recently used process.
    Lru,
    /// The heaviest (largest RSS) at adj ≤ 200, LRU above (Android 11+ `find_and_kill_process`).
    HeaviestLow,
    /// The heaviest in every slot (`ro.lmk.kill_heaviest_task=true` before Android 11).
    Heaviest,
}

/// Pick the victim: adj slots from 1000 down to `min_adj`; within a slot by `pick`.
pub fn find_victim(k: &Kernel, min_adj: i32, pick: Pick) -> Option<u32> {
    let mut best: Option<(i32, i64, u32)> = None; // (adj, key, idx): higher adj first, then key
    for (i, p) in k.procs.iter().enumerate() {
        if !p.alive || p.oom_score_adj < min_adj {
            continue;
        }
        let heaviest = pick == Pick::Heaviest || (pick == Pick::HeaviestLow && p.oom_score_adj <= 200);
        let key = if heaviest { k.proc_rss_swap(i as u32).0 as i64 } else { -(p.last_active_ns as i64) };
        let cand = (p.oom_score_adj, key, i as u32);
        if best.is_none_or(|b| (cand.0, cand.1) > (b.0, b.1)) {
            best = Some(cand);
        }
    }
    best.map(|b| b.2)
}

/// The wake-up and kill bookkeeping lmkd's modes share: a PSI trigger starts a window of 10 ms
/// polls; a victim still exiting blocks the next kill for up to the kill timeout.
#[derive(Default)]
struct KillCycle {
    poll_until: Nanos,
    kill_pending: Option<u32>,
    kill_time: Nanos,
}

impl KillCycle {
    /// After a PSI trigger event: the next poll of its window, if any.
    fn psi_poll(&mut self, k: &Kernel, now: Nanos) -> Option<Nanos> {
        if let Some(t) = k.psi.last_trigger.filter(|&t| t <= now && now < t + PSI_WINDOW_NS) {
            self.poll_until = self.poll_until.max(t + PSI_WINDOW_NS);
        }
        if now + PSI_POLL_PERIOD_NS <= self.poll_until {
            Some(now + PSI_POLL_PERIOD_NS)
        } else {
            None
        }
    }

    /// The last victim is still exiting (its memory not yet released) within the kill timeout
    /// (`kill_timeout_ms` with `/proc/<pid>` still there).
    fn victim_exiting(&mut self, k: &Kernel, now: Nanos) -> bool {
        if let Some(v) = self.kill_pending {
            if now < self.kill_time + KILL_TIMEOUT_NS && k.procs[v as usize].vmas.iter().any(|&x| k.vmas[x as usize].live) {
                return true;
            }
            self.kill_pending = None;
        }
        false
    }

    fn kill(&mut self, k: &mut Kernel, v: u32, reason: &str, min_adj: i32, now: Nanos) {
        k.vmstat.lmkd_kills += 1;
        let delay = k.cfg.reap_delay_ns;
        k.kill_process(v, reason, min_adj, "lmkd", now, delay);
        self.kill_pending = Some(v);
        self.kill_time = now;
    }

    fn reaped(&mut self, proc_idx: u32) {
        if self.kill_pending == Some(proc_idx) {
            self.kill_pending = None;
        }
    }
}

#[derive(Default)]
pub struct PsiLmkd {
    cycle: KillCycle,
    window_start: Option<Nanos>,
    init_ws_refault: u64,
    base_file_lru: u64,
    thrashing_limit: u32,
    prev_pgscan_direct: u64,
    /// When the last critical-pressure trigger was acted on.
    last_critical: Option<Nanos>,
}

const PSI_POLL_PERIOD_NS: Nanos = 10_000_000;
const PSI_WINDOW_NS: Nanos = 1_000_000_000;
/// lmkd waits this long for a victim to die before considering another kill.
const KILL_TIMEOUT_NS: Nanos = 100_000_000;

impl KillPolicy for PsiLmkd {
    fn name(&self) -> &'static str {
        "psi"
    }
    fn psi_triggered(&self) -> bool {
        true
    }
    fn on_reaped(&mut self, _k: &Kernel, proc_idx: u32) {
        self.cycle.reaped(proc_idx);
    }
    fn run(&mut self, k: &mut Kernel, now: Nanos) -> Option<Nanos> {
        k.psi.advance(now);
        let (some, full) = k.psi.window();
        let next = self.cycle.psi_poll(k, now);
        if self.cycle.victim_exiting(k, now) {
            return next.or(Some(now + PSI_POLL_PERIOD_NS));
        }
        // Thrashing over 1 s windows of file refaults against the file LRU size.
        let refaults = k.vmstat.workingset_refault_file;
        let file_lru = k.lru.len[lru::INACTIVE_FILE as usize] + k.lru.len[lru::ACTIVE_FILE as usize];
        if self.window_start.is_none_or(|w| now >= w + 1_000_000_000) {
            self.window_start = Some(now);
            self.init_ws_refault = refaults;
            self.base_file_lru = file_lru;
            self.thrashing_limit = k.cfg.lmkd_thrashing_limit;
        }
        let thrashing = (refaults - self.init_ws_refault) * 100 / (self.base_file_lru + 1);
        let thrashing_hit = thrashing > self.thrashing_limit as u64;
        let swap_low = k.swap.enabled() && k.swap.nr_free() * 100 < k.cfg.lmkd_swap_free_low_pct as u64 * k.swap.nr_slots as u64;
        let below_high = k.wmark_level() < WmarkLevel::AboveHigh;
        let direct = k.vmstat.pgscan_direct > self.prev_pgscan_direct;
        self.prev_pgscan_direct = k.vmstat.pgscan_direct;
        // Critical pressure acts on a PSI trigger event (AOSP: `level == CRITICAL && events`),
        // and a kernel PSI trigger fires at most once per window (psi.c: the trigger's
        // last_event_time + win_size); the stall sum of a window stays high for the whole
        // window after a kill, so it must not count again as a new event.
        let critical = full >= k.cfg.lmkd_psi_full_ms * 1_000_000 && self.last_critical.is_none_or(|t| now >= t + PSI_WINDOW_NS);
        let medium = some >= k.cfg.lmkd_psi_some_ms * 1_000_000;
        let decision: Option<(i32, &str)> = if critical {
            Some((0, "critical_pressure"))
        } else if swap_low && thrashing_hit {
            Some((201, "low_swap_and_thrashing"))
        } else if swap_low && below_high {
            Some((201, "low_mem_and_swap"))
        } else if below_high && thrashing_hit {
            Some((201, "low_mem_and_thrashing"))
        } else if direct && thrashing_hit {
            Some((201, "direct_reclaim_and_thrashing"))
        } else if below_high && medium {
            Some((701, "low_mem"))
        } else {
            None
        };
        if let Some((min_adj, reason)) = decision {
            if let Some(v) = find_victim(k, min_adj, Pick::HeaviestLow) {
                self.cycle.kill(k, v, reason, min_adj, now);
                self.thrashing_limit = self.thrashing_limit * 9 / 10;
                if critical {
                    self.last_critical = Some(now);
                }
            }
        }
        next
    }
}

#[derive(Default)]
pub struct MinfreeLmkd {
    cycle: KillCycle,
}

const MINFREE_POLL_NS: Nanos = 100_000_000;

impl KillPolicy for MinfreeLmkd {
    fn name(&self) -> &'static str {
        "minfree"
    }
    fn first_poll(&self) -> Option<Nanos> {
        Some(MINFREE_POLL_NS)
    }
    fn on_reaped(&mut self, _k: &Kernel, proc_idx: u32) {
        self.cycle.reaped(proc_idx);
    }
    fn run(&mut self, k: &mut Kernel, now: Nanos) -> Option<Nanos> {
        let next = Some(now + MINFREE_POLL_NS);
        // The legacy killer waits out the timeout after a kill, reaped or not.
        if self.cycle.kill_pending.is_some() && now < self.cycle.kill_time + KILL_TIMEOUT_NS {
            return next;
        }
        self.cycle.kill_pending = None;
        if let Some(min_adj) = minfree_min_adj(k) {
            if let Some(v) = find_victim(k, min_adj, Pick::Lru) {
                self.cycle.kill(k, v, "minfree", min_adj, now);
            }
        }
        next
    }
}

/// The minfree rule (lmkd's `use_minfree_levels`, the in-kernel lowmemorykiller before it): the
/// lowest oom_score_adj that may be killed, from the first level (smallest threshold first)
/// where both free memory above the reserves and the file cache are below the threshold.
fn minfree_min_adj(k: &Kernel) -> Option<i32> {
    // other_free excludes the reserves; other_file is the file LRU.
    let other_free = k.nr_free().saturating_sub(k.wmark.high);
    let other_file = k.lru.file();
    let mut levels = k.cfg.minfree.clone();
    levels.sort_by_key(|&(_, mb)| mb);
    levels.iter().find(|&&(_, mb)| other_free < mb * 256 && other_file < mb * 256).map(|&(adj, _)| adj)
}

/// Android 10's lmkd on a PSI kernel with `ro.lmk.use_minfree_levels=true` (AOSP
/// `mp_event_common`, android-10 branch; the Pixel 3's device configuration sets minfree levels,
/// the heaviest victim and a 100 ms kill timeout).
#[derive(Default)]
pub struct PsiMinfreeLmkd {
    cycle: KillCycle,
}

impl KillPolicy for PsiMinfreeLmkd {
    fn name(&self) -> &'static str {
        "psi-minfree"
    }
    fn psi_triggered(&self) -> bool {
        true
    }
    fn on_reaped(&mut self, _k: &Kernel, proc_idx: u32) {
        self.cycle.reaped(proc_idx);
    }
    fn run(&mut self, k: &mut Kernel, now: Nanos) -> Option<Nanos> {
        let next = self.cycle.psi_poll(k, now);
        if self.cycle.victim_exiting(k, now) {
            return next;
        }
        if let Some(min_adj) = minfree_min_adj(k) {
            // kill_heaviest_task: the largest process of the highest non-empty slot.
            if let Some(v) = find_victim(k, min_adj, Pick::Heaviest) {
                self.cycle.kill(k, v, "minfree", min_adj, now);
            }
        }
        next
    }
}

pub struct Off;

impl KillPolicy for Off {
    fn name(&self) -> &'static str {
        "off"
    }
    fn run(&mut self, _k: &mut Kernel, _now: Nanos) -> Option<Nanos> {
        None
    }
}

impl Kernel {
    pub(crate) fn lmkd_run(&mut self, now: Nanos) {
        self.lmkd_scheduled = false;
        let Some(mut p) = self.killer.take() else { return };
        let next = p.run(self, now);
        self.killer = Some(p);
        // lmkd's own work is small; it still takes a core briefly.
        self.cpus.run(crate::mmzone::LMKD_THREAD, now, 20_000);
        if let Some(t) = next {
            self.lmkd_scheduled = true;
            self.queue.push(t.max(now + 1), Event::Lmkd);
        }
    }
}
