//! fork and copy-on-write sharing of private anonymous memory (`kernel/fork.c` `dup_mmap`,
//! `mm/memory.c` `copy_page_range`, `do_wp_page` / `wp_page_copy`).
//!
//! Android forks every app from the zygote; the zygote's private anon pages (its heap, the native
//! heap of preloaded libraries) stay shared copy-on-write with every child until one writes.
//!
//! **What is modelled.** [`Kernel::fork_process`] creates the child and duplicates each live VMA
//! of the parent under the same name:
//! - file VMAs map the same file (its page cache is shared as with `map_file`); like
//!   `copy_page_range`, which skips VMAs that faults fill correctly, the child starts with nothing
//!   mapped and maps cached pages on its first touch (minor faults, fault-around);
//! - private anon VMAs: every page the parent has populated privately (resident or swapped) is
//!   moved, with its frame, swap slot or swap-cache page, into a new *COW object* — a `Mapping`
//!   owned by no process, the model's stand-in for the pages of an `anon_vma` that several
//!   processes map. The parent's and the child's PTEs become COW entries (`Pte::cow`) naming the
//!   object; the page at the same index of the object is what they map. Pages the parent already
//!   maps through a COW entry (an earlier fork) are shared with the new child too. Zero-page
//!   entries are copied; untouched pages stay untouched. `VM_LOCKED` is not inherited.
//! - The object keeps, per page, the number of COW entries mapping it (`Mapping::shares`, the
//!   page's mapcount; `page.mapcount` mirrors it while the page is resident, so reclaim's
//!   "referenced and mapped more than once" activation applies). The frame's reverse map
//!   (`frames.mapping`) names the object, so reclaim, swap-out, the swap cache and refaults work
//!   on a shared page exactly as on a private one: one frame, one young bit aggregated over the
//!   sharers, one swap slot — what rmap gives a shared anon page with mapcount N.
//! - Access through a COW entry (only the fault path looks: a COW entry is not "present", so the
//!   `touch` fast path is unchanged): a read of a resident shared page is an access, not a fault
//!   (young bit; LRU position in pure-LRU mode; `touch_ns`); a read of a swapped one is
//!   `do_swap_page` on the object, charged to the reading task and process — the page comes back
//!   resident for every sharer (one `pswpin`).
//! - A write through a COW entry (`do_wp_page`): if other entries still map the page it is copied
//!   (`wp_page_copy`: a swapped page is swapped in first; a new page is allocated on the normal
//!   path, which may reclaim; `minor_fault_ns + cow_copy_ns`; vmstat `cow_fault`, a minor
//!   fault); the writer's PTE maps its own page and the object's page loses one sharer. If the
//!   writer is the last sharer the page is reused without a copy (`wp_can_reuse_anon_folio`;
//!   vmstat `cow_reuse`): it moves back into the writer's private page table. The parent is a
//!   sharer like any child: its writes copy too, as in Linux.
//! - Unmapping (exit, kill, reaping, MADV_DONTNEED) drops the mapping's shares; a shared page is
//!   freed with its last sharer. A parent may exit or be killed before its children: the pages
//!   stay with the children. After MADV_DONTNEED the child's PTE is empty again, so a later read
//!   maps the zero page and a write allocates a zeroed page (Linux semantics).
//! - MADV_COLD/PAGEOUT on a range skip shared pages unless this is their only mapping (Linux's
//!   `page_mapcount() != 1` check); WILLNEED reads a swapped shared page into the swap cache.
//! - Accounting (`Kernel::proc_usage`): RSS counts the resident shared pages a process maps (as
//!   Linux's MM_ANONPAGES does), PSS divides each by its number of sharers, Swap counts swapped
//!   shared pages in every sharer; `ProcUsage::anon_shared`/`swap_shared` give the shared part.
//!   Kill records report the private part (what the kill frees) and the shared part apart.
//!
//! **Left out.** Forking costs no simulated time (page-table copying is not charged; callers
//! charge a fork cost such as the zygote's `fork_ms`); no `anon_vma` chains or per-VMA rmap
//! walks (a COW object is per parent VMA per fork, found from the PTE); KSM; `MADV_WIPEONFORK` /
//! `DONTFORK`; vfork/clone of threads; the zero page is not counted per sharer beyond `nr_zero`;
//! page-table pages. A page mlocked by the parent stays mlocked while the parent maps it
//! (the parent's munlock, unmap or COW break unlocks it); a child's read never mlocks a shared page.

