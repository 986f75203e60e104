//! The buddy allocator's free lists (`struct free_area` in `include/linux/mmzone.h`, the free
//! paths of `mm/page_alloc.c`), used when `kernel.buddy` is on.
//!
//! Free memory is kept in naturally aligned blocks of 2^order frames, orders 0..`MAX_ORDER`, on
//! one list per order and migrate type. Physical memory is divided into pageblocks of
//! 2^`PAGEBLOCK_ORDER` frames, each labelled with a migrate type (all `MOVABLE` at boot):
//! - allocation (`__rmqueue_smallest`) takes the first block of the smallest order with a free
//!   block of the wanted type and splits it (`expand`), the remainders going to the same type;
//! - when the type has nothing free, `__rmqueue_fallback` takes the *largest* free block of a
//!   fallback type (the `fallbacks[]` table of 4.9) and, where `can_steal_fallback` allows,
//!   moves every free page of that pageblock to the wanted type's lists and claims the pageblock
//!   if at least half of it was free (`steal_suitable_fallback`);
//! - freeing (`__free_one_page`) merges a block with its buddy as long as the buddy is free at
//!   the same order, puts the result on the list of its pageblock's type, at the tail when the
//!   next-larger buddy is free too (so it has a chance to merge), else at the head.
//!
//! This is what turns scattered unmovable allocations into external fragmentation: unmovable
//! pages that fall back into movable pageblocks pin those blocks, so that a later high-order
//! request finds no free block of its order although many order-0 pages are free.
//!
//! Linux 4.9's values: `MAX_ORDER` 11, `pageblock_order` 9 on arm64 with 4 KiB pages and huge
//! pages (2 MiB pageblocks). Left out: per-CPU page lists (order-0 frees reach the buddy at
//! once, so they merge sooner than on a phone), the `MIGRATE_HIGHATOMIC` reserve, CMA and
//! isolation, zones (one ZONE_NORMAL).

// Frame numbers as `page::Pfn` (u32); this module sits below `page`, which holds the lists.
type Pfn = u32;
const NO_PFN: Pfn = u32::MAX;

/// Number of orders (`MAX_ORDER` in 4.9: blocks of up to 2^10 frames, 4 MiB).
pub const MAX_ORDER: usize = 11;
/// Frames per pageblock, as an order (`pageblock_order`: 9 on arm64/4 KiB with huge pages).
pub const PAGEBLOCK_ORDER: u32 = 9;
/// `PAGE_ALLOC_COSTLY_ORDER`: orders above it may fail instead of invoking the OOM killer.
pub const PAGE_ALLOC_COSTLY_ORDER: u32 = 3;

/// Migrate types, in the kernel's order (`MIGRATE_PCPTYPES` of them have free lists here).
pub mod mt {
    pub const UNMOVABLE: u8 = 0;
    pub const MOVABLE: u8 = 1;
    pub const RECLAIMABLE: u8 = 2;
    pub const NR: usize = 3;
    pub const NAMES: [&str; NR] = ["Unmovable", "Movable", "Reclaimable"];
}

/// `fallbacks[]` of 4.9 `mm/page_alloc.c`.
const FALLBACKS: [[u8; 2]; mt::NR] = [
    [mt::RECLAIMABLE, mt::MOVABLE],   // UNMOVABLE
    [mt::RECLAIMABLE, mt::UNMOVABLE], // MOVABLE
    [mt::UNMOVABLE, mt::MOVABLE],     // RECLAIMABLE
];

const NOT_HEAD: u8 = u8::MAX;

/// `can_steal_fallback` (4.9): whether a fallback allocation of `order` for `start` takes over
/// the free pages of the pageblock it falls into.
pub fn can_steal_fallback(order: u32, start: u8) -> bool {
    order >= PAGEBLOCK_ORDER || order >= PAGEBLOCK_ORDER / 2 || start == mt::RECLAIMABLE || start == mt::UNMOVABLE
}

/// The free lists of one zone.
#[derive(Clone, Debug)]
pub struct Buddy {
    /// Order of the free block starting at this frame, or `NOT_HEAD` (`PageBuddy` + `page_order`).
    order: Vec<u8>,
    /// Doubly linked free lists through the block heads.
    next: Vec<Pfn>,
    prev: Vec<Pfn>,
    head: [[Pfn; mt::NR]; MAX_ORDER],
    nr_blocks: [[u64; mt::NR]; MAX_ORDER],
    /// The list (migrate type) each free block head is on.
    list_mt: Vec<u8>,
    /// Migrate type of each pageblock.
    block_mt: Vec<u8>,
    nr_free: u64,
    /// Fallback allocations that claimed their pageblock, and those that did not (the
    /// `mm_page_alloc_extfrag` tracepoint's `change_ownership`).
    pub extfrag_claimed: u64,
    pub extfrag_polluted: u64,
}

