//! CPU frequency scaling (DVFS) and the CPU energy model.
//!
//! What it models, in the terms of Linux's cpufreq and energy model:
//! - **Frequency domains**: one per cluster (`cpufreq_policy` over the cluster's cores), each with
//!   its table of operating performance points ([`Opp`]: frequency and voltage).
//! - **Governor**: every sampling period the cluster's [`Governor`] picks the OPP for the next
//!   period from the load of the period that ended (busy fraction of the cluster's busiest core,
//!   as the `ondemand`/`interactive` governors read it, and its frequency-invariant utilisation,
//!   as `schedutil` reads it). A governor may also cap the frequency of slices of one kind of
//!   work (the GC-aware governor caps GC threads). The governors are policies of the kernel
//!   model (`mobmem_kernel::cpufreq`); this module is their mechanism.
//! - **Time**: a slice of work is `work` nanoseconds on the reference core at its top frequency.
//!   At frequency `f` of a cluster whose top is `f_max`, its CPU-bound part scales with
//!   `f_max / f` and its memory-bound part (share `β` of the work's class: GC tracing waits on
//!   memory more than the mutator does) does not: `time = work · ((1 − β) · f_max / f + β) /
//!   speed`, `speed` being the core's at its top frequency. The time over `work` is the slice's
//!   *stretch* (a slower core, a lower frequency): it delays the thread that booked the work.
//! - **Power**: a busy core draws dynamic power `C · V² · f` (Linux's `dynamic-power-coefficient`
//!   C in µW/MHz/V²) plus leakage, which grows with the voltage (`leak_mw · (V / V_max)²`, an
//!   estimate of its shape); an idle core draws its idle-state power (WFI). Energy is counted in
//!   picojoules per [`Category`] (and per thread by the CPU set), integers so that the categories
//!   sum exactly to the total.
//!
//! Left out: frequency changes inside a booked slice (a slice runs at the frequency of the period
//! it starts in; slices are short), shared frequency of cores in a cluster for capped slices
//! (a capped GC slice runs at the cap as on SoCs with per-core DVFS), deeper idle states
//! (cluster power collapse), the uncore and DRAM, thermal limits, and the GPU.

use crate::time::Nanos;
use std::collections::VecDeque;

/// An operating performance point: a frequency and the voltage it needs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Opp {
    pub mhz: u32,
    pub mv: u32,
}

/// A cluster's hardware: cores, speed, OPPs and power coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterSpec {
    pub name: String,
    pub cores: usize,
    /// Speed at the top OPP relative to the cost model's reference core.
    pub speed: f64,
    /// Operating points, ascending by frequency (at least one).
    pub opps: Vec<Opp>,
    /// Dynamic power coefficient C: µW per MHz per V² per busy core.
    pub dynamic_power_coefficient: f64,
    /// Leakage power of a busy core at the top OPP's voltage, mW.
    pub leak_mw: f64,
    /// Power of an idle core (WFI), mW.
    pub idle_mw: f64,
    /// Power of a busy core at each OPP, mW, where the device gives it measured (its energy
    /// model) instead of voltages and a coefficient; `None`: `C · V² · f` + leakage.
    pub power_mw: Option<Vec<f64>>,
}

impl ClusterSpec {
    /// Power of a busy core at OPP `i`, in mW.
    pub fn busy_mw(&self, i: usize) -> f64 {
        if let Some(p) = &self.power_mw {
            return p[i];
        }
        let o = self.opps[i];
        let v = o.mv as f64 / 1000.0;
        let vmax = self.opps.last().map(|o| o.mv as f64 / 1000.0).unwrap_or(v).max(1e-9);
        self.dynamic_power_coefficient * o.mhz as f64 * v * v / 1000.0 + self.leak_mw * (v / vmax) * (v / vmax)
    }

    pub fn top(&self) -> usize {
        self.opps.len() - 1
    }

    /// Index of the lowest OPP whose frequency is at least `mhz` (the top one if none is):
    /// Linux's `CPUFREQ_RELATION_L`.
    pub fn at_least(&self, mhz: f64) -> usize {
        self.opps.iter().position(|o| o.mhz as f64 >= mhz).unwrap_or(self.top())
    }

