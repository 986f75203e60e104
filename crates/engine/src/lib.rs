//! The discrete-event engine every mobmem layer runs on.
//!
//! - [`time`]: simulated time in nanoseconds.
//! - [`queue`]: an event queue ordered by (time, insertion sequence), so ties break
//!   deterministically in FIFO order.
//! - [`rng`]: seeded, independent random streams per entity (a process, a device, a swap device),
//!   so adding an entity does not perturb the draws of the others.
//! - [`cpu`]: simulated CPU cores with contention: threads book work on the earliest-free core and
//!   wait when all are busy; a thread that stalls does not stop the others.
//! - [`cpufreq`]: frequency domains, their governors' mechanism and the CPU energy model.
//! - [`settings`]: the tables of `key=value` settings every layer accepts.
//! - [`component`]: the registry entry every switchable mechanism (collector, policy, killer,
//!   governor, service) is, and the registries of names settings and messages read.
//! - [`text`]: reading input text files (positions, UTF-8 errors at their byte).
//! - [`host_alloc`]: the binaries' allocator for the large host tables (host memory, not model).
//!
//! What is left out: preemption inside a booked slice (slices are short: one reclaim batch, one
//! chunk of mutator work), priorities and CFS fairness.

pub mod component;
pub mod cpu;
pub mod cpufreq;
pub mod host_alloc;
pub mod queue;
pub mod rng;
pub mod settings;
pub mod text;
pub mod time;

pub use cpu::{CpuSet, Slot, ThreadId, ThreadStats};
pub use queue::EventQueue;
pub use rng::{stream, Stream};
pub use time::Nanos;
