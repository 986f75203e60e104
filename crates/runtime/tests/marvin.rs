//! Marvin on the runtime's object-granularity swap: stubs made by compactions, cold objects
//! written and released in the background, swap-in on access and on returning to the
//! foreground, the bounded swap file, the write task's timing, settings errors, and a property
//! test against the reachability oracle.

#![allow(clippy::field_reassign_with_default)]

mod common;

use common::{chain, idle_steps, setup_policy};

use mobmem_kernel::Kernel;
use mobmem_runtime::object::{flag, AppState, ObjId};
use mobmem_runtime::oracle::Oracle;
use mobmem_runtime::policies;
use mobmem_runtime::{GcCause, GcType, Runtime, RuntimeConfig};
use proptest::prelude::*;
use std::collections::HashMap;

const S: u64 = 1_000_000_000;

fn setup(settings: &[(&str, &str)]) -> (Kernel, Runtime) {
    setup_policy("marvin", settings)
}

/// Full collections that age every object by `n` access epochs.
fn age(rt: &mut Runtime, k: &mut Kernel, n: usize) {
    for _ in 0..n {
        rt.collect_blocking(k, GcCause::Explicit, GcType::Full);
    }
}

/// Large and small objects, made cold, then the app goes to the background until the
/// collector transition (the first compaction) has run.
fn cold_app_in_background(settings: &[(&str, &str)]) -> (Kernel, Runtime, Vec<ObjId>, Vec<ObjId>) {
    let (mut k, mut rt) = setup(settings);
    let large = chain(&mut rt, &mut k, 0, 200, 2048);
    let small = chain(&mut rt, &mut k, 1, 200, 200);
    age(&mut rt, &mut k, 4);
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 6 * S;
    idle_steps(&mut rt, &mut k, t);
    (k, rt, large, small)
}

fn resident(rt: &Runtime, o: ObjId) -> bool {
    rt.heap.oswap.get(o).unwrap().resident
}

#[test]
fn background_compaction_gives_large_objects_stubs_and_releases_the_cold_ones() {
    let (mut k0, mut rt0) = setup(&[]);
    chain(&mut rt0, &mut k0, 0, 200, 2048);
    chain(&mut rt0, &mut k0, 1, 200, 200);
    age(&mut rt0, &mut k0, 4);
    let (rss_before, heap_before) = (k0.proc_rss_swap(rt0.proc_idx).0, rt0.heap.bytes_allocated);

    let (k, rt, large, small) = cold_app_in_background(&[]);
    assert!(rt.records.iter().any(|r| r.cause == "CollectorTransition"));
    let st = &rt.heap.oswap.stats;
    assert_eq!(st.stubs_created, 200, "every object of at least 1 KiB gets a stub");
    assert!(large.iter().all(|&o| rt.heap.objs.flags(o) & flag::STUB != 0));
    assert!(small.iter().all(|&o| rt.heap.objs.flags(o) & flag::STUB == 0), "small objects never get stubs");
    assert_eq!(st.objects_written, 200);
    assert_eq!(st.objects_reclaimed, 200);
    assert!(large.iter().all(|&o| !resident(&rt, o)));
    // The heap holds stubs now; the objects' pages are gone.
    let stub = mobmem_runtime::object_swap::stub_bytes(1) as u64;
    assert_eq!(heap_before - rt.heap.bytes_allocated, 200 * (rt0.heap.objs.size(large[0]) as u64 - stub));
    let rss = k.proc_rss_swap(rt.proc_idx).0;
    assert!(rss + 80 < rss_before, "RSS {rss} pages, {rss_before} before");
    assert_eq!(rt.heap.oswap.file.live, 200 * rt.heap.oswap.get(large[0]).unwrap().size as u64);
}

