//! Fleet: runtime-guided swap (the grouping GC's timing and order, its classification of
//! survivors into launch, working-set and cold regions, the madvise of those regions, on a small
//! heap with chains of known depth) and the background-object GC (it neither traces nor moves the
//! grouped objects, its second card table keeps what they reference; a property test against the
//! reachability oracle with random mutations of foreground and background objects).

#![allow(clippy::field_reassign_with_default)]

mod common;

use common::{chain, idle_steps, setup_policy};

use mobmem_kernel::page::lru;
use mobmem_kernel::Kernel;
use mobmem_runtime::object::{AppState, ObjId, SpaceId};
use mobmem_runtime::oracle::Oracle;
use mobmem_runtime::space::RegionSpace;
use mobmem_runtime::{policies, GcCause, GcType, Runtime, RuntimeConfig, NULL};
use proptest::prelude::*;

const S: u64 = 1_000_000_000;

fn setup(settings: &[(&str, &str)]) -> (Kernel, Runtime) {
    setup_policy("fleet-rgs", settings)
}

/// `n` chains of `len` objects of `size` bytes, chain `i` hanging from root slot `i`: object `j`
/// of a chain is at depth `j + 1` from the roots.
fn chains(rt: &mut Runtime, k: &mut Kernel, n: usize, len: usize, size: u32) -> Vec<Vec<ObjId>> {
    (0..n).map(|i| chain(rt, k, i, len, size)).collect()
}

/// A full collection in the foreground: everything allocated so far becomes old.
fn age(rt: &mut Runtime, k: &mut Kernel) {
    rt.collect_blocking(k, GcCause::Explicit, GcType::Full);
}

fn class_of(rt: &Runtime, o: ObjId) -> String {
    assert_eq!(rt.heap.objs.space_of(o), SpaceId::Main);
    let r = RegionSpace::region_of(rt.heap.objs.addr(o));
    rt.heap.classes[rt.heap.regions.class[r as usize] as usize].name.clone()
}

/// (present, on an active list) of the page holding `o`.
fn page_state(rt: &Runtime, k: &Kernel, o: ObjId) -> (bool, bool) {
    let v = rt.heap.vma[SpaceId::Main as usize];
    let m = k.vmas[v as usize].mapping as usize;
    let e = k.mappings[m].pages[(rt.heap.objs.addr(o) / 4096) as usize];
    if !e.is_present() {
        return (false, false);
    }
    let l = k.frames.lru[e.pfn() as usize];
    (true, l == lru::list(false, true))
}

fn rgs_records(rt: &Runtime) -> Vec<&mobmem_runtime::GcRecord> {
    rt.records.iter().filter(|r| r.cause == "RGS").collect()
}

#[test]
fn grouping_gc_runs_t_b_after_background_breadth_first_and_groups_by_depth() {
    let (mut k, mut rt) = setup(&[]);
    let cs = chains(&mut rt, &mut k, 200, 6, 64);
    rt.set_state(AppState::Background);
    let bg_at = rt.mutator.now;
    // A collection in the foreground makes the chains old; then a foreground-young object.
    age(&mut rt, &mut k);
    let young = rt.alloc(&mut k, 64, 0).unwrap();
    rt.write_ref(&mut k, cs[0][5], 0, young);
    // No collector transition (the grouping GC replaces it); the grouping GC at T_B = 10 s.
    idle_steps(&mut rt, &mut k, bg_at + 9 * S);
    assert!(rgs_records(&rt).is_empty(), "no grouping GC before T_B");
    assert_eq!(rt.records.iter().filter(|r| r.cause == "CollectorTransition").count(), 0);
    idle_steps(&mut rt, &mut k, bg_at + 11 * S);
    let rgs = rgs_records(&rt);
    assert_eq!(rgs.len(), 1, "one grouping GC");
    assert_eq!(rgs[0].gc_type, "full");
    assert!(rgs[0].start_ns >= bg_at + 10 * S && rgs[0].start_ns < bg_at + 10 * S + 20_000_000, "at T_B: {}", rgs[0].start_ns);
    for c in &cs {
        // D = 2: the roots' targets and their children are near-root objects.
        for (j, &o) in c.iter().enumerate() {
            let want = if j < 2 { "fleet-launch" } else { "fleet-cold" };
            assert_eq!(class_of(&rt, o), want, "object at depth {}", j + 1);
        }
    }
    assert_eq!(class_of(&rt, young), "fleet-launch", "allocated since the last GC");
    // After the grouping GC: cold regions paged out at once, launch regions hot.
    for c in &cs {
        assert_eq!(page_state(&rt, &k, c[5]), (false, false), "a cold object's page is paged out");
        assert_eq!(page_state(&rt, &k, c[0]), (true, true), "a launch object's page is resident and active");
    }
    assert!(k.vmstat.pswpout > 0);
    // Background mode goes on: no second grouping GC.
    idle_steps(&mut rt, &mut k, bg_at + 40 * S);
    assert_eq!(rgs_records(&rt).len(), 1);
}