    /// Index of the OPP whose frequency is closest to `mhz` (the lower one on a tie):
    /// `CPUFREQ_RELATION_C`.
    pub fn closest(&self, mhz: f64) -> usize {
        (0..self.opps.len()).min_by(|&a, &b| (self.opps[a].mhz as f64 - mhz).abs().total_cmp(&(self.opps[b].mhz as f64 - mhz).abs())).unwrap_or(0)
    }

    /// Index of the highest OPP whose frequency is at most `mhz` (the lowest one if none is):
    /// `CPUFREQ_RELATION_H`.
    pub fn at_most(&self, mhz: f64) -> usize {
        self.opps.iter().rposition(|o| o.mhz as f64 <= mhz).unwrap_or(0)
    }
}

/// Kinds of work, for the memory-bound share and the energy categories.
/// (Its discriminant indexes the memory-bound shares.)
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// An app's threads (the mutator); kernel work done on their behalf is [`Category::Kernel`].
    #[default]
    App,
    /// A runtime's GC thread.
    Gc,
    /// kswapd.
    Kswapd,
    /// System processes and daemons (system_server, lmkd, zygote…).
    System,
}

/// Where energy goes (in the order of [`Category::ALL`]; the discriminant indexes the account).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    Mutator,
    Gc,
    /// Faults and direct reclaim on app threads.
    Kernel,
    Kswapd,
    System,
    /// Idle cores.
    Idle,
}

impl Category {
    pub const ALL: [Category; 6] = [Category::Mutator, Category::Gc, Category::Kernel, Category::Kswapd, Category::System, Category::Idle];

    pub fn name(self) -> &'static str {
        match self {
            Category::Mutator => "mutator",
            Category::Gc => "gc",
            Category::Kernel => "kernel",
            Category::Kswapd => "kswapd",
            Category::System => "system",
            Category::Idle => "idle",
        }
    }
}

/// What a governor sees when it picks the next period's OPP.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    pub cluster: &'a ClusterSpec,
    /// OPP index of the period that ended.
    pub cur: usize,
    /// Busy fraction of the cluster's busiest core in the period that ended (0–1).
    pub load: f64,
    /// `load` scaled by the frequency it ran at over the top frequency (frequency-invariant).
    pub util: f64,
    /// Start of the period being decided.
    pub now: Nanos,
}

/// A cpufreq governor of one cluster.
pub trait Governor: std::fmt::Debug + Send {
    /// The OPP index for the next sampling period.
    fn target(&mut self, s: &Sample) -> usize;
    /// A frequency cap (MHz) for slices of `class` on `cluster`, if the governor sets one.
    fn cap_mhz(&self, _class: Class) -> Option<u32> {
        None
    }
}

/// Busy periods per core kept for late bookings (threads book their slices up to a session slice
/// after they ran).
const RING: usize = 64;

#[derive(Debug)]
struct Domain {
    spec: ClusterSpec,
    gov: Box<dyn Governor>,
    /// First core index of the cluster in the CPU set.
    first_core: usize,
    /// OPP changes: (from time, OPP index), ascending.
    history: VecDeque<(Nanos, usize)>,
    residency_ns: Vec<Nanos>,
    /// Per sampling period (slot `w % RING`) and core: busy ns.
    busy: Vec<Nanos>,
    tag: Vec<u64>,
}

impl Domain {
    fn opp_at(&self, t: Nanos) -> usize {
        self.history.iter().rev().find(|(from, _)| *from <= t).map(|x| x.1).unwrap_or(self.history.front().map(|x| x.1).unwrap_or(0))
    }
}

/// Frequency domains with their governors, and the energy account.
#[derive(Debug)]
pub struct Dvfs {
    domains: Vec<Domain>,
    /// Core → domain.
    core_domain: Vec<usize>,
    period: Nanos,
    /// Periods `[0, decided)` have their OPP chosen.
    decided: u64,
    /// Memory-bound share of each class's work (see the module docs).
    membound: [f64; 4],
    energy_pj: [u64; 6],
    /// Whether the device gave power coefficients (otherwise energy is not reported).
    pub(crate) has_power: bool,
}

