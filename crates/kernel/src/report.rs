//! Snapshots of the kernel for output: meminfo, per-process memory, and the JSON result.

use crate::mm::MappingKind;
use crate::mmzone::Kernel;
use crate::page::{lru, pg, NO_SLOT};
use crate::vmstat::{MemInfo, ProcMem};
use serde_json::{json, Map, Value};

impl Kernel {
    pub fn meminfo(&self) -> MemInfo {
        let l = &self.lru.len;
        let kb = |p: u64| p * 4;
        let file = self.lru.file();
        let free = self.nr_free();
        let mut swap_cached = 0;
        let mut dirty = 0;
        let mut writeback = 0;
        let mut mapped = 0;
        let mut anon_pages = 0;
        for i in 0..self.frames.len() {
            if (self.frames.lru[i] as usize) >= lru::NR_LRU {
                continue;
            }
            let f = self.frames.flags[i];
            if self.frames.swap_slot[i] != NO_SLOT {
                swap_cached += 1;
            }
            if f & pg::DIRTY != 0 && f & pg::SWAPBACKED == 0 {
                dirty += 1;
            }
            if f & pg::WRITEBACK != 0 {
                writeback += 1;
            }
            if f & pg::SWAPBACKED == 0 && self.frames.mapcount[i] > 0 {
                mapped += 1;
            }
        }
        for m in &self.mappings {
            if m.kind == MappingKind::Anon {
                anon_pages += m.nr_present;
            }
        }
        // si_mem_available: free above the low watermark plus reclaimable page cache.
        let low = self.wmark.low;
        let pagecache = file - file.min(file / 2).min(low);
        let available = (free as i64 - low as i64 + pagecache as i64).max(0) as u64;
        MemInfo {
            MemTotal: kb(self.cfg.ram_pages),
            MemFree: kb(free),
            MemAvailable: kb(available),
            Cached: kb(file),
            SwapCached: kb(swap_cached),
            Active: kb(l[lru::ACTIVE_ANON as usize] + l[lru::ACTIVE_FILE as usize]),
            Inactive: kb(l[lru::INACTIVE_ANON as usize] + l[lru::INACTIVE_FILE as usize]),
            ActiveAnon: kb(l[lru::ACTIVE_ANON as usize]),
            InactiveAnon: kb(l[lru::INACTIVE_ANON as usize]),
            ActiveFile: kb(l[lru::ACTIVE_FILE as usize]),
            InactiveFile: kb(l[lru::INACTIVE_FILE as usize]),
            Unevictable: kb(l[lru::UNEVICTABLE as usize]),
            SwapTotal: kb(self.swap.nr_slots as u64),
            SwapFree: kb(self.swap.nr_free()),
            Dirty: kb(dirty),
            Writeback: kb(writeback),
            AnonPages: kb(anon_pages),
            Mapped: kb(mapped),
            KernelReserved: kb(self.cfg.reserved_pages),
            KernelStack: kb(self.nr_kernel_pages - self.nr_pagetable_pages),
            PageTables: kb(self.nr_pagetable_pages),
            ZramPool: kb(self.zram_pool_pages),
            ZramOrigData: self.swap.orig_bytes / 1024,
            ZramComprData: self.swap.compr_bytes / 1024,
            MemcgUsage: kb(self.memcg_charged),
        }
    }

    pub fn per_process(&self) -> Vec<ProcMem> {
        let mut out = Vec::with_capacity(self.procs.len());
        for (i, p) in self.procs.iter().enumerate() {
            let u = self.proc_usage(i as u32);
            let t = self.cpus.thread(self.thread_of(i as u32));
            out.push(ProcMem {
                pid: p.pid,
                name: p.name.clone(),
                oom_score_adj: p.oom_score_adj,
                alive: p.alive,
                rss_anon_kb: u.anon * 4,
                rss_file_kb: u.file * 4,
                pss_kb: u.pss * 4.0,
                swap_kb: u.swap * 4,
                minflt: p.stats.minflt,
                majflt: p.stats.majflt,
                swapin: p.stats.swapin,
                refault_anon: p.stats.refault_anon,
                refault_file: p.stats.refault_file,
                allocstall: p.stats.allocstall,
                memstall_ms: p.stats.memstall_ns as f64 / 1e6,
                cpu_ms: t.cpu_ns as f64 / 1e6,
                cpu_wait_ms: t.runnable_wait_ns as f64 / 1e6,
            });
        }
        out
    }

    /// The standard JSON result: `vmstat`, `meminfo`, `kills`, `per_process`, plus `psi`,
    /// `watermarks`, `kswapd`, `timeseries` and `config`.
    pub fn result_json(&self) -> Value {
        let mut vm = Map::new();
        for (k, v) in self.vmstat.items() {
            vm.insert(k.into(), json!(v));
        }
        let ks = &self.kswapd;
        json!({
            "vmstat": vm,
            "meminfo": self.meminfo(),
            "kills": self.kills,
            "per_process": self.per_process(),
            "psi": self.psi.snapshot(),
            "watermarks": {
                "min_free_kbytes": self.wmark.min_free_kbytes,
                "min_pages": self.wmark.min, "low_pages": self.wmark.low, "high_pages": self.wmark.high,
            },
            "kswapd": { "cpu_ms": ks.cpu_ns as f64 / 1e6, "wakeups": ks.wakeups, "failures": ks.failures },
            "timeseries": self.series,
            "config": self.cfg,
        })
    }
}
