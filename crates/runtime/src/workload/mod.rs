//! The mutator workload model: a lifetime-driven graph mutator (docs/runtime.md, "Mutator workload model").
//!
//! - **Shape**: `roots` static roots over a long-lived structure: depth-1 containers (one per
//!   root), depth-2 objects, then holder objects (depth 3) whose slots hold long-lived *units*
//!   (small trees of objects), and caches (depth 3) whose slots hold medium-lived units. Depth-1
//!   and depth-2 objects are sized so that they hold `near_root_share` of the structure's bytes.
//! - **Allocation**: object sizes from a size-class mix given as shares of *bytes* (default: the
//!   measured Android mix of docs/runtime.md), reference fields per object from `fanout` (never more
//!   than the object's size allows; objects ≥ 12 KiB are primitive arrays), at `alloc_rate_fg`
//!   or `alloc_rate_bg` bytes per second. Objects meant to outlive a collection (the structure,
//!   medium- and long-lived units) draw their sizes from the same mix tilted to the measured mean
//!   size of surviving objects (`survivor_object_bytes`, [`survivor_count_probs`]); temporaries
//!   draw from the mix as given.
//! - **Lifetimes**: each new unit gets a lifetime class: temporary (held by a stack root, dies
//!   after a uniform 0..`temp_life` bytes of allocation), medium-lived (held by a cache slot,
//!   evicted after an exponential lifetime of mean `medium_life` bytes) or long-lived (replaces a
//!   random unit of the structure, which dies with its subtree). Background allocations are
//!   temporaries with probability `bg_temp_share`.
//! - **Accesses**: per unit of work, `reads` object reads split between recently allocated units,
//!   a stable hot subset of long-lived slots, and paths from a root; each read touches pages.
//!   Plus writes of data fields of hot objects, native-memory touches and file-page reads.
//! - **Launch access set** ([`Workload::hot_launch`]): near-root objects, foreground-young units
//!   (allocated within `launch_fyo_window` bytes before going to background, still alive) and a
//!   sample of other live units.
//!
//! Units of work come at the frame period in the foreground (16.7 ms) and `bg_period` in the
//! background; each does `cpu_fg`·period (or `cpu_bg`) of compute besides its memory work.
//!
//! Deaths are decided by the workload (it clears the reference that held a unit); whether the
//! object is garbage is for the collector to find out. Draws come from seeded streams.
//!
//! The files: [`size_mix`] (object sizes: the measured Android mix, the survivors' mix),
//! [`profile`] (an app's [`AppProfile`]; the display's vsync), [`settings`] (the app settings
//! table, [`SETTINGS`]), [`synthetic`] (`synthetic:` app specs), [`engine`] (the mutator:
//! [`Workload`], its units, slots and timing wheels, the runs of file pages a launch reads),
//! [`startup`] (a cold launch's CPU work paced over the memory its start-up writes) and
//! [`shape`] (a heap's shape measured: bytes near the roots, the reachable objects).

pub mod engine;
pub mod profile;
pub mod settings;
pub mod shape;
pub mod size_mix;
pub(crate) mod startup;
pub mod synthetic;

pub use engine::{LaunchAccess, Unit, Workload, WorkloadStats};
pub use profile::{AppProfile, DISPLAY_HZ, VSYNC_NS};
pub use settings::SETTINGS;
pub use shape::{near_root_bytes, reachable_set};
pub use size_mix::{android_size_mix, survivor_count_probs, SizeClass, SURVIVOR_OBJECT_BYTES};
