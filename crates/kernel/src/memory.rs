//! Page accesses and page faults (`mm/memory.c`, `mm/filemap.c`, the swap-in path).
//!
//! Every access by any thread goes through [`Kernel::touch`]: a present, mapped page only gets its
//! accessed (young) bit set; anything else faults:
//! - anon, never touched: a read maps the shared zero page, a write allocates a zeroed page
//!   (`do_anonymous_page`); a write to the zero page allocates one (COW);
//! - anon, swapped: found in the swap cache → minor fault; otherwise a major fault that reads the
//!   slot (zram: decompress on the faulting thread; flash: device latency), runs the refault check
//!   against the slot's shadow entry, and adds the page to the LRU. zram swap-ins skip the swap
//!   cache (SWP_SYNCHRONOUS_IO), so their slot is freed at once; flash swap-ins keep the slot
//!   (swap cache) unless the access is a write or swap is more than half full (`vm_swap_full`);
//! - file, cached but not mapped by this process: minor fault, plus fault-around mapping of
//!   neighbouring cached pages (old on arm64, young on x86: `kernel.fault_around_young`);
//! - file, not cached: major fault with mmap read-around of `read_ahead_kb` centred on the fault;
//!   every page read in with a shadow entry is a refault; a PG_readahead page, when touched,
//!   submits the next window asynchronously. Read faults map the cached pages of their
//!   fault-around block before the read and, as the retry after the read does, the block's
//!   newly read pages after it. A mapping whose faults miss much more than they hit (`mmap_miss`
//!   above `MMAP_LOTSAMISS`; each miss adds one, each cached page a fault finds or fault-around
//!   maps takes one off) stops read-around: its misses read one page each. With fault-around on,
//!   a miss's own retry takes off more than the miss added, so (as in 4.19) the back-off only
//!   acts where fault-around is off. The state is per VMA where Linux keeps it per open file
//!   (a forked child shares its parent's);
//! - reads from flash (read-around and readahead) queue on the device one after another
//!   (`queue_file_read`); a page whose read has not completed is locked (`pg::LOCKED`): the
//!   faulting thread sleeps until its read completes (counted as a read wait in its breakdown)
//!   and fault-around skips it, so a scan faster than the flash runs at the flash's pace;
//! - anon, COW entry (a page shared after fork): see [`crate::fork`] — a read of the resident
//!   shared page is an access, not a fault; a swapped one is swapped in once for every sharer; a
//!   write copies the page (`wp_page_copy`) or, for the last sharer, takes it over.
//!
//! Costs go to the faulting `Task`. Left out: THP, userfaultfd, MADV_RANDOM/SEQUENTIAL readahead hints,
//! swap readahead (Android sets page-cluster 0; the setting is read but only 0 is modelled),
//! overlap of queued flash commands, and the sharing of the device between file reads, swap
//! reads and writeback (each is timed on its own).

use crate::config::SwapKind;
use crate::mm::{MappingKind, Pte, MMAP_LOTSAMISS, PTE_HOT};
use crate::mmzone::Kernel;
use crate::page::{lru, pg, Pfn, NO_PFN, NO_SLOT};
use crate::task::Task;
use mobmem_engine::Nanos;

/// `Frames::io_done` of a page whose read is submitted but whose completion is not known yet.
const IO_PENDING: Nanos = Nanos::MAX;

impl Kernel {
    /// Access one page of VMA `v` on behalf of `t`.
    #[inline]
    pub fn touch(&mut self, t: &mut Task, v: u32, page: u32, write: bool) {
        let vm = &self.vmas[v as usize];
        if !vm.live {
            // The process was killed and its memory released: its threads are gone too.
            t.killed = true;
            return;
        }
        let m = vm.mapping as usize;
        let e = self.mappings[m].pages[page as usize];
        if e.is_hot() {
            debug_assert!(self.frames.flags[e.pfn() as usize] & (pg::YOUNG | pg::DIRTY) == pg::YOUNG | pg::DIRTY);
            t.cpu(self.cfg.costs.touch_ns);
            return;
        }
        if e.is_present() {
            let p = e.pfn() as usize;
            let file = vm.file;
            if !file || vm.mapgen[page as usize] == self.frames.gen[p] {
                let f = self.frames.flags[p];
                if write && f & pg::DIRTY == 0 {
                    self.mark_dirty(p as Pfn);
                }
                self.frames.flags[p] |= pg::YOUNG;
                if self.cfg.lru == crate::config::LruMode::Pure {
                    self.lru.move_head(&mut self.frames, lru::INACTIVE_ANON, p as Pfn);
                } else if !file && self.frames.flags[p] & pg::DIRTY != 0 {
                    self.mappings[m].pages[page as usize] = Pte(e.0 | PTE_HOT);
                }
                t.cpu(self.cfg.costs.touch_ns);
                return;
            }
        } else if e.is_zero() && !write {
            t.cpu(self.cfg.costs.touch_ns);
            return;
        }
        self.handle_mm_fault(t, v, page, write);
    }

