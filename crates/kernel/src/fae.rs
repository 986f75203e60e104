//! Foreground-aware eviction (FAE), Acclaim (Li et al., ATC '20): reclaim that keeps the
//! foreground app's pages by making background apps' pages cheaper to evict.
//!
//! Every page knows the process whose allocation brought it in (`Frames::owner`: the first
//! toucher of a shared file page), and the activity manager tells the kernel which app is in the
//! foreground (`Kernel::foreground`). A page of a background app found referenced on an inactive
//! list is reclaimed instead of activated or kept, and a referenced executable file page of a
//! background app is not rotated back to the active list. Pages of the foreground app, of system
//! processes and of exempt apps (`kernel.fae_exempt`) keep the stock rules. Option from
//! Acclaim's older code: foreground pages get up to `kernel.fae_fg_chances` extra chances
//! (kept on the inactive list when they would be reclaimed).
//!
//! Left out: Acclaim's UID granularity (the model has one process per app) and its handling of
//! pages shared between apps beyond the first toucher.

use crate::mmzone::{EvictionPolicy, PageOwner};
use crate::page::Pfn;

pub struct Fae {
    fg_chances: u8,
    /// Per frame: (allocation generation, chances used) — a recycled frame starts afresh.
    chances: Vec<(u32, u8)>,
}

impl Fae {
    pub fn new(fg_chances: u32, frames: usize) -> Self {
        let fg_chances = fg_chances.min(u8::MAX as u32) as u8;
        Self { fg_chances, chances: if fg_chances > 0 { vec![(0, 0); frames] } else { Vec::new() } }
    }
}

impl EvictionPolicy for Fae {
    fn name(&self) -> &'static str {
        "fae"
    }

    fn keep_referenced(&mut self, owner: PageOwner, _pfn: Pfn, _gen: u32, _activate: bool) -> bool {
        !matches!(owner, PageOwner::BackgroundApp(_))
    }

    fn extra_chance(&mut self, owner: PageOwner, pfn: Pfn, gen: u32) -> bool {
        if self.fg_chances == 0 || owner != PageOwner::ForegroundApp {
            return false;
        }
        let e = &mut self.chances[pfn as usize];
        if e.0 != gen {
            *e = (gen, 0);
        }
        if e.1 < self.fg_chances {
            e.1 += 1;
            true
        } else {
            false
        }
    }

    fn rotate_exec(&self, owner: PageOwner) -> bool {
        !matches!(owner, PageOwner::BackgroundApp(_))
    }
}
