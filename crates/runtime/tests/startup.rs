//! A cold launch's start-up writes its memory as its CPU work runs (`Workload::build_paced`),
//! not all of it before the CPU work begins. A co-runner samples the app's resident pages at
//! each 20 ms boundary of the build's clock, as the device's other processes would see them.

use mobmem_engine::Nanos;
use mobmem_kernel::{CoRunner, Kernel, KernelConfig};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::workload::{AppProfile, Workload};
use mobmem_runtime::{Runtime, RuntimeConfig};

const SLICE: Nanos = 20_000_000;
const CPU: Nanos = 1_000_000_000;

/// Records (time, resident pages of the process) at each boundary.
struct Sampler {
    proc_idx: u32,
    samples: Vec<(Nanos, u64)>,
}

impl CoRunner for Sampler {
    fn run_until(&mut self, k: &mut Kernel, until: Nanos) -> Nanos {
        let u = k.proc_usage(self.proc_idx);
        self.samples.push((until, u.anon + u.file));
        until - until % SLICE + SLICE
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// Builds an app with `cpu_ns` paced over its start-up (then, if `after_ns`, that much CPU
/// work after it) and returns (start, end, final resident pages, samples).
fn start_up(cpu_ns: Nanos, after_ns: Nanos) -> (Nanos, Nanos, u64, Vec<(Nanos, u64)>) {
    let mut k = Kernel::new(KernelConfig::default()).unwrap();
    let mut c = RuntimeConfig::default();
    c.fg_collector = CollectorKind::NoGc;
    c.bg_collector = CollectorKind::NoGc;
    c.heap.growth_limit = 128 << 20;
    c.heap.capacity = 128 << 20;
    let mut rt = Runtime::new(&mut k, 7, "app", 0, c, 0).unwrap();
    let p = AppProfile { live_heap: 24 << 20, native_anon: 16 << 20, file_bytes: 32 << 20, ..AppProfile::default() };
    let mut w = Workload::new(p);
    let start = rt.mutator.now;
    k.install_co_runner(Box::new(Sampler { proc_idx: rt.proc_idx, samples: Vec::new() }), start - start % SLICE + SLICE);
    w.build_paced(&mut rt, &mut k, cpu_ns);
    rt.compute(&mut k, after_ns);
    let end = rt.mutator.now;
    let u = k.proc_usage(rt.proc_idx);
    let s = k.take_co_runner().unwrap().into_any().downcast::<Sampler>().unwrap();
    (start, end, u.anon + u.file, s.samples)
}

/// The resident pages at the last sample at or before `t`.
fn resident_at(samples: &[(Nanos, u64)], t: Nanos) -> u64 {
    samples.iter().take_while(|s| s.0 <= t).last().map_or(0, |s| s.1)
}

#[test]
fn a_paced_start_up_writes_its_memory_as_its_cpu_work_runs() {
    let (start, end, total, samples) = start_up(CPU, 0);
    assert!(end - start >= CPU, "the start-up's CPU work all ran: {} ns", end - start);
    assert!(total > 10_000, "the start-up wrote {total} pages");
    // Written in proportion to the CPU work: about half by half time, about a quarter by a quarter.
    for (share, lo, hi) in [(0.25, 0.1, 0.45), (0.5, 0.3, 0.7)] {
        let t = start + ((end - start) as f64 * share) as Nanos;
        let got = resident_at(&samples, t) as f64 / total as f64;
        assert!((lo..=hi).contains(&got), "{got:.2} of the start-up resident at {share} of its time");
    }
}

#[test]
fn an_unpaced_build_writes_everything_before_the_cpu_work() {
    // The contrast: the same build with the CPU work after it has its memory resident within
    // the first quarter of the time (where the paced one has less than half).
    let (start, end, total, samples) = start_up(0, CPU);
    let t = start + (end - start) / 4;
    let got = resident_at(&samples, t) as f64 / total as f64;
    assert!(got > 0.95, "{got:.2} of the start-up resident at a quarter of its time");
}
