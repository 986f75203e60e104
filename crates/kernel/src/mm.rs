//! Address spaces, VMAs, page tables and processes (`mm_struct`, `vm_area_struct`,
//! `address_space`).
//!
//! Every page of memory belongs to an address space (`Mapping`): a private anonymous object owned
//! by one VMA, a file's page cache shared by every VMA that maps the file, or a COW object holding
//! anon pages shared copy-on-write after fork (see [`crate::fork`]). A `Mapping` holds one `Pte`
//! per page: never touched, present in a frame, swapped to a slot, a shadow entry left by
//! eviction (file pages; anon shadows live in the swap slot), the shared zero page, or (private
//! anon only) a COW entry: the page at the same index of a COW object is mapped read-only here.
//! For file VMAs, whether *this* process has a cached page mapped is recorded per VMA page as the
//! frame's allocation generation at map time, so evicting a page unmaps it from every process at
//! once (as `try_to_unmap` does through the rmap) without walking the VMAs.
//!
//! Left out: mremap, partial munmap, huge pages, page-table pages themselves.

use crate::page::Pfn;
use std::collections::HashMap;

/// A page-table (or page-cache) entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Pte(pub u64);

const TAG_SHIFT: u32 = 61;
const PAYLOAD: u64 = (1 << TAG_SHIFT) - 1;

/// Bit of a present private-anon PTE: the page is known young and dirty, so a touch changes
/// nothing but the toucher's clock (the kernel's fast path; cleared wherever the kernel clears the
/// frame's young or dirty bit, and gone with any rewrite of the entry). Bit 60 is inside the
/// payload, above any frame number.
pub const PTE_HOT: u64 = 1 << 60;

