//! The policy hooks, each exercised by a small test policy: collector choice per state, tracing
//! scope (extra roots, references not followed, evacuation set), barriers, after-GC madvise,
//! heap sizing, and object-granularity swap with stubs.

#![allow(clippy::field_reassign_with_default, clippy::needless_range_loop, clippy::unnecessary_cast, clippy::while_let_loop)]

mod common;

use common::chain;
use mobmem_kernel::{Kernel, KernelConfig};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::gc::{GcRecord, GcType};
use mobmem_runtime::heap::Heap;
use mobmem_runtime::hooks::{AfterGcAction, AfterGcPolicy, BarrierHook, CollectorChoice, ObjectSwapPolicy, SurvivorInfo, TracingScope};
use mobmem_runtime::object::{AppState, ObjId, SpaceId};
use mobmem_runtime::sizing::{HeapSizingPolicy, SizingDecision, SizingInput};
use mobmem_runtime::{GcCause, HeapConfig, Runtime, RuntimeConfig, NULL};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

fn setup(kind: CollectorKind) -> (Kernel, Runtime) {
    let mut kc = KernelConfig::default();
    kc.set("swap", "zram").unwrap();
    kc.set("swap_mib", "512").unwrap();
    let mut k = Kernel::new(kc).unwrap();
    let mut c = RuntimeConfig::default();
    c.fg_collector = kind;
    c.bg_collector = kind;
    c.heap.growth_limit = 64 << 20;
    c.heap.capacity = 64 << 20;
    c.heap.start_size = 32 << 20;
    c.heap.boot_image_bytes = 64 << 10;
    c.heap.zygote_space_bytes = 16 << 10;
    let rt = Runtime::new(&mut k, 3, "app", 0, c, 0).unwrap();
    (k, rt)
}

struct FullInBackground;
impl CollectorChoice for FullInBackground {
    fn gc_type(&mut self, state: AppState, _cause: GcCause, proposed: GcType) -> GcType {
        if state == AppState::Background {
            GcType::Full
        } else {
            proposed
        }
    }
}

#[test]
fn collector_choice_per_state() {
    let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
    rt.hooks.collector_choice = Some(Box::new(FullInBackground));
    chain(&mut rt, &mut k, 0, 100, 64);
    rt.start_gc(&mut k, GcCause::Requested, GcType::Sticky);
    rt.wait_for_gc(&mut k);
    rt.set_state(AppState::Background);
    rt.start_gc(&mut k, GcCause::Requested, GcType::Sticky);
    rt.wait_for_gc(&mut k);
    let kinds: Vec<_> = rt.records.iter().map(|r| (r.state, r.gc_type)).collect();
    assert_eq!(kinds, vec![("fg", "sticky"), ("bg", "full")]);
}

/// Objects allocated in the foreground are not followed (treated live, untraced); extra roots
/// keep one otherwise unreachable background object alive.
struct BackgroundOnly {
    extra: ObjId,
}
impl TracingScope for BackgroundOnly {
    fn follow(&self, heap: &Heap, to: ObjId) -> bool {
        heap.objs.alloc_state(to) == AppState::Background as u8
    }
    fn extra_roots(&mut self, _heap: &Heap, _t: GcType, out: &mut Vec<ObjId>) {
        out.push(self.extra);
    }
    fn evacuate_region(&self, heap: &Heap, r: u32, proposed: bool) -> bool {
        // Only regions without foreground objects move (a region-level scope, as Fleet's BGC).
        proposed
            && heap
                .objs
                .live_ids()
                .all(|o| heap.objs.space(o) != 0 || (heap.objs.addr(o) / mobmem_runtime::space::REGION_SIZE) as u32 != r || heap.objs.alloc_state(o) == 1)
    }
}