    /// How page `page` of VMA `v` is mapped for `t`: `Some(Some(frame))` for a present page (or,
    /// for a read, the resident page a copy-on-write entry shares), `Some(None)` for the zero page
    /// on a read, `None` when a touch would fault (not mapped, or the task or its process is
    /// gone).
    fn mapped_for(&self, t: &Task, v: u32, page: u32, write: bool) -> Option<Option<Pfn>> {
        let vm = &self.vmas[v as usize];
        if t.killed || !vm.live {
            return None;
        }
        let e = self.mappings[vm.mapping as usize].pages[page as usize];
        if e.is_present() {
            (!vm.file || vm.mapgen[page as usize] == self.frames.gen[e.pfn() as usize]).then_some(Some(e.pfn()))
        } else if e.is_zero() {
            (!write).then_some(None)
        } else if e.is_cow() && !write {
            self.mappings[e.cow_obj() as usize].pages.get(page as usize).filter(|s| s.is_present()).map(|s| Some(s.pfn()))
        } else {
            None
        }
    }

    /// Whether touching page `page` of VMA `v` now would change nothing but the toucher's clock
    /// (checked in debug builds wherever a touch is skipped because it would not).
    pub fn touch_is_trivial(&self, t: &Task, v: u32, page: u32, write: bool) -> bool {
        match self.mapped_for(t, v, page, write) {
            Some(Some(p)) => {
                let f = self.frames.flags[p as usize];
                f & pg::YOUNG != 0 && (!write || f & pg::DIRTY != 0)
            }
            Some(None) => true,
            None => false,
        }
    }

    /// A generation of the mapped pages' state: it moves with every fault, LRU scan (which clears
    /// accessed bits) and madvise cold/pageout, so a page touched under the same generation and
    /// kernel time is still mapped, accessed and (if it was written) dirty.
    #[inline(always)]
    pub fn touch_gen(&self) -> u64 {
        debug_assert_eq!(self.touch_gen, {
            let s = &self.vmstat;
            s.pgrefill + s.pgscan_kswapd + s.pgscan_direct + s.madvise_cold_pages + s.madvise_pageout_pages + s.pgfault
        });
        self.touch_gen
    }

    /// Whether VMA `v` is still mapped (its process's memory not yet released).
    #[inline(always)]
    pub fn vma_live(&self, v: u32) -> bool {
        self.vmas[v as usize].live
    }

    /// [`Kernel::touch`], then whether touching the page again would only charge the toucher's
    /// clock as long as nothing else changes (the page is mapped — present, the zero page for a
    /// read, or a resident copy-on-write page for a read — and the task and its process live).
    /// False after a fault that could not map the page (the task was killed, or the allocation
    /// failed): a later touch must fault again. A runtime's touch cache remembers only pages
    /// for which this is true.
    #[inline]
    pub fn touch_resident(&mut self, t: &mut Task, v: u32, page: u32, write: bool) -> bool {
        self.touch(t, v, page, write);
        self.mapped_for(t, v, page, write).is_some()
    }

    /// The kernel clears frame `p`'s young or dirty bit: its PTE is no longer hot (only private
    /// anon pages' PTEs can be; the frame's reverse map names the one that maps it).
    #[inline]
    pub(crate) fn cool(&mut self, p: Pfn) {
        let i = p as usize;
        if self.frames.flags[i] & pg::SWAPBACKED == 0 {
            return;
        }
        let m = self.frames.mapping[i] as usize;
        if let Some(e) = self.mappings.get_mut(m).and_then(|mp| mp.pages.get_mut(self.frames.index[i] as usize)) {
            if e.is_hot() && e.pfn() == p {
                *e = e.cold();
            }
        }
    }

    /// First write to a clean page: anon pages lose their swap copy (the slot is freed, as
    /// do_wp_page's reuse_swap_page does); file pages become dirty and need writeback.
    pub(crate) fn mark_dirty(&mut self, p: Pfn) {
        let i = p as usize;
        self.frames.flags[i] |= pg::DIRTY;
        let slot = self.frames.swap_slot[i];
        if slot != NO_SLOT {
            self.frames.swap_slot[i] = NO_SLOT;
            self.swap.free(slot);
            self.zram_pool_shrink();
        }
    }

    #[cold]
    fn handle_mm_fault(&mut self, t: &mut Task, v: u32, page: u32, write: bool) {
        if t.killed {
            return;
        }
        if self.frames.buddy.is_some() && !self.pte_alloc(t, v, page) {
            return;
        }
        if self.vmas[v as usize].file {
            self.vmstat.pgfault += 1;
            self.touch_gen += 1;
            self.filemap_fault(t, v, page, write);
        } else {
            self.anon_fault(t, v, page, write);
        }
    }

