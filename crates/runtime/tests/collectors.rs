//! Collectors against the independent reachability oracle (property tests): random mutator
//! programs (allocate, link, unlink, change roots, read) interleaved with collections of every
//! collector and kind, stopping the world or running concurrently with the mutator. After each
//! collection: no reachable object freed or corrupted, every object unreachable when the
//! collection started (in its scope) freed, no overlapping objects, accounting intact (card
//! chains included). Sticky-only variants stress the card table as remembered set; a test
//! injects a missing card mark and checks that the oracle catches it.

#![allow(clippy::field_reassign_with_default, clippy::needless_range_loop, clippy::unnecessary_cast, clippy::while_let_loop)]

use mobmem_kernel::{Kernel, KernelConfig};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::oracle::Oracle;
use mobmem_runtime::{GcCause, GcType, Runtime, RuntimeConfig, NULL};
use proptest::prelude::*;

mod common;
use common::{apply, interleave, op, Op};

fn setup(kind: CollectorKind) -> (Kernel, Runtime) {
    let mut k = Kernel::new(KernelConfig::default()).unwrap();
    let mut cfg = RuntimeConfig::default();
    cfg.fg_collector = kind;
    cfg.bg_collector = kind;
    cfg.heap.growth_limit = 64 << 20;
    cfg.heap.capacity = 64 << 20;
    cfg.heap.start_size = 64 << 20; // collections only when the test asks
    cfg.heap.boot_image_bytes = 64 << 10;
    cfg.heap.zygote_space_bytes = 16 << 10;
    cfg.tlab_size = 4096;
    cfg.card_table_in_memory = true; // exercise the card table's pages too
    let rt = Runtime::new(&mut k, 100, "app", 0, cfg, 0).unwrap();
    (k, rt)
}

fn run_program(kind: CollectorKind, ops: &[Op]) -> Result<(), TestCaseError> {
    run_program_with(kind, ops, false, false)
}

/// `sticky_only`: every collection but the final one is sticky. `fault`: the write barrier
/// forgets its card marks (test-only fault injection).
fn run_program_with(kind: CollectorKind, ops: &[Op], sticky_only: bool, fault: bool) -> Result<(), TestCaseError> {
    let (mut k, mut rt) = setup(kind);
    rt.heap.fault_skip_card_marks = fault;
    let mut or = Oracle::default();
    // A few references into the boot image, as real objects have.
    let boot: Vec<u32> = rt.heap.immune_objects(mobmem_runtime::object::SpaceId::Boot).take(4).collect();
    let mut i = 0;
    while i < ops.len() {
        if let Op::Gc { full, concurrent, slices } = ops[i] {
            let ty = if full && !sticky_only { GcType::Full } else { GcType::Sticky };
            rt.start_gc(&mut k, GcCause::Requested, ty);
            let ty = rt.running_gc_type().unwrap_or(GcType::Full);
            let must_free = or.must_free(&rt.heap, ty == GcType::Sticky);
            if concurrent {
                // Interleave the following mutator operations with GC slices.
                interleave(&mut k, &mut rt, &mut or, ops, &mut i, slices);
            }
            rt.wait_for_gc(&mut k);
            or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("{kind:?} {ty:?}: {e}")))?;
        } else {
            apply(&mut k, &mut rt, &mut or, &ops[i]);
            if let Op::Alloc { .. } = ops[i] {
                let o = or.roots.iter().copied().find(|&o| o != NULL).unwrap();
                let n = rt.heap.objs.nrefs(o);
                if n > 0 && !boot.is_empty() {
                    rt.write_ref(&mut k, o, 0, boot[o as usize % boot.len()]);
                    or.set_ref(o, 0, boot[o as usize % boot.len()]);
                }
            }
        }
        i += 1;
    }
    // A final full collection frees everything unreachable.
    let must_free = or.must_free(&rt.heap, false);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    or.check_after_gc(&rt.heap, &must_free).map_err(|e| TestCaseError::fail(format!("{kind:?} final: {e}")))?;
    Ok(())
}

