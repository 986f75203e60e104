//! The page allocator: watermarks, the allocation slow path (wake kswapd, direct reclaim, OOM),
//! memory-cgroup charging, and the zram pool's pages.
//!
//! Watermarks follow `mm/page_alloc.c`: `min_free_kbytes = int_sqrt(lowmem_kb * 16)` clamped to
//! [128, 262144] unless set; `tmp = max(min/4, managed * watermark_scale_factor / 10000)`;
//! `low = min + tmp`, `high = min + 2*tmp`, plus Android's `extra_free_kbytes` on low and high.
//! An allocation succeeds on the fast path above `low`; below it kswapd is woken and the
//! allocation may still dip to `min`; below `min` the allocating task reclaims directly
//! (`allocstall`), retrying up to 16 times without progress before the OOM killer runs.
//! A task whose process is killed meanwhile (the OOM killer, or lmkd run by events while it
//! reclaimed or waited on writeback) fails the allocation, as a pending fatal signal ends the
//! fault in Linux.
//! Left out: zones/lowmem reserves, high-order allocations and compaction, per-CPU page lists.

use crate::config::{LruMode, ReclaimScope};
pub use crate::mmzone::{int_sqrt, Watermarks, WmarkLevel};
use crate::mmzone::{Event, Kernel};
use crate::page::{lru, Pfn};
use crate::task::Task;

/// MAX_RECLAIM_RETRIES in mm/internal.h.
pub const MAX_RECLAIM_RETRIES: u32 = 16;

impl Kernel {
    pub fn nr_free(&self) -> u64 {
        self.frames.nr_free()
    }

    pub fn wmark_level(&self) -> WmarkLevel {
        let f = self.nr_free();
        if f < self.wmark.min {
            WmarkLevel::BelowMin
        } else if f < self.wmark.low {
            WmarkLevel::BelowLow
        } else if f < self.wmark.high {
            WmarkLevel::BelowHigh
        } else {
            WmarkLevel::AboveHigh
        }
    }

    /// Take a free frame and give it a fresh generation.
    #[inline]
    pub(crate) fn take_frame(&mut self) -> Option<Pfn> {
        let p = self.frames.take()?;
        self.alloc_gen = self.alloc_gen.wrapping_add(1).max(1);
        self.frames.gen[p as usize] = self.alloc_gen;
        self.vmstat.pgalloc_normal += 1;
        Some(p)
    }

    /// Free an isolated frame that held a process page (uncharges the memcg).
    #[inline]
    pub(crate) fn free_page(&mut self, p: Pfn) {
        if self.cfg.scope == ReclaimScope::MemcgLimit {
            self.memcg_charged -= 1;
        }
        self.vmstat.pgfree += 1;
        self.frames.put(p);
    }

    /// Allocate a frame for a process page on behalf of `t`, reclaiming as the kernel would.
    /// Returns None when the task's process was killed while trying (OOM).
    pub fn alloc_page(&mut self, t: &mut Task) -> Option<Pfn> {
        let p = self.alloc_page_inner(t)?;
        if t.killed || !self.procs[t.proc_idx as usize].alive {
            // The OOM killer or lmkd (run by events while this task reclaimed or waited) chose
            // the allocating task itself: the fatal signal ends the fault; give the page back.
            t.killed = true;
            self.free_page(p);
            return None;
        }
        self.frames.owner[p as usize] = t.proc_idx;
        if let Some(s) = self.kswapd_sizing.as_mut() {
            s.on_alloc(t.now);
        }
        Some(p)
    }

    fn alloc_page_inner(&mut self, t: &mut Task) -> Option<Pfn> {
        if self.cfg.lru == LruMode::Pure {
            return self.alloc_page_pure(t);
        }
        if self.cfg.scope == ReclaimScope::MemcgLimit && !self.memcg_try_charge(t) {
            return None;
        }
        let p = self.alloc_page_global(t);
        if p.is_none() && self.cfg.scope == ReclaimScope::MemcgLimit {
            self.memcg_charged -= 1;
        }
        p
    }

    fn alloc_page_global(&mut self, t: &mut Task) -> Option<Pfn> {
        // Fast path: above the low watermark.
        if self.nr_free() > self.wmark.low {
            return self.take_frame();
        }
        // Slow path: wake kswapd, then allow allocation down to min.
        self.wakeup_kswapd(t.now);
        if self.nr_free() > self.wmark.min {
            return self.take_frame();
        }
        let mut no_progress = 0;
        loop {
            if t.killed {
                return None;
            }
            let reclaimed = self.try_to_free_pages(t);
            if self.nr_free() > self.wmark.min {
                return self.take_frame();
            }
            if self.reclaim_congested && self.throttle_on_writeback(t) {
                continue;
            }
            if reclaimed == 0 {
                // should_reclaim_retry: no progress while memory is under writeback → wait for
                // the I/O instead of counting towards OOM.
                if self.throttle_on_writeback(t) {
                    continue;
                }
                no_progress += 1;
                if no_progress > MAX_RECLAIM_RETRIES {
                    // out_of_memory(): the OOM reaper frees the victim's memory at once.
                    if !self.out_of_memory(t, "global") {
                        // Nothing killable: the allocation dips into the last reserves or fails.
                        return self.take_frame().or_else(|| {
                            t.killed = true;
                            None
                        });
                    }
                    no_progress = 0;
                }
            } else {
                no_progress = 0;
            }
        }
    }

