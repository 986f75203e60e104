//! Conservation invariants of the kernel model, checked by tests and (periodically) in debug
//! builds:
//! - every frame is accounted for: free + on an LRU list + zram pool + reserved + kernel
//!   allocations (kernel stacks) = total; with the buddy allocator, its free lists cover exactly
//!   the free frames;
//! - every listed frame is on exactly the list its state says, and list lengths match;
//! - every present PTE points at a frame that maps back to it (the reverse map), every LRU frame
//!   is reachable from its owner, and no page is both resident and swapped;
//! - every swap entry refers to a used slot; swap-cache links agree in both directions;
//! - per-mapping present/swapped counts, the memcg charge and the zram pool size agree with
//!   the pages;
//! - copy-on-write sharing after fork: a shared page lives once, in its COW object (so the frame
//!   and swap-slot checks above count it once however many processes map it); every COW entry
//!   names a COW object whose page at that index is resident or swapped; each object page's
//!   recorded number of sharers equals the COW entries mapping it (and the frame's mapcount while
//!   resident); an object page with no sharer is empty; per-mapping COW-entry counts and
//!   per-process zero-page counts agree with the page tables.

use crate::config::{LruMode, ReclaimScope};
use crate::mm::MappingKind;
use crate::mmzone::Kernel;
use crate::page::{lru, pg, NO_PFN, NO_SLOT};

impl Kernel {
    /// The cheap O(1) check: frames are conserved.
    pub fn frames_conserved(&self) -> bool {
        let reserved = self.cfg.reserved_pages;
        self.frames.nr_free() + self.lru.total() + self.zram_pool_frames.len() as u64 + reserved + self.nr_kernel_pages == self.cfg.ram_pages
    }

