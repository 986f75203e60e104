//! Property tests: random operation sequences keep the model's invariants.

mod common;
use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, KernelConfig, Task};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Touch { p: usize, v: usize, first: u32, count: u32, write: bool },
    Madvise { p: usize, v: usize, first: u32, count: u32, advice: u8 },
    Tick(u32),
    Adj(usize, i32),
    Exit(usize),
    Mlock { p: usize, v: usize, first: u32, count: u32 },
    Munlock { p: usize, v: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0usize..3, 0usize..3, 0u32..600, 1u32..200, any::<bool>()).prop_map(|(p, v, first, count, write)| Op::Touch { p, v, first, count, write }),
        2 => (0usize..3, 0usize..3, 0u32..600, 1u32..200, 0u8..4).prop_map(|(p, v, first, count, advice)| Op::Madvise { p, v, first, count, advice }),
        1 => (0u32..50_000).prop_map(Op::Tick),
        1 => (0usize..3, -1000i32..1000).prop_map(|(p, a)| Op::Adj(p, a)),
        1 => (0usize..3).prop_map(Op::Exit),
        1 => (0usize..3, 0usize..3, 0u32..600, 1u32..100).prop_map(|(p, v, first, count)| Op::Mlock { p, v, first, count }),
        1 => (0usize..3, 0usize..3).prop_map(|(p, v)| Op::Munlock { p, v }),
    ]
}

fn config(swap: u8, sem: u8, lmkd: u8, pure: bool) -> KernelConfig {
    let mut c = KernelConfig::default();
    c.set("ram_mib", "4").unwrap();
    c.set("sample_interval_ms", "5").unwrap();
    match swap {
        0 => {}
        1 => {
            c.set("swap", "zram").unwrap();
            c.set("swap_mib", "4").unwrap();
        }
        _ => {
            c.set("swap", "file").unwrap();
            c.set("swap_mib", "4").unwrap();
        }
    }
    c.set("semantics", ["4.19", "5.10", "6.1", "6.6"][sem as usize]).unwrap();
    c.set("lmkd", ["psi", "minfree", "off"][lmkd as usize]).unwrap();
    if pure {
        c.set("lru", "pure").unwrap();
        if swap == 0 {
            c.set("swap", "file").unwrap();
            c.set("swap_mib", "4").unwrap();
        }
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Frames are conserved and every invariant holds after every operation; vmstat counters
    /// never decrease; no page is both resident and swapped (checked by check_invariants).
    #[test]
    fn invariants_hold_at_every_step(
        ops in proptest::collection::vec(op(), 1..120),
        swap in 0u8..3, sem in 0u8..4, lmkd in 0u8..3, pure in any::<bool>(), memcg in any::<bool>(),
    ) {
        let mut cfg = config(swap, sem, lmkd, pure);
        if memcg {
            cfg.set("scope", "memcg").unwrap();
            cfg.set("memcg_limit_mib", "3").unwrap();
        }
        let mut k = Kernel::new(cfg).unwrap();
        let mut tasks = Vec::new();
        let mut vmas = Vec::new();
        for i in 0..3u32 {
            let p = k.create_process(100 + i, &format!("p{i}"), 900, 0).unwrap();
            let a = k.map_anon(p, "heap", 600).unwrap();
            let f = k.map_file(p, "code", "shared.so", 600, i == 0).unwrap();
            let g = k.map_file(p, "data", &format!("d{i}"), 600, false).unwrap();
            vmas.push([a, f, g]);
            tasks.push(Task::new(k.thread_of(p), p, 0));
        }
        let mut before = k.vmstat.clone();
        let mut now = 0u64;
        for o in ops {
            match o {
                Op::Touch { p, v, first, count, write } => {
                    if !k.procs[p].alive { continue; }
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    for pg in first..(first + count).min(600) {
                        if Some(t.now) >= k.next_event_time() { k.book_cpu(t); k.advance_to(t.now); }
                        if !k.procs[p].alive { break; }
                        k.touch(t, vmas[p][v], pg, write);
                        if t.killed { break; }
                    }
                    now = t.now;
                }
                Op::Madvise { p, v, first, count, advice } => {
                    if !k.procs[p].alive { continue; }
                    let a = [Advice::DontNeed, Advice::Cold, Advice::PageOut, Advice::WillNeed][advice as usize];
                    let count = count.min(600 - first);
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    k.madvise(t, vmas[p][v], first, count, a).unwrap();
                    now = t.now;
                }
                Op::Tick(us) => { now += us as u64 * 1000; k.advance_to(now); }
                Op::Adj(p, a) => { k.set_adj(p as u32, a, now).unwrap(); }
                Op::Exit(p) => k.exit_process(p as u32),
                Op::Mlock { p, v, first, count } => {
                    if !k.procs[p].alive { continue; }
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    k.mlock(t, vmas[p][v], first, count.min(600 - first));
                    now = t.now;
                }
                Op::Munlock { p, v } => {
                    if k.procs[p].alive { k.munlock(vmas[p][v]); }
                }
            }
            prop_assert!(k.frames_conserved());
            if let Err(e) = k.check_invariants() { prop_assert!(false, "{}", e); }
            prop_assert!(k.vmstat.monotonic_since(&before));
            before = k.vmstat.clone();
        }
    }
}
