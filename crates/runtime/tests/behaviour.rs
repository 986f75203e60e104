//! Behaviour tests of the runtime: barriers, triggers, escalation, OOM, heap sizing, collector
//! transition and trim, placement hooks, compaction, fragmentation, GCBench.

#![allow(clippy::field_reassign_with_default, clippy::needless_range_loop, clippy::unnecessary_cast, clippy::while_let_loop)]

use mobmem_kernel::{Kernel, KernelConfig};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::gcbench::{self, GcBenchParams};
use mobmem_runtime::object::{AppState, SpaceId};
use mobmem_runtime::space::{RegionSpace, REGION_SIZE};
use mobmem_runtime::workload::{AppProfile, Workload};
use mobmem_runtime::{GcCause, GcType, Runtime, RuntimeConfig, NULL};

fn kernel() -> Kernel {
    Kernel::new(KernelConfig::default()).unwrap()
}

fn cfg(kind: CollectorKind, heap_mib: u64) -> RuntimeConfig {
    let mut c = RuntimeConfig::default();
    c.fg_collector = kind;
    c.bg_collector = kind;
    c.heap.growth_limit = heap_mib << 20;
    c.heap.capacity = heap_mib << 20;
    c.heap.start_size = (8u64 << 20).min(heap_mib << 20);
    c.heap.boot_image_bytes = 256 << 10;
    c.heap.zygote_space_bytes = 64 << 10;
    c
}

/// A binary tree of `n` nodes under root slot 0, allocated depth-first.
fn tree(rt: &mut Runtime, k: &mut Kernel, n: usize, size: u32) -> Vec<u32> {
    let mut v = Vec::with_capacity(n);
    let root = rt.alloc(k, size, 2).unwrap();
    rt.set_root(k, 0, root);
    v.push(root);
    for i in 1..n {
        let o = rt.alloc(k, size, 2).unwrap();
        let p = v[(i - 1) / 2];
        rt.write_ref(k, p, ((i - 1) % 2) as u32, o);
        v.push(o);
    }
    v
}

#[test]
fn read_barrier_lets_mutators_copy_and_records_who_copied() {
    let mut k = kernel();
    let mut rt = Runtime::new(&mut k, 1, "a", 0, cfg(CollectorKind::ConcurrentCopying, 64), 0).unwrap();
    let objs = tree(&mut rt, &mut k, 20_000, 64);
    rt.start_gc(&mut k, GcCause::Requested, GcType::Full);
    // Run only the flip pause and a little copying, then let the mutator read the whole tree.
    let t = rt.mutator.now + 1;
    rt.run_gc_until(&mut k, t);
    for &o in objs.iter().rev() {
        rt.read(&mut k, o);
    }
    rt.wait_for_gc(&mut k);
    let r = rt.records.last().unwrap();
    let gc = rt.gc_thread();
    let mutator = rt.mutator.thread as u32;
    let by_mut = objs.iter().filter(|&&o| rt.heap.objects().copied_by(o) == mutator).count();
    let by_gc = objs.iter().filter(|&&o| rt.heap.objects().copied_by(o) == gc).count();
    assert!(by_mut > 1000, "mutator copied {by_mut}");
    assert!(by_gc > 0, "GC thread copied {by_gc}");
    assert_eq!(by_mut + by_gc, objs.len(), "every object of a newly allocated region is copied");
    assert_eq!(r.copied_by_mutator as usize, by_mut);
    assert!(r.mutator_gc_work_ns > 0 && r.pauses_ns.len() == 2, "{:?}", r.pauses_ns);
}

#[test]
fn allocation_failure_escalates_sticky_to_full_then_oom_at_the_growth_limit() {
    for kind in [CollectorKind::ConcurrentCopying, CollectorKind::MarkSweep, CollectorKind::MarkSweepOtf] {
        escalation(kind);
    }
}

