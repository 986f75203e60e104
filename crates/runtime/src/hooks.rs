//! Policy hooks (docs/runtime.md, "Hooks"). Each hook is a trait; a policy is a module that
//! installs implementations into [`Hooks`], plus one entry in [`POLICIES`]. The runtime calls:
//! - [`CollectorChoice`]: which collector and collection kind per app state and cause;
//! - [`PlacementPolicy`]: where a survivor is copied (a placement class = tagged regions), per
//!   object, knowing its depth from the roots, allocation time and state, whether a mutator copied
//!   it, its size; and the class of new mutator allocations;
//! - [`TracingScope`]: which references a collection follows, which objects it may free, which
//!   regions it evacuates, and extra roots (e.g. a second card table over tagged regions: a
//!   policy owns a [`crate::card_table::CardTable`] (`CardTable::for_heap`), marks it from its
//!   [`BarrierHook::on_write`] and turns it into roots with `CardTable::objects_on_cards`, as
//!   `tests/hooks.rs` does);
//! - [`BarrierHook`]: mutator reads and writes (access tracking, card marking, swap-in stubs);
//! - [`AfterGcPolicy`]: madvise on ranges (cold → page out, hot → activate), trim;
//! - [`HeapSizingPolicy`]: the target footprint and next collection kind after a GC
//!   (default [`crate::sizing::GrowForUtilization`]);
//! - [`ObjectSwapPolicy`]: which objects to swap out at object granularity (stubs keep their
//!   references; a collector traces through stubs without touching the object; a mutator access
//!   swaps the object back in);
//! - [`StateHook`]: the app's foreground/background changes and timed work of a policy (its own
//!   collections, with their trace order, and madvise on heap ranges at chosen times).

use crate::config::{CollectorKind, TraceOrder};
use crate::gc::record::{GcCause, GcRecord, GcType};
use crate::heap::Heap;
use crate::object::{AppState, ObjId};
use crate::sizing::{GrowForUtilization, HeapSizingPolicy};
use mobmem_engine::Nanos;

/// What a placement policy knows about a survivor being copied.
#[derive(Clone, Copy, Debug)]
pub struct SurvivorInfo {
    pub obj: ObjId,
    pub size: u32,
    /// Depth from the roots at discovery (shortest with breadth-first tracing; roots' targets = 1).
    pub depth: u16,
    pub alloc_ns: Nanos,
    pub alloc_clock: u64,
    pub alloc_state: AppState,
    /// Allocated since the last collection (its source region was newly allocated).
    pub young: bool,
    /// Copied by a mutator's read barrier rather than by the GC thread.
    pub by_mutator: bool,
    pub gc_type: GcType,
    /// Why the collection runs (a policy recognises its own collections by their cause).
    pub cause: GcCause,
}

pub trait CollectorChoice: Send {
    /// The collector for an app state (default: the configured fg/bg collector).
    fn collector(&mut self, _state: AppState, default: CollectorKind) -> CollectorKind {
        default
    }
    /// The kind of the next collection (default: the sizing policy's proposal).
    fn gc_type(&mut self, _state: AppState, _cause: GcCause, proposed: GcType) -> GcType {
        proposed
    }
}

pub trait PlacementPolicy: Send {
    /// Placement class of a survivor (0 = default regions).
    fn survivor_class(&mut self, heap: &Heap, info: &SurvivorInfo) -> u8;
    /// Placement class of new mutator allocations in this state.
    fn mutator_class(&mut self, _heap: &Heap, _state: AppState) -> u8 {
        0
    }
    /// Called once when installed, to register classes and tags.
    fn install(&mut self, _heap: &mut Heap) {}
}

pub trait TracingScope: Send {
    /// Whether a collection follows a reference to `to` (false: `to` counts as live and is not
    /// traced; it and what it reaches are kept).
    fn follow(&self, _heap: &Heap, _to: ObjId) -> bool {
        true
    }
    /// Extra roots for this collection (appended to `out`). Called by the GC thread at the
    /// collection's root marking (and again at a remark pause).
    fn extra_roots(&mut self, _heap: &Heap, _gc_type: GcType, _out: &mut Vec<ObjId>) {}
    /// Objects whose references are roots of this collection (appended to `out`), e.g. the
    /// out-of-scope objects on a policy's dirty cards: the collection reads each of them (its
    /// pages touched, its scan cost charged) and marks what it references, without marking it.
    fn scan_roots(&mut self, _heap: &Heap, _gc_type: GcType, _out: &mut Vec<ObjId>) {}
    /// Whether region `r` joins the evacuation set (given the collector's own proposal).
    fn evacuate_region(&self, _heap: &Heap, _r: u32, proposed: bool) -> bool {
        proposed
    }
}

