//! The card table and the mark-sweep variants: card marking and aging, card granularity deciding
//! what a sticky collection scans, sticky mark-sweep (generational CMS) tracing the young
//! generation only, on-the-fly root scanning as a per-thread checkpoint, the card table in the
//! kernel model. (Correctness against the oracle: `tests/collectors.rs`.)

#![allow(clippy::field_reassign_with_default)]

use mobmem_kernel::{Kernel, KernelConfig};
use mobmem_runtime::card_table::{CARD_AGED, CARD_CLEAN, CARD_DIRTY};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::gc::PhaseKind;
use mobmem_runtime::object::{flag, ObjId};
use mobmem_runtime::{GcCause, GcType, Runtime, RuntimeConfig, NULL};

fn setup(kind: CollectorKind) -> (Kernel, Runtime) {
    let mut k = Kernel::new(KernelConfig::default()).unwrap();
    let mut c = RuntimeConfig::default();
    c.fg_collector = kind;
    c.bg_collector = kind;
    c.heap.growth_limit = 64 << 20;
    c.heap.capacity = 64 << 20;
    c.heap.start_size = 64 << 20; // collections only when the test asks
    c.heap.boot_image_bytes = 64 << 10;
    c.heap.zygote_space_bytes = 16 << 10;
    let rt = Runtime::new(&mut k, 7, "app", 0, c, 0).unwrap();
    (k, rt)
}

/// A binary tree of `n` objects of `size` bytes under root `slot` (allocated depth-first).
fn tree(rt: &mut Runtime, k: &mut Kernel, slot: usize, n: usize, size: u32) -> Vec<ObjId> {
    let mut v: Vec<ObjId> = Vec::with_capacity(n);
    for i in 0..n {
        let o = rt.alloc(k, size, 2).unwrap();
        if i == 0 {
            rt.set_root(k, slot, o);
        } else {
            rt.write_ref(k, v[(i - 1) / 2], ((i - 1) % 2) as u32, o);
        }
        v.push(o);
    }
    v
}

fn card_of(rt: &Runtime, o: ObjId) -> usize {
    rt.heap.card_table().index(rt.heap.objects().space(o) as usize, rt.heap.objects().addr(o))
}

#[test]
fn write_barrier_dirties_cards_and_collections_age_then_clean_them() {
    for kind in [CollectorKind::MarkSweep, CollectorKind::MarkSweepOtf, CollectorKind::ConcurrentCopying] {
        let (mut k, mut rt) = setup(kind);
        let a = rt.alloc(&mut k, 32, 2).unwrap();
        let b = rt.alloc(&mut k, 32, 2).unwrap();
        rt.set_root(&mut k, 0, a);
        rt.write_ref(&mut k, a, 0, NULL);
        assert_eq!(rt.heap.card_table().get(card_of(&rt, a)), CARD_CLEAN, "{kind:?}: a null store marks no card");
        rt.write_ref(&mut k, a, 0, b);
        assert_eq!(rt.heap.card_table().get(card_of(&rt, a)), CARD_DIRTY);
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        assert!(rt.heap.objects().is_live(b));
        // (a copying collector may have moved `a`; its old card was cleared with its region)
        let c = card_of(&rt, a);
        if kind != CollectorKind::ConcurrentCopying {
            assert_eq!(rt.heap.card_table().get(c), CARD_AGED, "{kind:?}: dirty → aged at card processing");
        }
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        assert_eq!(rt.heap.card_table().get(card_of(&rt, a)), CARD_CLEAN, "{kind:?}: aged → clean at the next");
        assert!(rt.records.iter().all(|r| r.cards_aged <= 2));
        rt.heap.check_card_chains().unwrap();
    }
}

#[test]
fn card_granularity_decides_what_a_sticky_collection_scans() {
    for kind in [CollectorKind::MarkSweep, CollectorKind::MarkSweepOtf, CollectorKind::ConcurrentCopying] {
        let (mut k, mut rt) = setup(kind);
        // 4096 old objects of 32 bytes: four to a card, side by side.
        let old = tree(&mut rt, &mut k, 0, 4096, 32);
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        // Write into 10 old objects on 10 distinct cards (one young object each).
        let mut cards = Vec::new();
        let mut expect_objects = 0;
        for j in 0..10 {
            let o = old[1000 + 40 * j];
            let y = rt.alloc(&mut k, 24, 0).unwrap();
            rt.write_ref(&mut k, o, 0, y);
            let c = card_of(&rt, o);
            assert!(!cards.contains(&c));
            cards.push(c);
            expect_objects += rt.heap.card_objects(c).filter(|&x| rt.heap.objects().flags(x) & flag::YOUNG == 0).count() as u64;
        }
        rt.collect_blocking(&mut k, GcCause::Requested, GcType::Sticky);
        let r = rt.records.last().unwrap();
        assert_eq!(r.gc_type, "sticky");
        assert_eq!(r.cards_scanned, 10, "{kind:?}: one card per written object");
        assert_eq!(r.card_objects_scanned, expect_objects, "{kind:?}: every old object on a dirty card is scanned");
        assert!(expect_objects > 10, "{kind:?}: neighbours share the cards ({expect_objects})");
        // Only the written objects' young referents were traced (besides the roots).
        assert!(r.objects_marked <= 12, "{kind:?}: marked {}", r.objects_marked);
        rt.heap.check_card_chains().unwrap();
    }
}

