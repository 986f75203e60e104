//! What Fleet's hooks of one app share: its region classes and its mode (background mode,
//! grouping in progress, grouped; whether the running collection is a background-object GC).
//! Hooks are separate objects called from the runtime's hot paths, so the mode is a few atomics
//! (one app is one thread: relaxed ordering).

use crate::gc::GcCause;
use crate::heap::Heap;
use crate::object::{ObjId, SpaceId};
use crate::space::{RegionSpace, RegionState};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};

/// The grouping collection's cause (its name in GC records and logs).
pub const RGS_CAUSE: GcCause = GcCause::Policy("RGS");

/// Placement classes of Fleet's regions.
#[derive(Clone, Copy, Debug)]
pub struct Classes {
    pub(crate) launch: u8,
    pub(crate) ws: u8,
    pub(crate) cold: u8,
    /// Objects allocated in background mode after the grouping (BGO); 0 without the
    /// background-object GC.
    pub(crate) bgo: u8,
}

impl Classes {
    pub fn register(heap: &mut Heap, bgc: bool) -> Self {
        Self {
            launch: heap.register_class("fleet-launch", &["launch"]),
            ws: heap.register_class("fleet-ws", &["working-set"]),
            cold: heap.register_class("fleet-cold", &["cold"]),
            bgo: if bgc { heap.register_class("fleet-bgo", &["background"]) } else { 0 },
        }
    }

    /// A region of the grouped foreground objects (launch, working set or cold).
    pub fn is_grouped(&self, class: u8) -> bool {
        class == self.launch || class == self.ws || class == self.cold
    }
}

/// Phases of background mode.
pub mod phase {
    /// Not in background mode, or in it before the grouping GC.
    pub const NONE: u8 = 0;
    /// The grouping GC has started and not yet ended.
    pub const GROUPING: u8 = 1;
    /// The grouping is in place: background-object GCs (when installed).
    pub const GROUPED: u8 = 2;
    /// A full collection fell back from the background-object GC: the grouping no longer holds,
    /// collections are stock ones until background mode ends.
    pub const GROUPING_LOST: u8 = 3;
}

#[derive(Default)]
pub struct Shared {
    pub(crate) phase: AtomicU8,
    /// The running collection is a background-object GC.
    pub(crate) bgc_now: AtomicBool,
    /// The allocation clock when the grouping GC started: objects allocated before it are the
    /// foreground objects (FGO).
    pub(crate) grouping_clock: AtomicU64,
    /// Counts groupings (a new one starts a new remembered set).
    pub(crate) groupings: AtomicU64,
}

impl Shared {
    pub fn phase(&self) -> u8 {
        self.phase.load(Relaxed)
    }
    pub fn set_phase(&self, p: u8) {
        self.phase.store(p, Relaxed)
    }
    pub fn bgc_now(&self) -> bool {
        self.bgc_now.load(Relaxed)
    }
    /// Allocated before the grouping GC started (a foreground object, wherever it lies now).
    pub fn allocated_before_grouping(&self, heap: &Heap, o: ObjId) -> bool {
        heap.objs.alloc_clock(o) < self.grouping_clock.load(Relaxed)
    }
    /// A foreground object in the sense of the background-object GC: kept without being traced.
    /// Main-space objects are foreground objects by their region (grouped regions are never
    /// evacuated by a background-object GC); objects of the other collected spaces by their
    /// allocation time.
    pub fn is_fgo(&self, heap: &Heap, classes: &Classes, o: ObjId) -> bool {
        match heap.objs.space_of(o) {
            SpaceId::Main => {
                let r = RegionSpace::region_of(heap.objs.addr(o)) as usize;
                match heap.regions.state[r] {
                    // Large objects in regions (no large-object space) do not move: by age.
                    RegionState::Large | RegionState::LargeTail => self.allocated_before_grouping(heap, o),
                    _ => classes.is_grouped(heap.regions.class[r]),
                }
            }
            SpaceId::NonMoving | SpaceId::Los => self.allocated_before_grouping(heap, o),
            _ => true,
        }
    }
}