pub trait BarrierHook: Send {
    fn on_read(&mut self, _heap: &Heap, _o: ObjId, _now: Nanos) {}
    fn on_write(&mut self, _heap: &Heap, _o: ObjId, _field: u32, _v: ObjId, _now: Nanos) {}
}

/// A madvise the runtime issues on a range of one of its spaces after a GC.
#[derive(Clone, Debug, PartialEq)]
pub enum AfterGcAction {
    /// madvise(advice) on pages [first, first+count) of the space's VMA (advice by name:
    /// dontneed, cold, pageout, willneed, or a custom hint registered in the kernel, e.g. "hot").
    Madvise { space: crate::object::SpaceId, first_page: u32, count: u32, advice: String },
    /// Trim now (instead of 5 s later).
    Trim,
}

pub trait AfterGcPolicy: Send {
    fn after_gc(&mut self, heap: &Heap, rec: &GcRecord, state: AppState, out: &mut Vec<AfterGcAction>);
}

/// Object-granularity swap (mechanism: [`crate::object_swap`]).
pub trait ObjectSwapPolicy: Send {
    /// Whether the collection copying `info.obj` (on the GC thread; it has no stub yet) gives it
    /// a stub: its contents move to the swapped-in space and only the stub is copied.
    fn stub_on_copy(&mut self, heap: &Heap, info: &SurvivorInfo) -> bool;
    /// After a collection (on the GC thread): objects with stubs to write to the swap file
    /// (`write`, if modified since their last write), then objects whose pages to release
    /// (`reclaim`: those clean after the writes).
    fn after_gc(&mut self, heap: &Heap, rec: &GcRecord, state: AppState, write: &mut Vec<ObjId>, reclaim: &mut Vec<ObjId>);
    /// Read every released object back when the app returns to the foreground, before it runs.
    fn swap_in_on_foreground(&self) -> bool {
        false
    }
}

/// Timed work a [`StateHook`] asks of the runtime.
#[derive(Clone, Debug, PartialEq)]
pub enum PolicyAction {
    /// Start a collection now (if none is running; otherwise as soon as the running one ends).
    /// `evacuate_all`: a copying collector evacuates every region, whatever its live share.
    Collect { cause: GcCause, gc_type: GcType, order: TraceOrder, evacuate_all: bool },
    /// A madvise (or trim) on the GC thread now.
    Heap(AfterGcAction),
}

pub trait StateHook: Send {
    /// The app changed state at `now` (called after the runtime's own reaction).
    fn on_state(&mut self, _heap: &Heap, _state: AppState, _now: Nanos) {}
    /// Whether the policy's own work replaces the collector transition (the compacting GC a
    /// while after going to the background): the runtime then does not schedule it.
    fn replaces_transition(&self) -> bool {
        false
    }
    /// When this policy next wants [`StateHook::due`] called (`None`: not until a state change).
    fn next_at(&self) -> Option<Nanos>;
    /// Timed work due at `now` (the runtime calls it once `now ≥ next_at()` and no collection is
    /// running); the policy advances its own `next_at`.
    fn due(&mut self, heap: &Heap, now: Nanos, out: &mut Vec<PolicyAction>);
}

/// The installed hooks of one runtime.
pub struct Hooks {
    pub collector_choice: Option<Box<dyn CollectorChoice>>,
    pub placement: Option<Box<dyn PlacementPolicy>>,
    pub scope: Option<Box<dyn TracingScope>>,
    pub barrier: Option<Box<dyn BarrierHook>>,
    pub after_gc: Vec<Box<dyn AfterGcPolicy>>,
    pub sizing: Box<dyn HeapSizingPolicy>,
    pub object_swap: Option<Box<dyn ObjectSwapPolicy>>,
    pub(crate) state: Vec<Box<dyn StateHook>>,
    /// Names of installed policies.
    pub(crate) installed: Vec<String>,
    /// A policy wants `Info::depth` of every marked object after each collection.
    pub(crate) record_depth: bool,
}

impl Default for Hooks {
    fn default() -> Self {
        Self {
            collector_choice: None,
            placement: None,
            scope: None,
            barrier: None,
            after_gc: Vec::new(),
            sizing: Box::new(GrowForUtilization),
            object_swap: None,
            state: Vec::new(),
            installed: Vec::new(),
            record_depth: false,
        }
    }
}