    fn anon_fault(&mut self, t: &mut Task, v: u32, page: u32, write: bool) {
        let m = self.vmas[v as usize].mapping as usize;
        let proc_idx = self.vmas[v as usize].proc_idx as usize;
        let e = self.mappings[m].pages[page as usize];
        if e.is_cow() {
            // Counts its own fault (a read of a resident shared page is none).
            self.cow_fault(t, v, page, write, e.cow_obj());
            return;
        }
        self.vmstat.pgfault += 1;
        self.touch_gen += 1;
        let pure = self.pure_lru();
        if e.is_swap() {
            let locked = self.vmas[v as usize].locked;
            self.swap_fault(t, m, page, proc_idx, locked, write);
            return;
        }
        if e.is_zero() {
            debug_assert!(write);
        } else if !write && !pure {
            // Read of a never-touched page: map the shared zero page (no memory used).
            self.mappings[m].pages[page as usize] = Pte::ZERO;
            self.procs[proc_idx].nr_zero += 1;
            self.minor(t, proc_idx, self.cfg.costs.minor_fault_ns);
            return;
        }
        let Some(p) = self.alloc_page_for(t, m) else { return };
        if e.is_zero() {
            // COW of the zero page (counted only once the new page exists).
            self.procs[proc_idx].nr_zero -= 1;
        }
        self.install_anon(p, m as u32, page, pg::DIRTY | pg::YOUNG);
        self.mappings[m].pages[page as usize] = Pte::present(p);
        self.mappings[m].nr_present += 1;
        let active = !self.cfg.semantics.is_59_plus();
        self.lru_add(p, false, active);
        if self.vmas[v as usize].locked {
            self.mlock_page(p);
        }
        self.minor(t, proc_idx, self.cfg.costs.minor_fault_ns);
    }

    /// Fault on swap entry `page` of anon mapping `m` (a private page table or a COW object) on
    /// behalf of process `proc_idx`: a minor fault if the page is in the swap cache, else
    /// `do_swap_page`. `locked`: the faulting VMA is VM_LOCKED.
    pub(crate) fn swap_fault(&mut self, t: &mut Task, m: usize, page: u32, proc_idx: usize, locked: bool, write: bool) {
        let slot = self.mappings[m].pages[page as usize].slot();
        let cached = self.swap.cache[slot as usize];
        if cached != NO_PFN {
            // Minor fault: the page is still in the swap cache.
            self.mappings[m].pages[page as usize] = Pte::present(cached);
            self.mappings[m].nr_swapped -= 1;
            self.mappings[m].nr_present += 1;
            self.frames.flags[cached as usize] |= pg::YOUNG;
            if write {
                self.mark_dirty(cached);
            }
            self.minor(t, proc_idx, self.cfg.costs.minor_fault_ns);
            return;
        }
        self.do_swap_page(t, m, page, proc_idx, locked, slot, write);
    }

    #[inline]
    pub(crate) fn minor(&mut self, t: &mut Task, proc_idx: usize, ns: u64) {
        t.kernel_cpu(ns);
        t.bd.minor_faults += 1;
        t.bd.minor_fault_ns += ns;
        self.procs[proc_idx].stats.minflt += 1;
    }

    pub(crate) fn install_anon(&mut self, p: Pfn, m: u32, index: u32, flags: u16) {
        let i = p as usize;
        self.frames.mapping[i] = m;
        self.frames.index[i] = index;
        self.frames.flags[i] = pg::SWAPBACKED | flags;
        self.frames.mapcount[i] = 1;
        self.frames.swap_slot[i] = NO_SLOT;
    }

    /// Put a new page on an LRU list (`lru_cache_add`). Pure-LRU mode has one list.
    pub(crate) fn lru_add(&mut self, p: Pfn, file: bool, active: bool) {
        if self.pure_lru() {
            self.lru.add_head(&mut self.frames, lru::INACTIVE_ANON, p);
            return;
        }
        // PG_active is the list itself.
        self.lru.add_head(&mut self.frames, lru::list(file, active), p);
    }

