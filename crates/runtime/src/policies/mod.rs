//! Policies built on the runtime's hooks: a module each, plus one entry in [`POLICIES`], the
//! registry `system.policies` names are looked up in. A policy with parameters also lists its
//! settings table in [`LAYERS`] (keys under its own prefix, e.g. `fleet.t_b_ms`): they are
//! checked and kept in the runtime configuration ([`apply_setting`]) and the installer reads them
//! back ([`settings::settings_for`]).

pub mod fleet;
pub mod marvin;
pub mod segregate;
pub mod settings;

use crate::config::RuntimeConfig;
use crate::heap::Heap;
use crate::hooks::Hooks;
use crate::sizing::GrowForUtilization;
use mobmem_engine::component::{Component, Registry};
use mobmem_engine::settings::SettingError;
use settings::{Layer, SettingsLayer};

/// Installs a policy's hooks (and may register placement classes on the heap), reading its
/// settings from the runtime configuration.
pub type InstallFn = fn(&mut Hooks, &mut Heap, &RuntimeConfig) -> Result<(), String>;

/// The policy registry (`system.policies`). A new policy = a module + one entry.
pub static POLICIES: Registry<InstallFn> = Registry {
    kind: "runtime policy",
    entries: &[
        Component {
            name: "segregate-by-state",
            help: "test policy: survivors and new objects go to regions tagged by the app state at allocation (fg/bg)",
            build: |h, heap, _| {
                segregate::install(h, heap);
                Ok(())
            },
        },
        Component {
            name: "grow-for-utilization",
            help: "ART's GrowForUtilization heap sizing (the default)",
            build: |h, _, _| {
                h.sizing = Box::new(GrowForUtilization);
                Ok(())
            },
        },
        Component {
            name: "fleet",
            help: "Fleet (ASPLOS '24): runtime-guided swap plus the background-object GC — after the grouping GC, background objects get their own regions and background collections neither trace nor move the grouped foreground objects (a second card table remembers writes into them) (settings fleet.*)",
            build: fleet::install_fleet,
        },
        Component {
            name: "fleet-rgs",
            help: "Fleet's runtime-guided swap: a breadth-first grouping GC T_B after going to background copies near-root and foreground-young objects to launch regions, objects the app touched during it to working-set regions and the rest to cold regions, which are paged out at once while launch regions are kept hot (settings fleet.*)",
            build: fleet::install_rgs,
        },
        Component {
            name: "marvin",
            help: "Marvin (ATC '20): object-granularity swap — compactions give objects of at least marvin.threshold bytes stubs that keep their references, cold objects are written to the app's swap file and their pages released in the background, a mutator access reads an object back, and everything is read back when the app returns to the foreground (settings marvin.*)",
            build: marvin::install,
        },
    ],
};

/// The settings layers of the registered policies.
pub static LAYERS: &[&dyn SettingsLayer] = &[&Layer(&fleet::SETTINGS), &Layer(&marvin::SETTINGS)];

/// The layer that owns `key`, if a policy's.
pub fn layer_of(key: &str) -> Option<&'static dyn SettingsLayer> {
    LAYERS.iter().copied().find(|l| l.owns(key))
}

/// Apply one runtime setting: a policy's key (under its layer's prefix, with or without
/// `runtime.`) is checked by its table and kept in `cfg.policy_settings`; any other key is a
/// runtime setting ([`RuntimeConfig::set`]).
pub fn apply_setting(cfg: &mut RuntimeConfig, key: &str, value: &str) -> Result<(), SettingError> {
    let bare = key.strip_prefix("runtime.").unwrap_or(key);
    match layer_of(bare) {
        Some(l) => {
            l.check(bare, value)?;
            cfg.policy_settings.push((bare.to_string(), value.to_string()));
            Ok(())
        }
        None => cfg.set(key, value),
    }
}

/// Install the named policy.
pub fn install(name: &str, hooks: &mut Hooks, heap: &mut Heap, cfg: &RuntimeConfig) -> Result<(), String> {
    (POLICIES.get(name)?.build)(hooks, heap, cfg)?;
    hooks.installed.push(name.into());
    Ok(())
}
