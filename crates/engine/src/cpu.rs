//! Simulated CPU cores with contention.
//!
//! A thread books a slice of work (`run`) at the time it becomes ready; the slice goes to the core
//! that frees up first (ties → lowest index), starts when that core is free, and takes
//! `work / speed` of wall time. The gap between ready and start is recorded as runnable wait
//! ("waiting for CPU"). Slices are not preempted, so callers keep them short (a reclaim batch, a
//! chunk of mutator work). Threads never block each other except through cores, so a stalled
//! thread leaves its core to the others.
//!
//! With frequency scaling ([`crate::cpufreq::Dvfs`]) a slice's duration also depends on its
//! cluster's frequency when it starts and on the kind of work ([`Class`]); the extra time over
//! the top frequency (the slice's *stretch*) delays the thread, and the slice's energy is
//! charged to the thread. Without it every core runs at its fixed speed and no energy is counted.
//! A slower core (a little core) delays the thread the same way; a core faster than the
//! reference runs the thread's work in its busy time but gives the thread no credit.
//!
//! A thread may be restricted to some cores ([`CpuSet::set_allowed`], Android's cpusets: the
//! background groups on little cores) or pinned to one ([`CpuSet::pin`]). Left out: migration
//! within a slice, load balancing beyond "the earliest free allowed core", and the scheduler's
//! placement hints (schedtune/uclamp boosts).

use crate::cpufreq::{Class, Dvfs};
use crate::time::Nanos;
use std::collections::BTreeMap;

/// Identifies a simulated thread (an app thread, a GC thread, kswapd, lmkd…).
pub type ThreadId = u32;

/// Where and when a slice of work ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub(crate) core: usize,
    pub start: Nanos,
    pub end: Nanos,
    /// Time spent runnable but waiting for a core.
    pub wait: Nanos,
    /// Time over the work's reference duration (a slower core, a lower frequency): it delays
    /// the thread. A core faster than the reference gives no credit.
    pub stretch: Nanos,
}

/// Per-thread CPU accounting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    pub cpu_ns: Nanos,
    pub runnable_wait_ns: Nanos,
    pub(crate) slices: u64,
    /// Energy of its slices, picojoules (0 without a power model).
    pub energy_pj: u64,
    pub(crate) class: Class,
    /// Pinned to this core (`None`: any core of `allowed`).
    pub(crate) affinity: Option<usize>,
    /// The cores its cpuset allows, one bit per core (0: every core).
    pub(crate) allowed: u64,
    /// Frequency cap of this thread's slices, MHz (`None`: the governor's choice).
    pub(crate) cap_mhz: Option<u32>,
}

#[derive(Debug)]
pub struct CpuSet {
    busy_until: Vec<Nanos>,
    /// Relative speed of each core (1.0 = the reference big core the cost model is written for).
    speed: Vec<f64>,
    busy_ns: Vec<Nanos>,
    /// Per-thread accounting; a map because thread ids are sparse (ordered for determinism).
    threads: BTreeMap<ThreadId, ThreadStats>,
    /// Frequency scaling and energy; `None`: fixed speeds, no energy.
    pub dvfs: Option<Dvfs>,
}

impl CpuSet {
    /// `n` identical cores of speed 1.0.
    pub fn new(n: usize) -> Self {
        Self::with_speeds(vec![1.0; n.max(1)])
    }

    pub fn with_speeds(speed: Vec<f64>) -> Self {
        assert!(!speed.is_empty());
        let n = speed.len();
        Self { busy_until: vec![0; n], speed, busy_ns: vec![0; n], threads: BTreeMap::new(), dvfs: None }
    }

    /// Cores with the clusters, governors and power model of `dvfs`.
    pub fn with_dvfs(dvfs: Dvfs) -> Self {
        let mut s = Self::with_speeds(dvfs.speeds());
        s.dvfs = Some(dvfs);
        s
    }