#[test]
fn tracing_scope_limits_what_is_traced_and_adds_roots() {
    let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
    let fg = chain(&mut rt, &mut k, 0, 2000, 64);
    // Cut the foreground chain: its tail is garbage, but out of scope, so it must survive.
    rt.write_ref(&mut k, fg[999], 0, NULL);
    rt.set_state(AppState::Background);
    let bg = chain(&mut rt, &mut k, 1, 50, 64);
    let extra = rt.alloc(&mut k, 64, 0).unwrap(); // held by no root
    let dead_bg = rt.alloc(&mut k, 64, 0).unwrap();
    rt.hooks.scope = Some(Box::new(BackgroundOnly { extra }));
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    let r = rt.records.last().unwrap();
    assert!(fg.iter().all(|&o| rt.heap.objs.is_live(o)), "out-of-scope objects were freed");
    assert!(bg.iter().all(|&o| rt.heap.objs.is_live(o)) && rt.heap.objs.is_live(extra));
    assert!(!rt.heap.objs.is_live(dead_bg), "an unreachable in-scope object survived");
    // Only the background objects (+ root slot 0's first foreground object is not followed) were scanned.
    assert!(r.objects_scanned <= 60, "scanned {}", r.objects_scanned);
    mobmem_runtime::oracle::check_layout(&rt.heap).unwrap();
}

