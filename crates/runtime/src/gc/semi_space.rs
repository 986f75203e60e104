//! SemiSpace: stop-the-world copying of every allocated region into free ones (the region space
//! plays from- and to-space; mutators may use only half of it, so a semi-space heap reserves
//! twice the nominal size of address space — the memory actually given is reported as the
//! footprint). One pause: roots, trace and copy (depth-first by default), reclaim.

use super::{trace, Collector, Cx, GcType, PhaseId};
use mobmem_engine::Nanos;

pub struct SemiSpace;

impl Collector for SemiSpace {
    fn name(&self, _: GcType) -> &'static str {
        "semispace"
    }
    fn supports_sticky(&self) -> bool {
        false
    }
    fn reads_cards(&self) -> bool {
        false // one pause traces everything from the roots
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        vec![PhaseId::StopTheWorld]
    }
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, _until: Nanos) -> bool {
        debug_assert_eq!(phase, PhaseId::StopTheWorld);
        cx.t.cpu(cx.heap.costs.suspend_ns);
        trace::take_snapshots(cx);
        cx.st.sticky = false;
        trace::choose_from_space(cx, true);
        cx.st.evacuate = true;
        trace::mark_roots(cx);
        trace::drain(cx, Nanos::MAX);
        trace::reclaim_objects(cx, Nanos::MAX);
        trace::reclaim_regions(cx);
        true
    }
}
