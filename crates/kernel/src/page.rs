//! Physical page frames (the kernel's `struct page` array) in struct-of-arrays form.
//!
//! A frame is in exactly one state: free, on one LRU list, holding zram pool data, or reserved.
//! Per frame we keep the flags reclaim reads (PG_referenced, PG_active, PG_workingset, dirty,
//! writeback, swap-backed, the aggregated PTE young bit), the owner (`mapping`, `index`) used as
//! the reverse map, a mapcount for shared pages (file pages; anon pages shared copy-on-write after
//! fork), and a generation number that is new at every allocation, so per-VMA "is mapped" records
//! become stale without walking them.
//!
//! Left out: compound pages/THP, page locks, per-CPU pagevec batching, zones other than one
//! ZONE_NORMAL, NUMA.

pub type Pfn = u32;
/// Bytes per page (4 KiB base pages; the only page size modelled).
pub const PAGE_SIZE: u64 = 4096;
pub const NO_PFN: Pfn = u32::MAX;
pub const NO_SLOT: u32 = u32::MAX;

/// Which list (or non-LRU state) a frame is in. Values 0..=4 are the five LRU lists.
pub mod lru {
    pub const INACTIVE_ANON: u8 = 0;
    pub const ACTIVE_ANON: u8 = 1;
    pub const INACTIVE_FILE: u8 = 2;
    pub const ACTIVE_FILE: u8 = 3;
    pub const UNEVICTABLE: u8 = 4;
    pub const NR_LRU: usize = 5;
    pub const FREE: u8 = 10;
    pub const ZRAM_POOL: u8 = 11;
    pub const RESERVED: u8 = 12;
    /// Allocated by the kernel for itself from the buddy allocator (kernel stacks, driver buffers
    /// of unmovable mappings are process pages and stay on their lists).
    pub const KERNEL: u8 = 13;
    pub const NAMES: [&str; 5] = ["inactive_anon", "active_anon", "inactive_file", "active_file", "unevictable"];

    #[inline]
    pub fn is_file(l: u8) -> bool {
        l == INACTIVE_FILE || l == ACTIVE_FILE
    }
    #[inline]
    pub fn is_active(l: u8) -> bool {
        l == ACTIVE_ANON || l == ACTIVE_FILE
    }
    /// The inactive/active list of the given type.
    #[inline]
    pub fn list(file: bool, active: bool) -> u8 {
        (file as u8) * 2 + active as u8
    }
}

/// Page flags.
pub mod pg {
    /// PG_referenced: set by mark_page_accessed and by page_check_references' first look.
    pub const REFERENCED: u16 = 1 << 0;
    /// The PTE accessed ("young") bit, aggregated over the page's mappings.
    pub const YOUNG: u16 = 1 << 1;
    pub const DIRTY: u16 = 1 << 2;
    pub const WRITEBACK: u16 = 1 << 3;
    /// PG_swapbacked: anonymous memory.
    pub const SWAPBACKED: u16 = 1 << 4;
    /// PG_workingset: the page was active before (refault of it is thrashing).
    pub const WORKINGSET: u16 = 1 << 5;
    /// PG_reclaim: rotate to the inactive tail when writeback completes.
    pub const RECLAIM: u16 = 1 << 6;
    /// Mapped with VM_EXEC.
    pub const EXEC: u16 = 1 << 7;
    /// mlocked.
    pub const MLOCKED: u16 = 1 << 8;
    /// PG_readahead: a fault on this page starts the next asynchronous readahead window.
    pub const READAHEAD: u16 = 1 << 9;
    /// PG_locked for a read: the page is in the page cache but its read from flash completes at
    /// `Frames::io_done` (not PG_uptodate before). A task touching it then waits for the read;
    /// fault-around does not map it. Cleared by the first touch after the read completed.
    pub const LOCKED: u16 = 1 << 10;
}

/// The frame table.
#[derive(Clone, Debug)]
pub struct Frames {
    pub(crate) flags: Vec<u16>,
    pub lru: Vec<u8>,
    /// Generation of the frame's LRU entry: bumped when it is added to a list and when it is taken
    /// off (see `lru.rs`: the entry whose stamp matches is the frame's place on its list).
    pub(crate) lru_gen: Vec<u32>,
    /// Owner address space (`Mapping` id) and page index in it: the reverse map.
    pub(crate) mapping: Vec<u32>,
    pub(crate) index: Vec<u32>,
    /// Number of mappings of a file page (anon private pages: 1 while mapped; anon pages shared
    /// copy-on-write: their number of sharers, see `fork.rs`).
    pub(crate) mapcount: Vec<u16>,
    /// Allocation generation, unique per allocation (set by `Kernel::take_frame`): per-VMA map
    /// records of an earlier use of the frame compare unequal.
    pub(crate) gen: Vec<u32>,
    /// Swap slot holding a copy of this anon page (swap cache), or NO_SLOT.
    pub(crate) swap_slot: Vec<u32>,
    /// When this frame's I/O completes: its writeback while WRITEBACK is set, its read while
    /// LOCKED is set.
    pub(crate) io_done: Vec<u64>,
    /// The process whose fault or read allocated the frame (the first toucher of a shared file
    /// page), `u32::MAX` for none: the page's owner for policies that treat apps differently.
    pub(crate) owner: Vec<u32>,
    free: Vec<Pfn>,
    /// The buddy allocator's free lists, when `kernel.buddy` is on (then `free` is unused).
    pub(crate) buddy: Option<Box<crate::buddy::Buddy>>,
}