    #[allow(clippy::too_many_arguments)]
    fn do_swap_page(&mut self, t: &mut Task, m: usize, page: u32, proc_idx: usize, locked: bool, slot: u32, write: bool) {
        let Some(p) = self.alloc_page_for(t, m) else { return };
        // The mapping may have been torn down while we reclaimed (process killed under us), or
        // the entry dropped (the last sharer of a COW page gone).
        if t.killed || self.mappings[m].pages.is_empty() || self.mappings[m].pages[page as usize] != Pte::swap(slot) {
            self.frames.lru[p as usize] = u8::MAX;
            self.free_page(p);
            return;
        }
        self.vmstat.pgmajfault += 1;
        self.vmstat.pswpin += 1;
        self.vmstat.pgpgin += 4;
        let ps = &mut self.procs[proc_idx].stats;
        ps.majflt += 1;
        ps.swapin += 1;
        self.install_anon(p, m as u32, page, pg::YOUNG);
        let shadow = Pte(self.swap.shadow[slot as usize]);
        let (active, workingset) = self.workingset_refault(shadow, false, proc_idx);
        // Device time: zram decompresses on this CPU (same-filled pages are a memset);
        // a flash read waits for the device.
        let c = &self.cfg.costs;
        let (dev_ns, is_zram) = match self.swap.kind {
            SwapKind::Zram => {
                let bytes = self.swap.size[slot as usize];
                (if bytes == 0 { c.minor_fault_ns / 2 } else { c.zram_decompress_ns }, true)
            }
            _ => (c.flash_read_ns, false),
        };
        let ns = c.major_fault_overhead_ns + dev_ns;
        let keep_slot = self.swap.kind == SwapKind::File && !write && self.swap.nr_used() * 2 <= self.swap.nr_slots as u64;
        if keep_slot {
            self.frames.swap_slot[p as usize] = slot;
            self.swap.cache[slot as usize] = p;
            self.swap.shadow[slot as usize] = 0;
        } else {
            // Without its slot the page has no clean copy: dirty (this covers every write).
            self.swap.free(slot);
            self.frames.flags[p as usize] |= pg::DIRTY;
            self.zram_pool_shrink();
        }
        self.mappings[m].pages[page as usize] = Pte::present(p);
        self.mappings[m].nr_swapped -= 1;
        self.mappings[m].nr_present += 1;
        if workingset {
            self.frames.flags[p as usize] |= pg::WORKINGSET;
        }
        self.lru_add(p, false, active);
        if locked {
            self.mlock_page(p);
        }
        // zram decompression is CPU work; flash is waiting on I/O. The fault's own time excludes
        // the reclaim its page allocation did (a reclaim stall, counted as such).
        if is_zram {
            t.kernel_cpu(ns);
            t.bd.major_faults_zram += 1;
            t.bd.major_fault_zram_ns += ns;
        } else {
            t.now += ns;
            t.bd.major_faults_flash_swap += 1;
            t.bd.major_fault_flash_swap_ns += ns;
        }
        if workingset {
            // Reading a workingset page back is a memory stall (thrashing) for PSI.
            self.psi_memstall(t, t.now - ns, ns);
        }
    }

