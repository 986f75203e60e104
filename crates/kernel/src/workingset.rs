//! Refault detection (`mm/workingset.c`).
//!
//! On eviction a page leaves a shadow entry holding the current `nonresident_age` and whether it
//! was in the workingset (PG_workingset). The age advances on every eviction and, from 5.9, on
//! every page put on an active list. When a page with a shadow entry is faulted back in, the
//! refault distance `now - eviction` is compared with the workingset size:
//! - ≥ 5.9: file page → active_file + (swap ? inactive_anon + active_anon); anon page →
//!   active_file + inactive_file + (swap ? active_anon); activate if distance ≤ that;
//! - before 5.9: file pages only (anon has no shadows), distance ≤ active_file.
//!
//! A refault whose shadow says "workingset" is a restore and is a memory stall for PSI.
//! Left out: shadow-node reclaim (`workingset_nodereclaim` stays 0), per-memcg ages.

use crate::config::LruMode;
use crate::mm::Pte;
use crate::mmzone::Kernel;
use crate::page::{lru, pg, Pfn};

impl Kernel {
    /// Record an eviction; returns the shadow entry to leave behind.
    pub(crate) fn workingset_eviction(&mut self, p: Pfn) -> Pte {
        let ws = self.frames.flags[p as usize] & pg::WORKINGSET != 0;
        let age = self.nonresident_age;
        self.nonresident_age += 1;
        Pte::shadow(age, ws)
    }

    /// Pages were put on an active list (5.9+ ages the nonresident clock for them too).
    #[inline]
    pub(crate) fn workingset_age_activation(&mut self, n: u64) {
        if self.cfg.semantics.is_59_plus() {
            self.nonresident_age += n;
        }
    }

    /// A page with `shadow` is faulted back in. Returns (activate, workingset) and counts the
    /// refault, activation and restore.
    pub(crate) fn workingset_refault(&mut self, shadow: Pte, file: bool, proc_idx: usize) -> (bool, bool) {
        if !shadow.is_shadow() {
            return (false, false);
        }
        if file {
            self.vmstat.workingset_refault_file += 1;
            self.procs[proc_idx].stats.refault_file += 1;
        } else {
            self.vmstat.workingset_refault_anon += 1;
            self.procs[proc_idx].stats.refault_anon += 1;
        }
        if self.cfg.lru == LruMode::Pure {
            return (false, false);
        }
        let distance = self.nonresident_age.wrapping_sub(shadow.shadow_age());
        let len = |l: u8| self.lru.len[l as usize];
        let swap = self.swap.nr_free() > 0;
        let workingset_size = if self.cfg.semantics.is_59_plus() {
            let mut s = len(lru::ACTIVE_FILE);
            if !file {
                s += len(lru::INACTIVE_FILE);
            }
            if swap {
                s += len(lru::ACTIVE_ANON);
                if file {
                    s += len(lru::INACTIVE_ANON);
                }
            }
            s
        } else {
            if !file {
                return (false, false);
            }
            len(lru::ACTIVE_FILE)
        };
        if distance > workingset_size {
            return (false, false);
        }
        self.vmstat.workingset_activate += 1;
        if file {
            self.vmstat.workingset_activate_file += 1;
            self.procs[proc_idx].stats.activate_file += 1;
        } else {
            self.vmstat.workingset_activate_anon += 1;
        }
        self.workingset_age_activation(1);
        let ws = shadow.shadow_workingset();
        if ws {
            self.vmstat.workingset_restore += 1;
            if file {
                self.vmstat.workingset_restore_file += 1;
            } else {
                self.vmstat.workingset_restore_anon += 1;
            }
            // lru_note_cost_refault: one page of I/O.
            self.lru_note_cost(file, 1, 0);
        }
        (true, ws)
    }
}
