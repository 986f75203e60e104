//! Throughput benchmarks of the runtime model itself (wall clock of this machine, one core):
//!
//! - **tracing**: references visited per second of wall time in the tracing phases of a full
//!   collection of a large live graph (mark-sweep marking; concurrent copying's copying phase),
//!   kernel page touches included; the rate over the whole collection is reported too;
//! - **allocation**: objects allocated per second by a mutator allocating short-lived 24-byte
//!   objects under concurrent copying with device-default heap sizing (young collections, id
//!   recycling and page touches included).
//!
//! Goals: ≥ 50 M references/s, ≥ 30 M allocations/s in release builds.

use crate::config::{CollectorKind, RuntimeConfig};
use crate::gc::{GcCause, GcType};
use crate::object::NULL;
use crate::runtime::Runtime;
use mobmem_kernel::{Kernel, KernelConfig};
use serde_json::{json, Value};
use std::time::Instant;

fn setup(kind: CollectorKind, heap: u64) -> (Kernel, Runtime) {
    // 8 GiB: no memory pressure in the benchmark.
    let kc = KernelConfig { ram_pages: 8 << 18, sample_interval_ns: 0, ..KernelConfig::default() };
    let mut k = Kernel::new(kc).unwrap();
    let mut cfg = RuntimeConfig { fg_collector: kind, bg_collector: kind, ..RuntimeConfig::default() };
    cfg.heap.growth_limit = heap;
    cfg.heap.capacity = heap;
    cfg.heap.start_size = heap / 2;
    cfg.heap.max_free = 32 << 20;
    let mut rt = Runtime::new(&mut k, 1, "bench", 0, cfg, 0).unwrap();
    rt.keep_log = false;
    rt.sample_interval_ns = 0;
    (k, rt)
}

/// Build a live graph of `objects` objects the way programs build them: a binary tree allocated
/// depth-first (allocation order follows the tree), each object's third field pointing to an
/// object allocated shortly before it (a parent's sibling, a shared key…). Every object has 3
/// references (root excepted).
fn build_graph(rt: &mut Runtime, k: &mut Kernel, objects: u64) {
    let root = rt.alloc(k, 32, 3).unwrap();
    rt.set_root(k, 0, root);
    let mut made = 1u64;
    let mut recent: Vec<u32> = vec![root; 64];
    let max_depth = 64 - objects.leading_zeros();
    let mut stack: Vec<(u32, u32, u32)> = vec![(root, 0, 1)];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while let Some(&(parent, field, depth)) = stack.last() {
        if field == 2 || made >= objects {
            stack.pop();
            continue;
        }
        stack.last_mut().unwrap().1 += 1;
        let o = rt.alloc(k, 32, 3).unwrap();
        made += 1;
        rt.write_ref(k, parent, field, o);
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        rt.write_ref(k, o, 2, recent[(x % 64) as usize]);
        recent[(made % 64) as usize] = o;
        if made < objects && depth + 1 < max_depth {
            stack.push((o, 0, depth + 1));
        }
    }
}

const TRACING_PHASES: &[&str] =
    &["InitialMark", "ConcurrentMark", "MarkingPhase", "Remark", "FlipThreadRoots", "CopyingPhase", "MarkStackCheckpoint", "StopTheWorld"];

/// Timed repetitions of each measurement. The host is shared (a VM with neighbours): single
/// runs vary by ±10%, so each benchmark reports the median run, and the fastest and slowest.
pub const REPS: usize = 5;