#[test]
fn released_code_counts_depth_from_zero() {
    let (mut k, mut rt) = setup(&[("fleet.depth_from_zero", "true")]);
    let cs = chains(&mut rt, &mut k, 50, 5, 64);
    age(&mut rt, &mut k);
    group(&mut rt, &mut k);
    for c in &cs {
        for (j, &o) in c.iter().enumerate() {
            let want = if j < 3 { "fleet-launch" } else { "fleet-cold" };
            assert_eq!(class_of(&rt, o), want, "object at depth {} (from 0: {j})", j + 1);
        }
    }
}

#[test]
fn objects_the_app_reads_during_the_grouping_gc_go_to_working_set_regions() {
    let (mut k, mut rt) = setup(&[("fleet.t_b_ms", "8000")]);
    let cs = chains(&mut rt, &mut k, 2000, 6, 64);
    age(&mut rt, &mut k);
    rt.set_state(AppState::Background);
    let bg_at = rt.mutator.now;
    idle_steps(&mut rt, &mut k, bg_at + 7 * S);
    assert!(rgs_records(&rt).is_empty());
    // Start the grouping GC at T_B and let it run only briefly; then the app reads the deep
    // objects of the last chains (the GC thread, breadth-first, reaches them last).
    let t_b = bg_at + 8 * S;
    rt.mutator_idle_until(t_b);
    k.advance_to(t_b);
    rt.poll(&mut k);
    // Only the flip pause and a little copying.
    let t = rt.mutator.now + 1;
    rt.run_gc_until(&mut k, t);
    assert!(rt.gc_running(), "the grouping GC has started: {:?}", rt.records.iter().map(|r| (r.cause, r.start_ns, r.end_ns)).collect::<Vec<_>>());
    let read: Vec<ObjId> = cs[1900..].iter().map(|c| c[5]).collect();
    for &o in &read {
        rt.read(&mut k, o);
    }
    rt.wait_for_gc(&mut k);
    assert_eq!(rgs_records(&rt).len(), 1);
    let ws = read.iter().filter(|&&o| class_of(&rt, o) == "fleet-ws").count();
    assert!(ws > read.len() / 2, "{ws} of {} read objects in working-set regions", read.len());
    // Not read: cold.
    assert_eq!(class_of(&rt, cs[10][5]), "fleet-cold");
}

#[test]
fn returning_before_t_b_cancels_the_grouping_gc_and_t_f_ends_background_mode() {
    let (mut k, mut rt) = setup(&[("fleet.t_f_ms", "3000")]);
    chains(&mut rt, &mut k, 20, 4, 64);
    rt.set_state(AppState::Background);
    let t0 = rt.mutator.now;
    idle_steps(&mut rt, &mut k, t0 + 6 * S);
    rt.set_state(AppState::Foreground);
    idle_steps(&mut rt, &mut k, t0 + 20 * S);
    assert!(rgs_records(&rt).is_empty(), "cancelled by the return to the foreground");
    // A full background period groups; back within T_F and out again: the grouping is kept.
    rt.set_state(AppState::Background);
    let t1 = rt.mutator.now;
    idle_steps(&mut rt, &mut k, t1 + 11 * S);
    assert_eq!(rgs_records(&rt).len(), 1);
    rt.set_state(AppState::Foreground);
    idle_steps(&mut rt, &mut k, t1 + 12 * S);
    rt.set_state(AppState::Background);
    idle_steps(&mut rt, &mut k, t1 + 30 * S);
    assert_eq!(rgs_records(&rt).len(), 1, "back within T_F: no second grouping GC");
    // Out of background mode (T_F in the foreground), the next background period groups again.
    rt.set_state(AppState::Foreground);
    idle_steps(&mut rt, &mut k, t1 + 34 * S);
    rt.set_state(AppState::Background);
    idle_steps(&mut rt, &mut k, t1 + 46 * S);
    assert_eq!(rgs_records(&rt).len(), 2);
}