/// Where a slice ran and what it cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Run {
    pub(crate) dur: Nanos,
    /// Time over the work's reference duration (a slower core, a lower frequency; a core faster
    /// than the reference gives no credit).
    pub(crate) stretch: Nanos,
    pub(crate) energy_pj: u64,
    pub(crate) mhz: u32,
}

impl Dvfs {
    /// `clusters` in the CPU set's core order (faster first) with one governor each.
    /// `membound`: memory-bound share of App, Gc, Kswapd and System work.
    pub fn new(clusters: Vec<(ClusterSpec, Box<dyn Governor>)>, period: Nanos, membound: [f64; 4], has_power: bool) -> Self {
        let mut domains = Vec::new();
        let mut core_domain = Vec::new();
        for (spec, gov) in clusters {
            let first_core = core_domain.len();
            core_domain.extend(std::iter::repeat_n(domains.len(), spec.cores));
            let n = spec.cores;
            let top = spec.top();
            let mut history = VecDeque::new();
            history.push_back((0, top));
            domains.push(Domain { residency_ns: vec![0; spec.opps.len()], spec, gov, first_core, history, busy: vec![0; RING * n], tag: vec![u64::MAX; RING] });
        }
        Self { domains, core_domain, period: period.max(1), decided: 0, membound, energy_pj: [0; 6], has_power }
    }

    /// Operating points (MHz) of `core`'s cluster.
    pub fn cluster_mhz(&self, core: usize) -> Vec<u32> {
        self.domains[self.core_domain[core]].spec.opps.iter().map(|o| o.mhz).collect()
    }

    /// Each core's speed at its top frequency.
    pub fn speeds(&self) -> Vec<f64> {
        self.core_domain.iter().map(|&d| self.domains[d].spec.speed).collect()
    }

    /// Choose the OPPs of every period that starts at or before `t`.
    pub fn decide_until(&mut self, t: Nanos) {
        let p = self.period;
        while self.decided * p <= t {
            let w = self.decided;
            for d in self.domains.iter_mut() {
                let cur = d.history.back().map(|x| x.1).unwrap_or(0);
                if w > 0 {
                    d.residency_ns[cur] += p;
                }
                let (load, util) = if w == 0 {
                    (1.0, 1.0)
                } else {
                    let prev = ((w - 1) as usize) % RING;
                    let busiest = if d.tag[prev] == w - 1 { (0..d.spec.cores).map(|c| d.busy[prev * d.spec.cores + c]).max().unwrap_or(0) } else { 0 };
                    let load = (busiest as f64 / p as f64).min(1.0);
                    (load, load * d.spec.opps[cur].mhz as f64 / d.spec.opps[d.spec.top()].mhz as f64)
                };
                let s = Sample { cluster: &d.spec, cur, load, util, now: w * p };
                let next = d.gov.target(&s).min(d.spec.top());
                if next != cur {
                    d.history.push_back((w * p, next));
                }
                // Keep the changes a late booking may still need (the history is ordered).
                while d.history.len() > 2 && d.history[1].0 + (RING as u64) * p < w * p {
                    d.history.pop_front();
                }
            }
            self.decided += 1;
        }
    }

    /// Add a slice's busy time to the periods it overlaps.
    fn account_busy(&mut self, core: usize, start: Nanos, end: Nanos) {
        let p = self.period;
        let d = &mut self.domains[self.core_domain[core]];
        let c = core - d.first_core;
        let mut w = start / p;
        while w * p < end {
            let slot = (w as usize) % RING;
            if d.tag[slot] != w {
                if d.tag[slot] != u64::MAX && d.tag[slot] > w {
                    // A period older than the ring: nobody will read it again.
                    w += 1;
                    continue;
                }
                d.tag[slot] = w;
                d.busy[slot * d.spec.cores..(slot + 1) * d.spec.cores].fill(0);
            }
            let lo = start.max(w * p);
            let hi = end.min((w + 1) * p);
            d.busy[slot * d.spec.cores + c] += hi - lo;
            w += 1;
        }
    }

