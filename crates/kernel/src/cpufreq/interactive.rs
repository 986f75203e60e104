//! Android's `interactive` governor (`drivers/cpufreq/cpufreq_interactive.c` of the Android
//! common kernels up to 4.9): every timer period, if the load reaches `go_hispeed_load` the
//! frequency jumps to `hispeed_freq` (the top, its default); otherwise it is set so that the load
//! at the new frequency would be `target_load` (`f · load / target_load`, the lowest operating
//! point at or above it). A frequency is held at least `min_sample_time` before it may go down.
//! Left out: per-frequency target loads, `above_hispeed_delay` (shorter than the sampling period
//! here), boost pulses, timer slack.

use crate::config::Cpufreq;
use mobmem_engine::cpufreq::{Governor, Sample};
use mobmem_engine::Nanos;

#[derive(Debug)]
pub struct Interactive {
    target_load: f64,
    go_hispeed_load: f64,
    min_sample_ns: Nanos,
    /// When the current frequency was last set or confirmed at a raise.
    floor_since: Nanos,
}

impl Interactive {
    pub fn new(c: &Cpufreq) -> Self {
        Self { target_load: c.target_load as f64, go_hispeed_load: c.go_hispeed_load as f64, min_sample_ns: c.min_sample_ms * 1_000_000, floor_since: 0 }
    }
}

impl Governor for Interactive {
    fn target(&mut self, s: &Sample) -> usize {
        let c = s.cluster;
        let load = s.load * 100.0;
        let cur_mhz = c.opps[s.cur].mhz as f64;
        let mut next = c.at_least(cur_mhz * load / self.target_load);
        if load >= self.go_hispeed_load {
            next = next.max(c.top());
        }
        if next < s.cur && s.now.saturating_sub(self.floor_since) < self.min_sample_ns {
            return s.cur;
        }
        if next >= s.cur {
            self.floor_since = s.now;
        }
        next
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cluster, sample};
    use super::*;
    use crate::config::KernelConfig;

    #[test]
    fn jumps_to_hispeed_and_holds_before_ramping_down() {
        let c = cluster();
        let mut g = Interactive::new(&KernelConfig::default().cpufreq);
        let mut s = sample(&c, 1, 1.0);
        s.now = 0;
        assert_eq!(g.target(&s), c.top());
        // 10 % load at the top 50 ms later: held (80 ms minimum sample time).
        let mut s = sample(&c, 4, 0.1);
        s.now = 50_000_000;
        assert_eq!(g.target(&s), 4);
        s.now = 100_000_000;
        // 2000 · 0.1 / 0.9 = 222 MHz → the lowest point.
        assert_eq!(g.target(&s), 0);
    }

    #[test]
    fn target_load_sets_the_frequency() {
        let c = cluster();
        let mut g = Interactive::new(&KernelConfig::default().cpufreq);
        // 60 % at 1500 MHz: 1500 · 60 / 90 = 1000.
        let mut s = sample(&c, 3, 0.6);
        s.now = 10_000_000_000;
        assert_eq!(c.opps[g.target(&s)].mhz, 1000);
    }
}
