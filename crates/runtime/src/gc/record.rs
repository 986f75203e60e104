//! What a collection is and what it did: its kind ([`GcType`]), its cause ([`GcCause`]), the phases
//! collectors are made of ([`PhaseId`], [`PhaseKind`]) and the record of one collection
//! ([`GcRecord`], [`PhaseRecord`]). Plain types, read by the runtime, the hooks and heap sizing.

use mobmem_engine::Nanos;
use mobmem_kernel::Breakdown;
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
    /// Test harness request.
    Requested,
    /// A policy's own collection, named by the policy (e.g. Fleet's grouping GC, "RGS").
    Policy(&'static str),
}

impl GcCause {
    pub fn name(self) -> &'static str {
        match self {
            Self::Background => "Background",
            Self::Alloc => "Alloc",
            Self::Explicit => "Explicit",
            Self::CollectorTransition => "CollectorTransition",
            Self::Requested => "Requested",
            Self::Policy(name) => name,
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
    pub(crate) id: u32,
    pub collector: &'static str,
    pub(crate) name: &'static str,
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
    pub(crate) gc_cpu_pause_ns: Nanos,
    /// GC-thread wall time (CPU + faults + reclaim stalls + waiting for a core).
    pub(crate) gc_thread_ns: Nanos,
    /// Mutator time stopped in pauses or waiting for this collection.
    pub mutator_wait_ns: Nanos,
    /// Mutator time spent in GC work through barriers (self-copying, compaction faults) and
    /// checkpoints.
    pub mutator_gc_work_ns: Nanos,
    /// Mutator time in checkpoints (per-thread pauses doing GC work, e.g. its root scan).
    pub checkpoint_ns: Nanos,
    pub freed_objects: u64,
    pub freed_bytes: u64,
    pub(crate) freed_los_objects: u64,
    pub freed_los_bytes: u64,
    pub bytes_allocated_before: u64,
    pub bytes_allocated_after: u64,
    pub target_footprint_after: u64,
    pub objects_marked: u64,
    pub objects_scanned: u64,
    pub(crate) refs_visited: u64,
    pub objects_copied: u64,
    pub(crate) bytes_copied: u64,
    pub copied_by_mutator: u64,
    pub regions_evacuated: u64,
    pub regions_freed: u64,
    /// Cards scanned (at least aged for sticky collections, dirty at remark), and the objects
    /// on them that were scanned.
    pub cards_scanned: u64,
    pub card_objects_scanned: u64,
    /// Non-clean cards aged or cleaned by card processing.
    pub cards_aged: u64,
    pub(crate) roots: u64,
    /// Distinct heap pages the GC thread touched (the GC working set), and objects it touched.
    pub gc_pages_touched: u64,
    pub gc_objects_touched: u64,
    /// Faults of the GC thread by kind.
    pub gc_faults: Breakdown,
    /// pswpin during the collection (system-wide).
    pub(crate) pswpin: u64,
    pub(crate) pgmajfault: u64,
}