impl Buddy {
    /// Empty free lists over `n` frames, every pageblock `MOVABLE`.
    pub fn new(n: usize) -> Self {
        Self {
            order: vec![NOT_HEAD; n],
            next: vec![NO_PFN; n],
            prev: vec![NO_PFN; n],
            list_mt: vec![0; n],
            head: [[NO_PFN; mt::NR]; MAX_ORDER],
            nr_blocks: [[0; mt::NR]; MAX_ORDER],
            block_mt: vec![mt::MOVABLE; n.div_ceil(1 << PAGEBLOCK_ORDER)],
            nr_free: 0,
            extfrag_claimed: 0,
            extfrag_polluted: 0,
        }
    }

    #[inline]
    pub fn nr_free(&self) -> u64 {
        self.nr_free
    }

    #[inline]
    pub fn pageblock_mt(&self, p: Pfn) -> u8 {
        self.block_mt[(p >> PAGEBLOCK_ORDER) as usize]
    }

    pub fn nr_pageblocks(&self) -> usize {
        self.block_mt.len()
    }

    /// Free blocks per order and migrate type (`/proc/pagetypeinfo`).
    pub fn nr_blocks(&self, order: usize, m: u8) -> u64 {
        self.nr_blocks[order][m as usize]
    }

    /// Order of the free block starting at `p`, if one does.
    #[inline]
    pub fn free_order_at(&self, p: Pfn) -> Option<u32> {
        let o = self.order[p as usize];
        (o != NOT_HEAD).then_some(o as u32)
    }

    /// Whether a free block of at least `order` is on any list (`__zone_watermark_ok`'s
    /// free-area check for order > 0).
    pub fn has_block(&self, order: u32) -> bool {
        (order as usize..MAX_ORDER).any(|o| self.nr_blocks[o].iter().any(|&n| n > 0))
    }

    /// `compact_finished`'s test: a block of `order` or larger on `m`'s lists, or on a fallback
    /// type's lists that an allocation of `m` could steal.
    pub fn can_satisfy(&self, order: u32, m: u8) -> bool {
        (order as usize..MAX_ORDER).any(|o| {
            self.nr_blocks[o][m as usize] > 0 || (can_steal_fallback(o as u32, m) && FALLBACKS[m as usize].iter().any(|&f| self.nr_blocks[o][f as usize] > 0))
        })
    }

    fn list_add(&mut self, p: Pfn, order: usize, m: u8, tail: bool) {
        let i = p as usize;
        self.order[i] = order as u8;
        self.list_mt[i] = m;
        let h = self.head[order][m as usize];
        if h == NO_PFN {
            self.next[i] = p;
            self.prev[i] = p;
            self.head[order][m as usize] = p;
        } else {
            // Circular list: the tail is head's prev.
            let t = self.prev[h as usize];
            self.next[i] = h;
            self.prev[i] = t;
            self.next[t as usize] = p;
            self.prev[h as usize] = p;
            if !tail {
                self.head[order][m as usize] = p;
            }
        }
        self.nr_blocks[order][m as usize] += 1;
        self.nr_free += 1 << order;
    }

    /// Remove the free block at `p` (order `order`) from list `m`.
    fn list_del(&mut self, p: Pfn, order: usize, m: u8) {
        let i = p as usize;
        let (n, pr) = (self.next[i], self.prev[i]);
        if n == p {
            self.head[order][m as usize] = NO_PFN;
        } else {
            self.next[pr as usize] = n;
            self.prev[n as usize] = pr;
            if self.head[order][m as usize] == p {
                self.head[order][m as usize] = n;
            }
        }
        self.order[i] = NOT_HEAD;
        self.next[i] = NO_PFN;
        self.prev[i] = NO_PFN;
        self.nr_blocks[order][m as usize] -= 1;
        self.nr_free -= 1 << order;
    }

    /// Take the block at the head of list (`order`, `m`) off it.
    fn pop(&mut self, order: usize, m: u8) -> Option<Pfn> {
        let p = self.head[order][m as usize];
        if p == NO_PFN {
            return None;
        }
        self.list_del(p, order, m);
        Some(p)
    }

    /// `expand`: split the block at `p` of order `high` down to `low`, listing the upper halves
    /// under `m`; `p` keeps the low 2^low frames.
    fn expand(&mut self, p: Pfn, low: usize, high: usize, m: u8) {
        let mut h = high;
        while h > low {
            h -= 1;
            self.list_add(p + (1 << h), h, m, false);
        }
    }

