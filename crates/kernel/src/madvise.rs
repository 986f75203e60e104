//! `madvise` / `process_madvise` (`mm/madvise.c`) and a registry of custom hints.
//!
//! - DONTNEED: anon pages and their swap slots are freed; file pages are unmapped from this
//!   process (the page cache keeps them); pages shared copy-on-write after fork lose this
//!   mapping (freed with their last sharer), and a later read here maps the zero page.
//! - COLD: pages mapped only here (for COW-shared pages: no other sharer left) lose their young/referenced state and are moved to the head of
//!   their inactive list (`deactivate_page`).
//! - PAGEOUT: pages mapped only here are reclaimed at once, ignoring references (anon swapped out,
//!   clean file dropped, dirty file written back) — what Android's CachedAppOptimizer does.
//! - WILLNEED: swapped anon pages (COW-shared ones included) are read into the swap cache (not
//!   mapped; a later touch is a minor fault); uncached file pages are read ahead into the page
//!   cache.
//! - Custom hints: policies register a [`MadviseHint`] under a name (e.g. Fleet's "hot": mark
//!   pages referenced and move them to the active list). A hint is a module plus one registry
//!   entry.
//!
//! Left out: MADV_FREE (lazy free), MADV_REMOVE, hugepage advice.

use crate::mm::Pte;
pub use crate::mmzone::{HintRegistry, MadviseHint};
use crate::mmzone::{Kernel, KernelError};
use crate::page::{lru, pg, Pfn, NO_PFN};
use crate::task::Task;

impl HintRegistry {
    /// The registry with the built-in hints.
    pub fn with_builtins() -> Self {
        let mut r = Self::empty();
        r.register("hot", Box::new(HotHint));
        r
    }
}

/// Fleet's "hot" hint: pages become referenced and move to the head of their active list.
pub struct HotHint;

