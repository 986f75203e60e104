//! Fleet (ASPLOS '24): foreground/background-aware GC–swap co-design — its settings and the
//! installers of its parts. Fleet starts when an app goes to the background and stops a while
//! after it returns to the foreground.
//!
//! - [`rgs`]: runtime-guided swap — the breadth-first grouping GC `T_B` after going to the
//!   background, its object classes (working set, launch, cold), and the madvise of the grouped
//!   regions (cold paged out at once, launch kept hot); background mode's timers;
//! - [`bgc`]: the background-object GC — background objects in their own regions, a second card
//!   table, collections that neither trace nor move the grouped foreground objects;
//! - [`state`]: what the hooks share; [`config`]: the `fleet.*` settings.
//!
//! Policies: `fleet` (both parts), `fleet-rgs` (runtime-guided swap alone, an ablation). The
//! paper's mechanism is the default; the released code's differences are settings
//! (`fleet.depth_from_zero`, `fleet.hot_once`, `fleet.t_f_ms`, `fleet.keep_foreground`). Left
//! out: grouping of the large-object and non-moving spaces (the released code leaves them
//! ungrouped too, and so does this model); the released code's lower background heap growth
//! (max_free / 10).

pub mod bgc;
pub mod config;
pub mod rgs;
pub mod state;

pub use config::{FleetConfig, SETTINGS};

use crate::card_table::CardTable;
use crate::config::RuntimeConfig;
use crate::heap::Heap;
use crate::hooks::Hooks;
use state::{Classes, Shared};
use std::sync::{Arc, Mutex};

fn check_collector(name: &str, cfg: &RuntimeConfig, hooks: &Hooks) -> Result<(), String> {
    if !cfg.fg_collector.uses_regions() || !cfg.fg_collector.collects() || !cfg.bg_collector.collects() {
        return Err(format!("runtime policy {name} needs a copying collector with a region space (cc), not {}", cfg.fg_collector.short()));
    }
    if hooks.placement.is_some() || !hooks.state.is_empty() {
        return Err(format!("runtime policy {name} places survivors and times background work, and another installed policy already does"));
    }
    Ok(())
}

/// Runtime-guided swap: the classes, the placement and background mode's timers.
fn install_grouping(hooks: &mut Hooks, heap: &mut Heap, c: FleetConfig, bgc: bool) -> (Classes, Arc<Shared>) {
    let classes = Classes::register(heap, bgc);
    let shared = Arc::new(Shared::default());
    hooks.placement = Some(Box::new(rgs::Grouping { classes, max_depth: c.max_near_root_depth(), shared: shared.clone() }));
    hooks.state.push(Box::new(rgs::Mode::new(c, classes, shared.clone())));
    hooks.after_gc.push(Box::new(rgs::Grouped { classes, shared: shared.clone() }));
    (classes, shared)
}

/// Install runtime-guided swap alone (`fleet-rgs`).
pub fn install_rgs(hooks: &mut Hooks, heap: &mut Heap, cfg: &RuntimeConfig) -> Result<(), String> {
    let c = super::settings::settings_for(&SETTINGS, cfg)?;
    check_collector("fleet-rgs", cfg, hooks)?;
    install_grouping(hooks, heap, c, false);
    Ok(())
}

/// Install Fleet: runtime-guided swap and the background-object GC (`fleet`).
pub fn install_fleet(hooks: &mut Hooks, heap: &mut Heap, cfg: &RuntimeConfig) -> Result<(), String> {
    let c = super::settings::settings_for(&SETTINGS, cfg)?;
    check_collector("fleet", cfg, hooks)?;
    if hooks.scope.is_some() || hooks.barrier.is_some() || hooks.collector_choice.is_some() {
        return Err("runtime policy fleet sets the tracing scope, barrier and collection kind, and another installed policy already does".into());
    }
    let shift = c.card_bytes.trailing_zeros();
    let keep_foreground = c.keep_foreground;
    let (classes, shared) = install_grouping(hooks, heap, c, true);
    let rs = Arc::new(Mutex::new(bgc::RememberedSet { cards: CardTable::for_heap_with_shift(heap, shift), pending: Vec::new(), grouping: 0 }));
    let mk = || bgc::Bgc { classes, shared: shared.clone(), rs: rs.clone(), keep_foreground };
    hooks.barrier = Some(Box::new(mk()));
    hooks.scope = Some(Box::new(mk()));
    hooks.collector_choice = Some(Box::new(mk()));
    Ok(())
}
