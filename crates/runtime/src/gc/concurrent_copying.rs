//! ConcurrentCopying (ART's default collector through Android 13), region-based.
//!
//! Plan: `FlipThreadRoots` (pause: card processing — dirty cards aged, aged ones cleaned —, choose
//! the evacuation set, copy the roots' referents, turn the read barrier on) → `CopyingPhase`
//! (concurrent on the GC thread: for sticky collections first the old objects on cards at least
//! aged — the card table as remembered set, see [`crate::card_table`] —, then the mark stack, copying
//! each from-space object when first reached, depth-first by default) → `MarkStackCheckpoint`
//! (pause: drain what mutators pushed; the read barrier goes off) → `ReclaimPhase` (concurrent:
//! free dead objects and from-space regions, releasing their pages).
//!
//! Sticky (young) collections evacuate only newly allocated regions; full collections evacuate
//! newly allocated regions and every region whose live bytes are below 75% of its allocated bytes
//! (`RegionSpace::should_evacuate_full`); large regions never move. The transition GC on going to
//! background evacuates every region (compaction). While the read barrier is on, a mutator that
//! loads a reference to a from-space object not yet copied copies it itself; `copied_by` records
//! which thread copied each object.

use super::{trace, Collector, Cx, GcState, GcType, PhaseId};
use crate::object::ObjId;
use mobmem_engine::Nanos;

pub struct ConcurrentCopying;

impl Collector for ConcurrentCopying {
    fn name(&self, t: GcType) -> &'static str {
        match t {
            GcType::Sticky => "young concurrent copying",
            GcType::Full => "concurrent copying",
        }
    }
    fn supports_sticky(&self) -> bool {
        true
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        vec![PhaseId::Flip, PhaseId::ConcurrentCopy, PhaseId::CopyCheckpoint, PhaseId::Reclaim]
    }
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, until: Nanos) -> bool {
        match phase {
            PhaseId::Flip => {
                cx.t.cpu(cx.heap.costs.suspend_ns);
                trace::process_cards(cx);
                trace::take_snapshots(cx);
                let all = cx.st.force_evacuate_all;
                trace::choose_from_space(cx, all && cx.st.gc_type == GcType::Full);
                cx.st.evacuate = true;
                trace::mark_roots(cx);
                cx.heap.allocate_black = true;
                cx.st.barrier = true;
                cx.st.tr.cursor = 0;
                true
            }
            PhaseId::ConcurrentCopy => {
                if cx.st.sticky && !trace::scan_cards(cx, crate::card_table::CARD_AGED, trace::CardScan::Old, until) {
                    return false;
                }
                trace::drain(cx, until)
            }
            PhaseId::CopyCheckpoint => {
                cx.t.cpu(cx.heap.costs.suspend_ns / 2);
                trace::drain(cx, Nanos::MAX);
                cx.st.barrier = false;
                cx.st.tr.cursor = 0;
                true
            }
            PhaseId::Reclaim => {
                if !trace::reclaim_objects(cx, until) {
                    return false;
                }
                trace::reclaim_regions(cx);
                cx.heap.allocate_black = false;
                true
            }
            _ => unreachable!("phase {phase:?} is not part of concurrent copying"),
        }
    }
    /// Read barrier slow path (ART's `ConcurrentCopying::Mark`): an object the mutator reached
    /// that this collection has not marked yet is marked as the mutator — copied if it is in an
    /// evacuated region, marked gray in place otherwise (an unevacuated region, the non-moving or
    /// large-object space: `MarkUnevacFromSpaceRegion`, `MarkNonMoving`). Marking only the
    /// evacuated ones would lose an unevacuated object whose only reference the mutator moves
    /// from an unscanned object into a scanned one.
    fn mutator_access(&mut self, cx: &mut Cx, o: ObjId) {
        if self.mutator_access_needed(cx.heap, cx.st, o) {
            trace::mark_ref(cx, o, trace::DEPTH_UNKNOWN);
        }
    }
    fn mutator_access_needed(&self, heap: &crate::heap::Heap, st: &GcState, o: ObjId) -> bool {
        st.barrier && heap.objs.mark(o) != heap.mark_epoch
    }
}