    /// Run `work` reference ns (of which `kernel` on the thread's behalf in the kernel) of a
    /// `class` thread on `core` from `start`.
    /// `cap`: the thread's own frequency cap (MHz), if any.
    pub fn run(&mut self, core: usize, class: Class, start: Nanos, work: Nanos, kernel: Nanos, cap: Option<u32>) -> Run {
        self.decide_until(start);
        let di = self.core_domain[core];
        let d = &self.domains[di];
        let mut opp = d.opp_at(start);
        for cap in [d.gov.cap_mhz(class), cap].into_iter().flatten() {
            opp = opp.min(d.spec.at_most(cap as f64));
        }
        let spec = &d.spec;
        let top = spec.top();
        let dur = if opp == top {
            ((work as f64) / spec.speed).ceil() as Nanos
        } else {
            let b = self.membound[class as usize];
            let scale = (1.0 - b) * spec.opps[top].mhz as f64 / spec.opps[opp].mhz as f64 + b;
            ((work as f64) * scale / spec.speed).ceil() as Nanos
        };
        let energy_pj = if self.has_power { (spec.busy_mw(opp) * dur as f64).round() as u64 } else { 0 };
        let mhz = spec.opps[opp].mhz;
        // Split the energy by category; the kernel's share of an app thread's slice is its
        // share of the work.
        let own = match class {
            Class::App => Category::Mutator,
            Class::Gc => Category::Gc,
            Class::Kswapd => Category::Kswapd,
            Class::System => Category::System,
        };
        let kernel_pj = if class == Class::App && work > 0 { ((energy_pj as u128 * kernel.min(work) as u128) / work as u128) as u64 } else { 0 };
        self.energy_pj[Category::Kernel as usize] += kernel_pj;
        self.energy_pj[own as usize] += energy_pj - kernel_pj;
        self.account_busy(core, start, start + dur);
        Run { dur, stretch: dur.saturating_sub(work), energy_pj, mhz }
    }

    /// Energy per category up to `end`, with the idle energy of each core's idle time
    /// (`busy_ns` per core), in picojoules.
    pub fn energy_pj(&self, end: Nanos, busy_ns: &[Nanos]) -> Vec<(Category, u64)> {
        let mut e = self.energy_pj;
        if self.has_power {
            for (core, &busy) in busy_ns.iter().enumerate() {
                let d = &self.domains[self.core_domain[core]];
                e[Category::Idle as usize] += (d.spec.idle_mw * end.saturating_sub(busy) as f64).round() as u64;
            }
        }
        Category::ALL.iter().map(|&c| (c, e[c as usize])).collect()
    }

    /// Time at each OPP of domain `d` up to `end`, ns. Periods no slice started in (an idle
    /// cluster) are at the last chosen OPP.
    fn domain_residency(&self, d: &Domain, end: Nanos) -> Vec<Nanos> {
        let cur = d.history.back().map(|x| x.1).unwrap_or(0);
        let mut ns = d.residency_ns.clone();
        // A period is counted when the next one is decided; the last decided one, and any after
        // it, count up to `end`.
        ns[cur] += end.saturating_sub(self.decided.saturating_sub(1) * self.period);
        ns
    }

    /// Time spent at each OPP per cluster up to `end`: (cluster, MHz, ns).
    pub fn residency(&self, end: Nanos) -> Vec<(String, u32, Nanos)> {
        let mut out = Vec::new();
        for d in &self.domains {
            for (o, ns) in d.spec.opps.iter().zip(self.domain_residency(d, end)) {
                out.push((d.spec.name.clone(), o.mhz, ns));
            }
        }
        out
    }