fn escalation(kind: CollectorKind) {
    let mut k = kernel();
    let mut c = cfg(kind, 8);
    c.heap.start_size = 2 << 20;
    let mut rt = Runtime::new(&mut k, 1, "a", 0, c, 0).unwrap();
    // Keep everything alive: a linked list from root 0.
    let mut prev = NULL;
    let mut n = 0;
    loop {
        match rt.alloc(&mut k, 1000, 1) {
            Ok(o) => {
                if prev != NULL {
                    rt.write_ref(&mut k, o, 0, prev);
                }
                rt.set_root(&mut k, 0, o);
                prev = o;
                n += 1;
                if n % 64 == 0 {
                    rt.poll(&mut k);
                }
            }
            Err(_) => break,
        }
        assert!(n < 20_000, "never ran out of memory");
    }
    assert!(rt.oom);
    assert!(rt.heap.bytes_allocated() <= 8 << 20);
    let alloc_gcs: Vec<_> = rt.records.iter().filter(|r| r.cause == "Alloc").collect();
    assert!(alloc_gcs.iter().any(|r| r.gc_type == "full"), "{kind:?}: no full alloc GC");
    assert!(rt.records.iter().any(|r| r.gc_type == "sticky"), "{kind:?}: no sticky GC");
    assert!(rt.records.iter().any(|r| r.cause == "Background"), "no concurrent GC before the failure");
    assert!(rt.log.last().unwrap().starts_with("Throwing OutOfMemoryError"));
    // The last collections before the OOM: a blocking sticky then full, or full only.
    let last = rt.records.last().unwrap();
    assert_eq!(last.gc_type, "full");
    assert!(last.mutator_wait_ns > 0, "the allocating thread waited");
}

#[test]
fn concurrent_start_threshold_and_grow_for_utilization() {
    let mut k = kernel();
    let c = cfg(CollectorKind::ConcurrentCopying, 64);
    let (start, u, minf, maxf, mult) = (c.heap.start_size, c.heap.target_utilization, c.heap.min_free, c.heap.max_free, c.heap.foreground_multiplier);
    let mut rt = Runtime::new(&mut k, 1, "a", 0, c, 0).unwrap();
    let threshold = mobmem_runtime::sizing::initial_concurrent_start(start);
    assert_eq!(rt.concurrent_start_bytes, threshold);
    let _live = tree(&mut rt, &mut k, 30_000, 64);
    let mut i = 0u32;
    while rt.records.is_empty() {
        let o = rt.alloc(&mut k, 48, 0).unwrap();
        rt.set_root(&mut k, 1 + (i % 16) as usize, o);
        i += 1;
        rt.poll(&mut k);
    }
    let r0 = &rt.records[0];
    assert_eq!(r0.cause, "Background");
    assert!(r0.bytes_allocated_before >= threshold && r0.bytes_allocated_before < threshold + 4096);
    rt.explicit_gc(&mut k);
    let r = rt.records.last().unwrap();
    assert_eq!((r.cause, r.gc_type), ("Explicit", "full"));
    let live = rt.heap.bytes_allocated();
    let grow = ((live as f64 * (1.0 / u - 1.0)) as u64).clamp(minf, maxf);
    assert_eq!(rt.target_footprint, live + (grow as f64 * mult) as u64);
    assert!(rt.target_footprint - rt.concurrent_start_bytes <= 512 << 10);
}

#[test]
fn background_transition_after_delay_and_trim_after_gc() {
    let mut k = kernel();
    let mut c = cfg(CollectorKind::ConcurrentCopying, 64);
    c.heap.start_size = 4 << 20;
    let mut rt = Runtime::new(&mut k, 1, "a", 0, c, 0).unwrap();
    let p = AppProfile { live_heap: 4 << 20, native_anon: 0, file_bytes: 0, alloc_rate_fg: 4 << 20, ..AppProfile::default() };
    let mut w = Workload::new(p);
    w.build(&mut rt, &mut k);
    let t0 = rt.mutator.now;
    assert!(w.run_until(&mut rt, &mut k, t0 + 2_000_000_000));
    w.set_state(&mut rt, AppState::Background);
    let bg_at = rt.mutator.now;
    assert!(w.run_until(&mut rt, &mut k, bg_at + 12_000_000_000));
    let tr: Vec<_> = rt.records.iter().filter(|r| r.cause == "CollectorTransition").collect();
    assert_eq!(tr.len(), 1);
    assert!(tr[0].start_ns >= bg_at + 5_000_000_000 && tr[0].start_ns < bg_at + 5_200_000_000, "transition at {}", tr[0].start_ns - bg_at);
    assert_eq!(tr[0].gc_type, "full");
    assert!(tr[0].regions_evacuated > 0);
    assert!(rt.stats.trims >= 1, "no trim");
    assert!(rt.records.iter().all(|r| r.state == "fg" || r.state == "bg"));
}