use crate::mm::{Mapping, MappingKind, Pte};
use crate::mmzone::{Kernel, KernelError};
use crate::page::{pg, NO_PFN};
use crate::task::Task;
use mobmem_engine::Nanos;

impl Kernel {
    /// `fork`: create process `pid` as a child of `parent_idx` (see the module documentation),
    /// duplicating each live VMA of the parent under the same name (`dup_mmap`). Returns the
    /// child's process index.
    pub fn fork_process(&mut self, parent_idx: u32, pid: u32, name: &str, adj: i32, now: Nanos) -> Result<u32, KernelError> {
        let parent = self.procs.get(parent_idx as usize).ok_or_else(|| KernelError::Invalid(format!("no process index {parent_idx}")))?;
        if !parent.alive {
            return Err(KernelError::Invalid(format!("fork of process {} which is dead", parent.pid)));
        }
        // A page's sharers are counted in a u16 (like the frame's mapcount).
        for &v in &parent.vmas {
            let m = &self.mappings[self.vmas[v as usize].mapping as usize];
            if m.nr_cow == 0 {
                continue;
            }
            for (idx, &e) in m.pages.iter().enumerate() {
                if e.is_cow() && self.mappings[e.cow_obj() as usize].shares[idx] == u16::MAX {
                    return Err(KernelError::Invalid(format!("fork of process {}: a page has {} sharers already", parent.pid, u16::MAX)));
                }
            }
        }
        let child = self.create_process(pid, name, adj, now)?;
        self.procs[child as usize].parent = Some(parent_idx);
        // The child starts in its parent's cpuset.
        let cpuset = self.procs[parent_idx as usize].cpuset;
        self.set_cpuset(child, cpuset);
        let vmas = self.procs[parent_idx as usize].vmas.clone();
        for v in vmas {
            let vm = &self.vmas[v as usize];
            if !vm.live {
                continue;
            }
            let (vname, npages, m, exec) = (vm.name.clone(), vm.npages, vm.mapping as usize, vm.exec);
            let cv = if vm.file {
                let file = self.mappings[m].name.clone();
                self.map_file(child, &vname, &file, npages, exec)?
            } else {
                let cv = self.map_anon(child, &vname, npages)?;
                self.copy_anon_range(v, cv);
                cv
            };
            self.vmas[cv as usize].cow_parent = Some(v);
        }
        Ok(child)
    }

    /// `copy_page_range` for a private anon VMA: share the parent's pages with the child's VMA.
    fn copy_anon_range(&mut self, pv: u32, cv: u32) {
        let pm = self.vmas[pv as usize].mapping as usize;
        let cm = self.vmas[cv as usize].mapping as usize;
        let child = self.vmas[cv as usize].proc_idx as usize;
        let npages = self.vmas[pv as usize].npages;
        // Private pages of the parent go into a new COW object.
        let obj = if self.mappings[pm].nr_present + self.mappings[pm].nr_swapped > 0 {
            let o = self.mappings.len();
            let name = format!("{}:cow{}", self.mappings[pm].name, o);
            let mut mp = Mapping::new(MappingKind::Anon, name, npages, u32::MAX);
            mp.cow_object = true;
            mp.shares = vec![0; npages as usize];
            self.mappings.push(mp);
            o
        } else {
            usize::MAX
        };
        for idx in 0..npages {
            let i = idx as usize;
            let e = self.mappings[pm].pages[i];
            if e.is_present() || e.is_swap() {
                self.move_anon_entry(pm, obj, idx);
                let c = Pte::cow(obj as u32);
                self.mappings[pm].pages[i] = c;
                self.mappings[pm].nr_cow += 1;
                self.mappings[cm].pages[i] = c;
                self.mappings[cm].nr_cow += 1;
                self.mappings[obj].nr_shared += 1;
                self.set_shares(obj, idx, 2);
            } else if e.is_cow() {
                let o = e.cow_obj() as usize;
                self.mappings[cm].pages[i] = e;
                self.mappings[cm].nr_cow += 1;
                let n = self.mappings[o].shares[i] + 1;
                self.set_shares(o, idx, n);
            } else if e.is_zero() {
                self.mappings[cm].pages[i] = Pte::ZERO;
                self.procs[child].nr_zero += 1;
            }
        }
    }

