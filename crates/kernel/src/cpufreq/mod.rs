//! cpufreq governors: the policies that pick each cluster's operating point every sampling
//! period (Linux `drivers/cpufreq/cpufreq_*.c`, Android's `interactive`, and the GC-aware
//! governor of Hussein's thesis). The mechanism — frequency domains, how a slice's time and energy
//! follow the frequency — is `mobmem_engine::cpufreq`; a governor only decides.
//!
//! A new governor is a module here plus one entry in [`GOVERNORS`].
//! Left out: `conservative` and `userspace`; input boost and touch boost; the `hispeed_freq` of
//! `interactive` below the top (it is the top, its default).

mod gc_aware;
mod interactive;
mod ondemand;
mod schedutil;

use crate::config::KernelConfig;
use mobmem_engine::component::{Component, Registry};
use mobmem_engine::cpufreq::{ClusterSpec, Dvfs, Governor, Sample};

/// `performance`: always the top operating point.
#[derive(Debug)]
pub struct Performance;
impl Governor for Performance {
    fn target(&mut self, s: &Sample) -> usize {
        s.cluster.top()
    }
}

/// `powersave`: always the lowest operating point.
#[derive(Debug)]
pub struct Powersave;
impl Governor for Powersave {
    fn target(&mut self, _s: &Sample) -> usize {
        0
    }
}

/// Builds a governor for one cluster from the kernel's settings.
pub type GovernorBuild = fn(&KernelConfig, &ClusterSpec) -> Box<dyn Governor>;

/// The registry of governors (`kernel.cpufreq.governor`).
pub static GOVERNORS: Registry<GovernorBuild> = Registry {
    kind: "governor",
    entries: &[
        Component { name: "performance", help: "the top frequency (no change to timing)", build: |_, _| Box::new(Performance) },
        Component { name: "powersave", help: "the lowest frequency", build: |_, _| Box::new(Powersave) },
        Component {
            name: "ondemand",
            help: "Linux ondemand: the top frequency above up_threshold, else proportional to the load",
            build: |c, _| Box::new(ondemand::Ondemand { up_threshold: c.cpufreq.up_threshold }),
        },
        Component {
            name: "interactive",
            help: "Android's interactive governor (up to kernel 4.9)",
            build: |c, _| Box::new(interactive::Interactive::new(&c.cpufreq)),
        },
        Component { name: "schedutil", help: "Linux schedutil: frequency from the scheduler's utilisation", build: |_, _| Box::new(schedutil::Schedutil) },
        Component {
            name: "gc-aware",
            help: "the GC-aware governor of Hussein's thesis: ondemand with a frequency cap on the core running GC threads",
            build: |c, cluster| Box::new(gc_aware::GcAware::new(&c.cpufreq, cluster)),
        },
    ],
};

/// The governor `name` for one cluster, with the kernel's cpufreq settings.
pub fn governor(name: &str, cfg: &KernelConfig, cluster: &ClusterSpec) -> Result<Box<dyn Governor>, String> {
    let g = GOVERNORS.get(name).map_err(|e| format!("kernel.cpufreq.governor: {e}"))?;
    Ok((g.build)(cfg, cluster))
}

/// The cores of a device: its clusters (fastest first) under the configured governor.
pub fn build(clusters: Vec<ClusterSpec>, cfg: &KernelConfig, has_power: bool) -> Result<Dvfs, String> {
    let c = &cfg.cpufreq;
    if c.gc_cap_mhz > 0 && !clusters.iter().any(|s| s.opps.iter().any(|o| o.mhz == c.gc_cap_mhz)) {
        let table: Vec<String> =
            clusters.iter().map(|s| format!("{}: {}", s.name, s.opps.iter().map(|o| o.mhz.to_string()).collect::<Vec<_>>().join(", "))).collect();
        return Err(format!(
            "kernel.cpufreq.gc_cap_mhz: {} MHz is not an operating point of this device (MHz by cluster — {})",
            c.gc_cap_mhz,
            table.join("; ")
        ));
    }
    let mut clusters = clusters;
    // Faster clusters first, as the CPU set orders its cores.
    clusters.sort_by(|a, b| b.speed.partial_cmp(&a.speed).unwrap_or(std::cmp::Ordering::Equal));
    let mut out = Vec::new();
    for s in clusters {
        let g = governor(&c.governor, cfg, &s)?;
        out.push((s, g));
    }
    Ok(Dvfs::new(out, c.sampling_ms * 1_000_000, [c.membound_app, c.membound_gc, c.membound_kswapd, c.membound_system], has_power))
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobmem_engine::cpufreq::Opp;

    pub(super) fn cluster() -> ClusterSpec {
        ClusterSpec {
            name: "big".into(),
            cores: 4,
            speed: 1.0,
            opps: [300, 600, 1000, 1500, 2000].iter().map(|&mhz| Opp { mhz, mv: 700 + mhz / 4 }).collect(),
            dynamic_power_coefficient: 400.0,
            leak_mw: 20.0,
            idle_mw: 5.0,
            power_mw: None,
        }
    }

    pub(super) fn sample(c: &ClusterSpec, cur: usize, load: f64) -> Sample<'_> {
        let util = load * c.opps[cur].mhz as f64 / c.opps[c.top()].mhz as f64;
        Sample { cluster: c, cur, load, util, now: 1_000_000_000 }
    }

    #[test]
    fn every_registered_governor_builds() {
        let cfg = KernelConfig::default();
        for g in GOVERNORS.list() {
            assert!(governor(g, &cfg, &cluster()).is_ok(), "{g}");
        }
        assert!(governor("turbo", &cfg, &cluster()).unwrap_err().contains("kernel.cpufreq.governor"));
    }

    #[test]
    fn a_cap_off_the_table_is_refused_with_its_key() {
        let mut cfg = KernelConfig::default();
        cfg.cpufreq.gc_cap_mhz = 999;
        let e = build(vec![cluster()], &cfg, true).unwrap_err();
        assert!(e.starts_with("kernel.cpufreq.gc_cap_mhz") && e.contains("1000"), "{e}");
        cfg.cpufreq.gc_cap_mhz = 1000;
        assert!(build(vec![cluster()], &cfg, true).is_ok());
    }
}