    /// The full O(pages) check. Returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        if !self.frames_conserved() {
            return Err(format!(
                "frames not conserved: free {} + lru {} + zram pool {} + reserved {} + kernel {} != total {}",
                self.frames.nr_free(),
                self.lru.total(),
                self.zram_pool_frames.len(),
                self.cfg.reserved_pages,
                self.nr_kernel_pages,
                self.cfg.ram_pages
            ));
        }
        // Lists: membership and lengths.
        let mut on_list = vec![false; self.frames.len()];
        for l in 0..lru::NR_LRU as u8 {
            let v = self.lru.collect(&self.frames, l);
            if v.len() as u64 != self.lru.len[l as usize] {
                return Err(format!("list {} has {} frames but len {}", lru::NAMES[l as usize], v.len(), self.lru.len[l as usize]));
            }
            for p in v {
                if self.frames.lru[p as usize] != l {
                    return Err(format!("frame {p} on list {} says {}", lru::NAMES[l as usize], self.frames.lru[p as usize]));
                }
                if on_list[p as usize] {
                    return Err(format!("frame {p} on two lists"));
                }
                on_list[p as usize] = true;
            }
        }
        let mut free = 0;
        let mut kernel = 0;
        for (i, &l) in self.frames.lru.iter().enumerate() {
            match l {
                lru::FREE => {
                    free += 1;
                    if let Some(b) = &self.frames.buddy {
                        if !b.is_free(i as u32) {
                            return Err(format!("frame {i} is marked free but in no free block"));
                        }
                    }
                }
                lru::KERNEL => kernel += 1,
                lru::ZRAM_POOL | lru::RESERVED => {}
                x if (x as usize) < lru::NR_LRU => {
                    if !on_list[i] {
                        return Err(format!("frame {i} claims list {x} but is not linked"));
                    }
                }
                x => return Err(format!("frame {i} in unexpected state {x} (isolated between operations?)")),
            }
        }
        if free != self.frames.nr_free() {
            return Err(format!("free count {} != frames marked free {}", self.frames.nr_free(), free));
        }
        if kernel != self.nr_kernel_pages {
            return Err(format!("kernel pages counted {} != frames marked kernel {kernel}", self.nr_kernel_pages));
        }
        if let Some(b) = &self.frames.buddy {
            b.check()?;
        }
        // Reverse map: every LRU frame is its owner's page.
        let pure = self.cfg.lru == LruMode::Pure;
        for (i, _) in on_list.iter().enumerate().filter(|(_, &b)| b) {
            let m = self.frames.mapping[i] as usize;
            let idx = self.frames.index[i] as usize;
            let Some(mp) = self.mappings.get(m) else { return Err(format!("frame {i} owned by unknown mapping {m}")) };
            let e = mp.pages.get(idx).copied().ok_or_else(|| format!("frame {i} index {idx} beyond mapping {}", mp.name))?;
            let ok = if e.is_present() {
                e.pfn() as usize == i
            } else if e.is_swap() {
                self.swap.cache[e.slot() as usize] as usize == i && self.frames.swap_slot[i] == e.slot()
            } else {
                false
            };
            if !ok {
                return Err(format!("frame {i} (mapping {} index {idx}) not referenced by its owner (entry {:?})", mp.name, e));
            }
            let file = lru::is_file(self.frames.lru[i]);
            let anon_page = mp.kind == MappingKind::Anon;
            if !pure && self.frames.lru[i] != lru::UNEVICTABLE && file == anon_page {
                return Err(format!("frame {i} of {:?} mapping on list {}", mp.kind, lru::NAMES[self.frames.lru[i] as usize]));
            }
        }
        // Page tables.
        let mut slots_seen = 0u64;
        // COW entries per object page, zero-page entries per process.
        let mut sharers: Vec<Vec<u32>> = self.mappings.iter().map(|m| if m.cow_object { vec![0; m.pages.len()] } else { Vec::new() }).collect();
        let mut zero = vec![0u64; self.procs.len()];
        for (mi, mp) in self.mappings.iter().enumerate() {
            let (mut present, mut swapped, mut cow) = (0, 0, 0);
            if mp.cow_object && mp.shares.len() != mp.pages.len() {
                return Err(format!("COW object {} has {} share counts for {} pages", mp.name, mp.shares.len(), mp.pages.len()));
            }
            for (idx, &e) in mp.pages.iter().enumerate() {
                if e.is_hot() {
                    let p = e.pfn() as usize;
                    let f = self.frames.flags[p];
                    if pure
                        || mp.kind != MappingKind::Anon
                        || mp.cow_object
                        || f & (pg::YOUNG | pg::DIRTY | pg::SWAPBACKED) != pg::YOUNG | pg::DIRTY | pg::SWAPBACKED
                        || self.frames.mapping[p] as usize != mi
                        || self.frames.index[p] as usize != idx
                    {
                        return Err(format!("{}[{idx}] is hot but frame {p} is not its young, dirty anon page (flags {f:#x})", mp.name));
                    }
                }
                if e.is_cow() {
                    if mp.kind != MappingKind::Anon || mp.cow_object {
                        return Err(format!("{}[{idx}] is a COW entry in a {}", mp.name, if mp.cow_object { "COW object" } else { "file" }));
                    }
                    cow += 1;
                    let o = e.cow_obj() as usize;
                    let Some(om) = self.mappings.get(o).filter(|m| m.cow_object) else {
                        return Err(format!("{}[{idx}] COW entry names mapping {o}, not a COW object", mp.name));
                    };
                    let se = om.pages.get(idx).copied().unwrap_or_default();
                    if !se.is_present() && !se.is_swap() {
                        return Err(format!("{}[{idx}] COW entry maps {}[{idx}] which holds {:?}", mp.name, om.name, se));
                    }
                    sharers[o][idx] += 1;
                    continue;
                }
                if e.is_zero() {
                    if mp.cow_object || mp.kind != MappingKind::Anon || mp.owner as usize >= zero.len() {
                        return Err(format!("{}[{idx}] zero-page entry in a mapping without an owner", mp.name));
                    }
                    zero[mp.owner as usize] += 1;
                    continue;
                }
                if mp.cow_object && (e.is_present() || e.is_swap()) == (mp.shares[idx] == 0) {
                    return Err(format!("COW object {}[{idx}] holds {:?} with {} sharers", mp.name, e, mp.shares[idx]));
                }
                if mp.cow_object && e.is_present() && self.frames.mapcount[e.pfn() as usize] != mp.shares[idx] {
                    return Err(format!(
                        "COW object {}[{idx}] frame mapcount {} != sharers {}",
                        mp.name,
                        self.frames.mapcount[e.pfn() as usize],
                        mp.shares[idx]
                    ));
                }
                if e.is_present() {
                    present += 1;
                    let p = e.pfn() as usize;
                    if !on_list[p] || self.frames.mapping[p] as usize != mi || self.frames.index[p] as usize != idx {
                        return Err(format!("{}[{idx}] present in frame {p} that does not map back", mp.name));
                    }
                    let s = self.frames.swap_slot[p];
                    if s != NO_SLOT && self.swap.cache[s as usize] as usize != p {
                        return Err(format!("{}[{idx}] frame {p} swap-cache link broken", mp.name));
                    }
                    if s != NO_SLOT {
                        slots_seen += 1;
                    }
                } else if e.is_swap() {
                    if mp.kind != MappingKind::Anon {
                        return Err(format!("file page {}[{idx}] has a swap entry", mp.name));
                    }
                    swapped += 1;
                    slots_seen += 1;
                    let s = e.slot();
                    if !self.swap.in_use(s) {
                        return Err(format!("{}[{idx}] refers to free swap slot {s}", mp.name));
                    }
                    let c = self.swap.cache[s as usize];
                    if c != NO_PFN && (self.frames.mapping[c as usize] as usize != mi || self.frames.index[c as usize] as usize != idx) {
                        return Err(format!("{}[{idx}] swap cache frame {c} belongs elsewhere", mp.name));
                    }
                }
            }
            if present != mp.nr_present || swapped != mp.nr_swapped {
                return Err(format!("{}: counted present/swapped {present}/{swapped} != recorded {}/{}", mp.name, mp.nr_present, mp.nr_swapped));
            }
            if cow != mp.nr_cow {
                return Err(format!("{}: {cow} COW entries but nr_cow {}", mp.name, mp.nr_cow));
            }
            if mp.cow_object && present + swapped != mp.nr_shared {
                return Err(format!("COW object {}: {} pages but nr_shared {}", mp.name, present + swapped, mp.nr_shared));
            }
        }
        for (o, counts) in sharers.iter().enumerate() {
            for (idx, &n) in counts.iter().enumerate() {
                if n != self.mappings[o].shares[idx] as u32 {
                    return Err(format!(
                        "COW object {}[{idx}]: {n} COW entries map it but {} sharers recorded",
                        self.mappings[o].name, self.mappings[o].shares[idx]
                    ));
                }
            }
        }
        for (pi, p) in self.procs.iter().enumerate() {
            if zero[pi] != p.nr_zero {
                return Err(format!("process {}: {} zero-page entries but nr_zero {}", p.pid, zero[pi], p.nr_zero));
            }
        }
        if slots_seen != self.swap.nr_used() {
            return Err(format!("{} swap slots in use but {} referenced", self.swap.nr_used(), slots_seen));
        }
        if self.cfg.scope == ReclaimScope::MemcgLimit && self.memcg_charged != self.lru.total() {
            return Err(format!("memcg charge {} != charged pages {}", self.memcg_charged, self.lru.total()));
        }
        if !pure && self.zram_pool_pages != self.zram_pool_need() {
            return Err(format!("zram pool {} pages for {} compressed bytes", self.zram_pool_pages, self.swap.compr_bytes));
        }
        Ok(())
    }
}