    fn filemap_fault(&mut self, t: &mut Task, v: u32, page: u32, write: bool) {
        let m = self.vmas[v as usize].mapping as usize;
        let proc_idx = self.vmas[v as usize].proc_idx as usize;
        let e = self.mappings[m].pages[page as usize];
        if e.is_present() {
            // Cached, not mapped here: minor fault, then fault-around. A PG_readahead page starts
            // the next readahead window asynchronously (do_async_mmap_readahead).
            let p = e.pfn();
            if self.frames.flags[p as usize] & pg::READAHEAD != 0 {
                self.frames.flags[p as usize] &= !pg::READAHEAD;
                self.async_readahead(t, v, proc_idx);
                // Allocating the window may have reclaimed this very page (the kernel holds a
                // reference on it; the model does not) or killed the task and released its
                // mappings.
                if t.killed || !self.vmas[v as usize].live {
                    t.killed = true;
                    return;
                }
                if self.mappings[m].pages[page as usize] != e {
                    return self.filemap_fault(t, v, page, write);
                }
            }
            // do_async_mmap_readahead: a hit counts against the misses.
            let vm = &mut self.vmas[v as usize];
            vm.mmap_miss = vm.mmap_miss.saturating_sub(1);
            // A page whose read is still in flight (readahead submitted it, the read has not
            // completed): the fault waits on the page lock until it has (lock_page in filemap_fault).
            if self.frames.flags[p as usize] & pg::LOCKED != 0 {
                self.wait_on_read(t, p);
            }
            self.map_file_page(v, page, p);
            self.frames.flags[p as usize] |= pg::YOUNG;
            if write {
                self.mark_dirty(p);
            }
            if !write {
                self.fault_around(v, page, t.now);
            }
            self.minor(t, proc_idx, self.cfg.costs.file_minor_fault_ns);
            return;
        }
        // Major fault. do_read_fault tries fault-around before the fault handler: cached
        // neighbours are mapped (and count as hits) even though this page must be read.
        if !write {
            self.fault_around(v, page, t.now);
        }
        // Read-around window.
        let npages = self.mappings[m].pages.len() as u32;
        let pure_lru = self.pure_lru();
        let vm = &mut self.vmas[v as usize];
        if vm.mmap_miss < MMAP_LOTSAMISS * 10 {
            vm.mmap_miss += 1;
        }
        // A mapping that misses much more than it hits (scattered access) gets no read-around:
        // the fault reads its own page only (page_cache_read), and the readahead state stays.
        let around = !pure_lru && vm.mmap_miss <= MMAP_LOTSAMISS;
        let ra = if around { ((self.cfg.read_ahead_kb / 4) as u32).max(1) } else { 1 };
        // mmap read-around (do_sync_mmap_readahead): ra_pages centred on the fault, the last
        // quarter asynchronous (its first page carries PG_readahead).
        let ra_start = page.saturating_sub(ra / 2);
        let ra_end = (ra_start + ra).min(npages);
        let async_size = if ra >= 4 { ra / 4 } else { 0 };
        if around {
            self.vmas[v as usize].ra = (ra_start, ra, async_size);
        }
        let marker = (ra_start + ra).saturating_sub(async_size);
        let mut nread = 0u64;
        let mut memstall = false;
        for idx in ra_start..ra_end {
            if self.mappings[m].pages.is_empty() {
                break;
            }
            let cur = self.mappings[m].pages[idx as usize];
            if cur.is_present() {
                continue;
            }
            let Some((p, ws)) = self.add_to_page_cache(t, m, idx, proc_idx) else {
                self.complete_reads(m, ra_start, ra_end, t.now);
                return;
            };
            if ws && idx == page {
                memstall = true;
            }
            if async_size > 0 && idx == marker && idx != page {
                self.frames.flags[p as usize] |= pg::READAHEAD;
            }
            if idx != page {
                // Part of the same read: locked until it completes (known below).
                self.frames.flags[p as usize] |= pg::LOCKED;
                self.frames.io_done[p as usize] = IO_PENDING;
            }
            nread += 1;
        }
        if !self.vmas[v as usize].live {
            // Reclaim while reading killed this process and released its VMAs.
            self.complete_reads(m, ra_start, ra_end, t.now);
            t.killed = true;
            return;
        }
        // Reclaim for a later page of the window may have evicted the faulting one (the kernel
        // holds a reference on it; the model does not), or another task read it in meanwhile.
        let cur = self.mappings[m].pages.get(page as usize).copied().unwrap_or(Pte::NONE);
        if !cur.is_present() {
            self.complete_reads(m, ra_start, ra_end, t.now);
            return;
        }
        let fault_pfn = cur.pfn();
        self.vmstat.pgmajfault += 1;
        self.vmstat.pgpgin += nread * 4;
        self.procs[proc_idx].stats.majflt += 1;
        self.map_file_page(v, page, fault_pfn);
        if self.vmas[v as usize].locked {
            self.mlock_page(fault_pfn);
        }
        let fi = fault_pfn as usize;
        self.frames.flags[fi] |= pg::YOUNG;
        if self.vmas[v as usize].exec {
            self.frames.flags[fi] |= pg::EXEC;
        }
        if write {
            self.frames.flags[fi] |= pg::DIRTY;
        }
        let overhead = self.cfg.costs.major_fault_overhead_ns;
        t.kernel_cpu(overhead);
        let io = self.queue_file_read(t.now, nread) - t.now;
        let ns = overhead + io;
        t.now += io;
        // The window's other pages arrive with the faulting one.
        self.complete_reads(m, ra_start, ra_end, t.now);
        if !write {
            // The fault found its page locked by the read and returned VM_FAULT_RETRY; the retry
            // maps it and the now-readable pages of its fault-around block (filemap_map_pages),
            // each a hit: so a read miss whose window serves its neighbours does not count
            // towards the back-off. Without fault-around the retry goes through the fault
            // handler, which does not count a retried fault as a hit (FAULT_FLAG_TRIED).
            if self.fault_around(v, page, t.now) {
                let vm = &mut self.vmas[v as usize];
                vm.mmap_miss = vm.mmap_miss.saturating_sub(1);
            }
        }
        t.bd.major_faults_file += 1;
        // Excluding the reclaim stalls of the read-around's page allocations (counted as such).
        t.bd.major_fault_file_ns += ns;
        if memstall {
            self.psi_memstall(t, t.now - ns, ns);
        }
    }

