//! Property tests: random operation sequences keep the model's invariants. Processes are forked
//! from the first three (and from their children), so copy-on-write sharing is exercised by the
//! same touches, madvises, exits, kills and reclaim.

mod common;
use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, KernelConfig, Task};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Touch {
        p: usize,
        v: usize,
        first: u32,
        count: u32,
        write: bool,
    },
    Madvise {
        p: usize,
        v: usize,
        first: u32,
        count: u32,
        advice: u8,
    },
    Tick(u32),
    Adj(usize, i32),
    Exit(usize),
    Mlock {
        p: usize,
        v: usize,
        first: u32,
        count: u32,
    },
    Munlock {
        p: usize,
        v: usize,
    },
    /// Fork process `p` (modulo the live count) into a new one.
    Fork(usize),
    /// lmkd-style kill with the memory released after `delay_us`.
    Kill {
        p: usize,
        delay_us: u32,
    },
    /// The activity manager's notice: process `p` is the foreground app.
    Foreground(usize),
    /// Process `p` starts `n` threads: a kernel stack each (order 2, with the buddy allocator).
    Threads(usize, u32),
    /// Drop every other page of a range (MADV_DONTNEED page by page): fragments free memory.
    Sparse {
        p: usize,
        v: usize,
        first: u32,
        count: u32,
    },
}

/// Processes never exceed this many (3 created, the rest forked).
const MAX_PROCS: usize = 8;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0usize..MAX_PROCS, 0usize..3, 0u32..600, 1u32..200, any::<bool>()).prop_map(|(p, v, first, count, write)| Op::Touch { p, v, first, count, write }),
        2 => (0usize..MAX_PROCS, 0usize..3, 0u32..600, 1u32..200, 0u8..4).prop_map(|(p, v, first, count, advice)| Op::Madvise { p, v, first, count, advice }),
        1 => (0u32..50_000).prop_map(Op::Tick),
        1 => (0usize..MAX_PROCS, -1000i32..1000).prop_map(|(p, a)| Op::Adj(p, a)),
        1 => (0usize..MAX_PROCS).prop_map(Op::Exit),
        1 => (0usize..MAX_PROCS, 0usize..3, 0u32..600, 1u32..100).prop_map(|(p, v, first, count)| Op::Mlock { p, v, first, count }),
        1 => (0usize..MAX_PROCS, 0usize..3).prop_map(|(p, v)| Op::Munlock { p, v }),
        2 => (0usize..MAX_PROCS).prop_map(Op::Fork),
        1 => (0usize..MAX_PROCS, 0u32..3000).prop_map(|(p, delay_us)| Op::Kill { p, delay_us }),
        1 => (0usize..MAX_PROCS).prop_map(Op::Foreground),
        2 => (0usize..MAX_PROCS, 1u32..8).prop_map(|(p, n)| Op::Threads(p, n)),
        1 => (0usize..MAX_PROCS, 0usize..3, 0u32..600, 1u32..300).prop_map(|(p, v, first, count)| Op::Sparse { p, v, first, count }),
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
    c.set("lmkd", ["psi", "minfree", "off", "psi-minfree"][lmkd as usize]).unwrap();
    if pure {
        c.set("lru", "pure").unwrap();
        if swap == 0 {
            c.set("swap", "file").unwrap();
            c.set("swap_mib", "4").unwrap();
        }
    }
    c
}