#[test]
fn a_swapped_in_object_is_the_object_that_left() {
    let (mut k, mut rt) = setup(&[]);
    let large = chain(&mut rt, &mut k, 0, 50, 3000);
    let before: Vec<(u32, u32, Vec<ObjId>)> = large
        .iter()
        .map(|&o| {
            let mut refs = Vec::new();
            rt.heap.objs.for_each_ref(o, |c| refs.push(c));
            (rt.heap.objs.size(o), rt.heap.objs.gen(o), refs)
        })
        .collect();
    age(&mut rt, &mut k, 4);
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 6 * S;
    idle_steps(&mut rt, &mut k, t);
    assert!(large.iter().all(|&o| !resident(&rt, o)));
    let t0 = rt.mutator.now;
    let ins = rt.mutator.bd.object_swap_ins;
    rt.read(&mut k, large[7]);
    assert_eq!(rt.mutator.bd.object_swap_ins, ins + 1);
    assert!(rt.mutator.now - t0 >= k.cfg.costs.flash_read_ns, "a synchronous read from flash");
    assert!(resident(&rt, large[7]));
    assert!(!resident(&rt, large[8]), "only the object accessed is read back");
    for (i, &o) in large.iter().enumerate() {
        let (size, gen, refs) = &before[i];
        assert_eq!(rt.heap.oswap.get(o).unwrap().size, *size);
        assert_eq!(rt.heap.objs.gen(o), *gen);
        let mut have = Vec::new();
        rt.heap.objs.for_each_ref(o, |c| have.push(c));
        assert_eq!(&have, refs);
    }
}

#[test]
fn returning_to_the_foreground_reads_everything_back_first_unless_turned_off() {
    for on in [true, false] {
        let v = on.to_string();
        let (mut k, mut rt, large, _) = cold_app_in_background(&[("marvin.swap_in_on_foreground", v.as_str())]);
        rt.set_state(AppState::Foreground);
        let t0 = rt.mutator.now;
        rt.resume_foreground(&mut k);
        let st = &rt.heap.oswap.stats;
        if on {
            assert_eq!(st.pause_swap_ins, 200);
            assert!(large.iter().all(|&o| resident(&rt, o)));
            // Written one after the other, the objects are read back in one sequential read.
            let bytes = 200 * rt.heap.oswap.get(large[0]).unwrap().size as u64;
            let c = &k.cfg.costs;
            assert_eq!(rt.mutator.bd.object_swap_in_ns, c.flash_read_ns + (bytes.div_ceil(4096) - 1) * 4096 * 1_000_000_000 / c.flash_read_bw);
            assert_eq!(rt.mutator.bd.object_swap_ins, 200);
            assert!(rt.mutator.now - t0 >= rt.mutator.bd.object_swap_in_ns, "the pause is on the main thread's clock");
        } else {
            assert_eq!(st.pause_swap_ins, 0);
            assert!(large.iter().all(|&o| !resident(&rt, o)));
        }
    }
}

#[test]
fn objects_the_app_keeps_using_stay_in_memory() {
    // Reads keep an object hot (the default); with the released code's rule only writes do.
    for (count_reads, expect_resident) in [("true", true), ("false", false)] {
        let (mut k, mut rt) = setup(&[("marvin.count_reads", count_reads)]);
        let large = chain(&mut rt, &mut k, 0, 100, 2048);
        for _ in 0..4 {
            for &o in &large[..50] {
                rt.read(&mut k, o);
            }
            rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        }
        rt.set_state(AppState::Background);
        let t = rt.mutator.now + 6 * S;
        idle_steps(&mut rt, &mut k, t);
        assert!(large[50..].iter().all(|&o| !resident(&rt, o)), "cold objects are released");
        assert!(large[..50].iter().all(|&o| resident(&rt, o) == expect_resident), "count_reads={count_reads}");
    }
    // A write keeps it hot under both rules.
    let (mut k, mut rt) = setup(&[("marvin.count_reads", "false")]);
    let large = chain(&mut rt, &mut k, 0, 100, 2048);
    for _ in 0..4 {
        for &o in &large[..50] {
            rt.write_data(&mut k, o);
        }
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    }
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 6 * S;
    idle_steps(&mut rt, &mut k, t);
    assert!(large[..50].iter().all(|&o| resident(&rt, o)));
}