    /// Read page `idx` of file mapping `m` into the page cache (not mapped): allocate a frame,
    /// run the refault check against a shadow entry, put it on the file LRU. Returns the frame and
    /// whether it was a workingset refault, or None if the task was killed while allocating.
    /// A `write(2)` of the whole of page `page` of file VMA `v` (`generic_perform_write`): a page
    /// not in the page cache is allocated without being read (the write covers it whole: a new
    /// file's pages are holes), then dirtied; the write does not map it. A page already cached is
    /// written in place.
    pub fn write_file_page(&mut self, t: &mut Task, v: u32, page: u32) {
        let vm = &self.vmas[v as usize];
        if !vm.live {
            t.killed = true;
            return;
        }
        let (m, proc_idx) = (vm.mapping as usize, vm.proc_idx as usize);
        if !vm.file || self.mappings[m].pages[page as usize].is_present() {
            self.touch(t, v, page, true);
            return;
        }
        t.kernel_cpu(self.cfg.costs.file_minor_fault_ns);
        let Some((p, _)) = self.add_to_page_cache(t, m, page, proc_idx) else { return };
        if !self.vmas[v as usize].live {
            t.killed = true;
            return;
        }
        self.frames.flags[p as usize] |= pg::YOUNG;
        self.mark_dirty(p);
    }

    pub(crate) fn add_to_page_cache(&mut self, t: &mut Task, m: usize, idx: u32, proc_idx: usize) -> Option<(Pfn, bool)> {
        let p = self.alloc_page_for(t, m)?;
        if self.mappings[m].pages.is_empty() {
            self.free_page(p);
            return None;
        }
        let cur = self.mappings[m].pages[idx as usize];
        let i = p as usize;
        self.frames.mapping[i] = m as u32;
        self.frames.index[i] = idx;
        self.frames.flags[i] = 0;
        self.frames.mapcount[i] = 0;
        self.frames.swap_slot[i] = NO_SLOT;
        let (active, ws) = self.workingset_refault(cur, true, proc_idx);
        if ws {
            self.frames.flags[i] |= pg::WORKINGSET;
        }
        self.mappings[m].pages[idx as usize] = Pte::present(p);
        self.mappings[m].nr_present += 1;
        self.lru_add(p, true, active);
        Some((p, ws))
    }

    /// `page_cache_async_readahead` from a PG_readahead hit: the window moves past the current
    /// one and grows (`get_next_ra_size`: ×4 while small, ×2 up to half the maximum, then the
    /// maximum); its pages are read without the task waiting, the first carries the next marker.
    fn async_readahead(&mut self, t: &mut Task, v: u32, proc_idx: usize) {
        let max = ((self.cfg.read_ahead_kb / 4) as u32).max(1);
        let (start, size, _) = self.vmas[v as usize].ra;
        let next = if size < max / 16 {
            size * 4
        } else if size <= max / 2 {
            size * 2
        } else {
            max
        };
        let new_start = start + size;
        let m = self.vmas[v as usize].mapping as usize;
        let npages = self.mappings[m].pages.len() as u32;
        if new_start >= npages {
            return;
        }
        let end = (new_start + next).min(npages);
        self.vmas[v as usize].ra = (new_start, next, next);
        // The window is one read submitted now; it completes after the device's latency and the
        // transfer of the pages it reads. Until then its pages are locked (a touch waits).
        let missing = (new_start..end).filter(|&i| !self.mappings[m].pages[i as usize].is_present()).count() as u64;
        let done = if missing > 0 { self.queue_file_read(t.now, missing) } else { t.now };
        let mut nread = 0u64;
        for idx in new_start..end {
            if self.mappings[m].pages.is_empty() {
                return;
            }
            if self.mappings[m].pages[idx as usize].is_present() {
                continue;
            }
            let Some((p, _)) = self.add_to_page_cache(t, m, idx, proc_idx) else { return };
            if idx == new_start {
                self.frames.flags[p as usize] |= pg::READAHEAD;
            }
            self.frames.flags[p as usize] |= pg::LOCKED;
            // Allocating the window's pages may have stalled the task in reclaim: the read
            // cannot complete before it was submitted.
            self.frames.io_done[p as usize] = done.max(t.now);
            nread += 1;
        }
        self.vmstat.pgpgin += nread * 4;
        // Submitting the I/O is a little CPU; the read itself does not block the task.
        t.cpu(self.cfg.costs.major_fault_overhead_ns / 4);
    }

    /// Queue a read of `n` pages from flash submitted at `now`; returns when it completes: the
    /// device's latency and the transfer of the pages, after the reads queued before it.
    fn queue_file_read(&mut self, now: Nanos, n: u64) -> Nanos {
        let c = &self.cfg.costs;
        let start = self.flash_read_busy_until.max(now);
        let done = start + c.flash_read_ns + n.saturating_sub(1) * crate::page::PAGE_SIZE * 1_000_000_000 / c.flash_read_bw;
        self.flash_read_busy_until = done;
        done
    }

