//! Mark-sweep (Dalvik's CMS, ART's `MarkSweep` / `StickyMarkSweep`): non-moving, over a
//! free-list main space, so the heap fragments.
//!
//! Plan: `InitialMark` (pause: roots) → `ConcurrentMark` (GC thread; sticky collections first
//! scan the old objects written since the last collection) → `Remark` (pause: roots again and
//! the objects written during marking — incremental update through the write barrier's dirty
//! list —, then finish marking) → `Sweep` (concurrent: free every unmarked object in scope).
//! Objects allocated after the initial mark are allocated black. Sticky (generational CMS)
//! collections trace only objects allocated since the last collection.

use super::{trace, Collector, Cx, GcType, PhaseId};
use crate::config::CollectorKind;
use crate::object::flag;
use mobmem_engine::Nanos;

pub struct MarkSweep;

/// Shared by mark-sweep and mark-compact: initial mark.
pub fn initial_mark(cx: &mut Cx) {
    cx.t.cpu(cx.heap.costs.suspend_ns);
    trace::take_snapshots(cx);
    cx.st.evacuate = false;
    trace::mark_roots(cx);
    cx.heap.allocate_black = true;
    cx.st.cursor = 0;
}

/// Shared: concurrent marking.
pub fn concurrent_mark(cx: &mut Cx, until: Nanos) -> bool {
    if cx.st.sticky && !trace::scan_dirty_snapshot(cx, until) {
        return false;
    }
    trace::drain(cx, until)
}

/// Shared: remark pause — roots and objects written since the initial mark.
pub fn remark(cx: &mut Cx) {
    cx.t.cpu(cx.heap.costs.suspend_ns);
    trace::mark_roots(cx);
    let epoch = cx.heap.mark_epoch;
    let n = cx.heap.dirty.len();
    for j in 0..n {
        let o = cx.heap.dirty[j];
        let i = o as usize;
        if !cx.heap.objs.is_live(o) {
            continue;
        }
        let old = cx.st.sticky && cx.heap.objs.word[i].flags & flag::YOUNG == 0;
        if cx.heap.objs.word[i].mark == epoch || old {
            cx.st.rec.cards_scanned += 1;
            cx.t.cpu(cx.heap.costs.card_ns);
            trace::scan_object(cx, o, trace::DEPTH_UNKNOWN - 1);
        }
    }
    trace::drain(cx, Nanos::MAX);
    cx.st.cursor = 0;
}

impl Collector for MarkSweep {
    fn kind(&self) -> CollectorKind {
        CollectorKind::MarkSweep
    }
    fn name(&self, t: GcType) -> &'static str {
        match t {
            GcType::Sticky => "sticky concurrent mark sweep",
            GcType::Full => "concurrent mark sweep",
        }
    }
    fn supports_sticky(&self) -> bool {
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
            PhaseId::Sweep => {
                if !trace::reclaim_objects(cx, until) {
                    return false;
                }
                cx.heap.allocate_black = false;
                true
            }
            _ => unreachable!("phase {phase:?} is not part of mark-sweep"),
        }
    }
}
