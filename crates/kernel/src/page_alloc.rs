//! The page allocator: watermarks, the allocation slow path (wake kswapd, direct reclaim, OOM),
//! memory-cgroup charging, and the zram pool's pages.
//!
//! Watermarks follow `mm/page_alloc.c`: `min_free_kbytes = int_sqrt(lowmem_kb * 16)` clamped to
//! [128, 262144] unless set; `tmp = max(min/4, managed * watermark_scale_factor / 10000)`;
//! `low = min + tmp`, `high = min + 2*tmp`, plus Android's `extra_free_kbytes` on low and high.
//! An allocation succeeds on the fast path above `low`; below it kswapd is woken and the
//! allocation may still dip to `min`; below `min` the allocating task reclaims directly
//! (`allocstall`), retrying up to 16 times without progress (4.7+'s `should_reclaim_retry`: a
//! round waiting on writeback counts too) before the OOM killer runs.
//! A task whose process is killed meanwhile (the OOM killer, or lmkd run by events while it
//! reclaimed or waited on writeback) fails the allocation, as a pending fatal signal ends the
//! fault in Linux.
//! With `kernel.buddy` on, frames come from the buddy allocator (`buddy`): process pages are
//! `MIGRATE_MOVABLE`, pages of unmovable mappings (graphics buffers) `MIGRATE_UNMOVABLE`, and
//! the kernel allocates each thread's stack as an order-2 block (`alloc_kernel_stacks`) through
//! 4.9's high-order slow path (`alloc_pages_order`): direct compaction, reclaim, and the OOM
//! killer when neither reclaim nor compaction at full priority forms a block of the order,
//! however much swap is free.
//! Left out: zones/lowmem reserves, per-CPU page lists, the highatomic reserve.

use crate::buddy::{mt, PAGE_ALLOC_COSTLY_ORDER};
use crate::compaction::{CompactPriority, CompactResult};
use crate::config::{LruMode, ReclaimScope};
pub use crate::mmzone::{int_sqrt, Watermarks, WmarkLevel};
use crate::mmzone::{Event, Kernel};
use crate::page::{lru, Pfn};
use crate::task::Task;

