//! Pressure stall information for memory (`kernel/sched/psi.c`), as lmkd consumes it.
//!
//! Stall intervals are recorded in 1 ms buckets over a 1 s ring with running window sums, so the
//! trigger check after each stall is O(1). `some` is the stalled time of any task (kswapd's
//! reclaim included, as `balance_pgdat` runs under `psi_memstall_enter`), clipped to the bucket;
//! `full` is the stalled time of user tasks, clipped likewise. The 1 s window drives lmkd's
//! triggers (some ≥ 70 ms / full ≥ 700 ms per second) and the triggers other clients register
//! (`PsiMonitor`: the ActivityManager's LowMemDetector); totals and avg10/avg60 (exponential
//! averages updated every 2 s, as the kernel does) are reported.
//! Limitation: with several user threads `full` is over-estimated — the model does not track
//! whether *every* non-idle task was stalled at the same instant, only that user tasks were.
//! Stalls reported more than 1 s late (behind the newest bucket) count in the totals only.

use crate::mmzone::{Event, Kernel};
pub use crate::psi_types::{Psi, PsiSnapshot, BUCKET_NS};
use crate::task::Task;
use mobmem_engine::Nanos;

impl Kernel {
    /// A user task stalled on memory for `dur` from `start` (kswapd records its own stalls).
    pub(crate) fn psi_memstall(&mut self, t: &mut Task, start: Nanos, dur: Nanos) {
        if dur == 0 {
            return;
        }
        self.psi.record(start, dur, true);
        t.bd.memstall_ns += dur;
        self.procs[t.proc_idx as usize].stats.memstall_ns += dur;
        self.psi.check_monitors(start + dur);
        self.psi_check_triggers(start + dur);
    }

    /// PSI triggers lmkd registered: wake it when a window threshold is crossed (at most once
    /// per window, like a psi trigger).
    pub(crate) fn psi_check_triggers(&mut self, now: Nanos) {
        if self.lmkd_scheduled {
            return;
        }
        let Some(k) = self.killer.as_ref() else { return };
        if !k.psi_triggered() {
            return;
        }
        let (some, full) = self.psi.window();
        let hit = some >= self.cfg.lmkd_psi_some_ms * 1_000_000 || full >= self.cfg.lmkd_psi_full_ms * 1_000_000;
        if !hit {
            return;
        }
        if let Some(last) = self.psi.last_trigger {
            if now < last + 1_000_000_000 {
                return;
            }
        }
        self.psi.last_trigger = Some(now);
        self.lmkd_scheduled = true;
        self.queue.push(now, Event::Lmkd);
    }
}