fn median_of(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// Tracing throughput of a full collection of `objects` live objects with collector `kind`:
/// after a first (settling) collection, [`REPS`] timed full collections of the same graph.
pub fn tracing(kind: CollectorKind, objects: u64) -> Value {
    let heap = (objects * 32 * 3).max(64 << 20).next_multiple_of(1 << 20);
    let (mut k, mut rt) = setup(kind, heap);
    build_graph(&mut rt, &mut k, objects);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full); // settle (first copy)
    rt.host_timing = true;
    let (mut rate, mut whole, mut trace_s, mut wall_s) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..REPS {
        rt.host_phase_ns.clear();
        let t = Instant::now();
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        let s = t.elapsed().as_secs_f64();
        // The tracing phases (marking / copying), without sweeping and region reclamation.
        let trace_ns: u128 = rt.host_phase_ns.iter().filter(|(n, _)| TRACING_PHASES.contains(n)).map(|(_, ns)| *ns).sum();
        let ts = (trace_ns as f64 / 1e9).max(1e-9);
        let refs = rt.records.last().unwrap().refs_visited as f64;
        rate.push(refs / ts);
        whole.push(refs / s);
        trace_s.push(ts);
        wall_s.push(s);
    }
    let r = rt.records.last().unwrap();
    let (med, lo, hi) = median_of(rate);
    json!({
        "collector": kind.short(),
        "objects": r.objects_scanned,
        "refs_visited": r.refs_visited,
        "bytes_copied": r.bytes_copied,
        "reps": REPS,
        "wall_s": median_of(wall_s).0,
        "tracing_wall_s": median_of(trace_s).0,
        "refs_per_s": med,
        "refs_per_s_min": lo,
        "refs_per_s_max": hi,
        "objects_per_s": med / (r.refs_visited as f64 / r.objects_scanned.max(1) as f64),
        "refs_per_s_whole_gc": median_of(whole).0,
        "phases_wall_s": rt.host_phase_ns.iter().map(|(n, ns)| (n.to_string(), *ns as f64 / 1e9)).collect::<std::collections::BTreeMap<_, _>>(),
    })
}

/// One run of the allocation benchmark: objects per second of wall time, and the GCs it ran.
fn allocation_once(kind: CollectorKind, n: u64) -> (f64, f64, usize) {
    let (mut k, mut rt) = setup(kind, 64 << 20);
    // Device-default sizing (young collections every few MiB, as on a phone).
    rt.cfg.heap.max_free = 8 << 20;
    rt.target_footprint = 8 << 20;
    rt.concurrent_start_bytes = crate::sizing::initial_concurrent_start(8 << 20);
    let t = Instant::now();
    let mut prev = NULL;
    for i in 0..n {
        let o = rt.alloc(&mut k, 24, 2).unwrap();
        if i % 16 == 0 {
            rt.write_ref(&mut k, o, 0, prev);
        }
        rt.set_root(&mut k, 0, o);
        prev = o;
        if i & 4095 == 0 {
            rt.poll(&mut k);
        }
    }
    rt.finish(&mut k);
    let s = t.elapsed().as_secs_f64();
    (n as f64 / s, s, rt.records.len())
}

/// Allocation throughput: `n` objects of 24 bytes with 2 fields; each links to the previous
/// one and a root holds the latest, so almost everything dies young. [`REPS`] runs (each from
/// a fresh heap; the smallest `n` is run once), median reported.
pub fn allocation(kind: CollectorKind, n: u64) -> Value {
    let reps = if n >= 1_000_000 { REPS } else { 1 };
    let runs: Vec<(f64, f64, usize)> = (0..reps).map(|_| allocation_once(kind, n)).collect();
    let (med, lo, hi) = median_of(runs.iter().map(|r| r.0).collect());
    let wall = median_of(runs.iter().map(|r| r.1).collect()).0;
    json!({
        "collector": kind.short(),
        "objects": n,
        "reps": reps,
        "wall_s": wall,
        "objects_per_s": med,
        "objects_per_s_min": lo,
        "objects_per_s_max": hi,
        "gcs": runs[0].2,
    })
}

/// Both benchmarks, with the goals.
pub fn run_all(objects: u64, allocations: u64) -> Value {
    let tr = vec![tracing(CollectorKind::MarkSweep, objects), tracing(CollectorKind::ConcurrentCopying, objects)];
    let al = vec![allocation(CollectorKind::ConcurrentCopying, allocations)];
    json!({
        "debug_build": cfg!(debug_assertions),
        "tracing": tr,
        "allocation": al,
        "goals": { "refs_per_s": 50e6, "objects_per_s": 30e6 },
    })
}