    /// Direct reclaim made no progress while pages are under writeback: the allocating task
    /// sleeps until the next writeback batch completes or HZ/10 passes (`should_reclaim_retry`'s
    /// `congestion_wait(BLK_RW_ASYNC, HZ/10)` in 4.x; `reclaim_throttle(pgdat,
    /// VMSCAN_THROTTLE_WRITEBACK)` since 5.16), and that writeback completes. The sleep is a
    /// memory stall (PSI) and a reclaim stall of the task. Only writeback completions run here;
    /// other kernel events (kswapd, lmkd, the reaper) keep their times and run at the caller's
    /// next synchronisation, so a kill cannot free memory under a fault in progress. Returns
    /// false when nothing is under writeback.
    fn throttle_on_writeback(&mut self, t: &mut Task) -> bool {
        const THROTTLE_TIMEOUT_NS: u64 = 100_000_000;
        let Some(&next) = self.writeback_due.iter().min() else { return false };
        let wake = next.min(t.now + THROTTLE_TIMEOUT_NS).max(t.now);
        let start = t.now;
        if wake > start {
            let d = wake - start;
            t.now = wake;
            t.bd.reclaim_stall_ns += d;
            self.psi_memstall(t, start, d);
        }
        let mut deferred = Vec::new();
        while let Some((at, ev)) = self.queue.pop_until(wake) {
            match ev {
                Event::WritebackDone(pages) => self.writeback_done_event(at, &pages),
                other => deferred.push((at, other)),
            }
        }
        for (at, ev) in deferred {
            self.queue.push(at, ev);
        }
        true
    }

    /// memcg `try_charge`: reclaim within the cgroup until the page fits under the limit.
    fn memcg_try_charge(&mut self, t: &mut Task) -> bool {
        let limit = self.cfg.memcg_limit_pages;
        let mut retries = MAX_RECLAIM_RETRIES;
        while self.memcg_charged + 1 > limit {
            if t.killed {
                return false;
            }
            let reclaimed = self.try_to_free_mem_cgroup_pages(t, 1);
            if self.memcg_charged < limit {
                break;
            }
            if reclaimed == 0 {
                if retries == 0 {
                    if !self.out_of_memory(t, "memcg") {
                        t.killed = true;
                        return false;
                    }
                    retries = MAX_RECLAIM_RETRIES;
                } else {
                    retries -= 1;
                }
            }
        }
        self.memcg_charged += 1;
        true
    }

    /// Pure-LRU mode: capacity is exactly the managed frames; evict the single list's tail on
    /// demand.
    fn alloc_page_pure(&mut self, t: &mut Task) -> Option<Pfn> {
        let memcg = self.cfg.scope == ReclaimScope::MemcgLimit;
        loop {
            // Capacity: the memcg limit when there is one, else every managed frame.
            let under_limit = !memcg || self.memcg_charged < self.cfg.memcg_limit_pages;
            if under_limit {
                if let Some(p) = self.take_frame() {
                    if memcg {
                        self.memcg_charged += 1;
                    }
                    return Some(p);
                }
            }
            if !self.pure_evict_one(t) && !self.out_of_memory(t, "pure-lru") {
                t.killed = true;
                return None;
            }
        }
    }

    pub fn wakeup_kswapd(&mut self, now: u64) {
        if self.cfg.lru == LruMode::Pure || self.cfg.scope == ReclaimScope::MemcgLimit {
            return;
        }
        if self.kswapd.awake || self.kswapd.failures >= MAX_RECLAIM_RETRIES {
            return;
        }
        self.kswapd.awake = true;
        self.kswapd.start_run();
        self.queue.push(now, Event::Kswapd);
    }

    /// One more zsmalloc pool page if stored bytes outgrew the pool. Pool pages are allocated
    /// with reclaim's PF_MEMALLOC rights: below the watermarks, but not from nothing.
    /// Pool pages needed for the stored bytes.
    pub fn zram_pool_need(&self) -> u64 {
        ((self.swap.compr_bytes as f64 * self.cfg.zram.pool_overhead) as u64).div_ceil(4096)
    }

    pub(crate) fn zram_pool_grow(&mut self) -> bool {
        let need = self.zram_pool_need();
        while self.zram_pool_pages < need {
            if self.cfg.lru == LruMode::Pure {
                // Pure-LRU mode compares page caches: the pool is kept outside RAM.
                self.zram_pool_pages = need;
                return true;
            }
            match self.frames.take() {
                Some(p) => {
                    self.frames.lru[p as usize] = lru::ZRAM_POOL;
                    self.zram_pool_frames.push(p);
                    self.zram_pool_pages += 1;
                }
                None => return false,
            }
        }
        true
    }

    /// Return pool pages no longer needed.
    pub(crate) fn zram_pool_shrink(&mut self) {
        let need = self.zram_pool_need();
        while self.zram_pool_pages > need {
            self.zram_pool_pages -= 1;
            if let Some(p) = self.zram_pool_frames.pop() {
                self.frames.put(p);
            }
        }
    }
}
