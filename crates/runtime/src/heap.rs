//! The heap (`gc/heap.*`): its spaces, the objects, the roots, allocation paths, the write
//! barrier's card table (with the chains of objects starting on each card), the allocation stack,
//! and the accounting (`num_bytes_allocated`).
//!
//! Layout in the kernel model (one anonymous VMA per space, named as in /proc/PID/maps):
//! `dalvik-main space` (the region space — twice the heap limit when the collector keeps a copy
//! reserve — or the mark-sweep free-list space), `dalvik-non moving space`,
//! `dalvik-large object space`; the boot image (`boot.art`, a file mapping of
//! `boot-framework.art`) and the zygote space (`dalvik-zygote space`). In a process forked from
//! a zygote (`Kernel::fork_process`, as sessions do) both are inherited: the zygote space is
//! the zygote's private anon memory, shared copy-on-write with every app; a standalone runtime
//! (`mobmem runtime run`) maps the zygote space as a file (`zygote-space`) instead. App objects
//! are never written into either.
//!
//! Every mutator or GC access to an object goes through [`Heap::touch_object`], which touches each
//! of the object's pages through `Kernel::touch`, so faults, swap-ins and reclaim stalls land on
//! the thread that touched it. The card table (`crate::card_table`) is one more anonymous mapping,
//! `dalvik-card table`, when `card_table_in_memory` is set.

use crate::card_table::{CardTable, CARDS_PER_PAGE, CARD_SIZE};
use crate::config::{CollectorKind, RuntimeConfig};
use crate::costs::RuntimeCosts;
use crate::object::{flag, AppState, ObjId, Objects, SpaceId, NULL};
use crate::space::region::{LIVE_UNKNOWN, REGION_PAGES};
use crate::space::{FreeListSpace, LargeObjectSpace, RegionSpace, PAGE, REGION_SIZE};
use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, Task};

pub const NO_REGION: u32 = u32::MAX;

/// A placement class: survivors or new objects of one class go to regions carrying its tags.
#[derive(Clone, Debug)]
pub struct AllocClass {
    pub name: String,
    pub(crate) tags: u64,
}

/// The pages of the main (region) space's regions of one allocation class at one moment: how
/// many, resident, in swap (reports: what a placement policy's classes hold where).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ClassPages {
    pub class: String,
    pub pages: u64,
    pub resident: u64,
    pub swapped: u64,
}

/// Thread-local allocation buffer.
#[derive(Clone, Copy, Debug)]
pub struct Tlab {
    pub(crate) region: u32,
    pub(crate) pos: u64,
    pub(crate) end: u64,
}

impl Default for Tlab {
    fn default() -> Self {
        Self { region: NO_REGION, pos: 0, end: 0 }
    }
}

/// Why an allocation failed in the space (before any GC).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocFail {
    /// No free region / page for the object.
    SpaceFull,
}

pub struct Heap {
    pub objs: Objects,
    pub roots: Vec<ObjId>,
    pub(crate) collector: CollectorKind,
    pub regions: RegionSpace,
    /// Main space of a mark-sweep heap (empty otherwise).
    pub(crate) main_fl: FreeListSpace,
    pub(crate) non_moving: FreeListSpace,
    pub(crate) los: LargeObjectSpace,
    /// VMA of each space, indexed by `SpaceId as usize`.
    pub vma: [u32; 5],
    pub(crate) proc_idx: u32,
    pub costs: RuntimeCosts,
    pub(crate) tlab_size: u32,
    pub(crate) los_threshold: u32,
    pub(crate) use_los: bool,
    /// ART `num_bytes_allocated_`: bytes of objects allocated and not freed (all collected spaces).
    pub bytes_allocated: u64,
    /// Bytes ever allocated (the allocated-bytes clock).
    pub alloc_clock: u64,
    pub(crate) objects_allocated: u64,
    /// Allocation stack: objects allocated since the last flip (swapped into the collection's
    /// live stack at its first pause or checkpoint).
    pub(crate) young: Vec<ObjId>,
    /// Fresh units (unit, generation): allocated outside any collection, not yet on the
    /// allocation stack or the card chains (see [`Heap::settle_fresh`]).
    pub(crate) fresh: Vec<(u32, u32)>,
    /// Objects and bytes of fresh units that died, per region, not yet reclaimed (ART would find
    /// them dead at the next collection: it frees them then, with their region's other garbage),
    /// the regions that have some, and the totals.
    pub(crate) dead_objects: Vec<u32>,
    pub(crate) dead_bytes: Vec<u32>,
    pub(crate) dead_regions: Vec<u32>,
    pub(crate) dead_total: (u64, u64),
    /// The card table (128-byte cards over the collected spaces) the write barrier dirties.
    pub cards: CardTable,
    /// Per card, the first object starting on it (`id + 1`, 0 = none); the chain continues
    /// through `Info::next_in_card` (see [`Heap::card_objects`]).
    pub(crate) card_first: Vec<u32>,
    /// VMA of the card table in the kernel model (`None`: not modelled as memory).
    pub(crate) card_vma: Option<u32>,
    /// Last card-table page the mutator's write barrier touched.
    pub(crate) card_cache: TouchCache,
    /// Fault injection for tests only: the write barrier forgets to mark cards. Never set
    /// outside tests (it breaks sticky collections, which is what the tests check).
    #[doc(hidden)]
    pub fault_skip_card_marks: bool,
    /// `RuntimeConfig::write_barrier`: reference stores mark cards.
    pub(crate) write_barrier: bool,
    /// `RuntimeConfig::keep_free_pages`: freed regions are zeroed and kept, never released.
    pub(crate) keep_free_pages: bool,
    pub(crate) tlab: Tlab,
    /// Current evacuation region per class.
    pub(crate) evac_region: Vec<u32>,
    pub classes: Vec<AllocClass>,
    /// Class of new mutator allocations.
    pub mutator_class: u8,
    /// Number of the current (or last) collection (page stamps of the GC working set).
    pub(crate) epoch: u32,
    /// Mark byte value of the current collection (1..=255).
    pub(crate) mark_epoch: u8,
    /// Objects allocated now are marked (allocated black): a collection is past its initial pause.
    pub(crate) allocate_black: bool,
    /// Page stamps per space for counting the GC thread's distinct pages.
    pub(crate) page_stamp: [Vec<u32>; 3],
    pub(crate) gc_pages_touched: u64,
    /// Object-granularity swap: objects with stubs, their space and the app's swap file.
    pub oswap: crate::object_swap::ObjectSwap,
    /// Next free region search start is implicit (lowest first); counters for reports:
    pub(crate) tlabs_allocated: u64,
    pub(crate) regions_released: u64,
    /// Last page touched by the GC thread and by the mutator (see [`TouchCache`]).
    pub(crate) gc_cache: TouchCache,
    pub(crate) mut_cache: TouchCache,
    pub(crate) touch_ns: u64,
    /// The kernel's LRU is pure (every touch reorders it): no touch cache.
    pub(crate) touch_cache_enabled: bool,
}

