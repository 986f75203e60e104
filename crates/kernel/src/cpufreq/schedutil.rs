//! `schedutil` (Linux `kernel/sched/cpufreq_schedutil.c`, `get_next_freq`): the next frequency is
//! `1.25 · f_max · util`, where util is the frequency-invariant utilisation of the busiest core
//! (its busy fraction scaled by the frequency it ran at over the top), at the lowest operating
//! point at or above it (`CPUFREQ_RELATION_L`). Its rate limit is the sampling period.
//! Left out: PELT's decaying average (util here is the last period's), utilisation clamping,
//! iowait boost.

use mobmem_engine::cpufreq::{Governor, Sample};

#[derive(Debug)]
pub struct Schedutil;

impl Governor for Schedutil {
    fn target(&mut self, s: &Sample) -> usize {
        let c = s.cluster;
        c.at_least(1.25 * c.opps[c.top()].mhz as f64 * s.util)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cluster, sample};
    use super::*;

    #[test]
    fn frequency_follows_invariant_utilisation_with_headroom() {
        let c = cluster();
        let mut g = Schedutil;
        // Fully busy at 1000 of 2000 MHz: util 0.5, 1.25 · 2000 · 0.5 = 1250 → 1500.
        assert_eq!(c.opps[g.target(&sample(&c, 2, 1.0))].mhz, 1500);
        assert_eq!(g.target(&sample(&c, 4, 0.0)), 0);
        assert_eq!(g.target(&sample(&c, 4, 0.9)), c.top());
    }
}