    /// Move the resident or swapped page at `idx` from anon mapping `from` to `to` (same index),
    /// with its reverse map and its swap-cache page.
    fn move_anon_entry(&mut self, from: usize, to: usize, idx: u32) {
        let i = idx as usize;
        let e = self.mappings[from].pages[i];
        if e.is_present() {
            self.frames.mapping[e.pfn() as usize] = to as u32;
            self.mappings[from].nr_present -= 1;
            self.mappings[to].nr_present += 1;
        } else {
            debug_assert!(e.is_swap());
            let cached = self.swap.cache[e.slot() as usize];
            if cached != NO_PFN {
                self.frames.mapping[cached as usize] = to as u32;
            }
            self.mappings[from].nr_swapped -= 1;
            self.mappings[to].nr_swapped += 1;
        }
        self.mappings[to].pages[i] = e.cold();
        self.mappings[from].pages[i] = Pte::NONE;
    }

    /// Set the number of sharers of a COW object's page (mirrored in the frame's mapcount).
    fn set_shares(&mut self, obj: usize, idx: u32, n: u16) {
        self.mappings[obj].shares[idx as usize] = n;
        let e = self.mappings[obj].pages[idx as usize];
        if e.is_present() {
            self.frames.mapcount[e.pfn() as usize] = n;
        }
    }

    /// One COW entry of page `idx` of object `obj` goes away (`page_remove_rmap`); the page is
    /// freed with its last sharer. `unlock`: the entry was in a VM_LOCKED VMA, whose mlock no
    /// longer holds the page.
    pub(crate) fn cow_put(&mut self, obj: usize, idx: u32, unlock: bool) {
        let i = idx as usize;
        let n = self.mappings[obj].shares[i] - 1;
        let e = self.mappings[obj].pages[i];
        if n > 0 {
            self.set_shares(obj, idx, n);
            if unlock && e.is_present() && self.frames.flags[e.pfn() as usize] & pg::MLOCKED != 0 {
                self.munlock_page(e.pfn());
            }
            return;
        }
        let mo = &mut self.mappings[obj];
        mo.shares[i] = 0;
        mo.pages[i] = Pte::NONE;
        mo.nr_shared -= 1;
        if e.is_present() {
            mo.nr_present -= 1;
            self.drop_anon_frame(e.pfn());
        } else {
            debug_assert!(e.is_swap());
            mo.nr_swapped -= 1;
            self.release_swap_entry(e.slot());
        }
        let mo = &mut self.mappings[obj];
        if mo.nr_shared == 0 {
            // No entry maps the object any more.
            mo.pages = Vec::new();
            mo.shares = Vec::new();
        }
    }

    /// A fault on COW entry `page` of VMA `v` (object `obj`); see the module documentation.
    #[cold]
    pub(crate) fn cow_fault(&mut self, t: &mut Task, v: u32, page: u32, write: bool, obj: u32) {
        let o = obj as usize;
        let i = page as usize;
        let se = self.mappings[o].pages[i];
        debug_assert!(se.is_present() || se.is_swap(), "COW entry {v}[{page}] maps nothing");
        if !write && se.is_present() {
            // The PTE maps the shared page: an access, not a fault.
            let p = se.pfn();
            self.frames.flags[p as usize] |= pg::YOUNG;
            if self.pure_lru() {
                self.lru.move_head(&mut self.frames, crate::page::lru::INACTIVE_ANON, p);
            }
            t.cpu(self.cfg.costs.touch_ns);
            return;
        }
        self.vmstat.pgfault += 1;
        self.touch_gen += 1;
        let m = self.vmas[v as usize].mapping as usize;
        let proc_idx = self.vmas[v as usize].proc_idx as usize;
        let locked = self.vmas[v as usize].locked;
        if write && self.mappings[o].shares[i] == 1 {
            self.cow_reuse(t, v, page, o);
            return;
        }
        if se.is_swap() {
            // do_swap_page on the shared entry: resident again for every sharer.
            self.swap_fault(t, o, page, proc_idx, false, false);
            let se = self.mappings[o].pages.get(i).copied().unwrap_or(Pte::NONE);
            if se.is_present() {
                self.frames.mapcount[se.pfn() as usize] = self.mappings[o].shares[i];
            }
            if !write || t.killed || self.mappings[m].pages.get(i) != Some(&Pte::cow(obj)) {
                return;
            }
            // Same fault: do_swap_page calls do_wp_page (counted as the major fault it is).
            self.wp_page_copy(t, m, page, proc_idx, locked, o, false);
            return;
        }
        self.wp_page_copy(t, m, page, proc_idx, locked, o, true);
    }