/// The last few pages a thread touched. Touching one of them again only costs the kernel's
/// resident-touch CPU: the page is mapped with its accessed bit (and dirty bit, after a write)
/// set, and nothing can have changed that if the kernel's clock and its touch generation (its
/// fault count, LRU scans — page_referenced clears accessed bits — and madvise counters, see
/// [`Kernel::touch_gen`]) did not move since the pages were touched (the cache's *stamp*) and
/// the process is alive — exactly what
/// [`TouchCache::hit`] checks. A touch of another page that does not fault changes none of
/// these. Only pages the kernel reports mapped after the touch are remembered
/// ([`Kernel::touch_resident`]): a fault that could not complete (the task was killed, the
/// allocation failed) must be retried by the next touch. The runtime also drops the caches when
/// it issues madvise itself. This keeps the model's result identical to touching every time.
///
/// Several pages, not one: a copying collector alternates between the page it reads an object
/// from, the page it copies it to and the page it scans next, and a mutator between an object's
/// page and its new objects' pages, so a single entry missed on most touches.
#[derive(Clone, Copy, Debug)]
pub struct TouchCache {
    /// (VMA, page) of each entry.
    pages: [(u32, u32); TOUCH_WAYS],
    /// Bit `i`: entry `i` was written (a write touch of a page only read must reach the kernel).
    written: u8,
    /// The entry the next new page replaces (round robin).
    next: u8,
    /// The stamp every entry was touched under: the kernel's time and touch generation.
    now: u64,
    gen: u64,
}

/// Pages a [`TouchCache`] remembers.
const TOUCH_WAYS: usize = 4;

impl TouchCache {
    pub const NONE: Self = Self { pages: [(u32::MAX, u32::MAX); TOUCH_WAYS], written: 0, next: 0, now: 0, gen: 0 };
    #[inline]
    fn way(&self, v: u32, p: u32) -> Option<usize> {
        self.pages.iter().position(|&e| e == (v, p))
    }
    #[inline]
    fn hit(&self, k: &Kernel, v: u32, p: u32, write: bool) -> bool {
        match self.way(v, p) {
            Some(i) => (!write || self.written & (1 << i) != 0) && self.now == k.now && self.gen == k.touch_gen() && k.vma_live(v),
            None => false,
        }
    }
    /// Serve a touch of page `p` of VMA `v` from the cache if it holds the page: charge `t` the
    /// kernel's resident-touch CPU (`touch_ns`) and return true, without asking the kernel
    /// (in debug builds, assert that the kernel's touch would have changed nothing).
    #[inline(always)]
    pub fn touch_cached(&self, k: &Kernel, t: &mut Task, v: u32, p: u32, write: bool, touch_ns: u64) -> bool {
        if !self.hit(k, v, p, write) {
            return false;
        }
        debug_assert!(k.touch_is_trivial(t, v, p, write), "touch cache hit on page {p} of VMA {v}, which a touch would change");
        t.cpu(touch_ns);
        true
    }
    /// A touch the cache could not serve: the kernel's, and the page is remembered if it is
    /// mapped after it (and caching is `enabled`).
    #[inline]
    pub fn touch_kernel(&mut self, k: &mut Kernel, t: &mut Task, v: u32, p: u32, write: bool, enabled: bool) {
        if k.touch_resident(t, v, p, write) && enabled {
            self.set(k, v, p, write);
        }
    }
    /// Remember page `p` of VMA `v`, just touched (written if `write`) and mapped.
    #[inline]
    fn set(&mut self, k: &Kernel, v: u32, p: u32, write: bool) {
        let (now, gen) = (k.now, k.touch_gen());
        if self.now != now || self.gen != gen {
            // The pages remembered were touched under another stamp: forget them.
            *self = Self { now, gen, ..Self::NONE };
        }
        let i = match self.way(v, p) {
            Some(i) => i,
            None => {
                let i = self.next as usize;
                self.next = ((i + 1) % TOUCH_WAYS) as u8;
                self.pages[i] = (v, p);
                self.written &= !(1 << i);
                i
            }
        };
        if write {
            self.written |= 1 << i;
        }
    }
    pub fn clear(&mut self) {
        *self = Self::NONE;
    }
}

/// The boot image's mapping (VMA name, file name) and the zygote space's VMA name and file name
/// (a standalone runtime maps it as a file; a zygote maps it as anon memory its children inherit).
pub const BOOT_IMAGE_VMA: &str = "boot.art";
pub const BOOT_IMAGE_FILE: &str = "boot-framework.art";
pub const ZYGOTE_SPACE_VMA: &str = "dalvik-zygote space";
const ZYGOTE_SPACE_FILE: &str = "zygote-space";

/// Pages of the boot image and of the zygote space for these settings.
pub fn immune_space_pages(cfg: &RuntimeConfig) -> (u32, u32) {
    (cfg.heap.boot_image_bytes.div_ceil(PAGE).max(1) as u32, cfg.heap.zygote_space_bytes.div_ceil(PAGE).max(1) as u32)
}

impl Heap {
    /// The object table (read-only: the heap's own methods change it).
    pub fn objects(&self) -> &Objects {
        &self.objs
    }

    /// The card table of the write barrier.
    pub fn card_table(&self) -> &CardTable {
        &self.cards
    }

    /// The card table's mapping (its VMA), when it has one.
    pub fn card_table_vma(&self) -> Option<u32> {
        self.card_vma
    }

    /// The region space (concurrent copying's and the region-based collectors' main space).
    pub fn region_space(&self) -> &RegionSpace {
        &self.regions
    }

    /// The free-list main space (mark-sweep's and mark-compact's).
    pub fn main_free_list(&self) -> &FreeListSpace {
        &self.main_fl
    }

    /// Bytes in live and not yet collected objects (ART's `num_bytes_allocated_`).
    pub fn bytes_allocated(&self) -> u64 {
        self.bytes_allocated
    }

    /// What object swap (a policy's paging of cold objects) did in this heap.
    pub fn object_swap_stats(&self) -> &crate::object_swap::ObjectSwapStats {
        &self.oswap.stats
    }

