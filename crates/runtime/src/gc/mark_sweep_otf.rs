//! Mark-sweep with on-the-fly root scanning (`ms-otf`): the CMS of [`super::mark_sweep`] without
//! the initial stop-the-world pause. As ART's `MarkSweep::MarkingPhase` does, cards are processed
//! concurrently and each mutator thread's roots are marked at a checkpoint
//! (`MarkRootsCheckpoint`): the thread, at its next safepoint, revokes its TLAB, hands its
//! allocation stack over (it becomes the live stack), marks the objects its roots reference and
//! from then allocates black — a short per-thread pause charged to that thread, not a global
//! one. With one mutator thread per app the checkpoint is that thread's pause
//! ([`super::PhaseKind::Checkpoint`], recorded as the `MarkRootsCheckpoint` phase and in
//! `GcRecord::checkpoint_ns`); an idle or blocked mutator's checkpoint is run by the GC thread.
//! The hook's extra roots are marked by the GC thread after the checkpoint.
//!
//! Plan: `ProcessCards` (concurrent) → `MarkRootsCheckpoint` (checkpoint) → `ConcurrentMark`
//! (extra roots; sticky: old objects on aged/dirty cards; the mark stack) → `Remark` (pause:
//! roots and dirty cards again, as in ART, which keeps this pause) → `Sweep`. Sticky collections
//! are generational CMS ([`super::sticky_mark_sweep`]).
//!
//! Left out: several mutator threads (each would run its checkpoint at its own safepoint, the
//! GC thread waiting for the last one).

use super::mark_sweep::{self, concurrent_mark, remark, sweep};
use super::{trace, Collector, Cx, GcType, PhaseId};
use mobmem_engine::Nanos;

#[derive(Default)]
pub struct MarkSweepOtf {
    /// This collection's extra roots are marked (the concurrent mark runs in slices).
    roots_marked: bool,
}

/// The root checkpoint, run by (or for) the mutator thread.
fn roots_checkpoint(cx: &mut Cx) {
    cx.t.cpu(cx.heap.costs.checkpoint_ns);
    trace::take_snapshots(cx);
    cx.st.evacuate = false;
    let n = trace::mark_thread_roots(cx);
    trace::charge_roots(cx, n);
    cx.heap.allocate_black = true;
    cx.st.tr.cursor = 0;
}

impl Collector for MarkSweepOtf {
    fn begin(&mut self, _: GcType) {
        self.roots_marked = false;
    }
    fn name(&self, t: GcType) -> &'static str {
        mark_sweep::name(t)
    }
    fn supports_sticky(&self) -> bool {
        true
    }
    fn mark_stack_prefetch(&self) -> bool {
        true
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        vec![PhaseId::ProcessCards, PhaseId::RootsCheckpoint, PhaseId::ConcurrentMark, PhaseId::Remark, PhaseId::Sweep]
    }
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, until: Nanos) -> bool {
        match phase {
            PhaseId::ProcessCards => {
                trace::process_cards(cx);
                true
            }
            PhaseId::RootsCheckpoint => {
                roots_checkpoint(cx);
                true
            }
            PhaseId::ConcurrentMark => {
                if !self.roots_marked {
                    self.roots_marked = true;
                    // The tracing-scope hook's extra roots (not thread roots), on the GC thread.
                    let n = trace::mark_extra_roots(cx);
                    trace::charge_roots(cx, n);
                }
                concurrent_mark(cx, until)
            }
            PhaseId::Remark => {
                remark(cx);
                true
            }
            PhaseId::Sweep => sweep(cx, until),
            _ => unreachable!("phase {phase:?} is not part of mark-sweep (on-the-fly roots)"),
        }
    }
}