#[derive(Clone, Default)]
struct Counts(Arc<AtomicU64>, Arc<AtomicU64>);
struct CountingBarrier(Counts);
impl BarrierHook for CountingBarrier {
    fn on_read(&mut self, _h: &Heap, _o: ObjId, _now: u64) {
        self.0 .0.fetch_add(1, Ordering::Relaxed);
    }
    fn on_write(&mut self, _h: &Heap, _o: ObjId, _f: u32, _v: ObjId, _now: u64) {
        self.0 .1.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn barrier_hooks_see_mutator_reads_and_writes() {
    let (mut k, mut rt) = setup(CollectorKind::MarkSweep);
    let c = Counts::default();
    rt.hooks.barrier = Some(Box::new(CountingBarrier(c.clone())));
    let v = chain(&mut rt, &mut k, 0, 10, 64);
    for &o in &v {
        rt.read(&mut k, o);
    }
    assert_eq!(c.1.load(Ordering::Relaxed), 9);
    assert!(c.0.load(Ordering::Relaxed) >= 10);
}

/// After each GC: page out the regions tagged "cold", mark the "hot" ones with Fleet's hint.
struct PageOutCold;
impl AfterGcPolicy for PageOutCold {
    fn after_gc(&mut self, heap: &Heap, _r: &GcRecord, _s: AppState, out: &mut Vec<AfterGcAction>) {
        let cold = heap.regions.tag_names_registered().iter().position(|n| n == "cold");
        for r in 0..heap.regions.num_regions {
            if heap.regions.state[r as usize] != mobmem_runtime::space::RegionState::Free {
                let is_cold = cold.map(|c| heap.regions.has_tag(r, c as u32)).unwrap_or(false);
                let advice = if is_cold { "pageout" } else { "hot" };
                out.push(AfterGcAction::Madvise { space: SpaceId::Main, first_page: r * 64, count: 64, advice: advice.into() });
            }
        }
    }
}

#[test]
fn after_gc_actions_madvise_ranges() {
    let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
    // Survivors go to regions tagged "cold" through a placement class.
    struct AllCold(u8);
    impl mobmem_runtime::hooks::PlacementPolicy for AllCold {
        fn survivor_class(&mut self, _h: &Heap, _i: &mobmem_runtime::hooks::SurvivorInfo) -> u8 {
            self.0
        }
    }
    let cold = rt.heap.register_class("cold", &["cold"]);
    rt.hooks.placement = Some(Box::new(AllCold(cold)));
    rt.hooks.after_gc.push(Box::new(PageOutCold));
    chain(&mut rt, &mut k, 0, 20_000, 64);
    let pswpout0 = k.vmstat.pswpout;
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    let paged = k.vmstat.pswpout - pswpout0;
    assert!(paged >= 300, "cold regions were not paged out: {paged}");
    // The mutator now faults them back in.
    let m0 = rt.mutator.bd.major_faults_zram;
    let first = rt.heap.roots[0];
    rt.read(&mut k, first);
    assert!(rt.mutator.bd.major_faults_zram > m0);
}

struct Stingy;
impl HeapSizingPolicy for Stingy {
    fn after_gc(&mut self, _h: &HeapConfig, s: &SizingInput) -> SizingDecision {
        let t = s.bytes_allocated + (1 << 20);
        SizingDecision { target_footprint: t, concurrent_start_bytes: t - (256 << 10), next_gc_type: GcType::Full }
    }
}

#[test]
fn heap_sizing_policy_replaces_grow_for_utilization() {
    let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
    rt.hooks.sizing = Box::new(Stingy);
    chain(&mut rt, &mut k, 0, 1000, 200);
    rt.explicit_gc(&mut k);
    assert_eq!(rt.target_footprint, rt.heap.bytes_allocated + (1 << 20));
    assert_eq!(rt.next_gc_type, GcType::Full);
}

/// Give every object of at least 8 KiB a stub when a collection copies it; after each
/// collection write every object with a stub and release the pages of all of them (object swap
/// without Marvin's access bits or timing).
struct SwapBig;
impl ObjectSwapPolicy for SwapBig {
    fn stub_on_copy(&mut self, _heap: &Heap, info: &SurvivorInfo) -> bool {
        info.size >= 8192
    }
    fn after_gc(&mut self, heap: &Heap, _rec: &GcRecord, _state: AppState, write: &mut Vec<ObjId>, reclaim: &mut Vec<ObjId>) {
        let ids = heap.oswap.stub_ids();
        write.extend_from_slice(&ids);
        reclaim.extend(ids);
    }
}

#[test]
fn object_swap_with_stubs() {
    let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
    rt.hooks.object_swap = Some(Box::new(SwapBig));
    let big = chain(&mut rt, &mut k, 0, 64, 10_000); // region-space objects, 3 pages each
    let sizes: Vec<u32> = big.iter().map(|&o| rt.heap.objs.size(o)).collect();
    let rss_before = k.proc_rss_swap(rt.proc_idx).0;
    // A collection that moves everything gives each a stub, then writes and releases them.
    rt.start_gc(&mut k, GcCause::CollectorTransition, GcType::Full);
    rt.wait_for_gc(&mut k);
    assert_eq!(rt.heap.oswap.len(), 64);
    assert_eq!(rt.heap.oswap.stats.objects_reclaimed, 64);
    assert!(k.proc_rss_swap(rt.proc_idx).0 + 64 * 2 < rss_before, "the objects' pages were released");
    // A full GC traces through the stubs (the chain stays alive) without touching the objects.
    rt.explicit_gc(&mut k);
    let r = rt.records.last().unwrap();
    assert!(big.iter().all(|&o| rt.heap.objs.is_live(o)));
    assert_eq!(r.objects_scanned, 64);
    assert!(r.gc_pages_touched <= 4, "GC touched {} pages", r.gc_pages_touched);
    // A mutator access reads the object back from the swap file: the same object, whole.
    let t0 = rt.mutator.now;
    rt.read(&mut k, big[10]);
    assert_eq!(rt.heap.oswap.stats.objects_swapped_in, 1);
    assert!(rt.mutator.now - t0 >= k.cfg.costs.flash_read_ns);
    let rec = rt.heap.oswap.get(big[10]).unwrap();
    assert!(rec.resident);
    assert_eq!(rec.size, sizes[10]);
    assert_eq!(rt.heap.objs.get_ref(big[10], 0), big[11]);
    // Objects that die free their stubs, pages and swap-file extents.
    rt.set_root(&mut k, 0, NULL);
    rt.explicit_gc(&mut k);
    assert!(rt.heap.oswap.is_empty());
    assert_eq!(rt.heap.oswap.file.live, 0);
    assert_eq!(rt.heap.oswap.file.freed, rt.heap.oswap.file.written_new);
}

/// A policy's own card table over the regions tagged "cold" (a remembered set, as ART's
/// `RememberedSet`): cold objects are out of the tracing scope (kept, not traced), so the
/// references they hold must be roots; its barrier marks the cards of cold objects written, and
/// the objects on those cards give the extra roots.
struct ColdRemSet {
    cards: Arc<std::sync::Mutex<mobmem_runtime::card_table::CardTable>>,
    cold_tag: u32,
    mark: bool,
}
fn in_cold(heap: &Heap, tag: u32, o: ObjId) -> bool {
    heap.objs.space(o) == SpaceId::Main as u8 && heap.regions.has_tag(mobmem_runtime::space::RegionSpace::region_of(heap.objs.addr(o)), tag)
}
impl BarrierHook for ColdRemSet {
    fn on_write(&mut self, heap: &Heap, o: ObjId, _f: u32, v: ObjId, _now: u64) {
        if self.mark && v != NULL && in_cold(heap, self.cold_tag, o) {
            self.cards.lock().unwrap().mark_object(heap, o);
        }
    }
}
impl TracingScope for ColdRemSet {
    fn follow(&self, heap: &Heap, to: ObjId) -> bool {
        !in_cold(heap, self.cold_tag, to)
    }
    fn extra_roots(&mut self, heap: &Heap, _t: GcType, out: &mut Vec<ObjId>) {
        let mut on_cards = Vec::new();
        self.cards.lock().unwrap().objects_on_cards(heap, mobmem_runtime::card_table::CARD_DIRTY, &mut on_cards);
        for o in on_cards {
            heap.objs.for_each_ref(o, |r| {
                if r != NULL {
                    out.push(r)
                }
            });
        }
    }
    fn evacuate_region(&self, heap: &Heap, r: u32, proposed: bool) -> bool {
        proposed && !heap.regions.has_tag(r, self.cold_tag)
    }
}

#[test]
fn a_policy_owns_a_second_card_table_as_extra_roots() {
    for mark in [true, false] {
        let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
        let cold = rt.heap.register_class("cold", &["cold"]);
        let tag = rt.heap.regions.tag_names_registered().iter().position(|n| n == "cold").unwrap() as u32;
        let cards = Arc::new(std::sync::Mutex::new(mobmem_runtime::card_table::CardTable::for_heap(&rt.heap)));
        rt.hooks.barrier = Some(Box::new(ColdRemSet { cards: cards.clone(), cold_tag: tag, mark }));
        rt.hooks.scope = Some(Box::new(ColdRemSet { cards: cards.clone(), cold_tag: tag, mark }));
        // Cold objects, then a young object referenced only from one of them.
        rt.heap.mutator_class = cold;
        rt.heap.revoke_tlab();
        let c = chain(&mut rt, &mut k, 0, 100, 64);
        rt.heap.mutator_class = 0;
        rt.heap.revoke_tlab();
        assert!(c.iter().all(|&o| in_cold(&rt.heap, tag, o)));
        let y = rt.alloc(&mut k, 64, 0).unwrap();
        rt.write_ref(&mut k, c[50], 0, y);
        // (building the chain wrote every cold object too: 64-byte objects, two to a card)
        let dirty = cards.lock().unwrap().count_at_least(0, rt.heap.cards.len(), mobmem_runtime::card_table::CARD_DIRTY);
        assert_eq!(dirty, if mark { 50 } else { 0 });
        rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
        assert!(c.iter().all(|&o| rt.heap.objs.is_live(o)), "out-of-scope cold objects are kept");
        // (c[50] no longer references c[51]: the tail is unreachable but out of scope, so kept)
        assert_eq!(rt.heap.objs.is_live(y), mark, "the remembered reference kept y alive only with the card mark");
    }
}

#[test]
fn a_delegate_takes_over_collections_and_trims() {
    let (mut k, mut rt) = setup(CollectorKind::ConcurrentCopying);
    rt.delegate_triggers(true);
    assert!(rt.triggers_delegated());
    rt.set_target_footprint(u64::MAX);
    assert_eq!(rt.target_footprint, rt.limit(), "a delegate's target is capped at the heap limit");
    // Well past the concurrent start: the runtime starts nothing of its own.
    let start = rt.concurrent_start_bytes;
    chain(&mut rt, &mut k, 0, (start / 200) as usize + 1000, 200);
    assert!(rt.heap.bytes_allocated > start && rt.records.is_empty() && !rt.gc_running());
    rt.delegated_collection(&mut k, "Delegate");
    rt.wait_for_gc(&mut k);
    assert_eq!(rt.records.len(), 1);
    rt.mutator_idle_until(rt.mutator.now + 60_000_000_000);
    rt.poll(&mut k);
    assert_eq!(rt.stats.trims, 0, "no trim of its own after a collection");
    rt.delegated_compaction(&mut k, "DelegateCompact");
    assert_eq!(rt.running_gc_type(), Some(GcType::Full));
    rt.wait_for_gc(&mut k);
    rt.poll(&mut k);
    assert_eq!(rt.stats.trims, 1, "the compaction's trim runs when it has ended");
    // Without the delegate the runtime triggers again.
    rt.delegate_triggers(false);
    let n = (rt.limit() / 400) as usize;
    let before = rt.records.len();
    chain(&mut rt, &mut k, 1, n, 200);
    assert!(rt.gc_running() || rt.records.len() > before, "the runtime starts its own collection again");
}