    /// Map the heap's spaces for process `proc_idx` in the kernel model.
    pub fn new(k: &mut Kernel, proc_idx: u32, cfg: &RuntimeConfig, collector: CollectorKind) -> Result<Self, String> {
        cfg.validate()?;
        let limit = cfg.heap.limit();
        let regions_for_limit = limit.div_ceil(REGION_SIZE) as u32;
        let (num_regions, fl_pages) = if collector.uses_regions() {
            let n = if collector.copy_reserve() { 2 * regions_for_limit } else { regions_for_limit };
            (n.max(2), 0u32)
        } else {
            (0, limit.div_ceil(PAGE) as u32)
        };
        let e = |r: Result<u32, mobmem_kernel::KernelError>| r.map_err(|e| e.to_string());
        let main_pages = if collector.uses_regions() { num_regions * REGION_PAGES } else { fl_pages };
        let main = e(k.map_anon(proc_idx, "dalvik-main space", main_pages))?;
        let nm_pages = cfg.heap.non_moving_capacity.div_ceil(PAGE).max(16) as u32;
        let nm = e(k.map_anon(proc_idx, "dalvik-non moving space", nm_pages))?;
        let los_pages = limit.div_ceil(PAGE) as u32;
        let los = e(k.map_anon(proc_idx, "dalvik-large object space", los_pages))?;
        // A process forked from a zygote inherits the boot image and the zygote space (the
        // zygote space as private anon memory shared copy-on-write); a standalone runtime maps
        // them as shared files, which shares their pages the same way for reads.
        let inherited = |k: &Kernel, name: &str, pages: u32| -> Result<Option<u32>, String> {
            match k.vma_index(proc_idx, name) {
                Ok(v) if k.vmas[v as usize].npages >= pages => Ok(Some(v)),
                Ok(v) => Err(format!("inherited {name} has {} pages, the heap needs {pages}", k.vmas[v as usize].npages)),
                Err(_) => Ok(None),
            }
        };
        let (boot_pages, zy_pages) = immune_space_pages(cfg);
        let boot = match inherited(k, BOOT_IMAGE_VMA, boot_pages)? {
            Some(v) => v,
            None => e(k.map_file(proc_idx, BOOT_IMAGE_VMA, BOOT_IMAGE_FILE, boot_pages, false))?,
        };
        let zygote = match inherited(k, ZYGOTE_SPACE_VMA, zy_pages)? {
            Some(v) => v,
            None => e(k.map_file(proc_idx, ZYGOTE_SPACE_VMA, ZYGOTE_SPACE_FILE, zy_pages, false))?,
        };
        let cards = CardTable::new([main_pages as u64 * PAGE, nm_pages as u64 * PAGE, los_pages as u64 * PAGE]);
        let card_vma =
            if cfg.card_table_in_memory { Some(e(k.map_anon(proc_idx, "dalvik-card table", cards.len().div_ceil(CARDS_PER_PAGE) as u32))?) } else { None };
        let mut h = Self {
            objs: Objects::default(),
            roots: Vec::new(),
            collector,
            regions: RegionSpace::new(main, num_regions, collector.copy_reserve()),
            main_fl: FreeListSpace::new(main, fl_pages),
            non_moving: FreeListSpace::new(nm, nm_pages),
            los: LargeObjectSpace::new(los, los_pages),
            vma: [main, nm, los, zygote, boot],
            proc_idx,
            costs: cfg.costs.clone(),
            tlab_size: cfg.tlab_size,
            los_threshold: cfg.large_object_threshold,
            use_los: cfg.use_los,
            bytes_allocated: 0,
            alloc_clock: 0,
            objects_allocated: 0,
            young: Vec::new(),
            fresh: Vec::new(),
            dead_objects: vec![0; num_regions as usize],
            dead_bytes: vec![0; num_regions as usize],
            dead_regions: Vec::new(),
            dead_total: (0, 0),
            card_first: vec![0; cards.len()],
            cards,
            card_vma,
            card_cache: TouchCache::NONE,
            fault_skip_card_marks: false,
            write_barrier: cfg.write_barrier,
            keep_free_pages: cfg.keep_free_pages,
            tlab: Tlab::default(),
            evac_region: vec![NO_REGION],
            classes: vec![AllocClass { name: "default".into(), tags: 0 }],
            mutator_class: 0,
            epoch: 0,
            mark_epoch: 0,
            allocate_black: false,
            page_stamp: [vec![0; main_pages as usize], vec![0; nm_pages as usize], vec![0; los_pages as usize]],
            gc_pages_touched: 0,
            oswap: Default::default(),
            tlabs_allocated: 0,
            regions_released: 0,
            gc_cache: TouchCache::NONE,
            mut_cache: TouchCache::NONE,
            touch_ns: k.cfg.costs.touch_ns,
            touch_cache_enabled: k.cfg.lru != mobmem_kernel::LruMode::Pure,
        };
        // Immune spaces hold objects too (1 KiB each, estimate), so references into them exist.
        for (space, bytes) in [(SpaceId::Boot, cfg.heap.boot_image_bytes), (SpaceId::Zygote, cfg.heap.zygote_space_bytes)] {
            for i in 0..bytes / 1024 {
                h.objs.create(i * 1024, 1024, space, 0, 0, 0, AppState::Foreground, 0);
            }
        }
        Ok(h)
    }

    /// Whether every collected space is addressable with 32-bit offsets (cells store them so).
    pub fn cell_addressable(&self) -> bool {
        self.page_stamp.iter().all(|p| (p.len() as u64) * PAGE <= 1 << 32)
    }

    /// A collection begins (its first pause or checkpoint, before the stacks are swapped): every
    /// fresh unit still alive joins the allocation stack and the card chains, as if it had been
    /// placed there when allocated. Their order among the other young objects differs from
    /// allocation order; nothing that depends on that order has a simulated cost (the sweeps and
    /// card scans that do walk objects in address order).
    pub fn settle_fresh(&mut self) {
        let fresh = std::mem::take(&mut self.fresh);
        for &(u, gen) in &fresh {
            let h = self.objs.cells.unit[u as usize];
            if h.gen != gen || !h.fresh {
                continue;
            }
            // Even a unit with no object yet (a collection started by its root's allocation)
            // stops being fresh: it leaves this list now, and a fresh unit outside it would
            // never be linked — yet a copy links its objects, and its death would then free
            // records still on card chains.
            self.objs.cells.unit[u as usize].fresh = false;
            for i in h.first..h.first + h.n as u32 {
                let c = self.objs.cells.obj[i as usize];
                if c.flags & flag::LIVE != 0 {
                    let o = crate::cell::id(i);
                    self.link_card(o, c.space as usize, c.addr as u64);
                    self.young.push(o);
                }
            }
        }
        self.fresh = fresh;
        self.fresh.clear();
    }