#[test]
fn segregation_policy_places_survivors_by_allocation_state() {
    let mut k = kernel();
    let mut rt = Runtime::new(&mut k, 1, "a", 0, cfg(CollectorKind::ConcurrentCopying, 64), 0).unwrap();
    rt.install_policy("segregate-by-state").unwrap();
    let fg = tree(&mut rt, &mut k, 5000, 48);
    rt.set_state(AppState::Background);
    let bgroot = rt.alloc(&mut k, 64, 8).unwrap();
    rt.set_root(&mut k, 1, bgroot);
    let mut bg = vec![bgroot];
    for i in 0..4000 {
        let o = rt.alloc(&mut k, 40, 0).unwrap();
        if i < 8 {
            rt.write_ref(&mut k, bgroot, i, o);
            bg.push(o);
        }
    }
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    let fg_tag = rt.heap.region_space().find_tag("fg").expect("the policy registered fg");
    let bg_tag = rt.heap.region_space().find_tag("bg").expect("the policy registered bg");
    for (set, tag, other) in [(&fg, fg_tag, bg_tag), (&bg, bg_tag, fg_tag)] {
        for &o in set.iter() {
            assert!(rt.heap.objects().is_live(o));
            let r = RegionSpace::region_of(rt.heap.objects().addr(o));
            assert!(
                rt.heap.region_space().has_tag(r, tag) && !rt.heap.region_space().has_tag(r, other),
                "object {o} in region {r} tags {:?}",
                rt.heap.region_space().tag_names(r)
            );
        }
    }
    assert_eq!(rt.heap.region_space().tag_names(RegionSpace::region_of(rt.heap.objects().addr(bgroot))), vec!["bg"]);
}

#[test]
fn mark_compact_slides_live_objects_into_few_regions() {
    let mut k = kernel();
    let mut rt = Runtime::new(&mut k, 1, "a", 0, cfg(CollectorKind::ConcurrentMarkCompact, 64), 0).unwrap();
    // Interleave survivors and garbage across many regions.
    let keep = rt.alloc(&mut k, 16 + 4 * 1000, 1000).unwrap();
    rt.set_root(&mut k, 0, keep);
    for i in 0..40_000u32 {
        let o = rt.alloc(&mut k, 200, 0).unwrap();
        if i % 40 == 0 {
            rt.write_ref(&mut k, keep, i / 40, o);
        }
    }
    let before = rt.heap.region_space().num_non_free;
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    let after = rt.heap.region_space().num_non_free;
    let live = rt.heap.bytes_allocated();
    assert!(before >= 30, "{before}");
    assert!((after as u64) <= live.div_ceil(REGION_SIZE) + 1, "{after} regions for {live} live bytes");
    let copied: u64 = rt.records.iter().map(|r| r.objects_copied).sum();
    let freed: u64 = rt.records.iter().map(|r| r.regions_freed).sum();
    assert!(copied > 900 && freed > 20, "copied {copied} regions freed {freed}");
    assert!(rt.records.last().unwrap().phases.iter().any(|p| p.name == "CompactionPause"));
    mobmem_runtime::oracle::check_layout(&rt.heap).unwrap();
}

