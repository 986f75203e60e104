//! Fleet (ASPLOS '24): foreground/background-aware GC–swap co-design — its settings and the
//! installers of its parts. Fleet starts when an app goes to the background and stops a while
//! after it returns to the foreground.
//!
//! - [`rgs`]: runtime-guided swap — the breadth-first grouping GC `T_B` after going to the
//!   background, its object classes (working set, launch, cold), and the madvise of the grouped
//!   regions (cold paged out at once, launch kept hot).
//!
//! The paper's mechanism is the default; the released code's differences are settings
//! (`fleet.depth_from_zero`, `fleet.hot_once`, `fleet.t_f_ms`). Left out so far: the
//! background-object GC (background allocations in their own regions, a second card table,
//! background GCs that do not trace foreground objects); grouping of the large-object and
//! non-moving spaces (the released code leaves them ungrouped too, and so does this model).

pub mod config;
pub mod rgs;

pub use config::{FleetConfig, SETTINGS};

use crate::config::RuntimeConfig;
use crate::heap::Heap;
use crate::hooks::Hooks;

/// Install runtime-guided swap (`fleet-rgs`).
pub fn install_rgs(hooks: &mut Hooks, heap: &mut Heap, cfg: &RuntimeConfig) -> Result<(), String> {
    let c = super::settings::settings_for(&SETTINGS, cfg)?;
    if !cfg.fg_collector.uses_regions() || !cfg.fg_collector.collects() || !cfg.bg_collector.collects() {
        return Err(format!("runtime policy fleet-rgs needs a copying collector with a region space (cc), not {}", cfg.fg_collector.short()));
    }
    if hooks.placement.is_some() {
        return Err("runtime policy fleet-rgs places survivors, and another installed policy already does".into());
    }
    rgs::install(hooks, heap, c);
    Ok(())
}