    /// The workload let go of unit `root` (its holder no longer references it: it is garbage).
    /// A fresh unit's records go at once; its bytes stay allocated in their regions until the
    /// next collection reclaims them ([`Heap::take_dead_fresh`]). Other units wait for the
    /// collector, as every object does.
    pub fn unit_dead(&mut self, root: ObjId) {
        if !crate::cell::is_cell(root) {
            return;
        }
        let u = self.objs.cells.get(root).unit;
        let h = self.objs.cells.unit[u as usize];
        if !h.fresh {
            return;
        }
        let mut bytes = 0u64;
        for i in h.first..h.first + h.n as u32 {
            let c = self.objs.cells.obj[i as usize];
            debug_assert!(c.space == SpaceId::Main as u8 && self.collector.uses_regions());
            let r = RegionSpace::region_of(c.addr as u64) as usize;
            if self.dead_objects[r] == 0 {
                self.dead_regions.push(r as u32);
            }
            self.dead_objects[r] += 1;
            self.dead_bytes[r] += c.size;
            bytes += c.size as u64;
        }
        let n = self.objs.cells.free_unit(u);
        self.dead_total.0 += n as u64;
        self.dead_total.1 += bytes;
    }

    /// Start a new collection's epoch (clears the mark bytes when the u8 epoch wraps).
    pub fn next_epoch(&mut self) {
        self.epoch += 1;
        if self.mark_epoch == u8::MAX {
            for w in self.objs.word.iter_mut() {
                w.mark = 0;
            }
            for c in self.objs.cells.obj.iter_mut() {
                c.mark = 0;
            }
            self.mark_epoch = 0;
        }
        self.mark_epoch += 1;
    }

    /// Whether `o` is marked in the current collection.
    #[inline]
    pub fn is_marked(&self, o: ObjId) -> bool {
        self.objs.mark(o) == self.mark_epoch
    }

    /// Register a placement class with the given region tags; returns its index.
    pub fn register_class(&mut self, name: &str, tags: &[&str]) -> u8 {
        if let Some(i) = self.classes.iter().position(|c| c.name == name) {
            return i as u8;
        }
        let mut bits = 0u64;
        for t in tags {
            bits |= 1 << self.regions.tag_id(t);
        }
        self.classes.push(AllocClass { name: name.into(), tags: bits });
        self.evac_region.push(NO_REGION);
        (self.classes.len() - 1) as u8
    }

    /// The main space's regions in use, by allocation class (every class, in registration order;
    /// empty without a region space).
    pub fn pages_by_class(&self, k: &Kernel) -> Vec<ClassPages> {
        if !self.collector.uses_regions() {
            return Vec::new();
        }
        let mut out: Vec<ClassPages> = self.classes.iter().map(|c| ClassPages { class: c.name.clone(), ..ClassPages::default() }).collect();
        let m = k.vmas[self.vma[SpaceId::Main as usize] as usize].mapping as usize;
        let pages = &k.mappings[m].pages;
        for r in 0..self.regions.num_regions as usize {
            if self.regions.state[r] == crate::space::RegionState::Free {
                continue;
            }
            let c = &mut out[self.regions.class[r] as usize];
            for e in &pages[r * REGION_PAGES as usize..((r + 1) * REGION_PAGES as usize).min(pages.len())] {
                c.pages += 1;
                if e.is_present() {
                    c.resident += 1;
                } else if e.is_swap() {
                    c.swapped += 1;
                }
            }
        }
        out
    }