#[test]
fn a_page_goes_back_only_when_no_resident_object_is_left_on_it() {
    // Objects of 1 KiB, four to a page in the swapped-in space; every other one stays in use.
    let (mut k, mut rt) = setup(&[]);
    let objs = chain(&mut rt, &mut k, 0, 400, 1024);
    for _ in 0..4 {
        for &o in objs.iter().step_by(2) {
            rt.read(&mut k, o);
        }
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    }
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 6 * S;
    idle_steps(&mut rt, &mut k, t);
    let st = &rt.heap.oswap.stats;
    assert_eq!(st.stubs_created, 400);
    assert_eq!(st.objects_reclaimed, 200);
    assert_eq!(st.bytes_reclaimed, 200 * 1024);
    // Packed in trace order, hot and cold alternate on every page: no page is freed.
    assert_eq!(st.pages_reclaimed, 0);
    // Once the hot ones go cold too, their pages go.
    rt.set_state(AppState::Foreground);
    rt.resume_foreground(&mut k);
    age(&mut rt, &mut k, 4);
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 6 * S;
    idle_steps(&mut rt, &mut k, t);
    assert!(rt.heap.oswap.stats.pages_reclaimed >= 99, "{:?}", rt.heap.oswap.stats);
}

#[test]
fn a_full_swap_file_refuses_writes_and_the_objects_stay_in_memory() {
    // 1 MiB of file for 200 objects of ~2 KiB (~400 KiB) fits; for 1,000 (~2 MiB) it does not.
    let (mut k, mut rt) = setup(&[("marvin.swap_file_mib", "1")]);
    let large = chain(&mut rt, &mut k, 0, 1000, 2048);
    age(&mut rt, &mut k, 4);
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 6 * S;
    idle_steps(&mut rt, &mut k, t);
    let st = rt.heap.oswap.stats.clone();
    let f = &rt.heap.oswap.file;
    assert_eq!(st.stubs_created, 1000);
    assert!(st.writes_refused > 0);
    assert_eq!(st.objects_written + st.writes_refused, 1000);
    assert!(f.end <= f.capacity && f.end + rt.heap.oswap.get(large[0]).unwrap().size as u64 > f.capacity);
    assert_eq!(st.objects_reclaimed, st.objects_written, "only written objects are released");
    let kept = large.iter().filter(|&&o| resident(&rt, o)).count() as u64;
    assert_eq!(kept, st.writes_refused);
    rt.heap.oswap.check().unwrap();
}

#[test]
fn the_write_task_collects_every_period_and_compacts_every_seventh_cycle_in_the_background() {
    let (mut k, mut rt) = setup(&[]);
    chain(&mut rt, &mut k, 0, 10, 2048);
    let t = rt.mutator.now + 21 * S;
    idle_steps(&mut rt, &mut k, t);
    let count = |rt: &Runtime, c: &str| rt.records.iter().filter(|r| r.cause == c).count();
    assert_eq!(count(&rt, "MarvinWriteTask"), 4, "every 5 s in the foreground");
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 7 * 30 * S + S;
    idle_steps(&mut rt, &mut k, t);
    assert_eq!(count(&rt, "MarvinWriteTask"), 4 + 6);
    assert_eq!(count(&rt, "MarvinCompaction"), 1);
}

#[test]
fn marvin_settings_are_checked_naming_the_key() {
    let mut c = RuntimeConfig::default();
    for (key, v) in
        [("marvin.threshold", "0"), ("marvin.threshold", "-1"), ("marvin.threshold", "abc"), ("marvin.cold_epochs", "0"), ("marvin.swap_file_mib", "x")]
    {
        let e = policies::apply_setting(&mut c, key, v).unwrap_err().to_string();
        assert!(e.contains(key.trim_start_matches("marvin.")) && !e.contains('\n'), "{key}={v}: {e}");
    }
    assert!(policies::apply_setting(&mut c, "marvin.nope", "1").is_err());
    policies::apply_setting(&mut c, "marvin.threshold", "2k").unwrap();
}

