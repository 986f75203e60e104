//! Marvin (ATC '20, "End the Senseless Killing"): runtime-managed swap at object granularity
//! with a bookmarking collector — its settings and installer.
//!
//! - [`reclaim`]: which objects get stubs, which are written to the app's swap file and whose
//!   pages are released, and the swap-in pause on returning to the foreground;
//! - [`write_task`]: the timer of Marvin's write task and background compactions;
//! - [`config`]: the `marvin.*` settings.
//!
//! The mechanism (stubs, the swapped-in space, the swap file, access bits, swap-in on access)
//! is the runtime's ([`crate::object_swap`]). The kernel keeps its own swap: run Marvin with a
//! swapless kernel (`noswap`) to compare the two levels. Policy `marvin` (the Fleet paper's
//! comparison, 1 KiB threshold); the released code's 2 KiB threshold and write-only coldness are
//! settings (`marvin.threshold`, `marvin.count_reads`). Left out: object types (the model's
//! objects have none), the reclamation table shared with the kernel, the pause to patch
//! references when stubs are made (the compaction that makes them updates every reference).

pub mod config;
pub mod reclaim;
pub mod write_task;

pub use config::{MarvinConfig, SETTINGS};

use crate::config::RuntimeConfig;
use crate::heap::Heap;
use crate::hooks::Hooks;

/// Install Marvin (`marvin`).
pub fn install(hooks: &mut Hooks, heap: &mut Heap, cfg: &RuntimeConfig) -> Result<(), String> {
    let c = super::settings::settings_for(&SETTINGS, cfg)?;
    if !cfg.fg_collector.uses_regions() || !cfg.fg_collector.collects() || !cfg.bg_collector.uses_regions() {
        return Err(format!("runtime policy marvin makes stubs in a copying collector's region space (cc), not {}", cfg.fg_collector.short()));
    }
    if hooks.object_swap.is_some() {
        return Err("runtime policy marvin swaps objects, and another installed policy already does".into());
    }
    heap.oswap.track_bytes = c.threshold;
    heap.oswap.space_pages = c.space_bytes.div_ceil(crate::space::PAGE) as u32;
    heap.oswap.file.capacity = c.swap_file_bytes;
    hooks.state.push(Box::new(write_task::WriteTask::new(c.clone())));
    hooks.object_swap = Some(Box::new(reclaim::Reclaim { c }));
    Ok(())
}
