//! Mark-sweep: Dalvik's concurrent mark-sweep (CMS) and ART's `MarkSweep` family. The `ms`
//! collector is ART's CMS collector type: full collections are `MarkSweep` (every object of the
//! collected spaces; `PartialMarkSweep`, which leaves the zygote space alone, is the same thing
//! here since app collections never collect the zygote space), sticky collections are
//! `StickyMarkSweep` ([`super::sticky_mark_sweep`]: generational CMS). Non-moving, over a
//! free-list main space, so the heap fragments.
//!
//! Plan (Dalvik's, with a global pause at each end of marking): `InitialMark` (pause: card
//! processing — dirty cards aged, aged ones cleaned —, the allocation stack becomes the live
//! stack, roots marked; allocation is black from here) → `ConcurrentMark` (GC thread: sticky
//! collections first scan the old objects on cards at least aged, then the mark stack) →
//! `Remark` (pause: roots again and the objects on cards dirtied during marking — marked ones,
//! and old ones in sticky collections: incremental update through the card table —, then finish
//! marking) → `Sweep` (concurrent: free the unmarked objects in scope — every object for full
//! collections, the live stack for sticky ones). The variant with on-the-fly root scanning (no
//! initial pause) is [`super::mark_sweep_otf`]. Marking pops the mark stack through ART's
//! 4-entry prefetch FIFO (`kUseMarkStackPrefetch`), so objects are scanned in ART's order.

use super::{sticky_mark_sweep, trace, Collector, Cx, GcType, PhaseId};
use crate::card_table::CARD_DIRTY;
use mobmem_engine::Nanos;

pub struct MarkSweep;

/// Initial mark (pause): suspending the threads, then the marking start.
pub fn initial_mark(cx: &mut Cx) {
    cx.t.cpu(cx.heap.costs.suspend_ns);
    start_marking(cx);
}

/// The start of marking: card processing, allocation stack → live stack, roots; allocation
/// black. (Mark-compact runs it without the pause.)
pub fn start_marking(cx: &mut Cx) {
    trace::process_cards(cx);
    trace::take_snapshots(cx);
    cx.st.evacuate = false;
    trace::mark_roots(cx);
    cx.heap.allocate_black = true;
    cx.st.tr.cursor = 0;
}

/// Concurrent marking; sticky collections first mark from the old objects on aged/dirty cards.
pub fn concurrent_mark(cx: &mut Cx, until: Nanos) -> bool {
    if cx.st.sticky && !sticky_mark_sweep::mark_from_old_cards(cx, until) {
        return false;
    }
    trace::drain(cx, until)
}

/// Remark (pause): roots again and the objects on cards dirtied since card processing.
pub fn remark(cx: &mut Cx) {
    cx.t.cpu(cx.heap.costs.suspend_ns);
    trace::mark_roots(cx);
    let which = if cx.st.sticky { trace::CardScan::OldOrMarked } else { trace::CardScan::Marked };
    trace::scan_cards(cx, CARD_DIRTY, which, Nanos::MAX);
    trace::drain(cx, Nanos::MAX);
    cx.st.tr.cursor = 0;
}

/// Sweep: free unmarked objects (the live stack only in sticky collections).
pub fn sweep(cx: &mut Cx, until: Nanos) -> bool {
    if !trace::reclaim_objects(cx, until) {
        return false;
    }
    cx.heap.allocate_black = false;
    true
}

/// ART's names of mark-sweep collections (both mark-sweep collectors log them).
pub fn name(t: GcType) -> &'static str {
    match t {
        GcType::Sticky => sticky_mark_sweep::NAME,
        GcType::Full => "concurrent mark sweep",
    }
}

impl Collector for MarkSweep {
    fn name(&self, t: GcType) -> &'static str {
        name(t)
    }
    fn supports_sticky(&self) -> bool {
        true
    }
    fn mark_stack_prefetch(&self) -> bool {
        true
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        vec![PhaseId::InitialMark, PhaseId::ConcurrentMark, PhaseId::Remark, PhaseId::Sweep]
    }
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, until: Nanos) -> bool {
        match phase {
            PhaseId::InitialMark => {
                initial_mark(cx);
                true
            }
            PhaseId::ConcurrentMark => concurrent_mark(cx, until),
            PhaseId::Remark => {
                remark(cx);
                true
            }
            PhaseId::Sweep => sweep(cx, until),
            _ => unreachable!("phase {phase:?} is not part of mark-sweep"),
        }
    }
}
