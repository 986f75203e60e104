//! The GC-aware governor (Hussein's thesis, Purdue 2017): the `ondemand` governor — the baseline
//! the thesis measured against, its board's governor — for everything, and a frequency cap on
//! the core while it runs a GC thread (for the length of each GC cycle). Tracing is memory-bound — a large share of its time waits on memory and
//! does not shrink with the clock — so a lower frequency costs GC little time and saves energy.
//! The cap applies to the GC thread's slices (on SoCs with per-core DVFS, such as the Snapdragon
//! 800 of the thesis, exactly; on per-cluster DVFS as if the GC's core had its own domain).
//! `kernel.cpufreq.gc_cap_mhz` sets the cap; 0 (the default) takes the operating point closest to
//! half the top frequency of each cluster (an estimate, not the thesis's setting).

use super::ondemand::Ondemand;
use crate::config::Cpufreq;
use mobmem_engine::cpufreq::{Class, ClusterSpec, Governor, Sample};

#[derive(Debug)]
pub struct GcAware {
    base: Ondemand,
    cap_mhz: u32,
}

impl GcAware {
    pub fn new(c: &Cpufreq, cluster: &ClusterSpec) -> Self {
        let cap_mhz = if c.gc_cap_mhz > 0 { c.gc_cap_mhz } else { cluster.opps[cluster.closest(cluster.opps[cluster.top()].mhz as f64 / 2.0)].mhz };
        Self { base: Ondemand { up_threshold: c.up_threshold }, cap_mhz }
    }
}

impl Governor for GcAware {
    fn target(&mut self, s: &Sample) -> usize {
        self.base.target(s)
    }
    fn cap_mhz(&self, class: Class) -> Option<u32> {
        (class == Class::Gc).then_some(self.cap_mhz)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::cluster;
    use super::*;
    use crate::config::KernelConfig;

    #[test]
    fn caps_only_gc_threads() {
        let g = GcAware::new(&KernelConfig::default().cpufreq, &cluster());
        assert_eq!(g.cap_mhz(Class::Gc), Some(1000));
        assert_eq!(g.cap_mhz(Class::App), None);
    }
}