    /// Mean frequency of each cluster up to `end`, weighted by time, in MHz.
    pub fn mean_mhz(&self, end: Nanos) -> Vec<(String, f64)> {
        self.domains
            .iter()
            .map(|d| {
                let ns = self.domain_residency(d, end);
                let t: Nanos = ns.iter().sum();
                let f = if t > 0 { d.spec.opps.iter().zip(&ns).map(|(o, &x)| o.mhz as f64 * x as f64).sum::<f64>() / t as f64 } else { 0.0 };
                (d.spec.name.clone(), f)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Fixed(usize);
    impl Governor for Fixed {
        fn target(&mut self, _s: &Sample) -> usize {
            self.0
        }
    }

    fn spec() -> ClusterSpec {
        ClusterSpec {
            name: "big".into(),
            cores: 2,
            speed: 1.0,
            opps: vec![Opp { mhz: 500, mv: 600 }, Opp { mhz: 1000, mv: 800 }, Opp { mhz: 2000, mv: 1000 }],
            dynamic_power_coefficient: 400.0,
            leak_mw: 50.0,
            idle_mw: 5.0,
            power_mw: None,
        }
    }

    fn dvfs(opp: usize) -> Dvfs {
        Dvfs::new(vec![(spec(), Box::new(Fixed(opp)))], 50_000_000, [0.0, 0.5, 0.0, 0.0], true)
    }

    #[test]
    fn top_frequency_takes_the_reference_time() {
        let mut d = dvfs(2);
        let r = d.run(0, Class::App, 0, 1_000_000, 0, None);
        assert_eq!((r.dur, r.stretch, r.mhz), (1_000_000, 0, 2000));
    }

    #[test]
    fn a_slower_core_stretches_by_its_speed() {
        let mut s = spec();
        s.speed = 0.5;
        let mut d = Dvfs::new(vec![(s, Box::new(Fixed(2)))], 50_000_000, [0.0; 4], true);
        let r = d.run(0, Class::App, 0, 1_000_000, 0, None);
        assert_eq!((r.dur, r.stretch), (2_000_000, 1_000_000));
    }

    #[test]
    fn half_frequency_doubles_cpu_bound_work_but_not_memory_bound_work() {
        let mut d = dvfs(1);
        let r = d.run(0, Class::App, 60_000_000, 1_000_000, 0, None);
        assert_eq!((r.dur, r.stretch, r.mhz), (2_000_000, 1_000_000, 1000));
        let g = d.run(1, Class::Gc, 60_000_000, 1_000_000, 0, None);
        assert_eq!(g.dur, 1_500_000, "half of GC work is memory-bound in this test");
    }

    #[test]
    fn energy_categories_sum_to_the_total_and_idle_only_when_nothing_runs() {
        let mut d = dvfs(0);
        let e = d.energy_pj(1_000_000_000, &[0, 0]);
        assert!(e.iter().all(|&(c, v)| (c == Category::Idle) == (v > 0)), "{e:?}");
        let r1 = d.run(0, Class::App, 100_000_000, 3_000_000, 1_000_000, None);
        let r2 = d.run(1, Class::Gc, 100_000_000, 2_000_000, 0, None);
        let e = d.energy_pj(1_000_000_000, &[r1.dur, r2.dur]);
        let busy: u64 = e.iter().filter(|(c, _)| *c != Category::Idle).map(|x| x.1).sum();
        assert_eq!(busy, r1.energy_pj + r2.energy_pj);
        let kernel = e.iter().find(|(c, _)| *c == Category::Kernel).unwrap().1;
        assert_eq!(kernel, r1.energy_pj / 3);
    }

    #[test]
    fn dynamic_power_is_c_v2_f() {
        let s = spec();
        // 400 µW/MHz/V² · 2000 MHz · 1 V² = 800 mW, plus 50 mW of leakage at the top voltage.
        assert!((s.busy_mw(2) - 850.0).abs() < 1e-9);
        assert!((s.busy_mw(0) - (400.0 * 500.0 * 0.36 / 1000.0 + 50.0 * 0.36)).abs() < 1e-9);
    }

    #[test]
    fn load_of_the_ended_period_reaches_the_governor() {
        #[derive(Debug, Default)]
        struct Spy(std::sync::Arc<std::sync::Mutex<Vec<f64>>>);
        impl Governor for Spy {
            fn target(&mut self, s: &Sample) -> usize {
                self.0.lock().unwrap().push(s.load);
                s.cluster.top()
            }
        }
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut d = Dvfs::new(vec![(spec(), Box::new(Spy(seen.clone())))], 100, [0.0; 4], true);
        d.run(0, Class::App, 0, 25, 0, None);
        d.run(1, Class::App, 10, 75, 0, None);
        d.run(0, Class::App, 250, 1, 0, None);
        // Periods 0, 1, 2 decided; period 1 saw period 0's busiest core at 75 %.
        assert_eq!(seen.lock().unwrap()[1], 0.75);
        assert_eq!(seen.lock().unwrap()[2], 0.0);
    }
}
