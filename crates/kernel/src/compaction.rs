//! Direct memory compaction (`mm/compaction.c`, `mm/migrate.c`), with the buddy allocator on.
//!
//! A high-order allocation that finds no free block of its order compacts: the migrate scanner
//! walks pageblocks up from the start of the zone and isolates movable in-use pages, the free
//! scanner walks down from the end and isolates free pages in movable pageblocks as targets; each
//! isolated page is migrated (copied, its page-table or page-cache entry and reverse map moved to
//! the new frame, the new frame put at the head of the same LRU list, as `putback_lru_page`
//! does), and the old frame is freed, where it merges with free buddies. Compaction ends with
//! success once the order-`order` watermark holds and a block the request can use is free
//! (`compact_finished`), and as complete (failed) when the scanners meet.
//!
//! Linux 4.9's rules kept: `compaction_suitable` (free pages above the min watermark plus
//! 2 << order for orders up to `PAGE_ALLOC_COSTLY_ORDER`, so there are targets to migrate to);
//! asynchronous compaction takes migration sources only from `MOVABLE` pageblocks, the
//! synchronous priorities from every pageblock; targets come only from `MOVABLE` pageblocks (or
//! wholly free ones). Pages that cannot move: kernel allocations (stacks), pages of unmovable
//! mappings (driver buffers), pages under writeback or being read, reserved memory.
//!
//! Left out: the cached scanner positions and pageblock skip bits between runs (every run scans
//! from the ends, as 4.9's full priority does), deferred compaction, kcompactd and kswapd's
//! high-order balancing, waiting for writeback in `MIGRATE_SYNC` (pages under writeback are
//! skipped at every priority), lock contention.

use crate::buddy::{mt, PAGEBLOCK_ORDER};
use crate::mmzone::Kernel;
use crate::page::{lru, pg, Pfn, NO_SLOT};
use crate::task::Task;

/// `COMPACT_CLUSTER_MAX`: pages isolated per migration batch.
const COMPACT_CLUSTER_MAX: usize = 32;

/// `enum compact_priority` of 4.9: lower is more thorough.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompactPriority {
    SyncFull = 0,
    SyncLight = 1,
    Async = 2,
}

impl CompactPriority {
    /// The next more thorough priority.
    pub fn raised(self) -> Option<Self> {
        match self {
            Self::Async => Some(Self::SyncLight),
            Self::SyncLight => Some(Self::SyncFull),
            Self::SyncFull => None,
        }
    }
}

/// `enum compact_result`, the values the allocator distinguishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactResult {
    /// Not enough free memory to compact (`COMPACT_SKIPPED`: reclaim first).
    Skipped,
    /// A block of the order is available (`COMPACT_SUCCESS`).
    Success,
    /// The scanners met without forming one (`COMPACT_COMPLETE`: compaction failed).
    Complete,
}

impl Kernel {
    /// `__zone_watermark_ok` for an allocation of `order` against `mark` with `free` pages.
    pub(crate) fn watermark_ok_order(&self, order: u32, mark: u64, free: u64) -> bool {
        let free = free.saturating_sub((1 << order) - 1);
        if free <= mark {
            return false;
        }
        order == 0 || self.frames.buddy.as_ref().is_some_and(|b| b.has_block(order))
    }

    /// `compaction_suitable` for a request of `order` with `available` pages (free, or free plus
    /// reclaimable for `compaction_zonelist_suitable`).
    pub(crate) fn compaction_suitable(&self, order: u32, available: u64) -> bool {
        available >= self.wmark.min + (2 << order)
    }

    /// Whether frame `p` can be isolated for migration.
    fn migratable(&self, p: Pfn) -> bool {
        let i = p as usize;
        let l = self.frames.lru[i];
        if l == lru::ZRAM_POOL {
            return true;
        }
        if (l as usize) >= lru::NR_LRU {
            return false;
        }
        if self.frames.flags[i] & (pg::WRITEBACK | pg::LOCKED) != 0 {
            return false;
        }
        !self.mappings[self.frames.mapping[i] as usize].unmovable
    }