    /// Give the pages of read-around window `start..end` of mapping `m` that wait for their read
    /// (locked, completion not known yet) the completion time `done`. Every exit of the major
    /// fault path calls it, so no page stays locked without one.
    fn complete_reads(&mut self, m: usize, start: u32, end: u32, done: Nanos) {
        for idx in start..end {
            let Some(e) = self.mappings[m].pages.get(idx as usize).copied() else { break };
            if e.is_present() {
                let i = e.pfn() as usize;
                if self.frames.flags[i] & pg::LOCKED != 0 && self.frames.io_done[i] == IO_PENDING {
                    self.frames.io_done[i] = done;
                }
            }
        }
    }

    /// Wait for the read of locked page `p` to complete (`wait_on_page_locked`): the task sleeps
    /// on I/O until then, which its breakdown counts as file I/O. The page is uptodate after.
    fn wait_on_read(&mut self, t: &mut Task, p: Pfn) {
        let i = p as usize;
        let done = self.frames.io_done[i];
        debug_assert!(done != IO_PENDING, "a locked page's read has a completion time");
        if done > t.now {
            t.bd.file_read_wait_ns += done - t.now;
            t.bd.file_read_waits += 1;
            t.now = done;
        }
        self.frames.flags[i] &= !pg::LOCKED;
    }

    /// Map a cached file page into VMA `v` (if not already mapped there).
    #[inline]
    fn map_file_page(&mut self, v: u32, page: u32, p: Pfn) {
        let g = self.frames.gen[p as usize];
        let vm = &mut self.vmas[v as usize];
        if vm.mapgen[page as usize] != g {
            vm.mapgen[page as usize] = g;
            self.frames.mapcount[p as usize] += 1;
            if vm.exec {
                self.frames.flags[p as usize] |= pg::EXEC;
            }
        }
    }

    /// `do_fault_around`: map the cached pages of the aligned fault-around window. Returns
    /// false when fault-around is off (pure LRU, or a window of one page).
    fn fault_around(&mut self, v: u32, page: u32, now: Nanos) -> bool {
        if self.pure_lru() {
            return false;
        }
        let n = (self.cfg.fault_around_bytes / crate::page::PAGE_SIZE) as u32;
        if n <= 1 {
            return false;
        }
        let young = self.cfg.fault_around_young;
        let vm = &self.vmas[v as usize];
        let start = page - page % n;
        let end = (start + n).min(vm.npages);
        let m = vm.mapping as usize;
        for idx in start..end {
            if idx == page {
                continue;
            }
            let e = self.mappings[m].pages[idx as usize];
            // filemap_map_pages skips PG_readahead pages so that touching them faults, and pages
            // whose read is still in flight (not uptodate, locked).
            if !e.is_present() {
                continue;
            }
            let f = self.frames.flags[e.pfn() as usize];
            if f & pg::READAHEAD != 0 || (f & pg::LOCKED != 0 && self.frames.io_done[e.pfn() as usize] > now) {
                continue;
            }
            self.frames.flags[e.pfn() as usize] &= !pg::LOCKED;
            // filemap_map_pages: every page mapped around counts as a hit.
            let vm = &mut self.vmas[v as usize];
            vm.mmap_miss = vm.mmap_miss.saturating_sub(1);
            let g = self.frames.gen[e.pfn() as usize];
            let newly = self.vmas[v as usize].mapgen[idx as usize] != g;
            self.map_file_page(v, idx, e.pfn());
            if newly && young {
                self.frames.flags[e.pfn() as usize] |= pg::YOUNG;
            }
        }
        true
    }

    /// Move a listed page to the unevictable list (PG_mlocked).
    pub(crate) fn mlock_page(&mut self, p: Pfn) {
        let i = p as usize;
        self.frames.flags[i] |= pg::MLOCKED;
        if self.frames.lru[i] != lru::UNEVICTABLE && (self.frames.lru[i] as usize) < lru::NR_LRU {
            self.lru.remove(&mut self.frames, p);
            self.lru.add_head(&mut self.frames, lru::UNEVICTABLE, p);
        }
    }

    /// Access pages [first, first+count) of VMA `v` in order, as `touch` does one by one; stops
    /// when the task's process is killed. Kernel events due in between are not run: callers
    /// synchronise (`book_cpu`, `advance_to`) around the call as around a `touch`.
    pub fn touch_range(&mut self, t: &mut Task, v: u32, first: u32, count: u32, write: bool) {
        for page in first..first + count {
            self.touch(t, v, page, write);
            if t.killed {
                return;
            }
        }
    }