    /// Objects of the boot image and zygote space.
    pub fn immune_objects(&self, space: SpaceId) -> impl Iterator<Item = ObjId> + '_ {
        (0..self.objs.len() as ObjId).filter(move |&o| self.objs.word[o as usize].space == space as u8 && self.objs.is_live(o))
    }

    // ------------------------------------------------------------------ page accesses

    /// Touch every page of object `o` on behalf of `t` (a mutator).
    #[inline]
    pub fn touch_object(&mut self, k: &mut Kernel, t: &mut Task, o: ObjId, write: bool) {
        let sp = self.objs.space(o) as usize;
        let a = self.objs.addr(o);
        let w = write && sp < 3;
        let size = self.objs.size(o);
        self.touch_pages(k, t, self.vma[sp], a, size, w);
    }

    /// Touch an address range of a collected space on behalf of a mutator.
    #[inline]
    pub fn touch_range(&mut self, k: &mut Kernel, t: &mut Task, space: SpaceId, addr: u64, size: u32, write: bool) {
        self.touch_pages(k, t, self.vma[space as usize], addr, size, write);
    }

    #[inline(always)]
    fn touch_pages(&mut self, k: &mut Kernel, t: &mut Task, v: u32, a: u64, size: u32, write: bool) {
        let first = (a / PAGE) as u32;
        let last = ((a + size as u64 - 1) / PAGE) as u32;
        // An object on one page the thread touched last: no call (most touches).
        if first == last && self.mut_cache.touch_cached(k, t, v, first, write, self.touch_ns) {
            return;
        }
        self.touch_pages_slow(k, t, v, first, last, write);
    }

    #[inline(never)]
    fn touch_pages_slow(&mut self, k: &mut Kernel, t: &mut Task, v: u32, first: u32, last: u32, write: bool) {
        for p in first..=last {
            if !self.mut_cache.touch_cached(k, t, v, p, write, self.touch_ns) {
                self.mut_cache.touch_kernel(k, t, v, p, write, self.touch_cache_enabled);
            }
        }
    }

    /// Forget the touch caches (the runtime changed pages itself, e.g. madvise).
    #[inline]
    pub fn drop_touch_caches(&mut self) {
        self.gc_cache.clear();
        self.mut_cache.clear();
    }

    /// GC-thread touch of an object, counting distinct pages (the GC working set).
    #[inline]
    pub fn gc_touch_object(&mut self, k: &mut Kernel, t: &mut Task, o: ObjId, write: bool) {
        let sp = self.objs.space(o) as usize;
        if sp >= 3 {
            return;
        }
        let a = self.objs.addr(o);
        self.gc_touch_range(k, t, sp, a, self.objs.size(o), write);
    }

    #[inline(always)]
    pub fn gc_touch_range(&mut self, k: &mut Kernel, t: &mut Task, sp: usize, a: u64, size: u32, write: bool) {
        let v = self.vma[sp];
        let first = (a / PAGE) as u32;
        let last = ((a + size as u64 - 1) / PAGE) as u32;
        // An object on one page the GC thread touched last: no call (most touches; a hit is
        // never a page new to this collection, so the page count needs nothing).
        if first == last && self.gc_cache.touch_cached(k, t, v, first, write, self.touch_ns) {
            return;
        }
        self.gc_touch_range_slow(k, t, sp, v, first, last, write);
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn gc_touch_range_slow(&mut self, k: &mut Kernel, t: &mut Task, sp: usize, v: u32, first: u32, last: u32, write: bool) {
        let ep = self.epoch;
        for p in first..=last {
            if self.gc_cache.touch_cached(k, t, v, p, write, self.touch_ns) {
                continue;
            }
            let s = &mut self.page_stamp[sp][p as usize];
            if *s != ep {
                *s = ep;
                self.gc_pages_touched += 1;
            }
            self.gc_cache.touch_kernel(k, t, v, p, write, self.touch_cache_enabled);
        }
    }

    // ------------------------------------------------------------------ allocation

    /// Allocate an object for a mutator (no GC here: the runtime handles failures): a general
    /// object, or with `unit` the next object of that unit cell (see [`crate::cell`]).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn alloc(&mut self, k: &mut Kernel, t: &mut Task, size: u32, nrefs: u16, state: AppState, pinned: bool, unit: Option<u32>) -> Result<ObjId, AllocFail> {
        let c = &self.costs;
        let (space, addr, cost) = if pinned {
            let (a, new_run) = self.non_moving.alloc(size).ok_or(AllocFail::SpaceFull)?;
            (SpaceId::NonMoving, a, c.freelist_alloc_ns + if new_run { c.new_region_ns } else { 0 })
        } else if self.use_los && size >= self.los_threshold {
            let a = self.los.alloc(size).ok_or(AllocFail::SpaceFull)?;
            (SpaceId::Los, a, c.los_alloc_ns)
        } else if !self.collector.uses_regions() {
            let (a, new_run) = self.main_fl.alloc(size).ok_or(AllocFail::SpaceFull)?;
            (SpaceId::Main, a, c.freelist_alloc_ns + if new_run { c.new_region_ns } else { 0 })
        } else if size as u64 > REGION_SIZE {
            let n = (size as u64).div_ceil(REGION_SIZE) as u32;
            let r = self.regions.alloc_large(n, size).ok_or(AllocFail::SpaceFull)?;
            (SpaceId::Main, RegionSpace::region_start(r), c.new_region_ns * n as u64)
        } else {
            let (a, cost) = self.tlab_alloc(size)?;
            (SpaceId::Main, a, cost)
        };
        let cost = cost + self.costs.init_ns(size);
        t.cpu(cost);
        let young = flag::YOUNG | if pinned { flag::PINNED } else { 0 };
        let (o, fresh) = match unit {
            None => (self.objs.create(addr, size, space, nrefs, t.now, self.alloc_clock, state, young), false),
            Some(u) => (
                self.objs.cells.push_object(u, addr, size, space as u8, nrefs, young | flag::LIVE, t.now, self.alloc_clock),
                self.objs.cells.unit[u as usize].fresh,
            ),
        };
        if !fresh {
            self.link_card(o, space as usize, addr);
        }
        if self.allocate_black {
            self.objs.set_mark(o, self.mark_epoch);
        }
        if self.oswap.track_bytes != 0 && size >= self.oswap.track_bytes {
            self.oswap.note_alloc(o);
        }
        if space == SpaceId::Main && self.collector.uses_regions() {
            let r = RegionSpace::region_of(addr) as usize;
            // (large regions got their object's bytes when they were taken)
            if self.regions.state[r] == crate::space::RegionState::Allocated {
                self.regions.obj_bytes[r] += size;
            }
        }
        self.bytes_allocated += size as u64;
        self.alloc_clock += size as u64;
        self.objects_allocated += 1;
        if !fresh {
            self.young.push(o);
        }
        // Initialising the object writes its pages.
        self.touch_pages(k, t, self.vma[space as usize], addr, size, true);
        Ok(o)
    }

    /// Bump allocation in the thread's TLAB; a new TLAB (and region) when it is full.
    #[inline(always)]
    fn tlab_alloc(&mut self, size: u32) -> Result<(u64, u64), AllocFail> {
        let s = size as u64;
        if self.tlab.region != NO_REGION && self.tlab.pos + s <= self.tlab.end {
            let a = self.tlab.pos;
            self.tlab.pos += s;
            return Ok((a, self.costs.tlab_alloc_ns));
        }
        self.tlab_refill(size)
    }

    /// A new TLAB (from the current region if it has room, else a new region).
    #[inline(never)]
    fn tlab_refill(&mut self, size: u32) -> Result<(u64, u64), AllocFail> {
        let s = size as u64;
        let want = s.max(self.tlab_size as u64);
        let mut cost = self.costs.new_tlab_ns + self.costs.tlab_alloc_ns;
        // Carve from the current region if room remains, else take a new region.
        let r = self.tlab.region;
        let room = if r != NO_REGION && self.regions.state[r as usize] == crate::space::RegionState::Allocated && !self.regions.in_from[r as usize] {
            REGION_SIZE - self.regions.top[r as usize] as u64
        } else {
            0
        };
        let region = if room >= s {
            r
        } else {
            cost += self.costs.new_region_ns;
            let tags = self.classes[self.mutator_class as usize].tags;
            self.regions.alloc_region(false, self.mutator_class, tags).ok_or(AllocFail::SpaceFull)?
        };
        let ri = region as usize;
        let start = RegionSpace::region_start(region) + self.regions.top[ri] as u64;
        let len = want.min(REGION_SIZE - self.regions.top[ri] as u64);
        self.regions.top[ri] += len as u32;
        self.tlab = Tlab { region, pos: start + s, end: start + len };
        self.tlabs_allocated += 1;
        Ok((start, cost))
    }

    /// Give up the thread's TLAB (at a flip): its unused tail stays a hole in the region.
    pub fn revoke_tlab(&mut self) {
        self.tlab = Tlab::default();
    }

    /// Allocate room for a survivor copied by a collector into class `class`'s evacuation region.
    /// Falls back to the non-moving space when no region is free (as ART's CC does).
    pub fn alloc_evac(&mut self, size: u32, class: u8, t: &mut Task) -> (SpaceId, u64) {
        let c = class as usize;
        let r = self.evac_region[c];
        if r != NO_REGION && self.regions.top[r as usize] as u64 + size as u64 <= REGION_SIZE {
            let ri = r as usize;
            let a = RegionSpace::region_start(r) + self.regions.top[ri] as u64;
            self.regions.top[ri] += size;
            self.regions.obj_bytes[ri] += size;
            return (SpaceId::Main, a);
        }
        if size as u64 <= REGION_SIZE {
            if let Some(r) = self.regions.alloc_region(true, class, self.classes[c].tags) {
                t.cpu(self.costs.new_region_ns);
                self.evac_region[c] = r;
                let ri = r as usize;
                self.regions.top[ri] = size;
                self.regions.obj_bytes[ri] = size;
                return (SpaceId::Main, RegionSpace::region_start(r));
            }
        }
        let (a, _) = self.non_moving.alloc(size).expect("non-moving space exhausted during evacuation");
        (SpaceId::NonMoving, a)
    }

    /// Forget the evacuation regions (end of a collection).
    pub fn retire_evac_regions(&mut self) {
        for r in self.evac_region.iter_mut() {
            *r = NO_REGION;
        }
    }

    // ------------------------------------------------------------------ freeing

    /// Free a dead object's memory and id. Region-space memory is reclaimed per region by the
    /// collector; large objects' pages go back to the kernel at once.
    pub fn free_object(&mut self, k: &mut Kernel, t: &mut Task, o: ObjId) {
        let w = self.objs.w(o);
        let size = self.objs.size(o);
        let a = self.objs.addr(o);
        let sp = w.space as usize;
        if sp < SpaceId::Zygote as usize {
            self.unlink_card(o, sp, a);
        }
        match self.objs.space_of(o) {
            SpaceId::Main if self.collector.uses_regions() => {
                let r = RegionSpace::region_of(a) as usize;
                self.regions.obj_bytes[r] = self.regions.obj_bytes[r].saturating_sub(size);
            }
            SpaceId::Main => {
                self.main_fl.free(a, size);
            }
            SpaceId::NonMoving => {
                self.non_moving.free(a, size);
            }
            SpaceId::Los => {
                let (first, n) = self.los.free(a, size);
                t.cpu(self.costs.los_free_ns);
                self.drop_touch_caches();
                let _ = k.madvise(t, self.vma[SpaceId::Los as usize], first, n, Advice::DontNeed);
            }
            SpaceId::Zygote | SpaceId::Boot => panic!("freeing an immune object"),
        }
        if w.flags & flag::STUB != 0 {
            self.free_stubbed(k, t, o);
        }
        self.bytes_allocated -= size as u64;
        self.objs.free(o);
    }

    /// Give `o` a stub (a copying collection, on the GC thread `t`, just before it copies `o`):
    /// its contents move to the swapped-in space (mapped at the first
    /// stub, packed with other objects), written by `t`; its heap bytes become the stub's. False
    /// if the space is full.
    pub fn make_stub(&mut self, k: &mut Kernel, t: &mut Task, o: ObjId) -> bool {
        use crate::object_swap::{stub_bytes, SWAPPED_SPACE_VMA};
        let size = self.objs.size(o);
        let stub = stub_bytes(self.objs.nrefs(o));
        if stub >= size {
            return false;
        }
        if self.oswap.space.is_none() {
            let Ok(v) = k.map_anon(self.proc_idx, SWAPPED_SPACE_VMA, self.oswap.space_pages) else {
                self.oswap.stats.space_full += 1;
                return false;
            };
            self.oswap.space = Some(crate::object_swap::SwappedSpace::new(v, self.oswap.space_pages));
        }
        let sp = self.oswap.space.as_mut().unwrap();
        let Some(addr) = sp.alloc(size) else {
            self.oswap.stats.space_full += 1;
            return false;
        };
        let v = sp.vma;
        t.cpu(self.costs.copy_ns(size));
        let (first, n) = crate::object_swap::page_span(addr, size);
        for p in first..first + n {
            k.touch(t, v, p, true);
        }
        self.objs.set_size(o, stub);
        let f = self.objs.flags(o);
        self.objs.set_flags(o, f | flag::STUB);
        self.bytes_allocated -= (size - stub) as u64;
        self.oswap.insert(o, size, addr);
        self.oswap.stats.stubs_created += 1;
        self.oswap.stats.stub_bytes_saved += (size - stub) as u64;
        true
    }

    /// `o`, which has a stub, died: its pages in the swapped-in space and its swap-file extent
    /// are freed.
    pub fn free_stubbed(&mut self, k: &mut Kernel, t: &mut Task, o: ObjId) {
        let Some(rec) = self.oswap.remove(o) else { return };
        let mut pages = std::mem::take(&mut self.oswap.scratch);
        let sp = self.oswap.space.as_mut().expect("an object with a stub has its space");
        sp.free(rec.addr, rec.size, rec.resident, &mut pages);
        let v = sp.vma;
        if !pages.is_empty() {
            self.drop_touch_caches();
        }
        for p in pages.drain(..) {
            let _ = k.madvise(t, v, p, 1, Advice::DontNeed);
        }
        self.oswap.scratch = pages;
    }

    /// Give the pages gathered in `oswap.scratch` by releasing objects back to the kernel
    /// (`MADV_DONTNEED`), one madvise per run of consecutive pages, and empty the list.
    pub fn release_swapped_pages(&mut self, k: &mut Kernel, t: &mut Task) {
        let mut pages = std::mem::take(&mut self.oswap.scratch);
        if !pages.is_empty() {
            self.drop_touch_caches();
        }
        pages.sort_unstable();
        let v = self.oswap.vma();
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len() && pages[j] == pages[j - 1] + 1 {
                j += 1;
            }
            let _ = k.madvise(t, v, pages[i], (j - i) as u32, Advice::DontNeed);
            i = j;
        }
        pages.clear();
        self.oswap.scratch = pages;
    }

    /// Free region `r` (and the following large-tail regions), releasing its pages if asked.
    pub fn release_region(&mut self, k: &mut Kernel, t: &mut Task, r: u32, release_pages: bool) {
        let mut n = 1;
        if self.regions.state[r as usize] == crate::space::RegionState::Large {
            while r + n < self.regions.num_regions && self.regions.state[(r + n) as usize] == crate::space::RegionState::LargeTail {
                n += 1;
            }
        }
        for q in r..r + n {
            if self.tlab.region == q {
                self.tlab = Tlab::default();
            }
            for e in self.evac_region.iter_mut() {
                if *e == q {
                    *e = NO_REGION;
                }
            }
            let used = self.regions.top[q as usize];
            self.regions.free_region(q);
            if self.keep_free_pages {
                // NE: zero what was used, keep the pages (the next allocation there takes no fault).
                if used > 0 {
                    self.gc_touch_range(k, t, 0, RegionSpace::region_start(q), used, true);
                    t.cpu(self.costs.init_ns(used));
                }
                self.regions.dirty[q as usize] = false;
            }
            // Its objects are gone (freed or moved): forget its cards and their object chains.
            let (lo, hi) = (self.cards.index(0, RegionSpace::region_start(q)), self.cards.index(0, RegionSpace::region_start(q + 1)));
            self.cards.clear_range(lo, hi);
            self.card_first[lo..hi].fill(0);
            if release_pages && !self.keep_free_pages {
                self.drop_touch_caches();
                self.regions.dirty[q as usize] = false;
                let _ = k.madvise(t, self.vma[0], q * REGION_PAGES, REGION_PAGES, Advice::DontNeed);
                self.regions_released += 1;
            }
        }
    }

    /// Heap trim: release the pages of free regions not yet released and of empty free-list runs.
    /// Returns pages released.
    pub fn trim(&mut self, k: &mut Kernel, t: &mut Task) -> u64 {
        if self.keep_free_pages {
            return 0; // NE: free memory stays with the heap
        }
        self.drop_touch_caches();
        let mut pages = 0u64;
        for r in 0..self.regions.num_regions {
            let i = r as usize;
            if self.regions.state[i] == crate::space::RegionState::Free && self.regions.dirty[i] {
                self.regions.dirty[i] = false;
                let _ = k.madvise(t, self.vma[0], r * REGION_PAGES, REGION_PAGES, Advice::DontNeed);
                pages += REGION_PAGES as u64;
            }
        }
        for (sp, fl) in [(0usize, &mut self.main_fl), (1, &mut self.non_moving)] {
            let ranges = fl.pages.take_dirty_free();
            fl.freed_since_trim.clear();
            for (first, n) in ranges {
                let _ = k.madvise(t, self.vma[sp], first, n, Advice::DontNeed);
                pages += n as u64;
            }
        }
        pages
    }

    // ------------------------------------------------------------------ references

    /// Store a reference (the caller charges the barrier). The write barrier marks the card of
    /// the object written (ART `WriteBarrier::ForFieldWrite`: non-null stores only); returns that
    /// card, if it marked one.
    #[inline]
    pub fn store_ref(&mut self, o: ObjId, field: u32, v: ObjId) -> Option<usize> {
        self.objs.set_ref(o, field, v);
        let sp = self.objs.space(o) as usize;
        if v == NULL || sp >= SpaceId::Zygote as usize || self.fault_skip_card_marks || !self.write_barrier {
            return None;
        }
        let c = self.cards.index(sp, self.objs.addr(o));
        self.cards.mark(c);
        Some(c)
    }

    /// The mutator's write barrier touches the card-table page of card `c` (when the card table
    /// is simulated memory).
    #[inline]
    pub fn touch_card(&mut self, k: &mut Kernel, t: &mut Task, c: usize) {
        let Some(v) = self.card_vma else { return };
        let p = (c / CARDS_PER_PAGE) as u32;
        if !self.card_cache.touch_cached(k, t, v, p, true, self.touch_ns) {
            self.card_cache.touch_kernel(k, t, v, p, true, self.touch_cache_enabled);
        }
    }

    /// A collector reads (or writes) the card-table pages of cards `[lo, hi)`.
    pub fn gc_touch_cards(&mut self, k: &mut Kernel, t: &mut Task, lo: usize, hi: usize, write: bool) {
        let Some(v) = self.card_vma else { return };
        if hi <= lo {
            return;
        }
        self.card_cache.clear();
        for p in lo / CARDS_PER_PAGE..=(hi - 1) / CARDS_PER_PAGE {
            k.touch(t, v, p as u32, write);
        }
    }

    /// The cards in use in each collected space (main, non-moving, large objects), `[lo, hi)`:
    /// up to the last allocated region, or the free-list and large-object spaces' high-water
    /// marks. Card passes of collections cover these ranges.
    pub fn card_ranges(&self) -> [(usize, usize); 3] {
        let main_end = if self.collector.uses_regions() {
            let n =
                (0..self.regions.num_regions).rev().find(|&r| self.regions.state[r as usize] != crate::space::RegionState::Free).map(|r| r + 1).unwrap_or(0);
            RegionSpace::region_start(n)
        } else {
            self.main_fl.pages.high_water as u64 * PAGE
        };
        let end = |sp: usize, bytes: u64| {
            let (lo, hi) = self.cards.space_range(sp);
            (lo, (lo + bytes.div_ceil(CARD_SIZE) as usize).min(hi))
        };
        [end(0, main_end), end(1, self.non_moving.pages.high_water as u64 * PAGE), end(2, self.los.pages.high_water as u64 * PAGE)]
    }

    // ------------------------------------------------------------------ objects on cards

    /// Record that `o` starts at `addr` of collected space `sp` (on allocation or after a move).
    #[inline(always)]
    pub fn link_card(&mut self, o: ObjId, sp: usize, addr: u64) {
        if sp >= SpaceId::Zygote as usize {
            return;
        }
        let c = self.cards.index(sp, addr);
        let next = self.card_first[c].wrapping_sub(1);
        self.card_first[c] = o.wrapping_add(1);
        self.objs.set_next_in_card(o, next);
    }

    /// Remove `o` (starting at `addr` of space `sp`) from its card's chain. Chains are short (at
    /// most 16 objects start on a 128-byte card).
    #[inline]
    pub fn unlink_card(&mut self, o: ObjId, sp: usize, addr: u64) {
        let c = self.cards.index(sp, addr);
        let next = self.objs.next_in_card(o);
        let mut cur = self.card_first[c].wrapping_sub(1);
        if cur == o {
            self.card_first[c] = next.wrapping_add(1);
            return;
        }
        while cur != NULL {
            let n = self.objs.next_in_card(cur);
            if n == o {
                self.objs.set_next_in_card(cur, next);
                return;
            }
            cur = n;
        }
        debug_assert!(false, "object {o} not on its card {c}");
    }

    /// The objects starting on card `c` (most recently placed first). Chains of regions being
    /// evacuated are stale until the region is freed: collectors skip their cards.
    pub fn card_objects(&self, c: usize) -> CardObjects<'_> {
        CardObjects { heap: self, cur: self.card_first[c].wrapping_sub(1) }
    }

    /// Append the objects starting on card `c` to `out` in ascending address order — the order
    /// in which ART's card scan visits them (it walks the live bitmap over the card).
    pub fn objects_on_card(&self, c: usize, out: &mut Vec<ObjId>) {
        let from = out.len();
        out.extend(self.card_objects(c));
        out[from..].sort_unstable_by_key(|&o| self.objs.addr(o));
    }

    /// Forget the card chains of cards `[lo, hi)` (their objects are moving; see mark-compact).
    pub fn reset_card_chains(&mut self, lo: usize, hi: usize) {
        self.card_first[lo..hi].fill(0);
    }

    /// Bytes held by the heap's collected spaces (regions in use, free-list pages, LOS pages).
    pub fn footprint_bytes(&self) -> u64 {
        let regions = self.regions.num_non_free as u64 * REGION_SIZE;
        regions + (self.main_fl.pages.used_pages as u64 + self.non_moving.pages.used_pages as u64 + self.los.pages.used_pages as u64) * PAGE
    }

    /// Live bytes measured for region `r` (for reports).
    pub fn region_live(&self, r: u32) -> Option<u32> {
        let l = self.regions.live[r as usize];
        (l != LIVE_UNKNOWN).then_some(l)
    }

    /// Debug check: byte accounting matches the objects (O(objects)).
    pub fn check_accounting(&self) -> Result<(), String> {
        self.check_card_chains()?;
        self.oswap.check()?;
        // Dead fresh units' objects are allocated bytes until a collection reclaims them.
        let (mut count, mut total) = self.dead_total;
        for o in self.objs.live_ids() {
            count += 1;
            if !self.objs.space_of(o).immune() {
                total += self.objs.size(o) as u64;
            }
        }
        if count != self.objs.live_count() + self.dead_total.0 {
            return Err(format!("object count {} (and {} dead fresh) but {} live ids", self.objs.live_count(), self.dead_total.0, count));
        }
        if total != self.bytes_allocated {
            return Err(format!("bytes_allocated {} but live objects hold {}", self.bytes_allocated, total));
        }
        let fl = self.main_fl.bytes_allocated + self.non_moving.bytes_allocated + self.los.bytes_allocated;
        if fl > total {
            return Err("free-list spaces hold more bytes than the objects".into());
        }
        Ok(())
    }

    /// Debug check: every live collected-space object is on the chain of the card it starts on
    /// (chains of regions being evacuated excepted), and chains hold nothing else.
    pub fn check_card_chains(&self) -> Result<(), String> {
        let mut on_chain = 0u64;
        for c in self.card_ranges().into_iter().flat_map(|(lo, hi)| lo..hi) {
            if self.card_first[c] == 0 {
                continue;
            }
            let (sp, a) = self.cards.card_addr(c);
            if sp == 0 && self.collector.uses_regions() && self.regions.in_from[RegionSpace::region_of(a) as usize] {
                continue;
            }
            let mut n = 0;
            for o in self.card_objects(c) {
                if !self.objs.is_live(o) || self.objs.space(o) as usize != sp || self.cards.index(sp, self.objs.addr(o)) != c {
                    let live = self.objs.is_live(o);
                    let at = if live {
                        format!("space {} card {}", self.objs.space(o), self.cards.index(self.objs.space(o) as usize, self.objs.addr(o)))
                    } else {
                        "dead".into()
                    };
                    return Err(format!("card {c} (space {sp}) lists object {o}, which does not start on it ({at})"));
                }
                n += 1;
                if n > 64 {
                    return Err(format!("card {c}: chain too long (a cycle?)"));
                }
            }
            on_chain += n;
        }
        let mut expect = 0u64;
        for o in self.objs.live_ids() {
            let w = self.objs.w(o);
            if w.space >= SpaceId::Zygote as u8 {
                continue;
            }
            if w.space == 0 && self.collector.uses_regions() && self.regions.in_from[RegionSpace::region_of(self.objs.addr(o)) as usize] {
                continue;
            }
            expect += 1;
        }
        if on_chain != expect {
            return Err(format!("card chains hold {on_chain} objects, {expect} live objects outside from-space"));
        }
        Ok(())
    }
}

