//! Collectors as plans made of phases (`gc/collector/`).
//!
//! A collector ([`Collector`]) gives, for a collection kind (sticky or full), its plan: a list of
//! phases, each a pause (all mutators stopped) or concurrent (the GC thread runs while mutators
//! run). The runtime executes the phases on the GC thread's simulated clock: pause phases run to
//! completion with the mutator held at a safepoint; concurrent phases run in slices interleaved
//! with the mutator (each slice ends when the GC thread's clock passes the mutator's), so read
//! barriers, write barriers and allocation during the collection really happen. Costs are the
//! work done × the per-unit costs of [`crate::costs`], plus the page faults the kernel model
//! charges for every page the GC thread touches.
//!
//! A third kind of phase, the checkpoint ([`PhaseKind::Checkpoint`]), runs on each mutator thread
//! at its next safepoint instead of stopping the world: the mutator does the phase's work itself
//! (charged to it) while the GC thread waits for it; a mutator that is idle or blocked has its
//! checkpoint run by the GC thread (as ART runs checkpoints of suspended threads).
//!
//! Collectors: [`nogc`], [`semi_space`], [`concurrent_copying`], [`mark_compact`],
//! [`mark_sweep`] (with [`sticky_mark_sweep`] for its sticky collections) and
//! [`mark_sweep_otf`] (mark-sweep with on-the-fly root scanning). They share the tracing
//! primitives of [`trace`] over the tracer's state ([`tracer`]). The registry ([`registry::create`]) maps collector kinds to
//! implementations; this module names no collector, so collectors import it without a cycle.

pub mod concurrent_copying;
pub mod mark_compact;
pub mod mark_sweep;
pub mod mark_sweep_otf;
pub mod nogc;
pub mod record;
pub mod registry;
pub mod semi_space;
pub mod sticky_mark_sweep;
pub mod trace;
pub mod tracer;

pub use record::{GcCause, GcRecord, GcType, PhaseId, PhaseKind, PhaseRecord};
pub use tracer::Tracer;

use crate::config::{RuntimeConfig, TraceOrder};
use crate::heap::Heap;
use crate::hooks::Hooks;
use crate::object::ObjId;
use mobmem_engine::Nanos;
use mobmem_kernel::{Breakdown, Kernel, Task};

/// A collection in progress: its kind, plan and accounting (kept by the runtime, which runs the
/// phases), the scope the collector sets for it (sticky, evacuating, barrier on), and the shared
/// tracer's work state ([`Tracer`]). State only one collector needs lives in that collector.
pub struct GcState {
    pub(crate) gc_type: GcType,
    pub(crate) cause: GcCause,
    pub(crate) plan: Vec<PhaseId>,
    pub(crate) phase: usize,
    pub(crate) phase_started: bool,
    pub(crate) phase_start_ns: Nanos,
    pub(crate) phase_cpu_start: Nanos,
    pub evacuate: bool,
    pub sticky: bool,
    pub(crate) rec: GcRecord,
    pub(crate) bd_start: Breakdown,
    pub(crate) pswpin_start: u64,
    pub(crate) majflt_start: u64,
    pub(crate) cpu_start: Nanos,
    /// Read barrier (concurrent copying) or compaction faults (mark-compact) active.
    pub(crate) barrier: bool,
    pub(crate) scope_hook: bool,
    /// Evacuate every allocated region (semi-space; the background transition GC).
    pub(crate) force_evacuate_all: bool,
    /// The mutator waits for the whole collection (allocation failure, explicit GC).
    pub(crate) blocking: bool,
    pub(crate) tr: Tracer,
}

impl GcState {
    pub fn new(gc_type: GcType, cause: GcCause, plan: Vec<PhaseId>, order: TraceOrder) -> Self {
        Self {
            gc_type,
            cause,
            plan,
            phase: 0,
            phase_started: false,
            phase_start_ns: 0,
            phase_cpu_start: 0,
            evacuate: false,
            sticky: gc_type == GcType::Sticky,
            rec: GcRecord::default(),
            bd_start: Breakdown::default(),
            pswpin_start: 0,
            majflt_start: 0,
            cpu_start: 0,
            barrier: false,
            scope_hook: false,
            force_evacuate_all: false,
            blocking: false,
            tr: Tracer::new(order),
        }
    }
    pub fn current(&self) -> Option<PhaseId> {
        self.plan.get(self.phase).copied()
    }
}

/// What a phase step works on.
pub struct Cx<'a> {
    pub heap: &'a mut Heap,
    pub(crate) k: &'a mut Kernel,
    /// The thread doing the work (the GC thread, or a mutator in a barrier slow path).
    pub t: &'a mut Task,
    pub(crate) hooks: &'a mut Hooks,
    pub st: &'a mut GcState,
    pub(crate) cfg: &'a RuntimeConfig,
    pub(crate) gc_thread: bool,
    /// Next kernel event (events due before the thread's clock run first).
    pub(crate) next_ev: Nanos,
}

impl Cx<'_> {
    /// Let kernel events due by the thread's clock happen (as the replay driver does).
    #[inline]
    pub fn sync_kernel(&mut self) {
        if self.t.now >= self.next_ev {
            self.heap.gc_cache.clear();
            self.k.book_cpu(self.t);
            self.k.advance_to(self.t.now);
            self.next_ev = self.k.next_event_at();
        }
    }
}

/// A collector: its plan per collection kind and its phases.
pub trait Collector: Send {
    /// ART's name in GC log lines ("concurrent copying", "young concurrent copying"…).
    fn name(&self, gc_type: GcType) -> &'static str;
    fn supports_sticky(&self) -> bool;
    fn plan(&self, gc_type: GcType) -> Vec<PhaseId>;
    /// Run `phase`; pause phases run to completion, concurrent phases may stop when the thread's
    /// clock reaches `until` (returns false: not finished).
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, until: Nanos) -> bool;
    /// A collection of `gc_type` starts (before [`Collector::plan`]): reset per-collection state.
    fn begin(&mut self, _gc_type: GcType) {}
    /// Mutator access to `o` while `st.barrier` is on (read barrier / compaction fault).
    fn mutator_access(&mut self, _cx: &mut Cx, _o: ObjId) {}
    /// Whether [`Collector::mutator_access`] has anything to do for `o` (false: the access is
    /// the barrier's fast path, ART's check of the object's mark bit — the runtime then skips
    /// setting up the call). Must be false only where `mutator_access` would change nothing.
    fn mutator_access_needed(&self, _heap: &crate::heap::Heap, _st: &GcState, _o: ObjId) -> bool {
        true
    }
    /// Whether depth-first marking goes through a small prefetch FIFO (ART `MarkSweep`'s
    /// `kUseMarkStackPrefetch`: up to [`trace::MARK_STACK_PREFETCH`] objects popped ahead of the
    /// one scanned). It changes the scan order slightly, so only collectors whose ART
    /// counterpart does it say yes.
    fn mark_stack_prefetch(&self) -> bool {
        false
    }
    /// Whether any of its collections reads the card table (sticky collections, concurrent
    /// marking's re-scan): such a collector needs the write barrier.
    fn reads_cards(&self) -> bool {
        true
    }
}
