//! Developer smoke runs of the runtime model (release: `cargo run --release -p mobmem-runtime
//! --example smoke -- MODE …`): `run COLLECTOR [SYNTHETIC_SPEC] SECONDS [bg]`, `gcbench COLLECTOR HEAP`,
//! `trace [OBJECTS]`, `alloc`, `bench`. The supported interface is `mobmem runtime …`.

use mobmem_runtime::gcbench::GcBenchParams;
use mobmem_runtime::sim::{run_app, run_gcbench, RunOptions};
use mobmem_runtime::AppState;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(|s| s.as_str()).unwrap_or("run");
    let coll = args.get(2).cloned().unwrap_or("cc".into());
    if what == "trace" {
        let n: u64 = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(2_000_000);
        println!("{}", mobmem_runtime::bench::tracing(mobmem_runtime::CollectorKind::MarkSweep, n));
        println!("{}", mobmem_runtime::bench::tracing(mobmem_runtime::CollectorKind::ConcurrentCopying, n));
        return;
    }
    if what == "alloc" {
        println!("{}", mobmem_runtime::bench::allocation(mobmem_runtime::CollectorKind::ConcurrentCopying, 20_000_000));
        return;
    }
    if what == "bench" {
        println!("{}", serde_json::to_string_pretty(&mobmem_runtime::bench::run_all(2_000_000, 20_000_000)).unwrap());
        return;
    }
    if what == "gcbench" {
        let rt = vec![("collector".to_string(), coll), ("heap".into(), args.get(3).cloned().unwrap_or("64m".into()))];
        let v = run_gcbench(&[], &rt, &GcBenchParams::default()).unwrap();
        for l in v["log"].as_array().unwrap().iter().take(8) {
            println!("{}", l);
        }
        println!("{}", serde_json::to_string_pretty(&v["summary"]).unwrap());
        println!("oom {} wall {}", v["oom"], v["wall"]);
        return;
    }
    let rt = vec![("collector".to_string(), coll)];
    // a synthetic spec, or the model's default app profile
    let spec = args.get(3).cloned().unwrap_or_default();
    let app = if spec.starts_with("synthetic") { mobmem_runtime::workload::AppProfile::synthetic(&spec).unwrap() } else { Default::default() };
    let secs: f64 = args.get(4).map(|s| s.parse().unwrap()).unwrap_or(10.0);
    let state = if args.get(5).map(|s| s == "bg").unwrap_or(false) { AppState::Background } else { AppState::Foreground };
    let v = run_app(&RunOptions { kernel: &[], runtime: &rt, app: &app, seconds: secs, alloc_bytes: None, state, policies: &[] }).unwrap();
    for l in v["log"].as_array().unwrap().iter().take(12) {
        println!("{}", l);
    }
    println!("{}", serde_json::to_string_pretty(&v["summary"]).unwrap());
    println!("workload {}", v["workload"]);
    println!("oom {} startup {} wall {}", v["oom"], v["startup_ms"], v["wall"]);
}