    /// `mlock`: fault in and lock pages [first, first+count) of VMA `v`; later faults in the VMA
    /// also land on the unevictable list. Reclaim never scans it. Kernel events due by the
    /// task's clock run between pages (a large lock takes a while).
    pub fn mlock(&mut self, t: &mut Task, v: u32, first: u32, count: u32) {
        self.vmas[v as usize].locked = true;
        // populate_vma_page_range faults private writable mappings in for write (breaking COW),
        // so anon pages get real frames rather than the zero page.
        let write = !self.vmas[v as usize].file;
        for idx in first..first + count {
            self.touch(t, v, idx, write);
            if t.killed {
                return;
            }
            let m = self.vmas[v as usize].mapping as usize;
            let e = self.mappings[m].pages[idx as usize];
            if e.is_present() {
                self.mlock_page(e.pfn());
            }
            // kswapd and the other kernel threads run alongside the faulting thread (locked
            // pages are off the LRU by now, so reclaim cannot take them back).
            self.sync(t);
        }
    }

    /// `munlock`: pages of VMA `v` go back to the inactive list of their type (shared COW pages
    /// too: only the VMA they were locked in before fork can have locked them).
    pub fn munlock(&mut self, v: u32) {
        self.vmas[v as usize].locked = false;
        let m = self.vmas[v as usize].mapping as usize;
        for idx in 0..self.vmas[v as usize].npages {
            let mut e = self.mappings[m].pages[idx as usize];
            if e.is_cow() {
                e = self.mappings[e.cow_obj() as usize].pages[idx as usize];
            }
            if e.is_present() {
                self.munlock_page(e.pfn());
            }
        }
    }

    /// An mlocked page goes back to the inactive list of its type.
    pub(crate) fn munlock_page(&mut self, p: Pfn) {
        let i = p as usize;
        if self.frames.lru[i] == lru::UNEVICTABLE {
            self.frames.flags[i] &= !pg::MLOCKED;
            let file = self.frames.flags[i] & pg::SWAPBACKED == 0;
            self.lru.remove(&mut self.frames, p);
            self.lru.add_head(&mut self.frames, lru::list(file, false), p);
        }
    }

    /// Unmap pages [first, first+count) of file VMA `v` from this process (page cache kept).
    pub fn unmap_file_range(&mut self, v: u32, first: u32, count: u32) {
        let m = self.vmas[v as usize].mapping as usize;
        for idx in first..first + count {
            let g = self.vmas[v as usize].mapgen[idx as usize];
            if g == 0 {
                continue;
            }
            self.vmas[v as usize].mapgen[idx as usize] = 0;
            let e = self.mappings[m].pages[idx as usize];
            if e.is_present() && self.frames.gen[e.pfn() as usize] == g {
                self.frames.mapcount[e.pfn() as usize] -= 1;
            }
        }
    }

    /// Drop a swap entry a page table held: its swap-cache page goes (and with it the slot), or
    /// the slot is freed (`free_swap_and_cache`).
    pub(crate) fn release_swap_entry(&mut self, slot: u32) {
        let cached = self.swap.cache[slot as usize];
        if cached != NO_PFN {
            self.drop_anon_frame(cached);
        } else {
            self.swap.free(slot);
        }
    }

    /// Free anon pages [first, first+count) of VMA `v`: frames, swap slots and swap-cache pages
    /// (`zap_pte_range`). A COW entry only drops this mapping's share of the page; the page goes
    /// when its last sharer drops it.
    pub fn zap_anon_range(&mut self, v: u32, first: u32, count: u32) {
        let m = self.vmas[v as usize].mapping as usize;
        let proc_idx = self.vmas[v as usize].proc_idx as usize;
        let locked = self.vmas[v as usize].locked;
        debug_assert_eq!(self.mappings[m].kind, MappingKind::Anon);
        for idx in first..first + count {
            let e = self.mappings[m].pages[idx as usize];
            if e.is_cow() {
                self.mappings[m].nr_cow -= 1;
                self.cow_put(e.cow_obj() as usize, idx, locked);
            } else if e.is_present() {
                let p = e.pfn();
                self.drop_anon_frame(p);
                self.mappings[m].nr_present -= 1;
            } else if e.is_swap() {
                self.release_swap_entry(e.slot());
                self.mappings[m].nr_swapped -= 1;
            } else if e.is_zero() {
                self.procs[proc_idx].nr_zero -= 1;
            }
            self.mappings[m].pages[idx as usize] = Pte::NONE;
        }
        self.zram_pool_shrink();
    }

    /// Take an anon frame off its list (or writeback) and free it with its swap slot.
    pub(crate) fn drop_anon_frame(&mut self, p: Pfn) {
        let i = p as usize;
        let slot = self.frames.swap_slot[i];
        if slot != NO_SLOT {
            self.frames.swap_slot[i] = NO_SLOT;
            self.swap.free(slot);
        }
        if (self.frames.lru[i] as usize) < lru::NR_LRU {
            self.lru.remove(&mut self.frames, p);
        }
        self.free_page(p);
    }
}