impl Pte {
    pub const NONE: Pte = Pte(0);
    #[inline(always)]
    pub fn is_hot(self) -> bool {
        self.0 & PTE_HOT != 0
    }
    /// The entry without the hot bit (to compare or move it).
    #[inline(always)]
    pub fn cold(self) -> Pte {
        Pte(self.0 & !PTE_HOT)
    }
    pub const ZERO: Pte = Pte(4 << TAG_SHIFT);
    /// A COW entry: this (private anon) PTE maps, read-only, page `index` of COW object `obj`
    /// (a `Mapping` id), whether that page is resident or swapped.
    #[inline]
    pub fn cow(obj: u32) -> Pte {
        Pte(5 << TAG_SHIFT | obj as u64)
    }
    #[inline]
    pub fn present(p: Pfn) -> Pte {
        Pte(1 << TAG_SHIFT | p as u64)
    }
    #[inline]
    pub fn swap(slot: u32) -> Pte {
        Pte(2 << TAG_SHIFT | slot as u64)
    }
    /// A shadow entry: the eviction age, and whether the page was in the workingset (active).
    #[inline]
    pub fn shadow(age: u64, workingset: bool) -> Pte {
        Pte(3 << TAG_SHIFT | ((age << 1) & PAYLOAD) | workingset as u64)
    }
    #[inline]
    pub fn tag(self) -> u64 {
        self.0 >> TAG_SHIFT
    }
    #[inline]
    pub fn is_present(self) -> bool {
        self.tag() == 1
    }
    #[inline]
    pub fn pfn(self) -> Pfn {
        debug_assert!(self.is_present());
        (self.0 & PAYLOAD) as Pfn
    }
    #[inline]
    pub fn is_swap(self) -> bool {
        self.tag() == 2
    }
    #[inline]
    pub fn slot(self) -> u32 {
        debug_assert!(self.is_swap());
        (self.0 & PAYLOAD) as u32
    }
    #[inline]
    pub fn is_shadow(self) -> bool {
        self.tag() == 3
    }
    #[inline]
    pub fn shadow_age(self) -> u64 {
        (self.0 & PAYLOAD) >> 1
    }
    #[inline]
    pub fn shadow_workingset(self) -> bool {
        self.0 & 1 == 1
    }
    #[inline]
    pub fn is_zero(self) -> bool {
        self.tag() == 4
    }
    #[inline]
    pub fn is_cow(self) -> bool {
        self.tag() == 5
    }
    /// The COW object a COW entry maps from.
    #[inline]
    pub fn cow_obj(self) -> u32 {
        debug_assert!(self.is_cow());
        (self.0 & PAYLOAD) as u32
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MappingKind {
    Anon,
    File,
}

/// An address space: the pages of one anonymous object or one file.
#[derive(Clone, Debug)]
pub struct Mapping {
    pub(crate) kind: MappingKind,
    pub(crate) name: String,
    pub pages: Vec<Pte>,
    /// Owning process index for anon objects.
    pub(crate) owner: u32,
    /// Pages currently present in frames.
    pub nr_present: u64,
    /// Pages swapped out (anon).
    pub(crate) nr_swapped: u64,
    /// VMAs mapping this object.
    pub(crate) nr_vmas: u32,
    /// COW entries in this (private anon) page table: pages mapped from a COW object.
    pub(crate) nr_cow: u64,
    /// A COW object (anon pages shared copy-on-write after fork; owner `u32::MAX`).
    pub cow_object: bool,
    /// COW objects: per page, the number of COW entries mapping it (the page's mapcount; kept
    /// while the page is swapped). Emptied, with `pages`, once no entry maps the object.
    pub(crate) shares: Vec<u16>,
    /// COW objects: pages with `shares > 0` (all of them present or swapped).
    pub(crate) nr_shared: u64,
    /// Its pages are allocated `MIGRATE_UNMOVABLE` and compaction cannot move them (buffers a
    /// driver maps, such as graphics memory); only with the buddy allocator.
    pub unmovable: bool,
}

impl Mapping {
    /// A new, empty mapping of `npages`.
    pub fn new(kind: MappingKind, name: String, npages: u32, owner: u32) -> Self {
        Self {
            kind,
            name,
            pages: vec![Pte::NONE; npages as usize],
            owner,
            nr_present: 0,
            nr_swapped: 0,
            nr_vmas: 0,
            nr_cow: 0,
            cow_object: false,
            shares: Vec::new(),
            nr_shared: 0,
            unmovable: false,
        }
    }
}

/// `MMAP_LOTSAMISS` (mm/filemap.c): misses beyond which mmap read-around stops for a file.
pub const MMAP_LOTSAMISS: u32 = 100;

/// A virtual memory area of a process.
#[derive(Clone, Debug)]
pub struct Vma {
    pub name: String,
    pub(crate) proc_idx: u32,
    pub mapping: u32,
    pub npages: u32,
    pub file: bool,
    pub(crate) exec: bool,
    /// File VMAs: allocation generation of the frame mapped at each page, 0 = not mapped.
    pub(crate) mapgen: Vec<u32>,
    pub(crate) live: bool,
    /// VM_LOCKED (mlock): its pages live on the unevictable list.
    pub locked: bool,
    /// Readahead state of this mapping of the file (`struct file_ra_state`): window start, size,
    /// async part.
    pub(crate) ra: (u32, u32, u32),
    /// `file_ra_state.mmap_miss`: page-cache misses of faults on this mapping, less its hits;
    /// above [`MMAP_LOTSAMISS`] a major fault reads only the faulting page (no read-around).
    pub(crate) mmap_miss: u32,
    /// The parent's VMA this one was duplicated from by fork (`dup_mmap`), if any. Informational:
    /// sharing is per page, through COW entries.
    pub cow_parent: Option<u32>,
    /// Its last-level page-table pages, one per 512 pages of the area (the VMA taken as 2 MiB
    /// aligned), `NO_PFN` until a fault in that range allocates it; empty without the buddy
    /// allocator.
    pub(crate) ptes: Vec<crate::page::Pfn>,
}

/// Per-process fault and reclaim accounting.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ProcStats {
    pub minflt: u64,
    pub majflt: u64,
    pub swapin: u64,
    /// Pages of this process's own anonymous memory written to swap (pages shared copy-on-write
    /// with other processes are counted by none).
    pub swapout: u64,
    pub refault_anon: u64,
    pub refault_file: u64,
    /// File refaults that activated the page (the refault distance within the workingset):
    /// what `workingset_activate_file` counts, per faulting process.
    pub activate_file: u64,
    /// Time this process's thread spent in memory stalls (direct reclaim, thrashing refaults).
    pub(crate) memstall_ns: u64,
    pub(crate) allocstall: u64,
}

#[derive(Clone, Debug)]
pub struct Process {
    pub(crate) pid: u32,
    pub(crate) name: String,
    /// An app process (set by the activity manager): reclaim policies may treat its pages by
    /// whether it is the foreground app; other processes' pages keep the stock rules.
    pub app: bool,
    /// Exempt from foreground-aware eviction (`kernel.fae_exempt` names it).
    pub(crate) fae_exempt: bool,
    pub oom_score_adj: i32,
    pub alive: bool,
    pub vmas: Vec<u32>,
    pub(crate) vma_by_name: HashMap<String, u32>,
    /// Last time the process was brought to (or used in) the foreground; lmkd kills the least
    /// recently used process within an adj slot.
    pub(crate) last_active_ns: u64,
    pub stats: ProcStats,
    /// Zero-page mappings (counted in neither RSS nor memory).
    pub nr_zero: u64,
    /// The process this one was forked from (`Kernel::fork_process`), if any.
    pub parent: Option<u32>,
    /// Its threads' kernel stacks (order-`THREAD_SIZE_ORDER` blocks; buddy allocator only).
    pub kstacks: Vec<crate::page::Pfn>,
    /// Its threads besides the main one (`Kernel::new_thread_in`).
    pub(crate) threads: Vec<mobmem_engine::ThreadId>,
    /// The cores its cpuset allows, one bit per core of `Kernel::cpus` (0: every core).
    pub cpuset: u64,
}