    /// `__rmqueue`: allocate a block of 2^`order` frames for migrate type `m`.
    pub fn alloc(&mut self, order: u32, m: u8) -> Option<Pfn> {
        let order = order as usize;
        // __rmqueue_smallest
        for o in order..MAX_ORDER {
            if let Some(p) = self.pop(o, m) {
                self.expand(p, order, o, m);
                return Some(p);
            }
        }
        self.alloc_fallback(order, m)
    }

    /// `__rmqueue_fallback`: the largest free block of a fallback type, stealing its pageblock's
    /// free pages where allowed.
    fn alloc_fallback(&mut self, order: usize, start: u8) -> Option<Pfn> {
        for o in (order..MAX_ORDER).rev() {
            let Some(&f) = FALLBACKS[start as usize].iter().find(|&&f| self.head[o][f as usize] != NO_PFN) else { continue };
            let p = self.head[o][f as usize];
            let mut listed = f;
            if can_steal_fallback(o as u32, start) {
                self.steal_suitable_fallback(p, o, start);
                listed = self.list_mt[p as usize];
            }
            self.list_del(p, o, listed);
            self.expand(p, order, o, start);
            return Some(p);
        }
        None
    }

    /// `steal_suitable_fallback`: move the free pages of `p`'s pageblock to `start`'s lists and
    /// claim the pageblock if at least half of it is free (whole pageblocks when `order` spans them).
    fn steal_suitable_fallback(&mut self, p: Pfn, order: usize, start: u8) {
        if order as u32 >= PAGEBLOCK_ORDER {
            let first = p >> PAGEBLOCK_ORDER;
            for b in first..first + (1 << (order as u32 - PAGEBLOCK_ORDER)) {
                self.block_mt[b as usize] = start;
            }
            self.relist(p, order, start);
            self.extfrag_claimed += 1;
            return;
        }
        let moved = self.move_freepages_block(p, start);
        if moved >= 1 << (PAGEBLOCK_ORDER - 1) {
            self.block_mt[(p >> PAGEBLOCK_ORDER) as usize] = start;
            self.extfrag_claimed += 1;
        } else {
            self.extfrag_polluted += 1;
        }
    }

    /// Move the free block at `p` to list `m`.
    fn relist(&mut self, p: Pfn, order: usize, m: u8) {
        let cur = self.list_mt[p as usize];
        if cur != m {
            self.list_del(p, order, cur);
            self.list_add(p, order, m, false);
        }
    }

    /// `move_freepages_block`: every free block inside `p`'s pageblock onto `m`'s lists; returns
    /// the number of free frames found.
    fn move_freepages_block(&mut self, p: Pfn, m: u8) -> u64 {
        let start = p >> PAGEBLOCK_ORDER << PAGEBLOCK_ORDER;
        let end = (start + (1 << PAGEBLOCK_ORDER)).min(self.order.len() as Pfn);
        let mut q = start;
        let mut moved = 0;
        while q < end {
            let o = self.order[q as usize];
            if o == NOT_HEAD {
                q += 1;
            } else {
                self.relist(q, o as usize, m);
                moved += 1 << o;
                q += 1 << o;
            }
        }
        moved
    }

    /// `__free_one_page`: free the block of 2^`order` frames at `p`, merging with free buddies.
    pub fn free(&mut self, p: Pfn, order: u32) {
        let n = self.order.len() as Pfn;
        let m = self.pageblock_mt(p);
        let mut p = p;
        let mut o = order as usize;
        while o < MAX_ORDER - 1 {
            let b = p ^ (1 << o);
            if b >= n || self.order[b as usize] != o as u8 {
                break;
            }
            let bm = self.list_mt[b as usize];
            self.list_del(b, o, bm);
            p &= b;
            o += 1;
        }
        // If the next-larger buddy is free, this block may merge soon: keep it at the tail so it
        // is not handed out first.
        let mut tail = false;
        if o < MAX_ORDER - 2 {
            let combined = p & !(1 << o);
            let higher = combined ^ (1 << (o + 1));
            tail = higher < n && self.order[higher as usize] == (o + 1) as u8;
        }
        self.list_add(p, o, m, tail);
    }

    /// Take the free block at `p` (order `order`) off its list, for compaction's free scanner
    /// (`isolate_freepages_block` → `__isolate_free_page`).
    pub fn isolate(&mut self, p: Pfn, order: u32) {
        let m = self.list_mt[p as usize];
        self.list_del(p, order as usize, m);
    }