/// Objects marked / scanned by a sticky and by a full collection of the same heap.
fn sticky_vs_full(kind: CollectorKind) -> ((u64, u64), (u64, u64)) {
    let (mut k, mut rt) = setup(kind);
    // A large old generation: 100k objects.
    let old = tree(&mut rt, &mut k, 0, 100_000, 48);
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    // A small young one: 2k objects, half hanging from old objects, half garbage.
    let mut young = Vec::new();
    for j in 0..2000usize {
        let y = rt.alloc(&mut k, 40, 1).unwrap();
        if j % 2 == 0 {
            rt.write_ref(&mut k, old[50_000 + j], 0, y);
            young.push(y);
        }
    }
    let snapshot = |rt: &Runtime| {
        let r = rt.records.last().unwrap();
        (r.objects_marked, r.objects_scanned)
    };
    rt.collect_blocking(&mut k, GcCause::Requested, GcType::Sticky);
    let sticky = snapshot(&rt);
    let r = rt.records.last().unwrap();
    assert_eq!(r.gc_type, "sticky");
    assert_eq!(r.freed_objects, 1000, "{kind:?}: the young garbage is freed");
    assert!(young.iter().all(|&y| rt.heap.objects().is_live(y)));
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    (sticky, snapshot(&rt))
}

#[test]
fn sticky_mark_sweep_traces_fewer_objects_than_full_mark_sweep() {
    for kind in [CollectorKind::MarkSweep, CollectorKind::MarkSweepOtf] {
        let ((sm, ss), (fm, fs)) = sticky_vs_full(kind);
        eprintln!("{kind:?}: sticky marked {sm} scanned {ss}; full marked {fm} scanned {fs}");
        assert!(sm <= 1000 + 10, "{kind:?}: sticky marked {sm}");
        assert!(fm >= 100_000, "{kind:?}: full marked {fm}");
        assert!(ss * 10 < fs, "{kind:?}: sticky scanned {ss}, full {fs}");
    }
}

#[test]
fn on_the_fly_root_scanning_is_a_checkpoint_not_a_pause() {
    let mut pauses = Vec::new();
    for kind in [CollectorKind::MarkSweep, CollectorKind::MarkSweepOtf] {
        let (mut k, mut rt) = setup(kind);
        tree(&mut rt, &mut k, 0, 20_000, 48);
        rt.start_gc(&mut k, GcCause::Requested, GcType::Full);
        // The mutator keeps running (allocating) while the collection runs.
        let mut i = 0;
        while rt.gc_running() {
            let o = rt.alloc(&mut k, 32, 0).unwrap();
            rt.set_root(&mut k, 1 + i % 8, o);
            i += 1;
            rt.poll(&mut k);
        }
        let r = rt.records.last().unwrap();
        let names: Vec<_> = r.phases.iter().map(|p| (p.name, p.kind)).collect();
        if kind == CollectorKind::MarkSweepOtf {
            assert_eq!(
                names,
                vec![
                    ("ProcessCards", PhaseKind::Concurrent),
                    ("MarkRootsCheckpoint", PhaseKind::Checkpoint),
                    ("ConcurrentMark", PhaseKind::Concurrent),
                    ("Remark", PhaseKind::Pause),
                    ("Sweep", PhaseKind::Concurrent)
                ]
            );
            assert_eq!(r.pauses_ns.len(), 1, "only the remark stops the world");
            assert!(r.checkpoint_ns > 0 && r.mutator_gc_work_ns >= r.checkpoint_ns.min(1), "the mutator ran its checkpoint: {r:?}");
            let cp = r.phases.iter().find(|p| p.kind == PhaseKind::Checkpoint).unwrap();
            assert_eq!(cp.gc_cpu_ns, 0, "the GC thread only waited for the checkpoint");
        } else {
            assert_eq!(r.pauses_ns.len(), 2);
            assert_eq!(r.checkpoint_ns, 0);
        }
        pauses.push(r.pause_total_ns);
        // A blocking collection: the waiting mutator's checkpoint is run by the GC thread.
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        let r = rt.records.last().unwrap();
        assert_eq!(r.checkpoint_ns, 0);
        if kind == CollectorKind::MarkSweepOtf {
            let cp = r.phases.iter().find(|p| p.kind == PhaseKind::Checkpoint).unwrap();
            assert!(cp.gc_cpu_ns > 0);
        }
    }
    assert!(pauses[1] < pauses[0], "on-the-fly roots shorten the pauses: {pauses:?}");
}

#[test]
fn card_table_is_anonymous_memory_in_the_kernel_model() {
    for in_memory in [true, false] {
        let mut k = Kernel::new(KernelConfig::default()).unwrap();
        let mut c = RuntimeConfig::default();
        c.fg_collector = CollectorKind::MarkSweep;
        c.bg_collector = CollectorKind::MarkSweep;
        c.card_table_in_memory = in_memory;
        let mut rt = Runtime::new(&mut k, 7, "app", 0, c, 0).unwrap();
        tree(&mut rt, &mut k, 0, 50_000, 64);
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        match rt.heap.card_table_vma() {
            Some(v) => {
                assert!(in_memory);
                assert_eq!(k.vmas[v as usize].name, "dalvik-card table");
                // 64-byte objects, 3.2 MB of heap; the parents (the first half, 1.6 MB) were
                // written: the card-table pages (512 KiB of heap each) holding their cards are
                // resident; the others were only read (zero page).
                let rss = k.mappings[k.vmas[v as usize].mapping as usize].nr_present;
                assert!((3..=5).contains(&rss), "card table RSS {rss} pages");
            }
            None => assert!(!in_memory),
        }
    }
}