/// Iterator over the objects starting on one card.
pub struct CardObjects<'a> {
    heap: &'a Heap,
    cur: ObjId,
}

impl Iterator for CardObjects<'_> {
    type Item = ObjId;
    #[inline]
    fn next(&mut self) -> Option<ObjId> {
        if self.cur == NULL {
            return None;
        }
        let o = self.cur;
        self.cur = self.heap.objs.next_in_card(o);
        Some(o)
    }
}

/// A policy's own card table over this heap (its geometry, its objects): the card table itself
/// knows nothing of the heap.
impl CardTable {
    /// A second table with the geometry of `heap`'s (for a policy's own remembered set).
    pub fn for_heap(heap: &Heap) -> Self {
        Self::new(heap.cards.space_bytes())
    }

    /// A second table over `heap` with cards of `1 << shift` bytes.
    pub fn for_heap_with_shift(heap: &Heap, shift: u32) -> Self {
        Self::with_shift(heap.cards.space_bytes(), shift)
    }

    /// Mark the card of object `o` (a collected-space object of `heap`); returns the card.
    pub fn mark_object(&mut self, heap: &Heap, o: ObjId) -> Option<usize> {
        let sp = heap.objs.space(o) as usize;
        if sp >= SpaceId::Zygote as usize {
            return None;
        }
        let c = self.index(sp, heap.objs.addr(o));
        self.mark(c);
        Some(c)
    }

    /// Objects of `heap` starting on cards of this table whose value is at least `min_age`
    /// (appended to `out`, in address order): a policy's second card table turned into extra
    /// roots.
    pub fn objects_on_cards(&self, heap: &Heap, min_age: u8, out: &mut Vec<ObjId>) {
        let mut c = 0;
        while let Some(d) = self.next_card(c, self.len(), min_age) {
            // The heap's card chains are per 128-byte card: a larger card covers several.
            let (sp, addr) = self.card_addr(d);
            let first = heap.cards.index(sp, addr);
            let end = (first + (self.card_size() / heap.cards.card_size()) as usize).min(heap.cards.space_range(sp).1);
            for f in first..end {
                heap.objects_on_card(f, out);
            }
            c = d + 1;
        }
    }
}
