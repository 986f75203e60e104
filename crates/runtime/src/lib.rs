//! mobmem's ART-like managed runtime.
//!
//! The folder reads like `art/runtime/gc/`: [`object`] (objects: word, header and info arrays indexed by stable ids;
//! [`cell`]: the compact storage of allocation units in the unit grain),
//! [`space`] (region space, free-list spaces, large object space), [`heap`] (spaces, allocation,
//! the write barrier's card table, accounting), [`card_table`] (128-byte cards), [`gc`]
//! (collectors as plans of pause/concurrent/checkpoint phases: NoGC, SemiSpace,
//! ConcurrentCopying, ConcurrentMarkCompact, mark-sweep with sticky collections, mark-sweep with
//! on-the-fly root scanning), [`sizing`]
//! (`GrowForUtilization`), [`runtime`](mod@runtime) (triggers, the GC thread, state transitions, attribution),
//! [`trigger`] (a delegate taking over the triggers: the global GC service),
//! [`hooks`] (policy hooks and their registry) and [`policies`], [`object_swap`] (stubs, the
//! swapped-in space and the app's swap file of object-granularity swap), [`costs`] and [`config`]; the
//! workloads: [`workload`] (the lifetime-driven graph mutator of an app) and [`gcbench`]; the
//! reachability [`oracle`] used by the property tests; [`sim`] (one app on a device, JSON
//! results) and [`bench`](mod@bench) (throughput benchmarks).

#![recursion_limit = "256"]

pub mod bench;
pub mod card_table;
pub mod cell;
pub mod config;
pub mod costs;
pub mod frames;
pub mod gc;
pub mod gcbench;
pub mod heap;
pub mod hooks;
pub mod mirror;
pub mod object;
pub mod object_swap;
pub mod oracle;
pub mod policies;
pub mod runtime;
pub mod sim;
pub mod sizing;
pub mod space;
pub mod trigger;
pub mod workload;

pub use config::{CollectorKind, HeapConfig, RuntimeConfig};
pub use gc::{GcCause, GcRecord, GcType};
pub use object::{AppState, ObjId, NULL};
pub use runtime::{OutOfMemory, Runtime};