#[test]
fn mark_sweep_does_not_move_and_fragments() {
    let mut k = kernel();
    let mut rt = Runtime::new(&mut k, 1, "a", 0, cfg(CollectorKind::MarkSweep, 64), 0).unwrap();
    let keep = rt.alloc(&mut k, 16 + 4 * 2000, 2000).unwrap();
    rt.set_root(&mut k, 0, keep);
    let mut kept = Vec::new();
    for i in 0..60_000u32 {
        let o = rt.alloc(&mut k, 100, 0).unwrap();
        if i % 30 == 0 {
            rt.write_ref(&mut k, keep, i / 30, o);
            kept.push((o, rt.heap.objects().addr(o)));
        }
    }
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    for &(o, a) in &kept {
        assert_eq!(rt.heap.objects().addr(o), a, "mark-sweep moved an object");
    }
    let frag = rt.heap.main_free_list().fragmentation_bytes();
    assert!(frag > 2 * rt.heap.main_free_list().bytes_allocated, "fragmentation {frag}");
}

fn gcbench(kind: CollectorKind, heap_mib: u64) -> (Runtime, gcbench::GcBenchResult) {
    let mut k = kernel();
    let mut rt = Runtime::new(&mut k, 1, "gcbench", 0, cfg(kind, heap_mib), 0).unwrap();
    let r = gcbench::run(&mut rt, &mut k, &GcBenchParams::scaled(14));
    (rt, r)
}

#[test]
fn gcbench_runs_with_every_collector() {
    let p = GcBenchParams::scaled(14);
    for kind in [
        CollectorKind::ConcurrentCopying,
        CollectorKind::SemiSpace,
        CollectorKind::MarkSweep,
        CollectorKind::MarkSweepOtf,
        CollectorKind::ConcurrentMarkCompact,
    ] {
        let (rt, r) = gcbench(kind, 16);
        assert!(!r.oom, "{kind:?} ran out of memory");
        assert!(!rt.records.is_empty(), "{kind:?} never collected");
        let expect: u64 = {
            let mut n = gcbench::tree_size(p.stretch_depth) + gcbench::tree_size(p.long_lived_depth);
            let mut d = p.min_depth;
            while d <= p.max_depth {
                n += 2 * (2 * gcbench::tree_size(p.stretch_depth) / gcbench::tree_size(d)) * gcbench::tree_size(d);
                d += 2;
            }
            n
        };
        assert_eq!(r.nodes_allocated, expect, "{kind:?}");
    }
    let (rt, r) = gcbench(CollectorKind::NoGc, 256);
    assert!(!r.oom && rt.records.is_empty());
    let (_, r) = gcbench(CollectorKind::NoGc, 8);
    assert!(r.oom);
}

#[test]
fn semi_space_reserves_twice_the_heap() {
    let mut k = kernel();
    let rt = Runtime::new(&mut k, 1, "a", 0, cfg(CollectorKind::SemiSpace, 32), 0).unwrap();
    assert_eq!(rt.heap.region_space().num_regions as u64 * REGION_SIZE, 64 << 20);
    let rt2 = Runtime::new(&mut k, 2, "b", 0, cfg(CollectorKind::ConcurrentMarkCompact, 32), 0).unwrap();
    assert_eq!(rt2.heap.region_space().num_regions as u64 * REGION_SIZE, 32 << 20);
    let _ = SpaceId::Main;
}

#[test]
fn runs_are_deterministic() {
    let run = || {
        let v = mobmem_runtime::sim::run_app(&mobmem_runtime::sim::RunOptions {
            kernel: &[],
            runtime: &[("collector".into(), "cc".into())],
            app: &mobmem_runtime::workload::AppProfile::synthetic("synthetic:footprint=8m,objsize=256").unwrap(),
            seconds: 3.0,
            alloc_bytes: None,
            state: AppState::Foreground,
            policies: &[],
        })
        .unwrap();
        let mut v = v;
        v["wall"] = serde_json::Value::Null;
        v.to_string()
    };
    assert_eq!(run(), run());
}