#[test]
fn launch_regions_are_marked_hot_again_while_in_the_background_unless_once() {
    for (once, want_active) in [(false, true), (true, false)] {
        let (mut k, mut rt) = setup(&[("fleet.hot_once", if once { "true" } else { "false" }), ("fleet.hot_period_ms", "2000")]);
        let cs = chains(&mut rt, &mut k, 100, 4, 64);
        rt.set_state(AppState::Background);
        let t0 = rt.mutator.now;
        idle_steps(&mut rt, &mut k, t0 + 11 * S);
        assert_eq!(page_state(&rt, &k, cs[0][0]), (true, true));
        // The kernel ages the page (as reclaim scanning the active list would); the next periodic
        // hint makes it active again, the one-shot variant leaves it.
        let v = rt.heap.vma[SpaceId::Main as usize];
        let page = (rt.heap.objs.addr(cs[0][0]) / 4096) as u32;
        k.madvise(&mut rt.gc_task, v, page, 1, mobmem_kernel::madvise::Advice::Cold).unwrap();
        assert_eq!(page_state(&rt, &k, cs[0][0]), (true, false));
        idle_steps(&mut rt, &mut k, t0 + 14 * S);
        assert_eq!(page_state(&rt, &k, cs[0][0]), (true, want_active), "hot_once={once}");
    }
}

#[test]
fn fleet_settings_are_checked_naming_the_key() {
    let mut c = RuntimeConfig::default();
    for (key, v) in [("fleet.depth", "-1"), ("fleet.t_b_ms", "abc"), ("fleet.hot_once", "maybe"), ("fleet.bogus", "1")] {
        let e = policies::apply_setting(&mut c, key, v).unwrap_err().to_string();
        assert!(e.contains(key.trim_start_matches("fleet.")) || e.contains(key), "{key}: {e}");
    }
    policies::apply_setting(&mut c, "runtime.fleet.depth", "3").unwrap();
    policies::apply_setting(&mut c, "heapgrowthlimit", "128m").unwrap();
    assert_eq!(c.heap.growth_limit, 128 << 20);
    assert_eq!(c.policy_settings, vec![("fleet.depth".to_string(), "3".to_string())]);
}

/// Into the background and through the grouping GC (T_B = 10 s) and its madvise.
fn group(rt: &mut Runtime, k: &mut Kernel) {
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 11 * S;
    idle_steps(rt, k, t);
    assert_eq!(rgs_records(rt).len(), 1);
}

/// Into the background; run to T_B (10 s) and start the grouping GC, stopping before its flip.
/// Returns when the app went to the background.
fn start_grouping(rt: &mut Runtime, k: &mut Kernel) -> u64 {
    rt.set_state(AppState::Background);
    let t0 = rt.mutator.now;
    idle_steps(rt, k, t0 + 10 * S - 5_000_000);
    rt.mutator_idle_until(t0 + 10 * S);
    k.advance_to(t0 + 10 * S);
    rt.poll(k);
    assert!(rt.gc_running(), "the grouping GC has started");
    t0
}

#[test]
fn background_object_gc_neither_traces_nor_moves_the_grouped_objects() {
    let (mut k, mut rt) = setup_policy("fleet", &[]);
    let cs = chains(&mut rt, &mut k, 300, 6, 64);
    age(&mut rt, &mut k);
    group(&mut rt, &mut k);
    let cold = cs[7][5];
    let (cold_addr, launch_addr) = (rt.heap.objs.addr(cold), rt.heap.objs.addr(cs[7][0]));
    assert_eq!(page_state(&rt, &k, cold), (false, false), "cold objects are paged out");
    // Background objects: their own regions; garbage and a survivor held by a root.
    let keep = rt.alloc(&mut k, 64, 1).unwrap();
    rt.set_root(&mut k, 500, keep);
    assert_eq!(class_of(&rt, keep), "fleet-bgo");
    for _ in 0..20_000 {
        rt.alloc(&mut k, 48, 0).unwrap();
    }
    let pswpin = k.vmstat.pswpin;
    rt.collect_blocking(&mut k, GcCause::Background, GcType::Sticky);
    let r = rt.records.last().unwrap();
    assert_eq!(r.gc_type, "full", "background-object GCs are full collections in kind");
    assert_eq!(k.vmstat.pswpin, pswpin, "no swap-in: the cold objects were not touched");
    assert!(r.objects_marked < 100, "only background objects traced: {}", r.objects_marked);
    assert!(r.freed_objects >= 19_000, "background garbage freed: {}", r.freed_objects);
    assert_eq!((rt.heap.objs.addr(cold), rt.heap.objs.addr(cs[7][0])), (cold_addr, launch_addr), "grouped objects not moved");
    assert!(cs.iter().flatten().all(|&o| rt.heap.objs.is_live(o)));
    assert!(rt.heap.objs.is_live(keep) && class_of(&rt, keep) == "fleet-bgo");
    // A stock full collection in the background would have traced them all (fleet-rgs alone).
    let (mut k2, mut rt2) = setup_policy("fleet-rgs", &[]);
    chains(&mut rt2, &mut k2, 300, 6, 64);
    age(&mut rt2, &mut k2);
    group(&mut rt2, &mut k2);
    let pswpin = k2.vmstat.pswpin;
    rt2.collect_blocking(&mut k2, GcCause::Background, GcType::Full);
    assert!(rt2.records.last().unwrap().objects_marked >= 1800);
    assert!(k2.vmstat.pswpin > pswpin, "a stock full GC swaps the cold objects back in");
}

