//! `ondemand` (Linux `drivers/cpufreq/cpufreq_ondemand.c`, `od_update`): above `up_threshold`
//! percent load go to the top frequency; below it pick the frequency proportional to the load,
//! `f_min + load · (f_max − f_min)`, the closest operating point (`CPUFREQ_RELATION_C`).
//! Left out: `sampling_down_factor`, `powersave_bias`, `io_is_busy`.

use mobmem_engine::cpufreq::{Governor, Sample};

#[derive(Debug)]
pub struct Ondemand {
    pub(crate) up_threshold: u32,
}

impl Governor for Ondemand {
    fn target(&mut self, s: &Sample) -> usize {
        let c = s.cluster;
        if s.load * 100.0 > self.up_threshold as f64 {
            return c.top();
        }
        let (lo, hi) = (c.opps[0].mhz as f64, c.opps[c.top()].mhz as f64);
        c.closest(lo + s.load * (hi - lo))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cluster, sample};
    use super::*;

    #[test]
    fn high_load_jumps_to_the_top_and_low_load_scales_down() {
        let c = cluster();
        let mut g = Ondemand { up_threshold: 80 };
        assert_eq!(g.target(&sample(&c, 0, 0.95)), c.top());
        assert_eq!(g.target(&sample(&c, 4, 0.0)), 0);
        // 300 + 0.4 · 1700 = 980 MHz: the closest point is 1000.
        assert_eq!(c.opps[g.target(&sample(&c, 4, 0.4))].mhz, 1000);
    }
}
