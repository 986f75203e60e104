//! Run a scenario from the command line without Python (for profiling):
//! `cargo run --release -p mobmem-device --example session -- python/mobmem/data/scenarios/demo_caching.toml [key=value…] [--full]` (--full keeps the timeline, events and GC list)
fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: session SCENARIO.toml [key=value…]");
        std::process::exit(2);
    };
    let rest: Vec<String> = args.collect();
    let full = rest.iter().any(|a| a == "--full");
    let overrides: Vec<(String, String)> = rest.into_iter().filter_map(|a| a.split_once('=').map(|(k, v)| (k.to_string(), v.to_string()))).collect();
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data");
    match mobmem_device::session::run::run_file(&path, &data, &overrides, None) {
        Ok(v) => {
            let mut v = v;
            if let Some(o) = v.as_object_mut().filter(|_| !full) {
                o.remove("timeline");
                o.remove("events");
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
