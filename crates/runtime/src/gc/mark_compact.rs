//! ConcurrentMarkCompact (ART's collector from Android 14): full collections only, sliding
//! compaction in place, no copy reserve (mutators may use every region).
//!
//! Plan (ART `MarkCompact::RunPhases`): `MarkingPhase` (concurrent; roots marked at a thread
//! checkpoint, not a global pause) → `Remark` (the marking pause: roots and objects written
//! during marking) → `ReclaimPhase+PrepareForCompaction` (concurrent: dead objects freed,
//! forwarding information computed — its cost is charged here) → `CompactionPause` (pause: roots
//! updated, the compaction set up; the new addresses slide live objects in address order towards
//! the start of the space) → `CompactionPhase` (the GC thread moves objects page by page in
//! address order; a mutator that touches an object whose destination page is not done yet
//! compacts that page itself, as ART's userfaultfd-based compaction does). Objects keep region boundaries (an object never
//! straddles two regions) so the region table stays exact; large regions stay in place.

use super::mark_sweep::{concurrent_mark, remark, start_marking};
use super::{trace, Collector, Cx, GcType, PhaseId};
use crate::object::{ObjId, SpaceId};
use crate::space::region::{REGION_PAGES, REGION_SIZE};
use crate::space::{RegionState, PAGE};
use mobmem_engine::Nanos;

/// The compaction in progress.
pub struct Compaction {
    /// (object, old address), ordered by new address.
    pub(crate) entries: Vec<(ObjId, u64)>,
    /// For each destination page, the index of the first entry starting at or after it.
    pub(crate) page_first: Vec<u32>,
    pub(crate) page_done: Vec<bool>,
    pub(crate) next_page: u32,
    /// End of the compacted area (bytes).
    pub(crate) dest_end: u64,
    /// Regions that became free and whose pages are released at the end.
    pub(crate) to_release: Vec<u32>,
}

/// The collector owns the state of a compaction in progress (between the flip and the end of
/// the compaction phase).
#[derive(Default)]
pub struct MarkCompact {
    compaction: Option<Compaction>,
    /// This collection's roots are marked (the concurrent marking phase runs in slices).
    roots_marked: bool,
}

fn compaction_flip(cx: &mut Cx) -> Compaction {
    cx.t.cpu(cx.heap.costs.suspend_ns);
    cx.heap.revoke_tlab();
    cx.heap.retire_evac_regions();
    let h = &mut *cx.heap;
    let mut live: Vec<(u64, ObjId)> = Vec::new();
    for o in h.objs.live_ids() {
        if h.objs.space(o) == SpaceId::Main as u8 {
            let a = h.objs.addr(o);
            if h.regions.state[(a / REGION_SIZE) as usize] == RegionState::Allocated {
                live.push((a, o));
            }
        }
    }
    // Live objects have distinct addresses: the order is the heap's, not the ids'.
    live.sort_unstable_by_key(|&(a, _)| a);
    let n = h.regions.num_regions as usize;
    let mut new_top = vec![0u32; n];
    let mut dest_r = 0usize;
    let skip = |h: &crate::heap::Heap, mut r: usize| {
        while r < n && matches!(h.regions.state[r], RegionState::Large | RegionState::LargeTail) {
            r += 1;
        }
        r
    };
    dest_r = skip(h, dest_r);
    let mut entries = Vec::with_capacity(live.len());
    for &(old, o) in &live {
        let size = h.objs.size(o);
        if new_top[dest_r] as u64 + size as u64 > REGION_SIZE {
            dest_r = skip(h, dest_r + 1);
        }
        let new = dest_r as u64 * REGION_SIZE + new_top[dest_r] as u64;
        debug_assert!(new <= old, "sliding compaction moves objects down");
        new_top[dest_r] += size;
        h.objs.set_addr(o, new);
        entries.push((o, old));
    }
    // (The forwarding computation itself was charged in PrepareForCompaction.)
    // Cards and card chains follow the objects: a moved object's card state goes to its new
    // card (an old object written since the last card processing stays remembered), and it
    // joins its new card's chain.
    let mut card_state: Vec<(usize, u8)> = Vec::new();
    for &(o, old) in &entries {
        let v = h.cards.get(h.cards.index(0, old));
        let new = h.objs.addr(o);
        if v != crate::card_table::CARD_CLEAN {
            card_state.push((h.cards.index(0, new), v));
        }
        if new != old {
            h.unlink_card(o, 0, old);
            h.link_card(o, 0, new);
        }
    }
    // Rebuild the region table.
    let mut to_release = Vec::new();
    let mut non_free = 0;
    #[allow(clippy::needless_range_loop)]
    for r in 0..n {
        match h.regions.state[r] {
            RegionState::Large | RegionState::LargeTail => {
                non_free += 1;
                continue;
            }
            _ => {}
        }
        let was = h.regions.state[r];
        let (lo, hi) = (h.cards.index(0, r as u64 * REGION_SIZE), h.cards.index(0, (r as u64 + 1) * REGION_SIZE));
        h.cards.clear_range(lo, hi);
        if new_top[r] > 0 {
            h.regions.state[r] = RegionState::Allocated;
            h.regions.top[r] = new_top[r];
            h.regions.obj_bytes[r] = new_top[r];
            h.regions.live[r] = new_top[r];
            h.regions.dirty[r] = true;
            non_free += 1;
        } else {
            if was != RegionState::Free {
                to_release.push(r as u32);
            }
            h.regions.state[r] = RegionState::Free;
            h.regions.top[r] = 0;
            h.regions.obj_bytes[r] = 0;
            h.regions.live[r] = crate::space::region::LIVE_UNKNOWN;
        }
        h.regions.newly[r] = false;
        h.regions.in_from[r] = false;
        h.regions.tags[r] = 0;
        h.regions.class[r] = 0;
        cx.t.cpu(h.costs.region_ns);
    }
    h.regions.num_non_free = non_free;
    for (c, v) in card_state {
        h.cards.set(c, h.cards.get(c).max(v));
    }
    let dest_end = entries.last().map(|&(o, _)| h.objs.addr(o) + h.objs.size(o) as u64).unwrap_or(0);
    let pages = dest_end.div_ceil(PAGE) as usize;
    let mut page_first = vec![0u32; pages + 1];
    let mut j = 0usize;
    for (p, pf) in page_first.iter_mut().enumerate() {
        while j < entries.len() && h.objs.addr(entries[j].0) < p as u64 * PAGE {
            j += 1;
        }
        *pf = j as u32;
    }
    cx.st.rec.roots += h.roots.len() as u64;
    cx.t.cpu(h.roots.len() as u64 * h.costs.root_ns);
    cx.st.barrier = true;
    Compaction { entries, page_first, page_done: vec![false; pages], next_page: 0, dest_end, to_release }
}

