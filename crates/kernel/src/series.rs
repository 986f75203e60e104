//! Time series of the kernel state, sampled at a fixed simulated interval (struct of arrays).

use crate::mmzone::Kernel;
pub use crate::mmzone::Series;
use crate::page::lru;
use mobmem_engine::Nanos;

impl Kernel {
    pub(crate) fn sample(&mut self, now: Nanos) {
        self.psi.update_averages(now);
        let s = &mut self.series;
        let l = &self.lru.len;
        s.time_ms.push(now as f64 / 1e6);
        s.free_kb.push(self.frames.nr_free() * 4);
        s.active_anon_kb.push(l[lru::ACTIVE_ANON as usize] * 4);
        s.inactive_anon_kb.push(l[lru::INACTIVE_ANON as usize] * 4);
        s.active_file_kb.push(l[lru::ACTIVE_FILE as usize] * 4);
        s.inactive_file_kb.push(l[lru::INACTIVE_FILE as usize] * 4);
        s.zram_pool_kb.push(self.zram_pool_pages * 4);
        s.swap_used_kb.push(self.swap.nr_used() * 4);
        s.psi_some_total_us.push(self.psi.some_total_ns / 1000);
        s.psi_full_total_us.push(self.psi.full_total_ns / 1000);
        s.pgscan_kswapd.push(self.vmstat.pgscan_kswapd);
        s.pgscan_direct.push(self.vmstat.pgscan_direct);
        s.workingset_refault_anon.push(self.vmstat.workingset_refault_anon);
        s.workingset_refault_file.push(self.vmstat.workingset_refault_file);
        s.procs_alive.push(self.procs.iter().filter(|p| p.alive).count() as u64);
        if s.len() >= crate::mmzone::SERIES_CAP {
            s.halve();
            self.cfg.sample_interval_ns *= 2; // the next sample is scheduled with the new interval
        }
    }
}