    /// The last sharer writes: the page moves back into its private page table, no copy.
    fn cow_reuse(&mut self, t: &mut Task, v: u32, page: u32, o: usize) {
        let m = self.vmas[v as usize].mapping as usize;
        let proc_idx = self.vmas[v as usize].proc_idx as usize;
        let locked = self.vmas[v as usize].locked;
        let i = page as usize;
        self.move_anon_entry(o, m, page);
        self.mappings[m].nr_cow -= 1;
        let mo = &mut self.mappings[o];
        mo.shares[i] = 0;
        mo.nr_shared -= 1;
        if mo.nr_shared == 0 {
            mo.pages = Vec::new();
            mo.shares = Vec::new();
        }
        self.vmstat.cow_reuse += 1;
        let e = self.mappings[m].pages[i];
        if e.is_swap() {
            // do_swap_page of an exclusive page, for write.
            self.swap_fault(t, m, page, proc_idx, locked, true);
            return;
        }
        let p = e.pfn();
        let pi = p as usize;
        self.frames.mapcount[pi] = 1;
        self.frames.flags[pi] |= pg::YOUNG;
        // The write dirties the page; a swap-cache copy is stale and its slot freed.
        self.mark_dirty(p);
        let mlocked = self.frames.flags[pi] & pg::MLOCKED != 0;
        if locked && !mlocked {
            self.mlock_page(p);
        } else if !locked && mlocked {
            self.munlock_page(p);
        }
        self.minor(t, proc_idx, self.cfg.costs.minor_fault_ns);
    }

    /// `wp_page_copy`: the writer gets a private copy of the shared page. `count_minor`: this is
    /// the fault's own accounting (not the tail of a swap-in fault).
    #[allow(clippy::too_many_arguments)]
    fn wp_page_copy(&mut self, t: &mut Task, m: usize, page: u32, proc_idx: usize, locked: bool, o: usize, count_minor: bool) {
        let i = page as usize;
        let Some(p) = self.alloc_page_for(t, m) else { return };
        // Reclaim may have killed the writer's process (its entries are gone then).
        if t.killed || self.mappings[m].pages.get(i) != Some(&Pte::cow(o as u32)) {
            self.free_page(p);
            return;
        }
        // The copy reads the shared page (it may have been evicted again while we allocated;
        // the model has no contents to lose).
        let se = self.mappings[o].pages[i];
        if se.is_present() {
            self.frames.flags[se.pfn() as usize] |= pg::YOUNG;
        }
        self.install_anon(p, m as u32, page, pg::DIRTY | pg::YOUNG);
        self.mappings[m].pages[i] = Pte::present(p);
        self.mappings[m].nr_present += 1;
        self.mappings[m].nr_cow -= 1;
        let active = !self.cfg.semantics.is_59_plus();
        self.lru_add(p, false, active);
        if locked {
            self.mlock_page(p);
        }
        self.cow_put(o, page, locked);
        self.zram_pool_shrink();
        self.vmstat.cow_fault += 1;
        let c = &self.cfg.costs;
        if count_minor {
            self.minor(t, proc_idx, c.minor_fault_ns + c.cow_copy_ns);
        } else {
            t.cpu(c.cow_copy_ns);
        }
    }

    /// The entry backing page `idx` of anon VMA `v`: its own PTE, or for a COW entry the shared
    /// page's entry in the COW object (present or swap), with the number of sharers (1 for a
    /// private page).
    pub fn anon_entry(&self, v: u32, idx: u32) -> (Pte, u16) {
        let m = &self.mappings[self.vmas[v as usize].mapping as usize];
        let e = m.pages[idx as usize];
        if e.is_cow() {
            let o = &self.mappings[e.cow_obj() as usize];
            (o.pages[idx as usize], o.shares[idx as usize])
        } else {
            (e, 1)
        }
    }
}
