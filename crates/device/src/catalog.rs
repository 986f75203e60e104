//! The catalogue: every named thing a user can choose, in one place, from the registries that
//! implement them — collectors, runtime policies, kill policies, madvise advice and hints, LRU
//! modes, kernel semantics — every setting of every layer with its type, default, unit, range,
//! help and source, and the devices, apps, scenarios and systems of a data directory. Command
//! lines build their choices, validation, help and listings from it (`mobmem._core.catalog()`),
//! so a new entry in a registry or a new data file is known everywhere at once.

use crate::input::{self, InputError};
use mobmem_engine::settings::{Info, Table};
use mobmem_kernel::madvise::HintRegistry;
use serde_json::{json, Value};
use std::path::Path;

fn settings<C>(table: &Table<C>, defaults: &C) -> Value {
    settings_json(table.prefixes, table.info(defaults))
}

fn settings_json(prefixes: &[&str], info: Vec<Info>) -> Value {
    let list: Vec<Value> = info
        .into_iter()
        .map(|Info { key, aliases, kind, default, unit, range, help, source }| {
            json!({ "key": key, "aliases": aliases, "type": kind, "default": default, "unit": unit, "range": range, "help": help, "source": source })
        })
        .collect();
    json!({ "prefixes": prefixes, "keys": list })
}

/// The catalogue as JSON: `{collectors: [{name, aliases, help, reads_cards}], runtime_policies: [{name, help}],
/// lmkd, eviction, kswapd_sizing, governors, session_services: [{name, help}], madvise: {advice, hints}, lru_modes, kernel_semantics, settings: {kernel,
/// runtime, app, session: {prefixes, keys: [{key, aliases, type, default, unit, range, help,
/// source}]}}, devices, apps, scenarios, systems}`. The last four list `data_dir` (empty lists
/// without one); a file that does not load is an error naming it.
/// A registry's components as `[{name, help}]`, in registry order.
fn components<B>(r: &mobmem_engine::component::Registry<B>) -> Vec<Value> {
    r.entries.iter().map(|c| json!({ "name": c.name, "help": c.help })).collect()
}