impl MadviseHint for HotHint {
    fn apply(&self, k: &mut Kernel, _t: &mut Task, vma: u32, first: u32, count: u32) {
        let m = k.vmas[vma as usize].mapping as usize;
        for idx in first..first + count {
            let e = k.mappings[m].pages[idx as usize];
            if !e.is_present() {
                continue;
            }
            let p = e.pfn();
            let i = p as usize;
            if (k.frames.lru[i] as usize) >= lru::NR_LRU - 1 {
                continue;
            }
            k.frames.flags[i] |= pg::REFERENCED;
            let file = k.frames.flags[i] & pg::SWAPBACKED == 0;
            if k.frames.lru[i] != lru::list(file, true) {
                k.lru.move_head(&mut k.frames, lru::list(file, true), p);
                k.vmstat.pgactivate += 1;
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    DontNeed,
    Cold,
    PageOut,
    WillNeed,
}

impl Advice {
    pub const NAMES: &'static [&'static str] = &["dontneed", "cold", "pageout", "willneed"];
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "dontneed" => Self::DontNeed,
            "cold" => Self::Cold,
            "pageout" => Self::PageOut,
            "willneed" => Self::WillNeed,
            _ => return None,
        })
    }
    /// Position in [`Advice::NAMES`] (the trace columns' advice code).
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl Kernel {
    fn check_range(&self, v: u32, first: u32, count: u32) -> Result<(), KernelError> {
        let vm = &self.vmas[v as usize];
        if first as u64 + count as u64 > vm.npages as u64 {
            return Err(KernelError::BeyondVma { vma: vm.name.clone(), first: first as u64, end: first as u64 + count as u64, npages: vm.npages });
        }
        Ok(())
    }

    /// `madvise` (or `process_madvise` when `t` belongs to another process than the VMA's).
    pub fn madvise(&mut self, t: &mut Task, v: u32, first: u32, count: u32, advice: Advice) -> Result<(), KernelError> {
        self.check_range(v, first, count)?;
        if !self.vmas[v as usize].live {
            return Ok(());
        }
        let file = self.vmas[v as usize].file;
        t.cpu(self.cfg.costs.minor_fault_ns / 4 + count as u64 * 20);
        match advice {
            Advice::DontNeed => {
                if file {
                    self.unmap_file_range(v, first, count);
                } else {
                    self.zap_anon_range(v, first, count);
                }
            }
            Advice::Cold => {
                for p in self.exclusive_pages(v, first, count) {
                    let i = p as usize;
                    self.frames.flags[i] &= !(pg::YOUNG | pg::REFERENCED);
                    self.cool(p);
                    let l = self.frames.lru[i];
                    if lru::is_active(l) {
                        self.lru.remove(&mut self.frames, p);
                        self.lru.add_head(&mut self.frames, l - 1, p);
                        self.vmstat.pgdeactivate += 1;
                    }
                    self.vmstat.madvise_cold_pages += 1;
                    self.touch_gen += 1;
                }
            }
            Advice::PageOut => {
                let pages = self.exclusive_pages(v, first, count);
                for &p in &pages {
                    self.frames.flags[p as usize] &= !pg::YOUNG;
                    self.cool(p);
                    self.lru.remove(&mut self.frames, p);
                }
                self.vmstat.madvise_pageout_pages += pages.len() as u64;
                self.touch_gen += pages.len() as u64;
                for chunk in pages.chunks(32) {
                    self.reclaim_pages(t, chunk);
                }
            }
            Advice::WillNeed => self.willneed(t, v, first, count),
        }
        Ok(())
    }

    /// Apply a registered custom hint (a no-op on a released VMA, as for [`Kernel::madvise`]: no
    /// hint sees a killed process's emptied page table).
    pub fn madvise_custom(&mut self, t: &mut Task, v: u32, first: u32, count: u32, hint: &str) -> Result<(), KernelError> {
        self.check_range(v, first, count)?;
        let Some((name, h)) = self.hints.take(hint) else {
            return Err(KernelError::Invalid(format!("unknown madvise hint {hint:?}; registered: {}", self.hints.names().join(", "))));
        };
        if self.vmas[v as usize].live {
            h.apply(self, t, v, first, count);
        }
        self.hints.register(&name, h);
        Ok(())
    }

    /// Present pages of the range that are on an LRU list and mapped only by this VMA.
    fn exclusive_pages(&self, v: u32, first: u32, count: u32) -> Vec<Pfn> {
        let vm = &self.vmas[v as usize];
        let m = &self.mappings[vm.mapping as usize];
        let mut out = Vec::new();
        for idx in first..first + count {
            let mut e = m.pages[idx as usize];
            if e.is_cow() {
                let o = &self.mappings[e.cow_obj() as usize];
                if o.shares[idx as usize] != 1 {
                    continue;
                }
                e = o.pages[idx as usize];
            }
            if !e.is_present() {
                continue;
            }
            let p = e.pfn();
            let i = p as usize;
            if vm.file && (vm.mapgen[idx as usize] != self.frames.gen[i] || self.frames.mapcount[i] != 1) {
                continue;
            }
            if (self.frames.lru[i] as usize) < lru::UNEVICTABLE as usize && self.frames.flags[i] & pg::WRITEBACK == 0 {
                out.push(p);
            }
        }
        out
    }

    fn willneed(&mut self, t: &mut Task, v: u32, first: u32, count: u32) {
        let m = self.vmas[v as usize].mapping as usize;
        let proc_idx = self.vmas[v as usize].proc_idx as usize;
        let file = self.vmas[v as usize].file;
        for idx in first..first + count {
            if self.mappings[m].pages.is_empty() {
                return;
            }
            let mut e = self.mappings[m].pages[idx as usize];
            // A COW-shared page is read into the COW object's swap cache.
            let mut m = m;
            if e.is_cow() {
                m = e.cow_obj() as usize;
                e = self.mappings[m].pages[idx as usize];
            }
            if file {
                if e.is_present() {
                    continue;
                }
                if self.add_to_page_cache(t, m, idx, proc_idx).is_none() {
                    return;
                }
                self.vmstat.pgpgin += 4;
                // Asynchronous read: the caller does not wait for the device.
            } else if e.is_swap() {
                let slot = e.slot();
                if self.swap.cache[slot as usize] != NO_PFN {
                    continue;
                }
                let Some(p) = self.alloc_page_for(t, m) else { return };
                // Reclaim may have killed the owner (or the last sharer of a COW page).
                if self.mappings[m].pages.get(idx as usize) != Some(&Pte::swap(slot)) {
                    self.frames.lru[p as usize] = u8::MAX;
                    self.free_page(p);
                    return;
                }
                let i = p as usize;
                self.frames.mapping[i] = m as u32;
                self.frames.index[i] = idx;
                self.frames.flags[i] = pg::SWAPBACKED;
                self.frames.mapcount[i] = 0;
                let shadow = Pte(self.swap.shadow[slot as usize]);
                let (active, ws) = self.workingset_refault(shadow, false, proc_idx);
                if ws {
                    self.frames.flags[i] |= pg::WORKINGSET;
                }
                self.frames.swap_slot[i] = slot;
                self.swap.cache[slot as usize] = p;
                self.swap.shadow[slot as usize] = 0;
                self.vmstat.pswpin += 1;
                self.vmstat.pgpgin += 4;
                self.lru_add(p, false, active);
                if self.swap.kind == crate::config::SwapKind::Zram {
                    t.cpu(self.cfg.costs.zram_decompress_ns);
                }
            }
        }
    }
}