#[test]
fn attribution_separates_stop_the_world_from_everything_else() {
    let v = mobmem_runtime::sim::run_app(&mobmem_runtime::sim::RunOptions {
        kernel: &[],
        runtime: &[("collector".into(), "cc".into())],
        app: &mobmem_runtime::workload::AppProfile::synthetic("synthetic:footprint=8m,objsize=128,rate=8m").unwrap(),
        seconds: 3.0,
        alloc_bytes: None,
        state: AppState::Foreground,
        policies: &[],
    })
    .unwrap();
    let s = &v["summary"];
    let f = |k: &str| s[k].as_f64().unwrap();
    assert!(f("gc_count") >= 2.0);
    assert!((f("stw_cpu_ms") + f("other_cpu_ms") - f("total_cpu_ms")).abs() < 1e-6);
    assert!((f("mutator_cpu_ms") + f("gc_cpu_ms") - f("total_cpu_ms")).abs() < 1e-6);
    assert!(f("gc_cpu_pause_ms") <= f("pause_total_ms") + 1e-9);
    let gcs = v["gcs"].as_array().unwrap();
    let pauses: f64 = gcs.iter().map(|g| g["pause_total_ns"].as_f64().unwrap()).sum::<f64>() / 1e6;
    assert!((pauses - f("pause_total_ms")).abs() < 1e-6);
    for g in gcs {
        let phase_pause: u64 = g["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["kind"] == "Pause")
            .map(|p| p["end_ns"].as_u64().unwrap() - p["start_ns"].as_u64().unwrap())
            .sum();
        assert_eq!(phase_pause, g["pause_total_ns"].as_u64().unwrap());
        assert!(g["gc_cpu_ns"].as_u64().unwrap() >= g["gc_cpu_pause_ns"].as_u64().unwrap());
        assert!(g["log"].as_str().unwrap().contains("concurrent copying GC freed"));
    }
}

/// A run by allocation volume is a fixed amount of work: the same frames and allocation whatever
/// the collector and the (fixed) heap size; a smaller heap only makes it cost more collections.
/// (cc at 16m also has collections start inside a unit's root allocation: in debug builds the
/// heap's card chains are checked after every collection.)
#[test]
fn a_run_by_allocation_volume_is_fixed_work() {
    let run = |collector: &str, heap: &str| {
        mobmem_runtime::sim::run_app(&mobmem_runtime::sim::RunOptions {
            kernel: &[],
            runtime: &[("collector".into(), collector.into()), ("heap_sizing".into(), "fixed".into()), ("heap".into(), heap.into())],
            app: &mobmem_runtime::workload::AppProfile::synthetic("synthetic:footprint=8m,objsize=128,rate=8m").unwrap(),
            seconds: 0.0,
            alloc_bytes: Some(48 << 20),
            state: AppState::Foreground,
            policies: &[],
        })
        .unwrap()
    };
    let runs = [run("cc", "16m"), run("cc", "24m"), run("ss", "16m"), run("nogc", "256m")];
    let units = |v: &serde_json::Value| v["workload"]["units_of_work"].as_u64().unwrap();
    let gcs = |v: &serde_json::Value| v["summary"]["gc_count"].as_u64().unwrap();
    for v in &runs {
        assert!(!v["oom"].as_bool().unwrap(), "{}", v["summary"]);
        assert_eq!(units(v), units(&runs[0]));
        // Every unit of work in the foreground is a frame, and each has its time.
        assert_eq!(v["frames"]["frames"].as_u64().unwrap(), units(v));
        assert!(v["frames"]["p50_ms"].as_f64().unwrap() > 0.0);
    }
    assert!(gcs(&runs[0]) > gcs(&runs[1]) && gcs(&runs[1]) > 0, "{} {}", gcs(&runs[0]), gcs(&runs[1]));
    assert_eq!(gcs(&runs[3]), 0);
    // Collections stall frames: the small heap's frames are no faster at the tail.
    assert!(runs[0]["frames"]["p99_ms"].as_f64().unwrap() >= runs[3]["frames"]["p99_ms"].as_f64().unwrap());
}