    /// `compact_zone` for a request of 2^`order` frames of migrate type `m`, run by `t` (its
    /// time is a memory stall). Counts `compact_stall`, `compact_success`/`compact_fail` and
    /// the scanned and migrated pages.
    pub fn compact_zone(&mut self, t: &mut Task, order: u32, m: u8, prio: CompactPriority) -> CompactResult {
        let free = self.nr_free();
        if self.watermark_ok_order(order, self.wmark.min, free) {
            return CompactResult::Success;
        }
        if !self.compaction_suitable(order, free) {
            return CompactResult::Skipped;
        }
        self.vmstat.compact_stall += 1;
        let n = self.frames.len() as Pfn;
        let block = 1 << PAGEBLOCK_ORDER;
        let nblocks = n.div_ceil(block);
        let mut migrate_block: Pfn = 0;
        // The free scanner's next pageblock (it moves down) and the isolated targets.
        let mut free_block: Pfn = nblocks;
        let mut targets: Vec<Pfn> = Vec::new();
        let (mut scanned, mut free_scanned, mut migrated) = (0u64, 0u64, 0u64);
        let mut batch: Vec<Pfn> = Vec::with_capacity(COMPACT_CLUSTER_MAX);
        let result = 'scan: loop {
            if migrate_block + 1 >= free_block {
                break CompactResult::Complete;
            }
            let b = migrate_block;
            migrate_block += 1;
            let source_ok = prio != CompactPriority::Async || self.frames.buddy.as_ref().unwrap().pageblock_mt(b * block) == mt::MOVABLE;
            if !source_ok {
                continue;
            }
            let (start, end) = (b * block, ((b + 1) * block).min(n));
            let mut p = start;
            while p < end {
                batch.clear();
                while p < end && batch.len() < COMPACT_CLUSTER_MAX {
                    if let Some(o) = self.frames.buddy.as_ref().unwrap().free_order_at(p) {
                        p += 1 << o;
                        continue;
                    }
                    scanned += 1;
                    if self.migratable(p) {
                        batch.push(p);
                    }
                    p += 1;
                }
                for &src in &batch {
                    if targets.is_empty() {
                        free_scanned += self.isolate_freepages(&mut free_block, migrate_block, &mut targets);
                        if targets.is_empty() {
                            break 'scan CompactResult::Complete;
                        }
                    }
                    let dst = targets.pop().unwrap();
                    self.migrate_page(src, dst);
                    migrated += 1;
                }
                if self.watermark_ok_order(order, self.wmark.min, self.nr_free()) && self.frames.buddy.as_ref().unwrap().can_satisfy(order, m) {
                    break 'scan CompactResult::Success;
                }
            }
        };
        // release_freepages: unused targets go back to the buddy.
        for q in targets {
            self.frames.put(q);
        }
        let c = &self.cfg.costs;
        let cost = scanned * c.compact_scan_ns + free_scanned * c.compact_scan_ns / 4 + migrated * c.compact_migrate_ns;
        let start = t.now;
        t.kernel_cpu(cost);
        t.bd.reclaim_stall_ns += cost;
        self.psi_memstall(t, start, cost);
        self.vmstat.compact_migrate_scanned += scanned;
        self.vmstat.compact_free_scanned += free_scanned;
        self.vmstat.compact_isolated += 2 * migrated;
        self.vmstat.pgmigrate_success += migrated;
        match result {
            CompactResult::Success => self.vmstat.compact_success += 1,
            _ => self.vmstat.compact_fail += 1,
        }
        result
    }

    /// `isolate_freepages`: move the free scanner down from `free_block` (not below
    /// `migrate_block`), isolating the free frames of suitable target pageblocks until a batch's
    /// worth is held. Returns the frames scanned.
    fn isolate_freepages(&mut self, free_block: &mut Pfn, migrate_block: Pfn, targets: &mut Vec<Pfn>) -> u64 {
        let n = self.frames.len() as Pfn;
        let block = 1 << PAGEBLOCK_ORDER;
        let mut scanned = 0;
        while targets.len() < COMPACT_CLUSTER_MAX && *free_block > migrate_block {
            *free_block -= 1;
            let (start, end) = (*free_block * block, ((*free_block + 1) * block).min(n));
            let b = self.frames.buddy.as_mut().unwrap();
            // suitable_migration_target: a movable pageblock, or a wholly free one.
            let whole = b.free_order_at(start).is_some_and(|o| o >= PAGEBLOCK_ORDER);
            if !whole && b.pageblock_mt(start) != mt::MOVABLE {
                continue;
            }
            let mut p = start;
            while p < end {
                scanned += 1;
                match b.free_order_at(p) {
                    Some(o) => {
                        b.isolate(p, o);
                        // Highest frames first: targets are popped from the end.
                        for q in p..p + (1 << o) {
                            self.frames.lru[q as usize] = u8::MAX;
                            targets.push(q);
                        }
                        p += 1 << o;
                    }
                    None => p += 1,
                }
            }
        }
        scanned
    }

    /// `migrate_pages` for one page: move frame `src`'s page to the isolated free frame `dst`
    /// and free `src`.
    fn migrate_page(&mut self, src: Pfn, dst: Pfn) {
        let (s, d) = (src as usize, dst as usize);
        let l = self.frames.lru[s];
        if l == lru::ZRAM_POOL {
            // zsmalloc page: its place in the pool's frame list is kept in `index`.
            let pos = self.frames.index[s] as usize;
            self.zram_pool_frames[pos] = dst;
            self.frames.index[d] = pos as u32;
            self.frames.lru[d] = lru::ZRAM_POOL;
            self.frames.lru[s] = u8::MAX;
            self.frames.put(src);
            return;
        }
        self.lru.remove(&mut self.frames, src);
        let f = &mut self.frames;
        f.flags[d] = f.flags[s];
        f.mapping[d] = f.mapping[s];
        f.index[d] = f.index[s];
        f.mapcount[d] = f.mapcount[s];
        f.gen[d] = f.gen[s];
        f.swap_slot[d] = f.swap_slot[s];
        f.io_done[d] = f.io_done[s];
        f.owner[d] = f.owner[s];
        let slot = f.swap_slot[s];
        f.swap_slot[s] = NO_SLOT;
        if slot != NO_SLOT {
            self.swap.cache[slot as usize] = dst;
        }
        let (m, idx) = (self.frames.mapping[d] as usize, self.frames.index[d] as usize);
        let e = &mut self.mappings[m].pages[idx];
        if e.is_present() && e.pfn() == src {
            let hot = e.is_hot();
            *e = crate::mm::Pte::present(dst);
            if hot {
                e.0 |= crate::mm::PTE_HOT;
            }
        }
        self.lru.add_head(&mut self.frames, l, dst);
        self.frames.put(src);
    }
}
