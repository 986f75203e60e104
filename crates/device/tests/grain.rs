//! The simulation grain changes host work only: a session gives the same result — every launch,
//! kill, vmstat counter, GC record, frame and timeline sample — whether the objects of
//! allocation units are general objects (`runtime.grain = object`, the reference) or unit cells
//! (`unit`, the default). Checked on small sessions under memory pressure for every collector,
//! both swap kinds, breadth-first tracing with a placement policy, and lmkd kills.

mod common;
use common::*;
use serde_json::Value;

/// A session's result without what legitimately differs between the two runs: wall-clock fields
/// and the echo of the grain setting itself.
fn comparable(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    for k in ["wall_seconds", "sim_speed", "parameters"] {
        o.remove(k);
    }
    if let Some(s) = o.get_mut("system").and_then(|s| s.as_object_mut()) {
        s.remove("runtime_settings");
    }
    v
}

/// The first place two results differ, for a readable failure.
fn first_difference(a: &Value, b: &Value, path: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                match y.get(k) {
                    Some(vb) => {
                        if let Some(d) = first_difference(va, vb, &format!("{path}/{k}")) {
                            return Some(d);
                        }
                    }
                    None => return Some(format!("{path}/{k} missing in the unit grain")),
                }
            }
            y.keys().find(|k| !x.contains_key(*k)).map(|k| format!("{path}/{k} missing in the object grain"))
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} vs {} entries", x.len(), y.len()));
            }
            x.iter().zip(y).enumerate().find_map(|(i, (p, q))| first_difference(p, q, &format!("{path}[{i}]")))
        }
        _ => (a != b).then(|| format!("{path}: {a} vs {b}")),
    }
}

fn both_grains(name: &str, text: &str, set: &[(&str, &str)]) -> Value {
    let with = |grain: &'static str| {
        let mut s: Vec<(&str, &str)> = set.to_vec();
        s.push(("grain", grain));
        comparable(run(name, text, &s))
    };
    let (obj, unit) = (with("object"), with("unit"));
    if let Some(d) = first_difference(&obj, &unit, "") {
        panic!("{name} {set:?}: the grains disagree at {d}");
    }
    unit
}

/// A 1.5 GiB phone: the three apps brought back have been pushed out by the other five.
const PRESSURE: [(&str, &str); 2] = [("kernel.ram_mib", "1536"), ("kernel.reserved_mib", "100")];

fn scenario() -> String {
    away_and_back(&APPS[..3], &MORE[3..])
}

fn pressured(v: &Value) -> bool {
    v["vmstat"]["pswpout"].as_u64().unwrap_or(0) > 0 && v["gc"]["count"].as_u64().unwrap_or(0) > 0
}

fn collector(c: &str) {
    let mut set = PRESSURE.to_vec();
    set.push(("system.collector", c));
    let v = both_grains(&format!("grain-{c}"), &scenario(), &set);
    assert!(pressured(&v), "{c}: the session must swap and collect to test anything");
}

#[test]
fn concurrent_copying_gives_the_same_session_in_both_grains() {
    collector("cc");
}

#[test]
fn mark_compact_gives_the_same_session_in_both_grains() {
    collector("cmc");
}

#[test]
fn semi_space_gives_the_same_session_in_both_grains() {
    collector("ss");
}

#[test]
fn mark_sweep_gives_the_same_session_in_both_grains() {
    collector("ms");
    collector("ms-otf");
}

#[test]
fn zram_and_kills_give_the_same_session_in_both_grains() {
    let mut zram = PRESSURE.to_vec();
    zram.extend([("kernel.swap", "zram"), ("kernel.ram_mib", "1280")]);
    let v = both_grains("grain-zram", &scenario(), &zram);
    assert!(pressured(&v));
    assert!(!v["kill_records"].as_array().unwrap().is_empty(), "the zram run must kill to test kills");
}

#[test]
fn breadth_first_tracing_with_a_placement_policy_gives_the_same_session_in_both_grains() {
    let mut bfs = PRESSURE.to_vec();
    bfs.extend([("trace_order", "bfs"), ("system.policies", "segregate-by-state")]);
    assert!(pressured(&both_grains("grain-bfs", &scenario(), &bfs)));
}