#[test]
fn the_second_card_table_keeps_what_foreground_objects_reference() {
    for during_grouping in [false, true] {
        let (mut k, mut rt) = setup_policy("fleet", &[]);
        let cs = chains(&mut rt, &mut k, 300, 6, 64);
        age(&mut rt, &mut k);
        let fresh = if during_grouping {
            // Written while the grouping GC runs (the object moves after the write).
            let t0 = start_grouping(&mut rt, &mut k);
            // Past the flip: a new object is allocated black, outside the groups.
            let t = rt.mutator.now + 1;
            rt.run_gc_until(&mut k, t);
            assert!(rt.gc_running());
            let o = rt.alloc(&mut k, 64, 0).unwrap();
            rt.write_ref(&mut k, cs[3][5], 0, o);
            rt.wait_for_gc(&mut k);
            idle_steps(&mut rt, &mut k, t0 + 11 * S);
            o
        } else {
            rt.set_state(AppState::Background);
            let t0 = rt.mutator.now;
            idle_steps(&mut rt, &mut k, t0 + 11 * S);
            let o = rt.alloc(&mut k, 64, 0).unwrap();
            rt.write_ref(&mut k, cs[3][5], 0, o);
            o
        };
        assert_eq!(rgs_records(&rt).len(), 1);
        // Only a foreground (cold, paged-out) object references `fresh`.
        for _ in 0..2 {
            rt.collect_blocking(&mut k, GcCause::Background, GcType::Full);
            assert!(rt.heap.objs.is_live(fresh), "kept through the remembered set (during grouping: {during_grouping})");
        }
        // Unlinked: the next background-object GC frees it.
        rt.write_ref(&mut k, cs[3][5], 0, NULL);
        rt.collect_blocking(&mut k, GcCause::Background, GcType::Full);
        assert!(!rt.heap.objs.is_live(fresh), "during grouping: {during_grouping}; class {}", class_of(&rt, fresh));
    }
}

#[test]
fn objects_allocated_before_the_grouping_gcs_flip_are_remembered_too() {
    let (mut k, mut rt) = setup_policy("fleet", &[]);
    let cs = chains(&mut rt, &mut k, 300, 6, 64);
    age(&mut rt, &mut k);
    let t0 = start_grouping(&mut rt, &mut k);
    // Allocated after the grouping GC started but before its flip: young, so copied into a
    // launch region — a foreground object the background-object GC does not trace.
    let y = rt.alloc(&mut k, 64, 1).unwrap();
    rt.write_ref(&mut k, cs[0][5], 0, y);
    rt.wait_for_gc(&mut k);
    idle_steps(&mut rt, &mut k, t0 + 11 * S);
    assert_eq!(class_of(&rt, y), "fleet-launch");
    let b = rt.alloc(&mut k, 64, 0).unwrap();
    rt.write_ref(&mut k, y, 0, b);
    rt.collect_blocking(&mut k, GcCause::Background, GcType::Full);
    assert!(rt.heap.objs.is_live(b), "referenced only from a foreground object allocated before the flip");
    // The grouped regions keep their live bytes (a later stock collection chooses by them).
    let r = RegionSpace::region_of(rt.heap.objs.addr(cs[0][5]));
    assert!(rt.heap.region_live(r).unwrap_or(0) > 0, "a grouped region measured empty after a background-object GC");
}

#[test]
fn an_app_back_in_the_foreground_during_the_grouping_gc_keeps_its_pages() {
    let (mut k, mut rt) = setup_policy("fleet", &[("fleet.hot_period_ms", "1000")]);
    let cs = chains(&mut rt, &mut k, 300, 6, 64);
    age(&mut rt, &mut k);
    let t0 = start_grouping(&mut rt, &mut k);
    rt.set_state(AppState::Foreground);
    rt.wait_for_gc(&mut k);
    let pswpout = k.vmstat.pswpout;
    idle_steps(&mut rt, &mut k, t0 + 12 * S);
    assert_eq!(k.vmstat.pswpout, pswpout, "no pageout for an app in the foreground");
    assert!(page_state(&rt, &k, cs[7][5]).0, "its cold objects stay resident");
}