/// MAX_RECLAIM_RETRIES in mm/internal.h.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// MAX_COMPACT_RETRIES in mm/page_alloc.c.
pub const MAX_COMPACT_RETRIES: u32 = 16;
/// Rounds of reclaim and compaction a high-order allocation makes before it stops retrying
/// (the model's bound; see `alloc_pages_order`).
const ROUNDS_BOUND: u32 = 1000;
/// 512 entries per last-level page table (4 KiB pages, 8-byte entries): one table page maps 2 MiB.
pub const PTRS_PER_PTE_SHIFT: u32 = 9;
/// `THREAD_SIZE_ORDER` on arm64 with 4 KiB pages (16 KiB kernel stacks).
pub const THREAD_SIZE_ORDER: u32 = 2;

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
        self.take_frame_mt(mt::MOVABLE)
    }

    /// Take a free frame of migrate type `m` (the type matters only with the buddy allocator).
    #[inline]
    pub(crate) fn take_frame_mt(&mut self, m: u8) -> Option<Pfn> {
        let p = if m == mt::MOVABLE { self.frames.take()? } else { self.frames.take_order(0, m)? };
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
        self.alloc_page_mt(t, mt::MOVABLE)
    }

    /// Allocate a frame for page of mapping `m` (unmovable mappings get `MIGRATE_UNMOVABLE`).
    #[inline]
    pub(crate) fn alloc_page_for(&mut self, t: &mut Task, m: usize) -> Option<Pfn> {
        let ty = if self.mappings[m].unmovable { mt::UNMOVABLE } else { mt::MOVABLE };
        self.alloc_page_mt(t, ty)
    }

    fn alloc_page_mt(&mut self, t: &mut Task, ty: u8) -> Option<Pfn> {
        let p = self.alloc_page_inner(t, ty)?;
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

    fn alloc_page_inner(&mut self, t: &mut Task, ty: u8) -> Option<Pfn> {
        if self.cfg.lru == LruMode::Pure {
            return self.alloc_page_pure(t);
        }
        if self.cfg.scope == ReclaimScope::MemcgLimit && !self.memcg_try_charge(t) {
            return None;
        }
        let p = self.alloc_page_global(t, ty);
        if p.is_none() && self.cfg.scope == ReclaimScope::MemcgLimit {
            self.memcg_charged -= 1;
        }
        p
    }

    fn alloc_page_global(&mut self, t: &mut Task, ty: u8) -> Option<Pfn> {
        // Fast path: above the low watermark.
        if self.nr_free() > self.wmark.low {
            return self.take_frame_mt(ty);
        }
        // Slow path: wake kswapd, then allow allocation down to min.
        self.wakeup_kswapd(t.now);
        if self.nr_free() > self.wmark.min {
            return self.take_frame_mt(ty);
        }
        let mut no_progress = 0;
        loop {
            if t.killed {
                return None;
            }
            let reclaimed = self.try_to_free_pages(t);
            if self.nr_free() > self.wmark.min {
                return self.take_frame_mt(ty);
            }
            // A round that stopped on writeback congestion waits for it inside the round (4.x:
            // wait_iff_congested in shrink_node); its progress is still the pages it freed.
            if self.reclaim_congested && self.throttle_on_writeback(t) && self.nr_free() > self.wmark.min {
                return self.take_frame_mt(ty);
            }
            if self.should_reclaim_retry(t, 0, reclaimed, &mut no_progress) {
                continue;
            }
            // out_of_memory(): the OOM reaper frees the victim's memory at once.
            if !self.out_of_memory(t, "global") {
                // Nothing killable: the allocation dips into the last reserves or fails.
                return self.take_frame_mt(ty).or_else(|| {
                    t.killed = true;
                    None
                });
            }
            // Retry as long as the OOM killer makes progress.
            no_progress = 0;
        }
    }

    /// `should_reclaim_retry` (4.7+) for an allocation of `order` after a direct-reclaim round that
    /// freed `reclaimed` pages: a round without progress counts towards the OOM killer whether or
    /// not pages are under writeback (`no_progress_loops`, reset by any progress); past
    /// `MAX_RECLAIM_RETRIES` of them, or once the min watermark at the order could not hold even
    /// with the reclaimable pages freed — each round without progress discounts a sixteenth of
    /// them — reclaim has failed. A retry after a round without progress first waits for the next
    /// writeback completion (at most 100 ms: `congestion_wait(HZ/10)` when writes are pending).
    fn should_reclaim_retry(&mut self, t: &mut Task, order: u32, reclaimed: u64, no_progress: &mut u32) -> bool {
        if reclaimed > 0 {
            *no_progress = 0;
        } else {
            *no_progress += 1;
        }
        if *no_progress > MAX_RECLAIM_RETRIES {
            return false;
        }
        let reclaimable = self.zone_reclaimable_pages();
        let available = reclaimable - (*no_progress as u64 * reclaimable).div_ceil(MAX_RECLAIM_RETRIES as u64) + self.nr_free();
        if !self.watermark_ok_order(order, self.wmark.min, available) {
            return false;
        }
        if reclaimed == 0 {
            self.throttle_on_writeback(t);
        }
        true
    }

    /// `__alloc_pages` for a block of 2^`order` frames of migrate type `ty` on behalf of `t`
    /// (buddy allocator only), following 4.9's `__alloc_pages_slowpath`: the low watermark at the
    /// order; wake kswapd; the min watermark; one asynchronous compaction for a non-movable
    /// request; then rounds of direct reclaim and compaction at a rising priority.
    /// `should_reclaim_retry` goes on only while the min watermark *at the order* could hold
    /// with every reclaimable page freed — which needs a free block of the order now — and
    /// `should_compact_retry` only until compaction at full priority has failed; then the OOM
    /// killer runs (orders up to `PAGE_ALLOC_COSTLY_ORDER`), free swap or not. Returns None when
    /// `t`'s process was killed meanwhile, or for a costly order that cannot be served.
    pub fn alloc_pages_order(&mut self, t: &mut Task, order: u32, ty: u8) -> Option<Pfn> {
        assert!(self.frames.buddy.is_some(), "high-order allocations need kernel.buddy");
        if order == 0 {
            return self.alloc_page_mt(t, ty);
        }
        let take = |k: &mut Kernel, mark: u64| -> Option<Pfn> {
            if !k.watermark_ok_order(order, mark, k.nr_free()) {
                return None;
            }
            let p = k.frames.take_order(order, ty)?;
            k.vmstat.pgalloc_normal += 1 << order;
            Some(p)
        };
        if let Some(p) = take(self, self.wmark.low) {
            return Some(p);
        }
        self.wakeup_kswapd(t.now);
        if let Some(p) = take(self, self.wmark.min) {
            return Some(p);
        }
        let mut prio = CompactPriority::Async;
        if ty != mt::MOVABLE || order > PAGE_ALLOC_COSTLY_ORDER {
            self.compact_zone(t, order, ty, prio);
            if let Some(p) = take(self, self.wmark.min) {
                return Some(p);
            }
        }
        let (mut no_progress, mut compaction_retries, mut rounds) = (0u32, 0u32, 0u32);
        loop {
            if t.killed || !self.procs[t.proc_idx as usize].alive {
                t.killed = true;
                return None;
            }
            rounds += 1;
            let reclaimed = self.try_to_free_pages(t);
            if let Some(p) = take(self, self.wmark.min) {
                return Some(p);
            }
            let result = self.compact_zone(t, order, ty, prio);
            if let Some(p) = take(self, self.wmark.min) {
                return Some(p);
            }
            if order > PAGE_ALLOC_COSTLY_ORDER {
                return None;
            }
            // Reclaim that keeps making a little progress (pages freed into a growing zram pool)
            // could retry forever: past ROUNDS_BOUND the allocation goes on to the OOM killer.
            // A bound of the model, not of 4.9.
            if self.should_reclaim_retry(t, order, reclaimed, &mut no_progress) && rounds < ROUNDS_BOUND {
                continue;
            }
            // should_compact_retry
            if reclaimed > 0 {
                let retry = match result {
                    CompactResult::Success => {
                        compaction_retries += 1;
                        compaction_retries <= MAX_COMPACT_RETRIES
                    }
                    CompactResult::Skipped => {
                        let reclaimable = self.zone_reclaimable_pages();
                        self.compaction_suitable(order, reclaimable + self.nr_free())
                    }
                    CompactResult::Complete => false,
                };
                if retry && rounds < ROUNDS_BOUND {
                    continue;
                }
                if let Some(p) = prio.raised() {
                    prio = p;
                    compaction_retries = 0;
                    continue;
                }
            }
            // __alloc_pages_may_oom: the high watermark once more, then the OOM killer.
            if let Some(p) = take(self, self.wmark.high) {
                return Some(p);
            }
            self.vmstat.oom_kill_high_order += 1;
            if !self.out_of_memory(t, &format!("order-{order}")) {
                t.killed = true;
                return None;
            }
            no_progress = 0;
        }
    }

    /// `zone_reclaimable_pages`: the file lists, and the anon lists while swap has free slots.
    fn zone_reclaimable_pages(&self) -> u64 {
        use crate::page::lru;
        let l = &self.lru.len;
        let file = l[lru::INACTIVE_FILE as usize] + l[lru::ACTIVE_FILE as usize];
        let anon = if self.swap.nr_free() > 0 { l[lru::INACTIVE_ANON as usize] + l[lru::ACTIVE_ANON as usize] } else { 0 };
        file + anon
    }

    /// Allocate the kernel stacks of `n` new threads of process `proc_idx` on behalf of `t`
    /// (`alloc_thread_stack_node`: `THREAD_SIZE` 16 KiB on arm64, an order-2 block, with
    /// `THREADINFO_GFP` = GFP_KERNEL; no virtually mapped stacks on 4.9 arm64). Without the buddy
    /// allocator (or in the pure-LRU and memcg modes, which compare page caches) nothing is
    /// allocated. Returns false when `t`'s process was killed meanwhile.
    pub fn alloc_kernel_stacks(&mut self, t: &mut Task, proc_idx: u32, n: u32) -> bool {
        if self.frames.buddy.is_none() || self.cfg.lru == LruMode::Pure || self.cfg.scope == ReclaimScope::MemcgLimit {
            return true;
        }
        self.note_fragmentation();
        for _ in 0..n {
            let Some(p) = self.alloc_pages_order(t, THREAD_SIZE_ORDER, mt::UNMOVABLE) else { return false };
            for q in p..p + (1 << THREAD_SIZE_ORDER) {
                self.frames.lru[q as usize] = crate::page::lru::KERNEL;
                self.frames.owner[q as usize] = proc_idx;
            }
            self.nr_kernel_pages += 1 << THREAD_SIZE_ORDER;
            if !self.procs[proc_idx as usize].alive {
                // The OOM killer chose the process itself while its stack was allocated.
                self.frames.put_order(p, THREAD_SIZE_ORDER);
                self.nr_kernel_pages -= 1 << THREAD_SIZE_ORDER;
                return false;
            }
            self.procs[proc_idx as usize].kstacks.push(p);
        }
        true
    }

    /// `pte_alloc`: the page-table page covering `page` of VMA `v`, allocated at the first fault
    /// in its 2 MiB range (an unmovable order-0 allocation, `GFP_KERNEL`, interleaved with the
    /// faults' own pages). Buddy allocator only, global classic reclaim. Returns false when `t`'s
    /// process was killed meanwhile. A forked child's table pages are allocated at its first
    /// faults (Linux copies anon page tables at fork).
    pub(crate) fn pte_alloc(&mut self, t: &mut Task, v: u32, page: u32) -> bool {
        if self.cfg.lru == LruMode::Pure || self.cfg.scope == ReclaimScope::MemcgLimit {
            return true;
        }
        let vm = &mut self.vmas[v as usize];
        let i = (page >> PTRS_PER_PTE_SHIFT) as usize;
        if vm.ptes.is_empty() {
            vm.ptes = vec![crate::page::NO_PFN; vm.npages.div_ceil(1 << PTRS_PER_PTE_SHIFT) as usize];
        }
        if vm.ptes[i] != crate::page::NO_PFN {
            return true;
        }
        let Some(p) = self.alloc_page_mt(t, mt::UNMOVABLE) else { return false };
        self.frames.lru[p as usize] = crate::page::lru::KERNEL;
        self.nr_kernel_pages += 1;
        self.nr_pagetable_pages += 1;
        if !self.vmas[v as usize].live {
            self.free_page_table(p);
            return false;
        }
        self.vmas[v as usize].ptes[i] = p;
        true
    }

    fn free_page_table(&mut self, p: Pfn) {
        self.frames.lru[p as usize] = u8::MAX;
        self.frames.put(p);
        self.nr_kernel_pages -= 1;
        self.nr_pagetable_pages -= 1;
    }

    /// `free_pgtables` of a VMA being torn down.
    pub(crate) fn free_pgtables(&mut self, v: u32) {
        for p in std::mem::take(&mut self.vmas[v as usize].ptes) {
            if p != crate::page::NO_PFN {
                self.free_page_table(p);
            }
        }
    }

    /// Record the free lists' state in `fragmentation` (before a batch of stacks).
    fn note_fragmentation(&mut self) {
        let b = self.frames.buddy.as_ref().unwrap();
        let free = b.nr_free();
        let (mut blocks2, mut pages2) = (0, 0);
        for o in 2..crate::buddy::MAX_ORDER {
            let n: u64 = (0..mt::NR as u8).map(|m| b.nr_blocks(o, m)).sum();
            blocks2 += n;
            pages2 += n << o;
        }
        let unmovable = (0..b.nr_pageblocks() as u32).filter(|&i| b.pageblock_mt(i << crate::buddy::PAGEBLOCK_ORDER) != mt::MOVABLE).count() as u64;
        let share = if free == 0 { 0.0 } else { pages2 as f64 / free as f64 };
        let f = &mut self.fragmentation;
        if f.stack_batches == 0 {
            f.min_free_pages = free;
            f.min_blocks_order2 = blocks2;
            f.min_share_in_order2 = share;
        }
        f.stack_batches += 1;
        f.min_free_pages = f.min_free_pages.min(free);
        f.min_blocks_order2 = f.min_blocks_order2.min(blocks2);
        f.min_share_in_order2 = f.min_share_in_order2.min(share);
        f.max_unmovable_pageblocks = f.max_unmovable_pageblocks.max(unmovable);
        f.pageblocks = b.nr_pageblocks() as u64;
        f.max_pagetable_pages = f.max_pagetable_pages.max(self.nr_pagetable_pages);
    }

    /// Free a process's kernel stacks (its threads exited).
    pub(crate) fn free_kernel_stacks(&mut self, proc_idx: u32) {
        // Kernel stacks exist only with the buddy allocator, whose `put_order` resets every
        // frame of the block.
        for p in std::mem::take(&mut self.procs[proc_idx as usize].kstacks) {
            self.frames.put_order(p, THREAD_SIZE_ORDER);
            self.nr_kernel_pages -= 1 << THREAD_SIZE_ORDER;
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
                    // Its place in the pool list, for compaction's migration.
                    self.frames.index[p as usize] = self.zram_pool_frames.len() as u32;
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
