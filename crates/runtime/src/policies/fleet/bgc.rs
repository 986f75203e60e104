//! Fleet's background-object GC (BGC).
//!
//! Once the grouping GC has run ([`super::rgs`]), objects allocated in background mode (BGO) go
//! to regions of their own class, and every collection of background mode is a background-object
//! GC (a full collection in kind: Fleet's code never runs young collections for these apps): it
//! traces from the roots, but a reference to a foreground object (FGO: an object of a grouped
//! region, or a large or non-moving object allocated before the grouping) counts as live and is
//! not followed; it evacuates only the regions that are not grouped (BGO regions and any
//! ordinary region), so grouped regions are neither traced nor moved — their swapped-out pages
//! stay out unless written. References from foreground objects into the rest come from a second
//! card table (`fleet.card_bytes`, 1 KiB cards): the write barrier marks the card of every
//! foreground object a reference is stored into; the collection reads the foreground
//! objects on dirty cards (their pages, their scan cost) and marks what they reference. Cards
//! stay dirty for the whole background mode (the remembered set only grows; a new grouping
//! starts a new one). Writes during the grouping GC itself are remembered by object and put on
//! cards when it has ended (objects move during it). The second table is host memory only (not a
//! mapping in the kernel model: heap size / 1024 bytes).
//!
//! Fallback: with `fleet.keep_foreground = false` (the paper's option) a collection for a failed
//! allocation is a full stock collection, and background mode does no further
//! background-object GCs (the grouping no longer holds); with `true` (the released code)
//! foreground objects stay live for the whole background period.

use super::state::{phase, Classes, Shared, RGS_CAUSE};
use crate::card_table::{CardTable, CARD_DIRTY};
use crate::gc::{GcCause, GcType};
use crate::heap::Heap;
use crate::hooks::{BarrierHook, CollectorChoice, TracingScope};
use crate::object::{AppState, ObjId, NULL};
use mobmem_engine::Nanos;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};

/// The remembered set of foreground objects written since the grouping GC started.
pub struct RememberedSet {
    pub(crate) cards: CardTable,
    /// Objects written while the grouping GC ran (their cards are marked when it has ended).
    pub(crate) pending: Vec<ObjId>,
    /// The grouping this set belongs to (`Shared::groupings`).
    pub(crate) grouping: u64,
}

/// The barrier, tracing scope and collection kind of background-object GCs (three hooks over one
/// state).
pub struct Bgc {
    pub(crate) classes: Classes,
    pub(crate) shared: Arc<Shared>,
    pub(crate) rs: Arc<Mutex<RememberedSet>>,
    pub(crate) keep_foreground: bool,
}

impl Bgc {
    fn set_for(&self, rs: &mut RememberedSet) {
        let g = self.shared.groupings.load(Relaxed);
        if rs.grouping != g {
            let n = rs.cards.len();
            rs.cards.clear_range(0, n);
            rs.pending.clear();
            rs.grouping = g;
        }
    }

    /// Put the objects written during the grouping GC on cards: those that ended up foreground
    /// objects (they have their final addresses now).
    fn flush_pending(&self, heap: &Heap, rs: &mut RememberedSet) {
        if rs.pending.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut rs.pending);
        pending.sort_unstable();
        pending.dedup();
        for q in pending {
            if heap.objs.is_live(q) && self.shared.is_fgo(heap, &self.classes, q) {
                rs.cards.mark_object(heap, q);
            }
        }
    }
}

impl BarrierHook for Bgc {
    fn on_write(&mut self, heap: &Heap, o: ObjId, _field: u32, v: ObjId, _now: Nanos) {
        let p = self.shared.phase();
        if v == NULL || (p != phase::GROUPING && p != phase::GROUPED) {
            return;
        }
        // While the grouping GC runs, any object written may end up a foreground object (objects
        // allocated before its flip become young ones in launch regions): remembered by object.
        // Afterwards, exactly the foreground objects (those a background-object GC keeps without
        // tracing) need their cards.
        if p == phase::GROUPED && !self.shared.is_fgo(heap, &self.classes, o) {
            return;
        }
        let mut rs = self.rs.lock().unwrap();
        self.set_for(&mut rs);
        if p == phase::GROUPING {
            rs.pending.push(o);
        } else {
            self.flush_pending(heap, &mut rs);
            rs.cards.mark_object(heap, o);
        }
    }
}

impl CollectorChoice for Bgc {
    fn gc_type(&mut self, _state: AppState, cause: GcCause, proposed: GcType) -> GcType {
        let grouped = self.shared.phase() == phase::GROUPED;
        let fallback = grouped && cause == GcCause::Alloc && !self.keep_foreground;
        let bgc = grouped && cause != RGS_CAUSE && !fallback;
        self.shared.bgc_now.store(bgc, Relaxed);
        if fallback {
            // A full stock collection: the grouping no longer holds for this background period.
            self.shared.set_phase(phase::GROUPING_LOST);
        }
        if bgc || fallback {
            GcType::Full
        } else {
            proposed
        }
    }
}

impl TracingScope for Bgc {
    fn follow(&self, heap: &Heap, to: ObjId) -> bool {
        !self.shared.bgc_now() || !self.shared.is_fgo(heap, &self.classes, to)
    }

    /// The foreground objects on dirty cards: the collection reads them (their pages, which may
    /// be in swap, and their scan cost) and marks what they reference.
    fn scan_roots(&mut self, heap: &Heap, _gc_type: GcType, out: &mut Vec<ObjId>) {
        if !self.shared.bgc_now() {
            return;
        }
        let mut rs = self.rs.lock().unwrap();
        self.set_for(&mut rs);
        self.flush_pending(heap, &mut rs);
        let from = out.len();
        rs.cards.objects_on_cards(heap, CARD_DIRTY, out);
        let mut i = from;
        while i < out.len() {
            if self.shared.is_fgo(heap, &self.classes, out[i]) {
                i += 1;
            } else {
                out.swap_remove(i);
            }
        }
        out[from..].sort_unstable_by_key(|&o| (heap.objs.space(o), heap.objs.addr(o)));
    }

    fn evacuate_region(&self, heap: &Heap, r: u32, proposed: bool) -> bool {
        if self.shared.bgc_now() {
            !self.classes.is_grouped(heap.regions.class[r as usize])
        } else {
            proposed
        }
    }
}