    /// Pin a thread to one core (its slices wait for that core) and cap the frequency its slices
    /// run at, as with per-core DVFS. The cap must be an operating point of the core's cluster.
    pub fn pin(&mut self, thread: ThreadId, core: usize, cap_mhz: Option<u32>) -> Result<(), String> {
        let core = core.min(self.cores() - 1);
        if let (Some(mhz), Some(d)) = (cap_mhz, self.dvfs.as_ref()) {
            let opps = d.cluster_mhz(core);
            if !opps.contains(&mhz) {
                return Err(format!(
                    "{mhz} MHz is not an operating point of core {core}'s cluster ({})",
                    opps.iter().map(|m| m.to_string()).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        let t = self.thread_mut(thread);
        t.affinity = Some(core);
        t.cap_mhz = cap_mhz;
        Ok(())
    }

    /// Restrict a thread to the cores of `mask` (bit `c` = core `c`, so cores from 64 up cannot
    /// be named; 0 or a mask with no core of this set: every core), as a cpuset does. A pinned
    /// thread stays pinned while its core is in the mask.
    pub fn set_allowed(&mut self, thread: ThreadId, mask: u64) {
        let all = if self.cores() >= 64 { u64::MAX } else { (1u64 << self.cores()) - 1 };
        self.thread_mut(thread).allowed = if mask & all == 0 { 0 } else { mask & all };
    }

    /// The cores a thread may run on, one bit per core (0: every core).
    pub fn allowed(&self, thread: ThreadId) -> u64 {
        self.threads.get(&thread).map_or(0, |t| t.allowed)
    }

    /// Declare what kind of work a thread does (default [`Class::App`]).
    pub fn set_class(&mut self, thread: ThreadId, class: Class) {
        self.thread_mut(thread).class = class;
    }

    pub fn cores(&self) -> usize {
        self.busy_until.len()
    }

    /// Book `work` ns (at reference speed) for `thread`, ready at `ready`.
    pub fn run(&mut self, thread: ThreadId, ready: Nanos, work: Nanos) -> Slot {
        self.run_split(thread, ready, work, 0)
    }

    /// Book `work` ns for `thread`, of which `kernel` ns is kernel work on its behalf (faults,
    /// direct reclaim: its own energy category).
    pub fn run_split(&mut self, thread: ThreadId, ready: Nanos, work: Nanos, kernel: Nanos) -> Slot {
        let (class, affinity, allowed, cap) = self.threads.get(&thread).map(|t| (t.class, t.affinity, t.allowed, t.cap_mhz)).unwrap_or_default();
        // Its pinned core, or the earliest available core its cpuset allows; among cores already
        // free at `ready`, the fastest. A pinned core outside the cpuset does not hold: as on
        // Linux, where moving a task to a cpuset resets its affinity to the cpuset's CPUs.
        let pinned = affinity.filter(|&c| allows(allowed, c));
        let (best, start) = match pinned {
            Some(c) => (c, self.busy_until[c].max(ready)),
            None => {
                let mut best = usize::MAX;
                let mut best_key = (Nanos::MAX, i64::MAX);
                for c in 0..self.busy_until.len() {
                    if !allows(allowed, c) {
                        continue;
                    }
                    let key = (self.busy_until[c].max(ready), ordered(-self.speed[c]));
                    if key < best_key {
                        best = c;
                        best_key = key;
                    }
                }
                (best, best_key.0)
            }
        };
        let (dur, stretch, energy) = match self.dvfs.as_mut() {
            Some(d) => {
                let r = d.run(best, class, start, work, kernel, cap);
                (r.dur, r.stretch, r.energy_pj)
            }
            None => {
                let dur = ((work as f64) / self.speed[best]).ceil() as Nanos;
                (dur, dur.saturating_sub(work), 0)
            }
        };
        let end = start + dur;
        self.busy_until[best] = end;
        self.busy_ns[best] += dur;
        let t = self.thread_mut(thread);
        t.cpu_ns += dur;
        t.runnable_wait_ns += start - ready;
        t.slices += 1;
        t.energy_pj += energy;
        Slot { core: best, start, end, wait: start - ready, stretch }
    }

    fn thread_mut(&mut self, id: ThreadId) -> &mut ThreadStats {
        self.threads.entry(id).or_default()
    }

    pub fn thread(&self, id: ThreadId) -> ThreadStats {
        self.threads.get(&id).copied().unwrap_or_default()
    }

    /// The governor's timer at `t`: choose the frequencies of every period starting by then.
    pub fn governor_tick(&mut self, t: Nanos) {
        if let Some(d) = self.dvfs.as_mut() {
            d.decide_until(t);
        }
    }

    /// Energy per category up to `end` (idle cores included), picojoules; `None` without a
    /// power model.
    pub fn energy_pj(&self, end: Nanos) -> Option<Vec<(crate::cpufreq::Category, u64)>> {
        self.dvfs.as_ref().filter(|d| d.has_power).map(|d| d.energy_pj(end, &self.busy_ns))
    }

    /// Busy time per core.
    pub fn busy_ns(&self) -> &[Nanos] {
        &self.busy_ns
    }
}

/// Whether a cpuset mask (0: every core) lets a thread run on core `c`; a mask cannot name cores
/// from 64 up.
#[inline]
fn allows(mask: u64, c: usize) -> bool {
    mask == 0 || (c < 64 && mask & (1 << c) != 0)
}

/// Total order on f64 keys that are never NaN.
#[inline]
fn ordered(x: f64) -> i64 {
    (x * 1e6) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_threads_one_core_contend() {
        let mut c = CpuSet::new(1);
        let a = c.run(0, 0, 100);
        let b = c.run(1, 50, 100);
        assert_eq!((a.start, a.end, a.wait), (0, 100, 0));
        assert_eq!((b.start, b.end, b.wait), (100, 200, 50));
        assert_eq!(c.thread(1).runnable_wait_ns, 50);
    }

    #[test]
    fn two_cores_run_in_parallel() {
        let mut c = CpuSet::new(2);
        let a = c.run(0, 0, 100);
        let b = c.run(1, 0, 100);
        assert_ne!(a.core, b.core);
        assert_eq!(b.wait, 0);
    }

    #[test]
    fn a_cpuset_keeps_a_thread_on_its_cores() {
        // Cores 0-1 fast, 2-3 slow; thread 9 may use the slow ones only, and waits for them
        // even while the fast ones are free.
        let mut c = CpuSet::with_speeds(vec![1.0, 1.0, 0.5, 0.5]);
        c.set_allowed(9, 0b1100);
        let a = c.run(9, 0, 100);
        let b = c.run(9, 0, 100);
        let d = c.run(9, 0, 100);
        assert!([a.core, b.core, d.core].iter().all(|&k| k >= 2), "{a:?} {b:?} {d:?}");
        assert_eq!(d.wait, 200, "the third slice waits for a slow core");
        // Another thread still gets a fast core at once; a mask with no core of the set means
        // every core.
        assert!(c.run(1, 0, 100).core < 2);
        c.set_allowed(9, 1 << 40);
        assert_eq!(c.allowed(9), 0);
        assert_eq!(c.run(9, 0, 100).core, 1);
        // A thread pinned to core 3 keeps it inside a cpuset with core 3, not outside one.
        c.pin(5, 3, None).unwrap();
        c.set_allowed(5, 0b1100);
        assert_eq!(c.run(5, 0, 10).core, 3);
        c.set_allowed(5, 0b0011);
        assert!(c.run(5, 0, 10).core < 2);
    }

    #[test]
    fn slow_core_takes_longer() {
        let mut c = CpuSet::with_speeds(vec![0.5]);
        let a = c.run(0, 0, 100);
        assert_eq!(a.end, 200);
    }
}