#[test]
fn an_allocation_failure_falls_back_to_a_full_collection_unless_foreground_is_kept() {
    for keep in [false, true] {
        let (mut k, mut rt) = setup_policy("fleet", &[("fleet.keep_foreground", if keep { "true" } else { "false" })]);
        chains(&mut rt, &mut k, 300, 6, 64);
        age(&mut rt, &mut k);
        group(&mut rt, &mut k);
        rt.collect_blocking(&mut k, GcCause::Alloc, GcType::Sticky);
        let marked = rt.records.last().unwrap().objects_marked;
        assert_eq!(marked >= 1800, !keep, "keep_foreground={keep}: {marked} objects marked");
        // After a fallback, background collections are stock ones (the grouping is gone).
        rt.collect_blocking(&mut k, GcCause::Background, GcType::Full);
        assert_eq!(rt.records.last().unwrap().objects_marked >= 1800, !keep);
    }
}

/// Objects a background-object GC must free: those in its scope (not foreground objects) that
/// are reachable neither from the roots nor from any foreground object.
fn bgc_must_free(or: &Oracle, rt: &Runtime, fgo: &std::collections::HashSet<u32>) -> Vec<(u32, u32)> {
    let live = or.reachable_from(or.roots.iter().copied().chain(fgo.iter().copied()));
    let mut v: Vec<(u32, u32)> = or
        .objects
        .iter()
        .filter(|(o, _)| !live.contains(o) && !fgo.contains(o))
        .map(|(&o, &(g, _))| (o, g))
        .filter(|&(o, _)| rt.heap.objs.is_live(o))
        .collect();
    v.sort_unstable();
    v
}

fn run_background(fg_ops: &[common::Op], bg_ops: &[common::Op]) -> Result<(), TestCaseError> {
    use common::{apply, Op};
    let (mut k, mut rt) = setup_policy("fleet", &[]);
    let mut or = Oracle::default();
    for o in fg_ops {
        if !matches!(o, Op::Gc { .. }) {
            apply(&mut k, &mut rt, &mut or, o);
        }
    }
    let must_free = or.must_free(&rt.heap, false);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("foreground: {e}")))?;
    rt.set_state(AppState::Background);
    let t = rt.mutator.now + 11 * S;
    idle_steps(&mut rt, &mut k, t);
    prop_assert_eq!(rgs_records(&rt).len(), 1);
    let fgo: std::collections::HashSet<u32> = or.objects.keys().copied().collect();
    let mut i = 0;
    while i < bg_ops.len() {
        if let Op::Gc { concurrent, slices, .. } = bg_ops[i] {
            rt.start_gc(&mut k, GcCause::Background, GcType::Sticky);
            let must_free = bgc_must_free(&or, &rt, &fgo);
            if concurrent {
                common::interleave(&mut k, &mut rt, &mut or, bg_ops, &mut i, slices);
            }
            rt.wait_for_gc(&mut k);
            // It traced background objects only (never a foreground one).
            let in_scope = or.objects.keys().filter(|o| !fgo.contains(o)).count() as u64;
            prop_assert!(
                rt.records.last().unwrap().objects_marked <= in_scope,
                "marked {} of {} background objects",
                rt.records.last().unwrap().objects_marked,
                in_scope
            );
            or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("background-object GC: {e}")))?;
        } else {
            apply(&mut k, &mut rt, &mut or, &bg_ops[i]);
        }
        i += 1;
    }
    // Back in the foreground and out of background mode: a full collection frees everything
    // unreachable, foreground objects included.
    rt.set_state(AppState::Foreground);
    let t = rt.mutator.now + 4 * S;
    idle_steps(&mut rt, &mut k, t);
    let must_free = or.must_free(&rt.heap, false);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("final: {e}")))?;
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(48), max_shrink_iters: 2000, ..ProptestConfig::default() })]
    /// Background-object GCs never free a reachable object, and free every background object
    /// reachable neither from the roots nor from a foreground object, with random mutations of
    /// foreground and background objects (links both ways, unlinks, roots) between and during
    /// the collections.
    #[test]
    fn background_object_gc_matches_oracle(fg in proptest::collection::vec(common::op(), 1..80), bg in proptest::collection::vec(common::op(), 1..120)) {
        run_background(&fg, &bg)?;
    }
}