pub fn catalog(data_dir: Option<&Path>) -> Result<Value, InputError> {
    let collectors: Vec<Value> = mobmem_runtime::CollectorKind::all()
        .into_iter()
        .map(|k| {
            let c = k.info();
            // Whether it needs the write barrier (`runtime.write_barrier = false` is refused then).
            let reads_cards = mobmem_runtime::gc::registry::create(k).reads_cards();
            json!({ "name": c.name, "aliases": c.aliases, "help": c.help, "reads_cards": reads_cards })
        })
        .collect();
    let policies = components(&mobmem_runtime::policies::POLICIES);
    let lmkd = components(&mobmem_kernel::lmkd::KILLERS);
    let mut c = json!({
        "collectors": collectors,
        "runtime_policies": policies,
        "lmkd": lmkd,
        "eviction": components(&mobmem_kernel::policies::EVICTION),
        "kswapd_sizing": components(&mobmem_kernel::policies::KSWAPD_SIZING),
        "governors": components(&mobmem_kernel::cpufreq::GOVERNORS),
        "session_services": components(&crate::session::services::SERVICES),
        "madvise": { "advice": mobmem_kernel::madvise::Advice::NAMES, "hints": HintRegistry::with_builtins().names() },
        "lru_modes": mobmem_kernel::config::LruMode::NAMES,
        "kernel_semantics": mobmem_kernel::config::KernelSemantics::NAMES,
        "settings": {
            "kernel": settings(&mobmem_kernel::settings::SETTINGS, &mobmem_kernel::KernelConfig::default()),
            "runtime": settings(&mobmem_runtime::config::SETTINGS, &mobmem_runtime::RuntimeConfig::default()),
            "app": settings(&mobmem_runtime::workload::SETTINGS, &mobmem_runtime::workload::AppProfile::default()),
            "session": settings(&crate::session::inputs::SETTINGS, &crate::session::inputs::SessionOptions::default()),
            "calibration": settings(&crate::calibration::SETTINGS, &crate::calibration::Knobs::default()),
        },
        "devices": [], "apps": [], "scenarios": [], "systems": [],
    });
    // Runtime policies' own settings (e.g. `fleet.*`), one layer each.
    for l in mobmem_runtime::policies::LAYERS {
        c["settings"][l.layer()] = settings_json(l.prefixes(), l.info());
    }
    if let Some(d) = data_dir {
        let file = |kind: &str, name: &str| d.join(kind).join(format!("{name}.toml")).to_string_lossy().into_owned();
        let devices = input::stems(&d.join("devices"));
        let apps = input::stems(&d.join("apps"));
        let known = crate::scenario::Known { devices: &devices, apps: &apps };
        let mut list = Vec::new();
        for n in &devices {
            let p = crate::device::load(&file("devices", n))?;
            list.push(json!({ "name": n, "title": p.name, "source": p.source }));
        }
        c["devices"] = list.into();
        let mut list = Vec::new();
        for n in &apps {
            let p = crate::app::load(&file("apps", n))?;
            list.push(json!({ "name": n, "title": p.name, "package": p.package, "estimate": p.estimate }));
        }
        c["apps"] = list.into();
        let mut list = Vec::new();
        for n in input::stems(&d.join("scenarios")) {
            let s = crate::scenario::load(&file("scenarios", &n), &known)?;
            list.push(json!({ "name": n, "title": s.name, "description": s.description, "device": s.device.get_ref(), "expect": s.expect }));
        }
        c["scenarios"] = list.into();
        c["systems"] = serde_json::to_value(crate::systems::load(&d.join("systems.toml"))?).expect("plain data");
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collector_name_and_alias_parses_to_its_entry() {
        let c = catalog(None).unwrap();
        let list = c["collectors"].as_array().unwrap();
        assert!(list.len() >= 6);
        for e in list {
            let name = e["name"].as_str().unwrap();
            let kind = mobmem_runtime::CollectorKind::parse(name).unwrap();
            assert_eq!(kind.short(), name);
            for a in e["aliases"].as_array().unwrap() {
                assert_eq!(mobmem_runtime::CollectorKind::parse(a.as_str().unwrap()), Some(kind));
            }
        }
    }

    #[test]
    fn every_kill_policy_is_accepted_by_the_kernel_settings() {
        for e in catalog(None).unwrap()["lmkd"].as_array().unwrap() {
            let mut k = mobmem_kernel::KernelConfig::default();
            k.set("lmkd", e["name"].as_str().unwrap()).unwrap();
        }
    }

    #[test]
    fn the_shipped_data_is_listed_and_every_setting_default_is_accepted_back() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data");
        let c = catalog(Some(&data)).unwrap();
        for kind in ["devices", "apps", "scenarios", "systems"] {
            assert!(!c[kind].as_array().unwrap().is_empty(), "{kind}");
        }
        assert!(c["scenarios"].as_array().unwrap().iter().all(|s| c["devices"].as_array().unwrap().iter().any(|d| d["name"] == s["device"])));
        // every default, written back, is accepted: the listings show values a user can type
        let mut k = mobmem_kernel::KernelConfig::default();
        let mut r = mobmem_runtime::RuntimeConfig::default();
        let mut a = mobmem_runtime::workload::AppProfile::default();
        for (layer, keys) in c["settings"].as_object().unwrap() {
            for e in keys["keys"].as_array().unwrap() {
                let (key, v) = (e["key"].as_str().unwrap(), e["default"].as_str().unwrap());
                let ok = match layer.as_str() {
                    "kernel" => k.set(key, v).map_err(|e| e.to_string()),
                    "runtime" => r.set(key, v).map_err(|e| e.to_string()),
                    "app" => a.set(key, v),
                    _ => continue, // session defaults include an empty kill policy (the scenario's)
                };
                assert!(ok.is_ok() || key == "objsize", "{layer}.{key}={v}: {ok:?}");
                assert!(!e["help"].as_str().unwrap().is_empty(), "{layer}.{key}");
            }
        }
    }
}