impl Frames {
    pub fn new(n: usize) -> Self {
        // Hand out low frame numbers first: the free stack pops from the end.
        let free: Vec<Pfn> = (0..n as Pfn).rev().collect();
        Self {
            flags: vec![0; n],
            lru: vec![lru::FREE; n],
            lru_gen: vec![0; n],
            mapping: vec![u32::MAX; n],
            index: vec![0; n],
            mapcount: vec![0; n],
            gen: vec![0; n],
            swap_slot: vec![NO_SLOT; n],
            io_done: vec![0; n],
            owner: vec![u32::MAX; n],
            free,
            buddy: None,
        }
    }

    /// Hand the free frames to a buddy allocator (`kernel.buddy`): they are freed into it in
    /// frame order, so they merge into max-order blocks as at boot.
    pub fn enable_buddy(&mut self) {
        let mut b = crate::buddy::Buddy::new(self.len());
        let mut free = std::mem::take(&mut self.free);
        free.sort_unstable();
        for p in free {
            b.free(p, 0);
        }
        self.buddy = Some(Box::new(b));
    }

    /// Take a free block of 2^`order` frames of migrate type `m` (buddy mode only; order 0
    /// without the buddy takes from the free stack). Every frame becomes isolated.
    pub fn take_order(&mut self, order: u32, m: u8) -> Option<Pfn> {
        let Some(b) = self.buddy.as_mut() else {
            debug_assert_eq!(order, 0);
            return self.take();
        };
        let p = b.alloc(order, m)?;
        for q in p..p + (1 << order) {
            debug_assert_eq!(self.lru[q as usize], lru::FREE);
            self.lru[q as usize] = u8::MAX;
        }
        Some(p)
    }

    /// Free a block taken with `take_order`.
    pub fn put_order(&mut self, p: Pfn, order: u32) {
        if order == 0 || self.buddy.is_none() {
            debug_assert_eq!(order, 0);
            self.put(p);
            return;
        }
        for q in p..p + (1 << order) {
            self.reset_freed(q);
        }
        self.buddy.as_mut().unwrap().free(p, order);
    }

    /// A freed frame's metadata: no flags, on no list, no mapping.
    #[inline]
    fn reset_freed(&mut self, p: Pfn) {
        let i = p as usize;
        self.flags[i] = 0;
        self.lru[i] = lru::FREE;
        self.mapping[i] = u32::MAX;
        self.mapcount[i] = 0;
    }

    pub fn len(&self) -> usize {
        self.flags.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flags.is_empty()
    }

    #[inline]
    pub fn nr_free(&self) -> u64 {
        match &self.buddy {
            Some(b) => b.nr_free(),
            None => self.free.len() as u64,
        }
    }

    /// Take a free frame (state becomes "isolated": the caller puts it on a list or in a pool).
    #[inline]
    pub fn take(&mut self) -> Option<Pfn> {
        let p = match self.buddy.as_mut() {
            Some(b) => b.alloc(0, crate::buddy::mt::MOVABLE)?,
            None => self.free.pop()?,
        };
        debug_assert_eq!(self.lru[p as usize], lru::FREE);
        self.lru[p as usize] = u8::MAX; // isolated
        Some(p)
    }

    /// Return a frame that is not on any list to the free pool.
    #[inline]
    pub fn put(&mut self, p: Pfn) {
        let i = p as usize;
        debug_assert!(
            self.lru[i] == u8::MAX || self.lru[i] == lru::ZRAM_POOL || self.lru[i] == lru::RESERVED || self.lru[i] == lru::KERNEL,
            "freeing a frame that is still listed: {}",
            self.lru[i]
        );
        self.reset_freed(p);
        debug_assert_eq!(self.swap_slot[i], NO_SLOT);
        match self.buddy.as_mut() {
            Some(b) => b.free(p, 0),
            None => self.free.push(p),
        }
    }
}