/// Case count: `default`, or `PROPTEST_CASES` for a deeper run (CI uses the default).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), max_shrink_iters: 2000, ..ProptestConfig::default() })]
    #[test]
    fn concurrent_copying_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program(CollectorKind::ConcurrentCopying, &ops)?;
    }
    #[test]
    fn semi_space_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program(CollectorKind::SemiSpace, &ops)?;
    }
    #[test]
    fn mark_sweep_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program(CollectorKind::MarkSweep, &ops)?;
    }
    #[test]
    fn mark_compact_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program(CollectorKind::ConcurrentMarkCompact, &ops)?;
    }
    /// Generational CMS: sticky mark-sweep collections only (the card table as remembered set).
    #[test]
    fn generational_mark_sweep_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program_with(CollectorKind::MarkSweep, &ops, true, false)?;
    }
    /// Mark-sweep with on-the-fly root scanning (checkpoints), sticky and full collections.
    #[test]
    fn mark_sweep_otf_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program(CollectorKind::MarkSweepOtf, &ops)?;
    }
    /// Young concurrent copying only (cards of copied objects, of regions being evacuated).
    #[test]
    fn sticky_concurrent_copying_matches_oracle(ops in proptest::collection::vec(op(), 1..160)) {
        run_program_with(CollectorKind::ConcurrentCopying, &ops, true, false)?;
    }
}

/// An old object gets the only reference to a young one; a sticky collection follows (run
/// stopping the world, or in slices interleaved with the mutator).
fn old_to_young(kind: CollectorKind, fault: bool, concurrent: bool) -> Result<(), String> {
    let (mut k, mut rt) = setup(kind);
    rt.heap.fault_skip_card_marks = fault;
    let mut or = Oracle::default();
    let a = rt.alloc(&mut k, 32, 2).unwrap();
    or.alloc(&rt.heap, a, 2);
    rt.set_root(&mut k, 0, a);
    or.set_root(0, a);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    let b = rt.alloc(&mut k, 32, 2).unwrap();
    or.alloc(&rt.heap, b, 2);
    rt.set_root(&mut k, 1, b);
    or.set_root(1, b);
    rt.write_ref(&mut k, a, 1, b);
    or.set_ref(a, 1, b);
    rt.set_root(&mut k, 1, NULL);
    or.set_root(1, NULL);
    rt.start_gc(&mut k, GcCause::Requested, GcType::Sticky);
    assert_eq!(rt.running_gc_type(), Some(GcType::Sticky));
    let must_free = or.must_free(&rt.heap, true);
    while concurrent && rt.gc_running() {
        let t = rt.mutator.now + 1_000;
        rt.run_gc_until(&mut k, t);
        rt.read(&mut k, a);
    }
    rt.wait_for_gc(&mut k);
    or.check_after_gc(&rt.heap, &must_free)?;
    let must_free = or.must_free(&rt.heap, true);
    rt.collect_blocking(&mut k, GcCause::Requested, GcType::Sticky);
    or.check_after_gc(&rt.heap, &must_free)?;
    Ok(())
}

#[test]
fn missing_card_mark_is_caught_by_the_oracle() {
    use proptest::strategy::{Strategy, ValueTree};
    for kind in [CollectorKind::MarkSweep, CollectorKind::MarkSweepOtf, CollectorKind::ConcurrentCopying] {
        for concurrent in [false, true] {
            old_to_young(kind, false, concurrent).unwrap_or_else(|e| panic!("{kind:?} without fault: {e}"));
            let e = old_to_young(kind, true, concurrent).expect_err("a lost card mark went unnoticed");
            assert!(e.contains("was freed"), "{kind:?}: {e}");
        }
        // The property test itself catches it on random programs.
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strat = proptest::collection::vec(op(), 1..160);
        let mut caught = 0;
        for _ in 0..64 {
            let ops = strat.new_tree(&mut runner).unwrap().current();
            run_program_with(kind, &ops, true, false).unwrap_or_else(|e| panic!("{kind:?} without fault: {e}"));
            if run_program_with(kind, &ops, true, true).is_err() {
                caught += 1;
            }
        }
        assert!(caught > 0, "{kind:?}: no random program noticed the missing card marks");
        eprintln!("{kind:?}: {caught} of 64 random programs caught the missing card marks");
    }
}