    /// Whether `p` lies in a free block (as its head or inside it).
    pub fn is_free(&self, p: Pfn) -> bool {
        for o in 0..MAX_ORDER {
            let h = p >> o << o;
            if self.order[h as usize] != NOT_HEAD && self.order[h as usize] as usize >= o {
                return true;
            }
        }
        false
    }

    /// Check the lists against the frames they cover (debug builds, tests): every free frame in
    /// exactly one listed block, counts right, no two free buddies of one order unmerged.
    pub fn check(&self) -> Result<(), String> {
        let mut covered = vec![false; self.order.len()];
        let mut total = 0u64;
        for o in 0..MAX_ORDER {
            for m in 0..mt::NR {
                let mut n = 0u64;
                let h = self.head[o][m];
                if h != NO_PFN {
                    let mut p = h;
                    loop {
                        if self.order[p as usize] != o as u8 || self.list_mt[p as usize] != m as u8 {
                            return Err(format!("frame {p} on list ({o}, {m}) records ({}, {})", self.order[p as usize], self.list_mt[p as usize]));
                        }
                        if p & ((1 << o) - 1) != 0 {
                            return Err(format!("block {p} of order {o} is not aligned"));
                        }
                        for q in p..p + (1 << o) {
                            if covered[q as usize] {
                                return Err(format!("frame {q} is in two free blocks"));
                            }
                            covered[q as usize] = true;
                        }
                        n += 1;
                        p = self.next[p as usize];
                        if p == h {
                            break;
                        }
                    }
                }
                if n != self.nr_blocks[o][m] {
                    return Err(format!("list ({o}, {m}) holds {n} blocks, counted {}", self.nr_blocks[o][m]));
                }
                total += n << o;
            }
        }
        if total != self.nr_free {
            return Err(format!("free lists hold {total} frames, counted {}", self.nr_free));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn full(n: usize) -> Buddy {
        let mut b = Buddy::new(n);
        for p in 0..n as Pfn {
            b.free(p, 0);
        }
        b
    }

    #[test]
    fn frees_merge_into_max_order_blocks() {
        let b = full(4096);
        assert_eq!(b.nr_free(), 4096);
        assert_eq!(b.nr_blocks(MAX_ORDER - 1, mt::MOVABLE), 4);
        b.check().unwrap();
    }

    #[test]
    fn unmovable_fallback_pollutes_a_movable_block_under_fragmentation() {
        let mut b = full(2048);
        // Fragment: allocate everything, free every other frame of the first pageblock.
        let mut got = Vec::new();
        while let Some(p) = b.alloc(0, mt::MOVABLE) {
            got.push(p);
        }
        for &p in got.iter().filter(|&&p| p < 512 && p % 2 == 0) {
            b.free(p, 0);
        }
        assert!(!b.has_block(1));
        let u = b.alloc(0, mt::UNMOVABLE).unwrap();
        assert!(u < 512);
        // Half the block was free (256 frames): the unmovable allocation claims it.
        assert_eq!(b.pageblock_mt(u), mt::UNMOVABLE);
        assert_eq!(b.nr_blocks(0, mt::UNMOVABLE), 255);
        b.check().unwrap();
    }

    proptest! {
        /// Any sequence of allocations and frees keeps the lists consistent and gives back
        /// exactly the frames handed out; freeing everything restores max-order blocks.
        #[test]
        fn alloc_free_conserves_frames(ops in proptest::collection::vec((0u32..4, 0u8..3, any::<bool>(), any::<u16>()), 1..400)) {
            let n = 4096usize;
            let mut b = full(n);
            let mut held: Vec<(Pfn, u32)> = Vec::new();
            for (order, m, free, pick) in ops {
                if free && !held.is_empty() {
                    let (p, o) = held.swap_remove(pick as usize % held.len());
                    b.free(p, o);
                } else if let Some(p) = b.alloc(order, m) {
                    prop_assert_eq!(p % (1 << order), 0);
                    for q in p..p + (1 << order) {
                        prop_assert!(!b.is_free(q));
                    }
                    held.push((p, order));
                }
                let held_frames: u64 = held.iter().map(|&(_, o)| 1u64 << o).sum();
                prop_assert_eq!(b.nr_free() + held_frames, n as u64);
                prop_assert!(b.check().is_ok(), "{:?}", b.check());
            }
            for (p, o) in held.drain(..) {
                b.free(p, o);
            }
            prop_assert_eq!(b.nr_free(), n as u64);
            let max: u64 = (0..mt::NR as u8).map(|m| b.nr_blocks(MAX_ORDER - 1, m)).sum();
            prop_assert_eq!(max, 4);
        }
    }
}