/// Move the objects whose new address starts in destination page `p`.
fn compact_page(cx: &mut Cx, c: &mut Compaction, p: u32) {
    if c.page_done[p as usize] {
        return;
    }
    c.page_done[p as usize] = true;
    let (a, b) = (c.page_first[p as usize] as usize, c.page_first[p as usize + 1] as usize);
    for j in a..b {
        let (o, old) = c.entries[j];
        let size = cx.heap.objs.size(o);
        let new = cx.heap.objs.addr(o);
        if cx.gc_thread {
            cx.heap.gc_touch_range(cx.k, cx.t, 0, old, size, false);
            cx.heap.gc_touch_range(cx.k, cx.t, 0, new, size, true);
        } else {
            cx.heap.touch_range(cx.k, cx.t, SpaceId::Main, old, size, false);
            cx.heap.touch_range(cx.k, cx.t, SpaceId::Main, new, size, true);
        }
        if new != old {
            cx.heap.objs.set_copied_by(o, cx.t.thread);
            cx.st.rec.objects_copied += 1;
            cx.st.rec.bytes_copied += size as u64;
            if !cx.gc_thread {
                cx.st.rec.copied_by_mutator += 1;
            }
        }
        cx.t.cpu(cx.heap.costs.copy_ns(size));
    }
}

fn finish_compaction(cx: &mut Cx, c: Compaction) {
    for &r in &c.to_release {
        // Only regions still free (a mutator may have taken one since the flip).
        if cx.heap.regions.state[r as usize] == RegionState::Free && cx.cfg.release_regions_at_gc {
            cx.heap.regions.dirty[r as usize] = false;
            cx.heap.drop_touch_caches();
            let _ = cx.k.madvise(cx.t, cx.heap.vma[0], r * REGION_PAGES, REGION_PAGES, mobmem_kernel::madvise::Advice::DontNeed);
            cx.heap.regions_released += 1;
            cx.st.rec.regions_freed += 1;
        }
    }
    cx.st.barrier = false;
    cx.heap.allocate_black = false;
}

impl Collector for MarkCompact {
    fn begin(&mut self, _: GcType) {
        self.roots_marked = false;
    }
    fn name(&self, _: GcType) -> &'static str {
        "concurrent mark compact"
    }
    fn supports_sticky(&self) -> bool {
        false
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        vec![PhaseId::MarkingPhase, PhaseId::Remark, PhaseId::PreCompactSweep, PhaseId::CompactFlip, PhaseId::ConcurrentCompact]
    }
    fn run_phase(&mut self, phase: PhaseId, cx: &mut Cx, until: Nanos) -> bool {
        match phase {
            PhaseId::MarkingPhase => {
                if !self.roots_marked {
                    cx.st.sticky = false;
                    self.roots_marked = true;
                    start_marking(cx);
                }
                concurrent_mark(cx, until)
            }
            PhaseId::Remark => {
                remark(cx);
                true
            }
            PhaseId::PreCompactSweep => {
                if !trace::reclaim_objects(cx, until) {
                    return false;
                }
                // PrepareForCompaction: forwarding information for every live moving object.
                let h = &*cx.heap;
                let live = h.objs.live_ids().filter(|&o| h.objs.space(o) == SpaceId::Main as u8).count() as u64;
                cx.t.cpu(live * h.costs.forward_object_ns);
                true
            }
            PhaseId::CompactFlip => {
                self.compaction = Some(compaction_flip(cx));
                true
            }
            PhaseId::ConcurrentCompact => {
                let c = self.compaction.as_mut().expect("compaction phase without a flip");
                while (c.next_page as usize) < c.page_done.len() {
                    let p = c.next_page;
                    c.next_page += 1;
                    compact_page(cx, c, p);
                    cx.sync_kernel();
                    if cx.t.now >= until && (c.next_page as usize) < c.page_done.len() {
                        return false;
                    }
                }
                finish_compaction(cx, self.compaction.take().unwrap());
                true
            }
            _ => unreachable!("phase {phase:?} is not part of mark-compact"),
        }
    }
    /// A mutator touching an object whose destination page is not compacted yet compacts it.
    fn mutator_access(&mut self, cx: &mut Cx, o: ObjId) {
        let Some(c) = self.compaction.as_mut() else { return };
        if cx.heap.objs.space(o) != SpaceId::Main as u8 {
            return;
        }
        let a = cx.heap.objs.addr(o);
        if a >= c.dest_end {
            return;
        }
        let p = (a / PAGE) as u32;
        if !c.page_done[p as usize] {
            compact_page(cx, c, p);
        }
    }
}