#[test]
fn runs_are_deterministic() {
    let run = || {
        let (mut k, mut rt, large, _) = cold_app_in_background(&[]);
        for &o in large.iter().step_by(7) {
            rt.read(&mut k, o);
        }
        rt.set_state(AppState::Foreground);
        rt.resume_foreground(&mut k);
        (format!("{:?}", rt.heap.oswap.stats), format!("{:?}", rt.records), rt.mutator.now, k.vmstat.clone())
    };
    let (a, b) = (run(), run());
    assert_eq!(a.0, b.0);
    assert_eq!(a.1, b.1);
    assert_eq!(a.2, b.2);
    assert_eq!(format!("{:?}", a.3), format!("{:?}", b.3));
}

/// Every live object still has the size it was allocated with (its own, behind a stub).
fn check_sizes(rt: &Runtime, sizes: &HashMap<ObjId, (u32, u32)>) -> Result<(), TestCaseError> {
    for (&o, &(gen, size)) in sizes {
        if !rt.heap.objs.is_live(o) || rt.heap.objs.gen(o) != gen {
            continue;
        }
        let have = match rt.heap.oswap.get(o) {
            Some(r) => {
                prop_assert!(rt.heap.objs.flags(o) & flag::STUB != 0);
                r.size
            }
            None => rt.heap.objs.size(o),
        };
        prop_assert_eq!(have, size, "object {} changed size", o);
    }
    Ok(())
}

fn run_with_swap(ops: &[common::Op]) -> Result<(), TestCaseError> {
    use common::{apply, Op};
    // Everything of 64 B and more may get a stub, and objects are cold after one epoch.
    let (mut k, mut rt) = setup(&[("marvin.threshold", "64"), ("marvin.cold_epochs", "1"), ("marvin.count_reads", "false")]);
    let mut or = Oracle::default();
    let mut sizes: HashMap<ObjId, (u32, u32)> = HashMap::new();
    let mut bg = false;
    let mut i = 0;
    while i < ops.len() {
        if let Op::Gc { full, concurrent, slices } = ops[i] {
            // Alternate: a compaction in the background (stubs, writes, releases), or an ordinary
            // collection in the foreground (possibly concurrent with the mutator).
            bg = !bg;
            rt.set_state(if bg { AppState::Background } else { AppState::Foreground });
            let (cause, ty) =
                if bg { (GcCause::CollectorTransition, GcType::Full) } else { (GcCause::Explicit, if full { GcType::Full } else { GcType::Sticky }) };
            rt.wait_for_gc(&mut k);
            let must_free = or.must_free(&rt.heap, ty == GcType::Sticky);
            rt.start_gc(&mut k, cause, ty);
            if concurrent && !bg {
                common::interleave(&mut k, &mut rt, &mut or, ops, &mut i, slices);
            }
            rt.wait_for_gc(&mut k);
            or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("{cause:?}: {e}")))?;
            check_sizes(&rt, &sizes)?;
            if !bg {
                rt.resume_foreground(&mut k);
            }
        } else {
            apply(&mut k, &mut rt, &mut or, &ops[i]);
            if let Op::Alloc { root, .. } = ops[i] {
                let o = rt.heap.roots[root];
                sizes.insert(o, (rt.heap.objs.gen(o), rt.heap.objs.size(o)));
            }
        }
        i += 1;
    }
    let must_free = or.must_free(&rt.heap, false);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("final: {e}")))?;
    check_sizes(&rt, &sizes)?;
    rt.heap.oswap.check().map_err(TestCaseError::fail)?;
    // Every stub belongs to a live object.
    for o in rt.heap.oswap.stub_ids() {
        prop_assert!(rt.heap.objs.is_live(o));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48), max_shrink_iters: 2000, ..ProptestConfig::default() })]
    /// Object swap never loses an object or a reference: random mutations (links, unlinks,
    /// roots, reads that swap objects back in) between and during collections, with background
    /// compactions that make stubs, write objects and release their pages; reachable objects
    /// keep their identity, references and size, unreachable ones are freed with their stubs and
    /// swap-file extents.
    #[test]
    fn object_swap_matches_oracle(ops in proptest::collection::vec(common::op(), 1..150)) {
        run_with_swap(&ops)?;
    }
}
