//! Random mutator programs shared by the property tests: operations on the runtime mirrored in
//! the reachability oracle.

#![allow(dead_code)]

use mobmem_kernel::{Kernel, KernelConfig};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::object::ObjId;
use mobmem_runtime::oracle::Oracle;
use mobmem_runtime::{policies, Runtime, RuntimeConfig, NULL};
use proptest::prelude::*;

/// A concurrent-copying runtime (64 MiB heap, zram swap) with runtime policy `policy` installed
/// after the given `policy.key=value` settings.
pub fn setup_policy(policy: &str, settings: &[(&str, &str)]) -> (Kernel, Runtime) {
    let mut kc = KernelConfig::default();
    kc.set("swap", "zram").unwrap();
    kc.set("swap_mib", "512").unwrap();
    let mut k = Kernel::new(kc).unwrap();
    let mut c = RuntimeConfig::default();
    c.fg_collector = CollectorKind::ConcurrentCopying;
    c.bg_collector = CollectorKind::ConcurrentCopying;
    c.heap.growth_limit = 64 << 20;
    c.heap.capacity = 64 << 20;
    c.heap.start_size = 32 << 20;
    c.heap.boot_image_bytes = 64 << 10;
    c.heap.zygote_space_bytes = 16 << 10;
    for (key, v) in settings {
        policies::apply_setting(&mut c, key, v).unwrap();
    }
    let mut rt = Runtime::new(&mut k, 3, "app", 0, c, 0).unwrap();
    rt.install_policy(policy).unwrap();
    (k, rt)
}

/// A chain of `n` objects of `size` bytes hanging from root `slot` (object `j` at depth `j + 1`).
pub fn chain(rt: &mut Runtime, k: &mut Kernel, slot: usize, n: usize, size: u32) -> Vec<ObjId> {
    let mut v: Vec<ObjId> = Vec::new();
    for i in 0..n {
        let o = rt.alloc(k, size, 1).unwrap();
        if i == 0 {
            rt.set_root(k, slot, o);
        } else {
            rt.write_ref(k, v[i - 1], 0, o);
        }
        v.push(o);
    }
    v
}

/// Let the (idle) app's clock run to `t`, the runtime's timed events included.
pub fn idle_to(rt: &mut Runtime, k: &mut Kernel, t: u64) {
    rt.mutator_idle_until(t);
    k.advance_to(t);
    rt.poll(k);
}

/// Run the app's clock to `t` in 10 ms steps (the session polls every slice).
pub fn idle_steps(rt: &mut Runtime, k: &mut Kernel, t: u64) {
    let mut now = rt.mutator.now;
    while now < t {
        now = (now + 10_000_000).min(t);
        idle_to(rt, k, now);
    }
}

#[derive(Clone, Debug)]
pub enum Op {
    Alloc { size: u32, nrefs: u16, root: usize },
    Link { a: usize, f: usize, b: usize },
    Unlink { a: usize, f: usize },
    Root { i: usize, b: usize },
    ClearRoot { i: usize },
    Read { a: usize },
    Gc { full: bool, concurrent: bool, slices: u8 },
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (prop_oneof![8 => 16u32..200, 1 => 200u32..4000, 1 => 12_000u32..40_000], 0u16..5, 0usize..8).prop_map(|(size, nrefs, root)| Op::Alloc { size, nrefs, root }),
        5 => (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(a, f, b)| Op::Link { a, f, b }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, f)| Op::Unlink { a, f }),
        1 => (0usize..8, any::<usize>()).prop_map(|(i, b)| Op::Root { i, b }),
        1 => (0usize..8).prop_map(|i| Op::ClearRoot { i }),
        2 => any::<usize>().prop_map(|a| Op::Read { a }),
        1 => (any::<bool>(), any::<bool>(), 1u8..6).prop_map(|(full, concurrent, slices)| Op::Gc { full, concurrent, slices }),
    ]
}

/// Run one mutator operation on the runtime and the oracle.
pub fn apply(k: &mut Kernel, rt: &mut Runtime, or: &mut Oracle, op: &Op) {
    let reach: Vec<u32> = {
        let mut v: Vec<u32> = or.reachable().into_iter().collect();
        v.sort_unstable();
        v
    };
    let pick = |i: usize| if reach.is_empty() { None } else { Some(reach[i % reach.len()]) };
    match *op {
        Op::Alloc { size, nrefs, root } => {
            let o = rt.alloc(k, size, nrefs).expect("test heap is large enough");
            or.alloc(&rt.heap, o, nrefs);
            rt.set_root(k, root, o);
            or.set_root(root, o);
        }
        Op::Link { a, f, b } => {
            if let (Some(a), Some(b)) = (pick(a), pick(b)) {
                let n = rt.heap.objs.nrefs(a) as usize;
                if n > 0 && !rt.heap.objs.space_of(a).immune() {
                    rt.write_ref(k, a, (f % n) as u32, b);
                    or.set_ref(a, (f % n) as u32, b);
                }
            }
        }
        Op::Unlink { a, f } => {
            if let Some(a) = pick(a) {
                let n = rt.heap.objs.nrefs(a) as usize;
                if n > 0 {
                    rt.write_ref(k, a, (f % n) as u32, NULL);
                    or.set_ref(a, (f % n) as u32, NULL);
                }
            }
        }
        Op::Root { i, b } => {
            if let Some(b) = pick(b) {
                rt.set_root(k, i, b);
                or.set_root(i, b);
            }
        }
        Op::ClearRoot { i } => {
            rt.set_root(k, i, NULL);
            or.set_root(i, NULL);
        }
        Op::Read { a } => {
            if let Some(a) = pick(a) {
                let n = rt.heap.objs.nrefs(a) as u32;
                for f in 0..n {
                    rt.read_ref(k, a, f);
                }
            }
        }
        Op::Gc { .. } => {}
    }
}

/// Run the running collection in 1 µs slices, applying between them the mutator operations that
/// follow `ops[*i]` (at most `slices`·8 of them, stopping before the next collection); `*i` ends on
/// the last operation applied.
pub fn interleave(k: &mut Kernel, rt: &mut Runtime, or: &mut Oracle, ops: &[Op], i: &mut usize, slices: u8) {
    let mut s = 0;
    while rt.gc_running() && s < slices as usize * 8 {
        let t = rt.mutator.now + 1_000;
        rt.run_gc_until(k, t);
        if *i + 1 < ops.len() && !matches!(ops[*i + 1], Op::Gc { .. }) {
            *i += 1;
            apply(k, rt, or, &ops[*i]);
        } else {
            break;
        }
        s += 1;
    }
}