/// Case count: `default`, or `PROPTEST_CASES` for a deeper run (CI uses the default).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(256), ..ProptestConfig::default() })]

    /// Frames are conserved and every invariant holds after every operation; vmstat counters
    /// never decrease; no page is both resident and swapped (checked by check_invariants); the
    /// anon PSS of all processes adds up to the resident anon pages.
    #[test]
    fn invariants_hold_at_every_step(
        ops in proptest::collection::vec(op(), 1..120),
        swap in 0u8..3, sem in 0u8..4, lmkd in 0u8..4, pure in any::<bool>(), memcg in any::<bool>(),
        eviction in 0u8..3, sizing in 0u8..3, buddy in any::<bool>(),
    ) {
        // The buddy allocator's kernel stacks need the global classic LRU (the other modes compare
        // page caches and allocate none): buddy cases run there.
        let (pure, memcg) = if buddy { (false, false) } else { (pure, memcg) };
        let mut cfg = config(swap, sem, lmkd, pure);
        // Reclaim policies (Acclaim's variants), with random foreground switches below.
        match eviction {
            1 => cfg.set("eviction", "fae").unwrap(),
            2 => {
                cfg.set("eviction", "fae").unwrap();
                cfg.set("fae_fg_chances", "3").unwrap();
                cfg.set("fae_exempt", "p2").unwrap();
            }
            _ => {}
        }
        cfg.set("kswapd_sizing", ["stock", "lwp", "lwp-code"][sizing as usize]).unwrap();
        if memcg {
            cfg.set("scope", "memcg").unwrap();
            cfg.set("memcg_limit_mib", "3").unwrap();
        }
        if buddy {
            cfg.set("buddy", "true").unwrap();
        }
        let mut k = Kernel::new(cfg).unwrap();
        let mut tasks = Vec::new();
        let mut vmas = Vec::new();
        for i in 0..3u32 {
            let p = k.create_process(100 + i, &format!("p{i}"), 900, 0).unwrap();
            k.procs[p as usize].app = true;
            let a = k.map_anon(p, "heap", 600).unwrap();
            if i == 2 {
                // A driver buffer: unmovable pages with the buddy allocator.
                k.set_unmovable(a).unwrap();
            }
            let f = k.map_file(p, "code", "shared.so", 600, i == 0).unwrap();
            let g = k.map_file(p, "data", &format!("d{i}"), 600, false).unwrap();
            vmas.push([a, f, g]);
            tasks.push(Task::new(k.thread_of(p), p, 0));
        }
        // Process 3 is forked from process 0 after it wrote half its heap: every case starts
        // with pages shared copy-on-write.
        k.touch_range(&mut tasks[0], vmas[0][0], 0, 500, true);
        let c = k.fork_process(0, 103, "p3", 900, 0).unwrap();
        vmas.push(["heap", "code", "data"].map(|name| k.vma_index(c, name).unwrap()));
        tasks.push(Task::new(k.thread_of(c), c, 0));
        let mut before = k.vmstat.clone();
        let mut now = 0u64;
        for o in ops {
            // Process operands pick among the processes that exist.
            let n = tasks.len();
            match o {
                Op::Touch { p, v, first, count, write } => {
                    let p = p % n;
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
                    let p = p % n;
                    if !k.procs[p].alive { continue; }
                    let a = [Advice::DontNeed, Advice::Cold, Advice::PageOut, Advice::WillNeed][advice as usize];
                    let count = count.min(600 - first);
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    k.madvise(t, vmas[p][v], first, count, a).unwrap();
                    now = t.now;
                }
                Op::Tick(us) => { now += us as u64 * 1000; k.advance_to(now); }
                Op::Adj(p, a) => { k.set_adj((p % n) as u32, a, now).unwrap(); }
                Op::Exit(p) => k.exit_process((p % n) as u32),
                Op::Mlock { p, v, first, count } => {
                    let p = p % n;
                    if !k.procs[p].alive { continue; }
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    k.mlock(t, vmas[p][v], first, count.min(600 - first));
                    now = t.now;
                }
                Op::Munlock { p, v } => {
                    let p = p % n;
                    if k.procs[p].alive { k.munlock(vmas[p][v]); }
                }
                Op::Fork(p) => {
                    let p = p % n;
                    // Events due now (lmkd, a reap) may kill the parent: run them first.
                    k.advance_to(now);
                    if !k.procs[p].alive || n >= MAX_PROCS { continue; }
                    let c = k.fork_process(p as u32, 100 + n as u32, &format!("p{n}"), 900, now).unwrap();
                    prop_assert_eq!(c as usize, n);
                    let names = ["heap", "code", "data"];
                    vmas.push(names.map(|name| k.vma_index(c, name).unwrap()));
                    tasks.push(Task::new(k.thread_of(c), c, now));
                }
                Op::Kill { p, delay_us } => {
                    let p = p % n;
                    k.advance_to(now);
                    k.kill_process(p as u32, "test", 0, "test", now, delay_us as u64 * 1000);
                }
                Op::Foreground(p) => {
                    let p = p % n;
                    k.procs[p].app = true;
                    k.set_foreground(Some(p as u32));
                }
                Op::Sparse { p, v, first, count } => {
                    let p = p % n;
                    if !k.procs[p].alive { continue; }
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    for pg in (first..(first + count).min(600)).step_by(2) {
                        k.madvise(t, vmas[p][v], pg, 1, Advice::DontNeed).unwrap();
                    }
                    now = t.now;
                }
                Op::Threads(p, threads) => {
                    let p = p % n;
                    if !k.procs[p].alive { continue; }
                    let t = &mut tasks[p];
                    t.now = t.now.max(now);
                    let ok = k.alloc_kernel_stacks(t, p as u32, threads);
                    prop_assert!(ok || t.killed || !k.procs[p].alive);
                    now = t.now;
                }
            }
            prop_assert!(k.frames_conserved());
            if let Err(e) = k.check_invariants() { prop_assert!(false, "{}", e); }
            prop_assert!(k.vmstat.monotonic_since(&before));
            before = k.vmstat.clone();
            // PSS conservation: shared pages divided among their sharers add up to one page each.
            let pss: f64 = (0..k.procs.len()).map(|i| k.proc_usage(i as u32).pss_anon).sum();
            let anon = k.meminfo().AnonPages / 4;
            prop_assert!((pss - anon as f64).abs() < 1e-6 * (anon as f64 + 1.0), "anon PSS {} != AnonPages {}", pss, anon);
        }
    }
}
