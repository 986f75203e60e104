//! The kernel OOM killer (`mm/oom_kill.c`): when reclaim cannot free memory, kill the process
//! with the highest badness = RSS + swap + oom_score_adj × total pages / 1000 (adj −1000 is never
//! chosen). The OOM reaper frees the victim's memory at once.
//! Left out: page-table pages in the badness, `oom_kill_allocating_task`, memcg OOM groups.

use crate::mmzone::Kernel;
use crate::task::Task;

impl Kernel {
    /// Kill the worst process. Returns false when there is nothing to kill.
    pub fn out_of_memory(&mut self, t: &mut Task, scope: &str) -> bool {
        let total = (self.managed_pages() + self.swap.nr_slots as u64) as i64;
        let mut best: Option<(i64, u32)> = None;
        for (i, p) in self.procs.iter().enumerate() {
            if !p.alive || p.oom_score_adj == -1000 {
                continue;
            }
            let (rss, swap) = self.proc_rss_swap(i as u32);
            let points = (rss + swap) as i64 + p.oom_score_adj as i64 * total / 1000;
            if best.is_none_or(|b| points > b.0) {
                best = Some((points, i as u32));
            }
        }
        let Some((_, victim)) = best else { return false };
        self.vmstat.oom_kill += 1;
        self.kill_process(victim, &format!("oom ({scope})"), -1000, "kernel", t.now, 0);
        if victim == t.proc_idx {
            t.killed = true;
        }
        true
    }
}
