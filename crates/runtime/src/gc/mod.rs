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
//! primitives of [`trace`]. The registry ([`create`]) maps collector kinds to implementations.

pub mod concurrent_copying;
pub mod mark_compact;
pub mod mark_sweep;
pub mod mark_sweep_otf;
pub mod nogc;
pub mod semi_space;
pub mod sticky_mark_sweep;
pub mod trace;

use crate::config::{CollectorKind, RuntimeConfig, TraceOrder};
use crate::heap::Heap;
use crate::hooks::Hooks;
use crate::object::ObjId;
use mobmem_engine::Nanos;
use mobmem_kernel::{Breakdown, Kernel, Task};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum GcType {
    /// Young: only objects allocated since the last collection (ART kGcTypeSticky).
    Sticky,
    /// Everything collectable (kGcTypeFull).
    Full,
}

impl GcType {
    pub fn name(self) -> &'static str {
        match self {
            Self::Sticky => "sticky",
            Self::Full => "full",
        }
    }
}

/// Why a collection ran (ART `GcCause`; the name starts ART's log line).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum GcCause {
    /// Concurrent start threshold reached (kGcCauseBackground).
    Background,
    /// Allocation failed (kGcCauseForAlloc): the allocating thread waits.
    Alloc,
    /// System.gc() (kGcCauseExplicit).
    Explicit,
    /// Collector transition on going to background (kGcCauseCollectorTransition).
    CollectorTransition,
    /// Test harness or policy request.
    Requested,
}

