//! A cold launch's start-up CPU work, paced over the memory the start-up writes.
//!
//! On a phone, `bindApplication` and the first activity's `onCreate` build the app's start-up
//! memory as their code runs: the Java objects of the app's singletons, caches and views, the
//! native heap of its libraries, the code and resources it reads. The app's start-up CPU work
//! and those writes are one stream; writing them all first and computing afterwards would fault
//! the whole start-up footprint in at page-fault speed (about 1 GB/s in the model), far faster
//! than kswapd can reclaim beside it, and leave the rest to direct reclaim.
//!
//! [`StartupPace`] spreads a launch's CPU time over the build in proportion to the bytes written
//! so far (Java objects allocated, native pages written, file pages read): after each step of
//! the build the mutator computes until its CPU time has caught up with the share written, in
//! steps of at most a millisecond, with the kernel (kswapd, lmkd, the other processes) and the
//! runtime's collector running in between. The total it paces against is the build's expected
//! size (`Workload::expected_build_bytes`; the Java part is an estimate, since unit sizes are
//! drawn): what the build writes short of it leaves the last of the CPU work to run after the
//! build, what it writes beyond it is written after the CPU work is done. What the model leaves
//! out: the real start-up's phases (class loading, then inflation, then the first frame) each
//! have their own mix of CPU and memory; here the ratio is the same throughout.

use crate::runtime::Runtime;
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;

/// The longest stretch of CPU work between two points where the kernel runs.
const STEP_NS: Nanos = 1_000_000;

#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StartupPace {
    /// The start-up CPU time to spread.
    cpu_ns: Nanos,
    /// The bytes the build is expected to write.
    total_bytes: u64,
    /// Native and file pages written or read so far, in bytes.
    page_bytes: u64,
    /// CPU time already run.
    spent_ns: Nanos,
}

impl StartupPace {
    pub(crate) fn new(cpu_ns: Nanos, total_bytes: u64) -> Self {
        Self { cpu_ns, total_bytes: total_bytes.max(1), page_bytes: 0, spent_ns: 0 }
    }

    /// `n` more native or file pages written or read.
    pub(crate) fn add_pages(&mut self, n: u32) {
        self.page_bytes += n as u64 * 4096;
    }

    /// The build has allocated `java_bytes` of Java objects: run the CPU work due by the share of
    /// the start-up written. Call it only where every object allocated so far is reachable (a
    /// collection may run).
    pub(crate) fn wrote(&mut self, rt: &mut Runtime, k: &mut Kernel, java_bytes: u64) {
        if self.spent_ns >= self.cpu_ns {
            return;
        }
        let done = java_bytes + self.page_bytes;
        let due = ((self.cpu_ns as u128 * done.min(self.total_bytes) as u128) / self.total_bytes as u128) as Nanos;
        if due >= self.spent_ns + STEP_NS {
            self.run(rt, k, due);
        }
    }

    /// The build is over: run what is left of the start-up CPU work.
    pub(crate) fn finish(&mut self, rt: &mut Runtime, k: &mut Kernel) {
        self.run(rt, k, self.cpu_ns);
    }

    fn run(&mut self, rt: &mut Runtime, k: &mut Kernel, to: Nanos) {
        let left = to.saturating_sub(self.spent_ns);
        self.spent_ns += left;
        rt.compute(k, left);
    }
}
