//! Every shipped app profile and scenario loads and validates.

use mobmem_device::{app, scenario};
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data")
}

fn stems(dir: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(data().join(dir))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn app_profiles_load_and_validate() {
    let apps = stems("apps");
    assert!(apps.len() >= 23, "expected at least 23 app profiles, found {}: {apps:?}", apps.len());
    for a in &apps {
        let p = app::load(data().join("apps").join(format!("{a}.toml")).to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
        assert!(p.estimate, "{a}: popular-app profiles are estimates and must say so (estimate = true)");
        let share = p.java_share();
        assert!(share > 0.0 && share < 1.0, "{a}: java share {share}");
        // Measured 7.1-25.9% for twelve popular apps; one study reported ~4% for a game (python/mobmem/data/apps/README.md);
        // a benchmark's heap is what it is.
        if !p.benchmark {
            assert!((0.03..=0.30).contains(&share), "{a}: java share {share:.3} outside the plausible range");
        }
    }
}

#[test]
fn scenarios_load_and_validate() {
    let devices = stems("devices");
    let apps = stems("apps");
    assert!(!devices.is_empty(), "no device profiles found");
    let known = scenario::Known { devices: &devices, apps: &apps };
    let scenarios = stems("scenarios");
    assert!(scenarios.len() >= 12, "expected at least 12 scenarios, found {}: {scenarios:?}", scenarios.len());
    for s in scenarios {
        let path = data().join("scenarios").join(format!("{s}.toml"));
        let sc = scenario::load(path.to_str().unwrap(), &known).unwrap_or_else(|e| panic!("{e}"));
        assert!(!sc.description.trim().is_empty(), "{s}: every shipped scenario needs a description");
    }
}

#[test]
fn device_profiles_load_and_configure_the_kernel() {
    let devices = stems("devices");
    assert!(devices.len() >= 4, "{devices:?}");
    for d in &devices {
        let p = mobmem_device::device::load(data().join("devices").join(format!("{d}.toml")).to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
        let cores: usize = p.device.cpu.iter().map(|c| c.spec().unwrap_or_else(|e| panic!("{d}: {e}")).cores).sum();
        assert_eq!(cores, p.kernel_settings().iter().find(|(k, _)| k == "kernel.cores").map(|(_, v)| v.parse::<usize>().unwrap()).unwrap_or(8));
        let mut cfg = mobmem_kernel::KernelConfig::default();
        for (k, v) in p.kernel_settings() {
            cfg.set(&k, &v).unwrap_or_else(|e| panic!("{d}: {e}"));
        }
    }
}

#[test]
fn an_app_profile_too_large_for_the_host_is_refused_naming_the_field() {
    let src = data().join("apps").join("twitter.toml");
    let text: String = std::fs::read_to_string(&src)
        .unwrap()
        .lines()
        .map(|l| if l.starts_with("anon_mib = ") { "anon_mib = 1e9\n".to_string() } else { format!("{l}\n") })
        .collect();
    assert!(text.contains("anon_mib = 1e9"));
    let p = std::env::temp_dir().join(format!("mobmem-huge-app-{}.toml", std::process::id()));
    std::fs::write(&p, text).unwrap();
    let e = app::load(p.to_str().unwrap()).unwrap_err().to_string();
    std::fs::remove_file(&p).unwrap();
    assert!(e.contains("native.anon_mib") && e.contains("64 GiB"), "{e}");
}