impl GcCause {
    pub fn name(self) -> &'static str {
        match self {
            Self::Background => "Background",
            Self::Alloc => "Alloc",
            Self::Explicit => "Explicit",
            Self::CollectorTransition => "CollectorTransition",
            Self::Requested => "Requested",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PhaseKind {
    /// Every mutator stopped (a global safepoint), the GC thread works.
    Pause,
    /// The GC thread works while mutators run.
    Concurrent,
    /// Each mutator does the work at its next safepoint (a per-thread pause charged to it).
    Checkpoint,
}

/// Phases collectors are made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PhaseId {
    /// Roots marked, mark stack started (mark-sweep, mark-compact).
    InitialMark,
    /// Concurrent marking from the mark stack.
    ConcurrentMark,
    /// Mark-compact: concurrent marking that starts with the roots (thread roots at a
    /// checkpoint, not a global pause).
    MarkingPhase,
    /// Card processing (dirty → aged, aged → clean) on the GC thread, concurrent (ART
    /// `Heap::ProcessCards` in `MarkSweep::MarkingPhase`).
    ProcessCards,
    /// On-the-fly root scanning: each mutator marks its own roots at a checkpoint (ART
    /// `MarkSweep::MarkRootsCheckpoint`); its allocation stack is swapped and allocation turns black.
    RootsCheckpoint,
    /// Roots and dirty objects rescanned, marking finished.
    Remark,
    /// Concurrent copying: evacuation set chosen, roots copied (the flip pause).
    Flip,
    /// Concurrent copying: trace and copy on the GC thread (read barrier on).
    ConcurrentCopy,
    /// Checkpoint draining the mutators' gray objects; read barrier off afterwards.
    CopyCheckpoint,
    /// Free dead objects and from-space regions.
    Reclaim,
    /// Mark-sweep: free unmarked objects.
    Sweep,
    /// Mark-compact: free dead objects and compute the compaction (forwarding) concurrently.
    PreCompactSweep,
    /// Mark-compact: compute forwarding addresses, update roots (pause).
    CompactFlip,
    /// Mark-compact: move objects page by page (mutators compact pages they touch first).
    ConcurrentCompact,
    /// Semi-space: the whole collection in one pause.
    StopTheWorld,
}

impl PhaseId {
    pub fn kind(self) -> PhaseKind {
        match self {
            Self::InitialMark | Self::Remark | Self::Flip | Self::CopyCheckpoint | Self::CompactFlip | Self::StopTheWorld => PhaseKind::Pause,
            Self::RootsCheckpoint => PhaseKind::Checkpoint,
            _ => PhaseKind::Concurrent,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::InitialMark => "InitialMark",
            Self::ConcurrentMark => "ConcurrentMark",
            Self::MarkingPhase => "MarkingPhase",
            Self::ProcessCards => "ProcessCards",
            Self::RootsCheckpoint => "MarkRootsCheckpoint",
            Self::Remark => "Remark",
            Self::Flip => "FlipThreadRoots",
            Self::ConcurrentCopy => "CopyingPhase",
            Self::CopyCheckpoint => "MarkStackCheckpoint",
            Self::Reclaim => "ReclaimPhase",
            Self::Sweep => "Sweep",
            Self::PreCompactSweep => "ReclaimPhase+PrepareForCompaction",
            Self::CompactFlip => "CompactionPause",
            Self::ConcurrentCompact => "CompactionPhase",
            Self::StopTheWorld => "StopTheWorld",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct PhaseRecord {
    pub name: &'static str,
    pub kind: PhaseKind,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    /// CPU of the GC thread in this phase.
    pub gc_cpu_ns: Nanos,
}

/// Everything one collection did and cost.
#[derive(Clone, Debug, Default, Serialize)]
pub struct GcRecord {
    pub id: u32,
    pub collector: &'static str,
    pub name: &'static str,
    pub gc_type: &'static str,
    pub cause: &'static str,
    pub state: &'static str,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub phases: Vec<PhaseRecord>,
    pub pauses_ns: Vec<Nanos>,
    pub pause_total_ns: Nanos,
    pub pause_max_ns: Nanos,
    /// GC-thread CPU (work and resident page touches), all phases.
    pub gc_cpu_ns: Nanos,
    /// GC-thread CPU during pauses (the "explicit" STW cost for LBO).
    pub gc_cpu_pause_ns: Nanos,
    /// GC-thread wall time (CPU + faults + reclaim stalls + waiting for a core).
    pub gc_thread_ns: Nanos,
    /// Mutator time stopped in pauses or waiting for this collection.
    pub mutator_wait_ns: Nanos,
    /// Mutator time spent in GC work through barriers (self-copying, compaction faults) and
    /// checkpoints.
    pub mutator_gc_work_ns: Nanos,
    /// Mutator time in checkpoints (per-thread pauses doing GC work, e.g. its root scan).
    pub checkpoint_ns: Nanos,
    pub freed_objects: u64,
    pub freed_bytes: u64,
    pub freed_los_objects: u64,
    pub freed_los_bytes: u64,
    pub bytes_allocated_before: u64,
    pub bytes_allocated_after: u64,
    pub target_footprint_after: u64,
    pub objects_marked: u64,
    pub objects_scanned: u64,
    pub refs_visited: u64,
    pub objects_copied: u64,
    pub bytes_copied: u64,
    pub copied_by_mutator: u64,
    pub regions_evacuated: u64,
    pub regions_freed: u64,
    /// Cards scanned (at least aged for sticky collections, dirty at remark), and the objects
    /// on them that were scanned.
    pub cards_scanned: u64,
    pub card_objects_scanned: u64,
    /// Non-clean cards aged or cleaned by card processing.
    pub cards_aged: u64,
    pub roots: u64,
    /// Distinct heap pages the GC thread touched (the GC working set), and objects it touched.
    pub gc_pages_touched: u64,
    pub gc_objects_touched: u64,
    /// Faults of the GC thread by kind.
    pub gc_faults: Breakdown,
    /// pswpin during the collection (system-wide).
    pub pswpin: u64,
    pub pgmajfault: u64,
}

/// The state of a collection in progress.
pub struct GcState {
    pub gc_type: GcType,
    pub cause: GcCause,
    pub plan: Vec<PhaseId>,
    pub phase: usize,
    pub phase_started: bool,
    pub phase_start_ns: Nanos,
    pub phase_cpu_start: Nanos,
    /// Mark stack of (object, depth). Breadth-first tracing reads it from `head` as a queue.
    pub stack: Vec<(ObjId, u16)>,
    pub head: usize,
    pub order: TraceOrder,
    /// Depth-first marking pops through ART MarkSweep's prefetch FIFO (see
    /// [`Collector::mark_stack_prefetch`]).
    pub prefetch_fifo: bool,
    pub evacuate: bool,
    pub sticky: bool,
    /// The live stack: objects allocated since the previous collection started (the sticky
    /// scope; survivors become old).
    pub young_snapshot: Vec<ObjId>,
    /// Position in a resumable pass (reclaim's second pass).
    pub cursor: usize,
    /// Reclaim: the first pass is done; the objects to rescue (out of the tracing scope, in the
    /// from-space) and to sweep (dead, in free-list spaces or the large-object space), each in
    /// ascending address order.
    pub sweep_started: bool,
    pub rescue: Vec<ObjId>,
    pub sweep: Vec<ObjId>,
    /// Card scanning in progress: the used card ranges, the range and card reached.
    pub cards_started: bool,
    pub card_ranges: [(usize, usize); 3],
    pub card_range_idx: usize,
    pub card_cursor: usize,
    /// Objects of the card being scanned (reused buffer).
    pub card_buf: Vec<ObjId>,
    pub rec: GcRecord,
    pub bd_start: Breakdown,
    pub pswpin_start: u64,
    pub majflt_start: u64,
    pub cpu_start: Nanos,
    pub compaction: Option<mark_compact::Compaction>,
    /// Read barrier (concurrent copying) or compaction faults (mark-compact) active.
    pub barrier: bool,
    pub scope_hook: bool,
    /// Evacuate every allocated region (semi-space; the background transition GC).
    pub force_evacuate_all: bool,
    /// The mutator waits for the whole collection (allocation failure, explicit GC).
    pub blocking: bool,
    /// Store each marked object's depth in `Info::depth` (placement policies, breadth-first
    /// tracing); the mark stack carries depths either way.
    pub record_depth: bool,
    /// Roots have been marked (collectors that mark them in a concurrent phase).
    pub roots_marked: bool,
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
            stack: Vec::new(),
            head: 0,
            order,
            prefetch_fifo: false,
            evacuate: false,
            sticky: gc_type == GcType::Sticky,
            young_snapshot: Vec::new(),
            cursor: 0,
            sweep_started: false,
            rescue: Vec::new(),
            sweep: Vec::new(),
            cards_started: false,
            card_ranges: [(0, 0); 3],
            card_range_idx: 0,
            card_cursor: 0,
            card_buf: Vec::new(),
            rec: GcRecord::default(),
            bd_start: Breakdown::default(),
            pswpin_start: 0,
            majflt_start: 0,
            cpu_start: 0,
            compaction: None,
            barrier: false,
            scope_hook: false,
            force_evacuate_all: false,
            blocking: false,
            record_depth: order == TraceOrder::BreadthFirst,
            roots_marked: false,
        }
    }
    pub fn current(&self) -> Option<PhaseId> {
        self.plan.get(self.phase).copied()
    }
}

/// What a phase step works on.
pub struct Cx<'a> {
    pub heap: &'a mut Heap,
    pub k: &'a mut Kernel,
    /// The thread doing the work (the GC thread, or a mutator in a barrier slow path).
    pub t: &'a mut Task,
    pub hooks: &'a mut Hooks,
    pub st: &'a mut GcState,
    pub cfg: &'a RuntimeConfig,
    pub gc_thread: bool,
    /// Next kernel event (events due before the thread's clock run first).
    pub next_ev: Nanos,
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
    fn kind(&self) -> CollectorKind;
    /// ART's name in GC log lines ("concurrent copying", "young concurrent copying"…).
    fn name(&self, gc_type: GcType) -> &'static str;
    fn supports_sticky(&self) -> bool;
    fn plan(&self, gc_type: GcType) -> Vec<PhaseId>;
    /// Run `phase`; pause phases run to completion, concurrent phases may stop when the thread's
    /// clock reaches `until` (returns false: not finished).
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, until: Nanos) -> bool;
    /// Mutator access to `o` while `st.barrier` is on (read barrier / compaction fault).
    fn mutator_access(&mut self, _cx: &mut Cx, _o: ObjId) {}
    /// Whether depth-first marking goes through a small prefetch FIFO (ART `MarkSweep`'s
    /// `kUseMarkStackPrefetch`: up to [`trace::MARK_STACK_PREFETCH`] objects popped ahead of the
    /// one scanned). It changes the scan order slightly, so only collectors whose ART
    /// counterpart does it say yes.
    fn mark_stack_prefetch(&self) -> bool {
        false
    }
}

/// The collector registry.
pub fn create(kind: CollectorKind) -> Box<dyn Collector> {
    match kind {
        CollectorKind::NoGc => Box::new(nogc::NoGc),
        CollectorKind::SemiSpace => Box::new(semi_space::SemiSpace),
        CollectorKind::ConcurrentCopying => Box::new(concurrent_copying::ConcurrentCopying),
        CollectorKind::ConcurrentMarkCompact => Box::new(mark_compact::MarkCompact),
        CollectorKind::MarkSweep => Box::new(mark_sweep::MarkSweep),
        CollectorKind::MarkSweepOtf => Box::new(mark_sweep_otf::MarkSweepOtf),
    }
}
