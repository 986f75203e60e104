//! Conservation invariants of the kernel model, checked by tests and (periodically) in debug
//! builds:
//! - every frame is accounted for: free + on an LRU list + zram pool + reserved = total;
//! - every listed frame is on exactly the list its state says, and list lengths match;
//! - every present PTE points at a frame that maps back to it (the reverse map), every LRU frame
//!   is reachable from its owner, and no page is both resident and swapped;
//! - every swap entry refers to a used slot; swap-cache links agree in both directions;
//! - per-mapping present/swapped counts, the memcg charge and the zram pool size agree with
//!   the pages.

use crate::config::{LruMode, ReclaimScope};
use crate::kernel::Kernel;
use crate::mm::MappingKind;
use crate::page::{lru, NO_PFN, NO_SLOT};

impl Kernel {
    /// The cheap O(1) check: frames are conserved.
    pub fn frames_conserved(&self) -> bool {
        let reserved = self.cfg.reserved_pages;
        self.frames.nr_free() + self.lru.total() + self.zram_pool_frames.len() as u64 + reserved == self.cfg.ram_pages
    }

    /// The full O(pages) check. Returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        if !self.frames_conserved() {
            return Err(format!(
                "frames not conserved: free {} + lru {} + zram pool {} + reserved {} != total {}",
                self.frames.nr_free(),
                self.lru.total(),
                self.zram_pool_frames.len(),
                self.cfg.reserved_pages,
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
        for (i, &l) in self.frames.lru.iter().enumerate() {
            match l {
                lru::FREE => free += 1,
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
        for (mi, mp) in self.mappings.iter().enumerate() {
            let (mut present, mut swapped) = (0, 0);
            for (idx, &e) in mp.pages.iter().enumerate() {
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
