//! mobmem's model of Linux memory management on a phone.
//!
//! The folder reads like `mm/`: [`page`] (struct page), [`lru`] (the LRU lists), [`mm`] (address
//! spaces, VMAs, processes), [`memory`] (faults), [`page_alloc`] (watermarks, allocation slow
//! path), [`vmscan`] (reclaim, kswapd; reclaim policies on its hooks: [`fae`] and [`lwp`],
//! Acclaim's foreground-aware eviction and prediction-based kswapd sizing), [`workingset`] (refaults), [`swap`] and [`zram`],
//! [`madvise`], [`fork`] (fork and copy-on-write sharing), [`psi`], [`lmkd`], [`oom_kill`],
//! [`vmstat`] (counters), [`cpufreq`] (the governors of the CPU's frequency), [`policies`] (the
//! registries of reclaim policies), [`config`] and [`settings`] (the tunables and their table), plus the trace format
//! ([`trace`]) and its replayer ([`replay`]). [`mmzone`] (and [`psi_types`]) declare the shared
//! state every mechanism works on; [`kernel`] builds it and runs the event loop. No module imports
//! one above it: the state is at the bottom, mechanisms over it, the event loop on top.
//! See each module's documentation for what it models and what it leaves out.

pub mod buddy;
pub mod compaction;
pub mod config;
pub mod cpufreq;
pub mod fae;
pub mod fork;
pub mod invariants;
pub mod kernel;
pub mod lmkd;
pub mod lru;
pub mod lwp;
pub mod madvise;
pub mod memory;
pub mod mm;
pub mod mmzone;
pub mod oom_kill;
pub mod page;
pub mod page_alloc;
pub mod policies;
pub mod psi;
pub mod psi_types;
pub mod replay;
pub mod report;
pub mod series;
pub mod settings;
pub mod smaps;
pub mod swap;
pub mod task;
pub mod trace;
pub mod vmscan;
pub mod vmstat;
pub mod workingset;
pub mod zram;

pub use config::{KernelConfig, KernelSemantics, LruMode, ReclaimScope, SwapKind};
pub use kernel::{CoRunner, Kernel, KernelError};
pub use task::{Breakdown, Task};
