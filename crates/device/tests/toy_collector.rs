//! Adding a collector from outside the crates: one module (here, this file's `StwMarkSweep`) and
//! one registry entry (`gc::registry::register`). After that every name-taking input accepts
//! it — the runtime settings, a scenario's `system.collector`, the `--set` pairs of a session
//! (what `mobmem run --set system.collector=…` passes) — and the catalogue lists it.

use mobmem_engine::Nanos;
use mobmem_runtime::config::{CollectorInfo, RuntimeConfig};
use mobmem_runtime::gc::{registry, trace, Collector, Cx, GcType, PhaseId};
use mobmem_runtime::CollectorKind;
use serde_json::Value;
use std::sync::OnceLock;

/// A toy collector: stop-the-world, non-moving mark-sweep, full collections only — one pause
/// that marks from the roots and frees every unmarked object.
struct StwMarkSweep;

impl Collector for StwMarkSweep {
    fn name(&self, _: GcType) -> &'static str {
        "toy stop-the-world mark sweep"
    }
    fn supports_sticky(&self) -> bool {
        false
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        vec![PhaseId::StopTheWorld]
    }
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, _until: Nanos) -> bool {
        assert_eq!(phase, PhaseId::StopTheWorld);
        cx.t.cpu(cx.heap.costs.suspend_ns);
        trace::take_snapshots(cx);
        cx.st.sticky = false;
        cx.st.evacuate = false;
        trace::mark_roots(cx);
        trace::drain(cx, Nanos::MAX);
        trace::reclaim_objects(cx, Nanos::MAX);
        true
    }
}

/// The toy's registry entry (registered once per test process).
fn toy() -> CollectorKind {
    static KIND: OnceLock<CollectorKind> = OnceLock::new();
    *KIND.get_or_init(|| {
        let info = CollectorInfo {
            name: "toy-stw",
            aliases: &["toy"],
            help: "test collector: stop-the-world non-moving mark-sweep",
            uses_regions: false,
            copy_reserve: false,
            concurrent: false,
            collects: true,
        };
        registry::register(info, || Box::new(StwMarkSweep)).expect("the toy's names are new")
    })
}

fn tiny() -> String {
    format!("{}/../../tests/python/data/session_tiny.toml", env!("CARGO_MANIFEST_DIR"))
}

fn data() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data")
}

fn session(set: &[(&str, &str)]) -> Result<Value, String> {
    let o: Vec<(String, String)> = set.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    mobmem_device::session::run::run_file(&tiny(), &data(), &o, None)
}

#[test]
fn a_registered_collector_is_known_to_every_input() {
    let kind = toy();
    assert_eq!(CollectorKind::parse("toy-stw"), Some(kind));
    assert_eq!(CollectorKind::parse("toy"), Some(kind));
    assert!(CollectorKind::names().contains(&"toy-stw"));
    assert!(!kind.uses_regions() && !kind.concurrent() && kind.collects());
    let mut cfg = RuntimeConfig::default();
    cfg.set("collector", "toy").unwrap();
    assert_eq!(cfg.fg_collector, kind);
    let cat = mobmem_device::catalog::catalog(None).unwrap();
    assert!(cat["collectors"].as_array().unwrap().iter().any(|c| c["name"] == "toy-stw" && c["aliases"][0] == "toy"));
    // a name may be registered once
    let again = CollectorInfo { name: "toy", aliases: &[], help: "", uses_regions: false, copy_reserve: false, concurrent: false, collects: true };
    assert!(registry::register(again, || Box::new(StwMarkSweep)).unwrap_err().contains("already taken"));
}

#[test]
fn a_session_runs_the_registered_collector_by_its_name() {
    toy();
    let res = session(&[("system.collector", "toy"), ("session.time_scale", "0.5")]).unwrap();
    assert_eq!(res["system"]["collector"], "toy-stw");
    let gcs = res["gcs"].as_array().unwrap();
    assert!(!gcs.is_empty(), "the toy collected");
    assert!(gcs.iter().all(|g| g["collector"] == "toy-stw" && g["type"] == "full"), "{:?}", gcs.first());
    // stop-the-world: the whole collection is its pause; and it freed what it did not mark
    assert!(gcs.iter().all(|g| g["pause_ms"] == g["duration_ms"]));
    assert!(gcs.iter().map(|g| g["freed_bytes"].as_u64().unwrap()).sum::<u64>() > 0);
    // an unknown collector is an error that lists the registered one too
    let err = session(&[("system.collector", "g1")]).unwrap_err();
    assert!(err.contains("toy-stw"), "{err}");
}
