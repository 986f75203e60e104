//! The component contract on the kernel's side: every registered eviction policy, kswapd sizing
//! policy, kill policy and governor is a name its setting accepts and a kernel builds, and an
//! unknown name is refused by the setting with the registry's list.

use mobmem_engine::cpufreq::{ClusterSpec, Opp};
use mobmem_engine::settings::Kind;
use mobmem_kernel::{cpufreq, lmkd, policies, settings::SETTINGS, Kernel, KernelConfig};

fn registry_of(key: &str) -> Vec<&'static str> {
    let s = SETTINGS.entries.iter().find(|s| s.key == key).unwrap_or_else(|| panic!("no setting {key}"));
    match s.kind {
        Kind::Component(r) => r.names(),
        other => panic!("{key} is a {}, not a component choice", other.type_name()),
    }
}

#[test]
fn every_registered_kernel_component_is_accepted_by_its_setting_and_builds() {
    let kinds: [(&str, Vec<&'static str>); 4] = [
        ("eviction", policies::EVICTION.list()),
        ("kswapd_sizing", policies::KSWAPD_SIZING.list()),
        ("lmkd", lmkd::KILLERS.list()),
        ("cpufreq.governor", cpufreq::GOVERNORS.list()),
    ];
    let cluster = ClusterSpec {
        name: "big".into(),
        cores: 1,
        speed: 1.0,
        opps: [1000, 2000].iter().map(|&mhz| Opp { mhz, mv: 800 }).collect(),
        dynamic_power_coefficient: 400.0,
        leak_mw: 20.0,
        idle_mw: 5.0,
        power_mw: None,
    };
    for (key, names) in kinds {
        assert_eq!(registry_of(key), names, "{key}: the setting lists its registry");
        assert!(names.len() >= 2, "{key}");
        for name in names {
            let mut cfg = KernelConfig::default();
            cfg.set(key, name).unwrap_or_else(|e| panic!("{key}={name}: {e}"));
            if key == "cpufreq.governor" {
                cpufreq::governor(name, &cfg, &cluster).unwrap_or_else(|e| panic!("{name}: {e}"));
            } else {
                Kernel::new(cfg).unwrap_or_else(|e| panic!("{key}={name}: {e}"));
            }
        }
        let e = KernelConfig::default().set(key, "no-such-thing").unwrap_err().to_string();
        assert!(e.contains(key) && e.contains("no-such-thing") && e.contains("known:"), "{e}");
    }
}
