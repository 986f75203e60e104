//! The catalogue: every named thing a user can choose, in one place, from the registries that
//! implement them — collectors, runtime policies, kill policies, madvise advice and hints, LRU
//! modes, kernel semantics — and every setting key by layer. Command lines build their choices,
//! validation and listings from it (`mobmem._core.catalog()`), so a new entry in a registry is
//! known everywhere at once.
//!
//! Left out so far: device, app, scenario and system files (listed from the data directory by
//! the command line) and the settings' types, defaults and units.

use mobmem_kernel::madvise::HintRegistry;
use serde_json::{json, Value};

/// The catalogue as JSON: `{collectors: [{name, aliases, help}], runtime_policies: [{name,
/// help}], lmkd: [{name, help}], madvise: {advice: [..], hints: [..]}, lru_modes: [..],
/// kernel_semantics: [..], settings: {kernel: [..], runtime: [..], app: [..], session: [..]}}`.
pub fn catalog() -> Value {
    let collectors: Vec<Value> =
        mobmem_runtime::CollectorKind::all().into_iter().map(|k| k.info()).map(|c| json!({ "name": c.name, "aliases": c.aliases, "help": c.help })).collect();
    let policies: Vec<Value> = mobmem_runtime::policies::POLICIES.iter().map(|(n, h, _)| json!({ "name": n, "help": h })).collect();
    let lmkd: Vec<Value> = mobmem_kernel::lmkd::POLICIES.iter().map(|(n, h, _)| json!({ "name": n, "help": h })).collect();
    json!({
        "collectors": collectors,
        "runtime_policies": policies,
        "lmkd": lmkd,
        "madvise": { "advice": mobmem_kernel::madvise::Advice::NAMES, "hints": HintRegistry::with_builtins().names() },
        "lru_modes": mobmem_kernel::config::LruMode::NAMES,
        "kernel_semantics": mobmem_kernel::config::KernelSemantics::NAMES,
        "settings": {
            "kernel": mobmem_kernel::KernelConfig::KEYS,
            "runtime": mobmem_runtime::RuntimeConfig::KEYS,
            "app": mobmem_runtime::workload::AppProfile::KEYS,
            "session": crate::session::inputs::SESSION_KEYS,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collector_name_and_alias_parses_to_its_entry() {
        let c = catalog();
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
        for e in catalog()["lmkd"].as_array().unwrap() {
            let mut k = mobmem_kernel::KernelConfig::default();
            k.set("lmkd", e["name"].as_str().unwrap()).unwrap();
        }
    }
}
