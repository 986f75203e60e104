//! Tracing primitives shared by the collectors: roots, the mark stack (depth-first, or
//! breadth-first as a queue), marking in place, copying (evacuation with placement hooks),
//! scanning, card processing and card scanning, reclaiming dead objects and regions.
//!
//! Marking: an object is marked in collection `e` when `mark[o] == e` (epochs avoid clearing a
//! bitmap). Sticky collections treat every object that is not young (not on the live stack: the
//! allocation stack taken at the collection's start) as marked and do not trace it; young
//! objects referenced from old ones are found by scanning the old objects on cards at least aged
//! (see [`crate::card_table`]: the card table is the remembered set). Objects allocated after a
//! collection's initial pause (or root checkpoint) are allocated black (marked).

use super::{Cx, GcType};
use crate::card_table::{CARDS_PER_PAGE, CARD_SIZE};
use crate::config::TraceOrder;
use crate::hooks::SurvivorInfo;
use crate::object::prefetch;
use crate::object::{flag, AppState, ObjId, SpaceId, NULL};
use crate::space::region::{LIVE_UNKNOWN, REGION_SIZE};
use crate::space::{RegionSpace, RegionState};
use mobmem_engine::Nanos;

/// Depth recorded for objects first reached by a mutator (not through tracing from the roots).
pub const DEPTH_UNKNOWN: u16 = u16::MAX;

/// Start of a collection at its first pause (or root checkpoint): swap the allocation stack into
/// the live stack (ART `Heap::SwapStacks`), revoke the TLAB.
pub fn take_snapshots(cx: &mut Cx) {
    let h = &mut *cx.heap;
    h.settle_fresh();
    // The old live stack's buffer becomes the new allocation stack (no allocation per GC).
    let mut old = std::mem::take(&mut cx.st.tr.young_snapshot);
    old.clear();
    cx.st.tr.young_snapshot = std::mem::replace(&mut h.young, old);
    h.revoke_tlab();
    h.retire_evac_regions();
}

/// Clean cards skipped per `card_ns` in a card pass (the table is read a word at a time, ≈ 8 GB/s
/// on a phone big core). estimate.
pub const CLEAN_CARDS_PER_CARD_NS: u64 = 128;

/// ART `Heap::ProcessCards` with `AgeCardVisitor`: over the used part of every collected space,
/// dirty cards become aged and aged cards clean. Costs: `card_ns` per non-clean card and per
/// [`CLEAN_CARDS_PER_CARD_NS`] cards, and the card-table pages read (written where a card changed).
pub fn process_cards(cx: &mut Cx) {
    let ranges = cx.heap.card_ranges();
    let (mut n, mut span) = (0u64, 0u64);
    for (lo, hi) in ranges {
        let mut p = lo;
        while p < hi {
            let e = ((p / CARDS_PER_PAGE + 1) * CARDS_PER_PAGE).min(hi);
            let m = cx.heap.cards.age_range(p, e);
            n += m;
            cx.heap.gc_touch_cards(cx.k, cx.t, p, e, m > 0);
            p = e;
        }
        span += (hi - lo) as u64;
    }
    cx.st.rec.cards_aged += n;
    cx.t.cpu((n + span.div_ceil(CLEAN_CARDS_PER_CARD_NS)) * cx.heap.costs.card_ns);
}

/// Which objects on a scanned card are scanned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CardScan {
    /// Old objects (sticky collections: the remembered set of old → young references).
    Old,
    /// Objects marked in this collection (remark of a full collection: incremental update).
    Marked,
    /// Both (remark of a sticky collection).
    OldOrMarked,
}

/// Scan the cards whose value is at least `min_age` over the used part of the collected spaces:
/// every object starting on such a card that `which` selects is scanned (its references marked),
/// in ascending address order as ART's bitmap walk visits them, then the mark stack is drained. Cards of regions being evacuated are skipped (their objects
/// are young or moving). Cards are left as they are (ART `CardTable::Scan<false>`). Resumable:
/// returns false when stopped by `until`.
pub fn scan_cards(cx: &mut Cx, min_age: u8, which: CardScan, until: Nanos) -> bool {
    if !cx.st.tr.cards_started {
        cx.st.tr.cards_started = true;
        cx.st.tr.card_ranges = cx.heap.card_ranges();
        cx.st.tr.card_range_idx = 0;
        cx.st.tr.card_cursor = cx.st.tr.card_ranges[0].0;
        let mut span = 0u64;
        for (lo, hi) in cx.st.tr.card_ranges {
            cx.heap.gc_touch_cards(cx.k, cx.t, lo, hi, false);
            span += (hi - lo) as u64;
        }
        cx.t.cpu(span.div_ceil(CLEAN_CARDS_PER_CARD_NS) * cx.heap.costs.card_ns);
    } else if !drain(cx, until) {
        return false;
    }
    let epoch = cx.heap.mark_epoch;
    let regions = cx.heap.collector.uses_regions();
    while cx.st.tr.card_range_idx < 3 {
        let hi = cx.st.tr.card_ranges[cx.st.tr.card_range_idx].1;
        while let Some(c) = cx.heap.cards.next_card(cx.st.tr.card_cursor, hi, min_age) {
            cx.st.tr.card_cursor = c + 1;
            if regions && cx.st.tr.card_range_idx == 0 {
                let r = (((c - cx.st.tr.card_ranges[0].0) as u64 * CARD_SIZE) / REGION_SIZE) as usize;
                if cx.heap.regions.in_from[r] {
                    continue;
                }
            }
            cx.st.rec.cards_scanned += 1;
            cx.t.cpu(cx.heap.costs.card_ns);
            let mut buf = std::mem::take(&mut cx.st.tr.card_buf);
            buf.clear();
            cx.heap.objects_on_card(c, &mut buf);
            buf.retain(|&o| {
                let w = cx.heap.objs.w(o);
                let old = w.flags & flag::YOUNG == 0;
                let marked = w.mark == epoch;
                match which {
                    CardScan::Old => old,
                    CardScan::Marked => marked,
                    CardScan::OldOrMarked => old || marked,
                }
            });
            for &o in &buf {
                scan_object(cx, o, DEPTH_UNKNOWN - 1);
            }
            cx.st.rec.card_objects_scanned += buf.len() as u64;
            cx.st.tr.card_buf = buf;
            if !drain(cx, until) {
                return false;
            }
        }
        cx.st.tr.card_range_idx += 1;
        if cx.st.tr.card_range_idx < 3 {
            cx.st.tr.card_cursor = cx.st.tr.card_ranges[cx.st.tr.card_range_idx].0;
        }
    }
    cx.st.tr.cards_started = false;
    true
}

/// Mark the roots (and the tracing-scope hook's extra roots).
pub fn mark_roots(cx: &mut Cx) {
    let n = mark_thread_roots(cx) + mark_extra_roots(cx);
    charge_roots(cx, n);
}

/// Mark the heap's roots (statics, thread stacks); returns how many (charge with `charge_roots`).
pub fn mark_thread_roots(cx: &mut Cx) -> u64 {
    let n = cx.heap.roots.len();
    for i in 0..n {
        let r = cx.heap.roots[i];
        mark_ref(cx, r, 1);
    }
    n as u64
}

/// Mark the tracing-scope hook's extra roots (e.g. a policy's card table); returns how many.
pub fn mark_extra_roots(cx: &mut Cx) -> u64 {
    let (mut extra, mut scan) = (Vec::new(), Vec::new());
    if let Some(s) = cx.hooks.scope.as_mut() {
        s.extra_roots(cx.heap, cx.st.gc_type, &mut extra);
        s.scan_roots(cx.heap, cx.st.gc_type, &mut scan);
    }
    for &r in &extra {
        mark_ref(cx, r, 1);
    }
    // Read like any scanned object (pages touched, scan cost), their targets marked.
    for &o in &scan {
        scan_object(cx, o, 0);
    }
    extra.len() as u64
}

/// Count `n` roots in the collection's record and charge their cost.
pub fn charge_roots(cx: &mut Cx, n: u64) {
    cx.st.rec.roots += n;
    cx.t.cpu(n * cx.heap.costs.root_ns);
}

/// Mark (copying it if it is in the from-space) an object reached at `depth`, and push it. The
/// common case (null or already marked) is inline; the rest is `mark_new`.
#[inline(always)]
pub fn mark_ref(cx: &mut Cx, o: ObjId, depth: u16) {
    if o == NULL || cx.heap.objs.mark(o) == cx.heap.mark_epoch {
        return;
    }
    mark_new(cx, o, depth);
}

#[inline(never)]
fn mark_new(cx: &mut Cx, o: ObjId, depth: u16) {
    let h = &mut *cx.heap;
    let w = h.objs.w(o);
    let sp = w.space;
    if sp >= SpaceId::Zygote as u8 {
        return;
    }
    if cx.st.sticky && w.flags & flag::YOUNG == 0 {
        return;
    }
    if cx.st.scope_hook {
        if let Some(s) = cx.hooks.scope.as_ref() {
            if !s.follow(h, o) {
                return;
            }
        }
    }
    h.objs.set_mark(o, h.mark_epoch);
    if cx.st.tr.record_depth {
        h.objs.set_depth(o, depth);
    }
    cx.st.rec.objects_marked += 1;
    let uses_regions = h.collector.uses_regions();
    if sp == SpaceId::Main as u8 && uses_regions {
        let r = RegionSpace::region_of(h.objs.addr(o)) as usize;
        if cx.st.evacuate && h.regions.in_from[r] {
            copy_object(cx, o, depth);
        } else {
            let size = h.objs.size(o);
            h.regions.add_live(r, size);
            cx.t.cpu(h.costs.mark_object_ns);
        }
    } else {
        cx.t.cpu(h.costs.mark_object_ns);
    }
    // Host performance only. Without the prefetch FIFO this object is probably the next one
    // scanned: start loading its edges, or its children's mark words and headers, one level
    // ahead of the scan. With the FIFO, the FIFO prefetches the header when it pops it.
    if !cx.st.tr.prefetch_fifo && !crate::cell::is_cell(o) {
        let objs = &cx.heap.objs;
        let h = &objs.hdr[o as usize];
        if h.uses_edges() {
            prefetch(&objs.refs[h.ref_start as usize]);
        } else {
            for &c in &h.inline[..h.nrefs as usize] {
                if c != NULL {
                    objs.prefetch(c);
                }
            }
        }
    }
    cx.st.tr.stack.push((o, depth));
}

/// Copy `o` into its placement class's evacuation region (touching source and destination pages).
/// An object-swap policy may give it a stub instead: then its contents go to the swapped-in
/// space and only the stub is copied.
pub fn copy_object(cx: &mut Cx, o: ObjId, depth: u16) {
    let mut size = cx.heap.objs.size(o);
    let by_mutator = !cx.gc_thread;
    let info = |h: &crate::heap::Heap| SurvivorInfo {
        obj: o,
        size,
        depth,
        alloc_ns: h.objs.alloc_ns(o),
        alloc_clock: h.objs.alloc_clock(o),
        alloc_state: if h.objs.alloc_state(o) == 0 { AppState::Foreground } else { AppState::Background },
        young: h.objs.flags(o) & flag::YOUNG != 0,
        by_mutator,
        gc_type: cx.st.gc_type,
        cause: cx.st.cause,
    };
    let class = match cx.hooks.placement.as_mut() {
        Some(p) => p.survivor_class(cx.heap, &info(cx.heap)),
        None => 0,
    };
    // Read the source.
    if cx.gc_thread {
        cx.heap.gc_touch_object(cx.k, cx.t, o, false);
    } else {
        cx.heap.touch_object(cx.k, cx.t, o, false);
    }
    if cx.gc_thread && cx.heap.objs.flags(o) & flag::STUB == 0 {
        if let Some(p) = cx.hooks.object_swap.as_mut() {
            if p.stub_on_copy(cx.heap, &info(cx.heap)) && cx.heap.make_stub(cx.k, cx.t, o) {
                size = cx.heap.objs.size(o);
            }
        }
    }
    let (space, addr) = cx.heap.alloc_evac(size, class, cx.t);
    let h = &mut *cx.heap;
    if space == SpaceId::NonMoving {
        // The evacuation fell back to the non-moving space: the object changes space.
        let r = RegionSpace::region_of(h.objs.addr(o)) as usize;
        h.regions.obj_bytes[r] = h.regions.obj_bytes[r].saturating_sub(size);
    }
    h.objs.set_addr(o, addr);
    h.objs.set_space(o, space);
    // On its new card's chain. (The from-space region's chains are dropped when it is freed.)
    h.link_card(o, space as usize, addr);
    h.objs.set_copied_by(o, cx.t.thread);
    cx.t.cpu(h.costs.copy_ns(size));
    cx.st.rec.objects_copied += 1;
    cx.st.rec.bytes_copied += size as u64;
    if by_mutator {
        cx.st.rec.copied_by_mutator += 1;
    }
    if cx.gc_thread {
        cx.heap.gc_touch_range(cx.k, cx.t, space as usize, addr, size, true);
    } else {
        cx.heap.touch_range(cx.k, cx.t, space, addr, size, true);
    }
}

/// Scan one gray object: read it, visit its reference fields.
#[inline]
pub fn scan_object(cx: &mut Cx, o: ObjId, depth: u16) {
    if cx.gc_thread {
        cx.heap.gc_touch_object(cx.k, cx.t, o, false);
    } else {
        cx.heap.touch_object(cx.k, cx.t, o, false);
    }
    let n = cx.heap.objs.nrefs(o) as usize;
    let c = &cx.heap.costs;
    cx.t.cpu(c.scan_object_ns + n as u64 * c.visit_ref_ns);
    cx.st.rec.objects_scanned += 1;
    cx.st.rec.refs_visited += n as u64;
    let d = depth.saturating_add(1).min(DEPTH_UNKNOWN - 1);
    if crate::cell::is_cell(o) {
        for f in 0..n as u32 {
            let child = cx.heap.objs.cells.get_ref(o, f);
            mark_ref(cx, child, d);
        }
        return;
    }
    let h = cx.heap.objs.hdr[o as usize];
    if !h.uses_edges() {
        for &child in &h.inline[..n] {
            if child != NULL {
                cx.heap.objs.prefetch(child);
            }
        }
        for &child in &h.inline[..n] {
            mark_ref(cx, child, d);
        }
        return;
    }
    let s = h.ref_start as usize;
    // Overlap the cache misses of the children's headers (host performance only).
    for f in 0..n {
        let child = cx.heap.objs.refs[s + f];
        if child != NULL {
            cx.heap.objs.prefetch(child);
        }
    }
    for f in 0..n {
        let child = cx.heap.objs.refs[s + f];
        mark_ref(cx, child, d);
    }
}

/// Objects ART's `MarkSweep::ProcessMarkStack` pops ahead of the one it scans (`kFifoSize`).
pub const MARK_STACK_PREFETCH: usize = 4;

/// Mark-stack entries below the top whose headers depth-first draining prefetches.
const PREFETCH_BELOW: usize = 2;

/// Process the mark stack until it is empty (true) or the thread's clock reaches `until`.
pub fn drain(cx: &mut Cx, until: Nanos) -> bool {
    let mut fifo = PrefetchFifo::default();
    loop {
        let next = match cx.st.tr.order {
            TraceOrder::DepthFirst if cx.st.tr.prefetch_fifo => fifo.pop(cx),
            TraceOrder::DepthFirst => {
                let e = cx.st.tr.stack.pop();
                // The entries below are scanned next when this object's subtree is small (leaves,
                // already-marked children): start loading their headers (host performance only;
                // the order is unchanged).
                let st = &cx.st.tr.stack;
                for j in 1..=PREFETCH_BELOW.min(st.len()) {
                    cx.heap.objs.prefetch(st[st.len() - j].0);
                }
                e
            }
            TraceOrder::BreadthFirst => {
                if cx.st.tr.head < cx.st.tr.stack.len() {
                    cx.st.tr.head += 1;
                    Some(cx.st.tr.stack[cx.st.tr.head - 1])
                } else {
                    cx.st.tr.stack.clear();
                    cx.st.tr.head = 0;
                    None
                }
            }
        };
        let Some((o, d)) = next else { return true };
        debug_assert!(cx.heap.objs.is_live(o), "a gray object died");
        scan_object(cx, o, d);
        cx.sync_kernel();
        if cx.t.now >= until {
            fifo.put_back(&mut cx.st.tr.stack);
            return cx.st.tr.stack.len() == cx.st.tr.head && {
                cx.st.tr.stack.clear();
                cx.st.tr.head = 0;
                true
            };
        }
    }
}

/// ART MarkSweep's prefetch FIFO in front of the depth-first mark stack: up to
/// [`MARK_STACK_PREFETCH`] objects are popped (and their headers prefetched) ahead of the one
/// scanned, which is the oldest of them. The scan order is ART's; the prefetch only overlaps host
/// cache misses. It lives for one `drain` call: when the call stops at `until`, the popped-ahead
/// objects go back on the stack so that the next call scans them in the same order.
#[derive(Default)]
struct PrefetchFifo {
    buf: [(ObjId, u16); MARK_STACK_PREFETCH],
    head: usize,
    len: usize,
}

impl PrefetchFifo {
    fn pop(&mut self, cx: &mut Cx) -> Option<(ObjId, u16)> {
        const N: usize = MARK_STACK_PREFETCH;
        while self.len < N {
            let Some(e) = cx.st.tr.stack.pop() else { break };
            cx.heap.objs.prefetch(e.0);
            self.buf[(self.head + self.len) % N] = e;
            self.len += 1;
        }
        if self.len == 0 {
            return None;
        }
        let e = self.buf[self.head];
        self.head = (self.head + 1) % N;
        self.len -= 1;
        Some(e)
    }

    fn put_back(&mut self, stack: &mut Vec<(ObjId, u16)>) {
        for j in (0..self.len).rev() {
            stack.push(self.buf[(self.head + j) % MARK_STACK_PREFETCH]);
        }
        self.len = 0;
    }
}

/// Free the unmarked objects in the collection's scope: the young snapshot for sticky
/// collections, every object for full ones. Survivors of the young snapshot become old.
///
/// Two passes, as ART frees its spaces. First, at once and without simulated cost of its own:
/// survivors are aged and every dead region-space object is dropped — its bytes leave its
/// region's count, and from-space regions are freed whole by [`reclaim_regions`] (ART's
/// `ClearFromSpace`); dead objects of the free-list spaces and of the large-object space, and
/// out-of-scope objects to rescue from the from-space, are set aside. Then, resumable (returns
/// false when stopped by `until`): the rescues, then the sweep of the set-aside objects in
/// ascending address order per space (ART walks the mark bitmaps), each with its cost. The
/// order of both is a property of the heap's layout, never of host-side object ids.
pub fn reclaim_objects(cx: &mut Cx, until: Nanos) -> bool {
    if !cx.st.tr.sweep_started {
        reclaim_at_once(cx);
        cx.st.tr.sweep_started = true;
        cx.st.tr.cursor = 0;
    }
    let nr = cx.st.tr.rescue.len();
    while cx.st.tr.cursor < nr + cx.st.tr.sweep.len() {
        let j = cx.st.tr.cursor;
        cx.st.tr.cursor += 1;
        if j < nr {
            let o = cx.st.tr.rescue[j];
            if cx.st.evacuate && in_from_space(cx, o) {
                copy_object(cx, o, DEPTH_UNKNOWN - 1);
            }
        } else {
            let i = j - nr;
            // The records of the objects swept a few steps ahead, then their unit headers (host
            // performance only: the sweep's order is by address, so their ids are scattered).
            let sw = &cx.st.tr.sweep;
            if let Some(&a) = sw.get(i + 16) {
                cx.heap.objs.prefetch(a);
            }
            if let Some(&a) = sw.get(i + 8) {
                cx.heap.objs.prefetch_unit(a);
            }
            free_dead(cx, sw[i]);
        }
        cx.sync_kernel();
        if cx.t.now >= until && cx.st.tr.cursor < nr + cx.st.tr.sweep.len() {
            return false;
        }
    }
    cx.st.tr.rescue.clear();
    cx.st.tr.sweep.clear();
    cx.st.tr.sweep_started = false;
    cx.st.tr.cursor = 0;
    true
}

/// The first pass of [`reclaim_objects`].
fn reclaim_at_once(cx: &mut Cx) {
    let epoch = cx.heap.mark_epoch;
    reclaim_dead_fresh(cx);
    let mut p = FirstPass { rescue: std::mem::take(&mut cx.st.tr.rescue), sweep: std::mem::take(&mut cx.st.tr.sweep), fast_objs: 0, fast_bytes: 0 };
    if cx.st.sticky {
        for j in 0..cx.st.tr.young_snapshot.len() {
            let o = cx.st.tr.young_snapshot[j];
            reclaim_one(cx, o, &mut p);
        }
    } else {
        // Survivors of a full collection need nothing here: skip them without a call.
        for o in 0..cx.heap.objs.len() as ObjId {
            let w = cx.heap.objs.word[o as usize];
            if w.flags & flag::LIVE != 0 && w.mark != epoch {
                reclaim_one(cx, o, &mut p);
            }
        }
        for u in 0..cx.heap.objs.cells.unit.len() {
            let h = cx.heap.objs.cells.unit[u];
            if h.live == 0 {
                continue;
            }
            for i in h.first..h.first + h.n as u32 {
                let c = &cx.heap.objs.cells.obj[i as usize];
                if c.flags & flag::LIVE != 0 && c.mark != epoch {
                    reclaim_one(cx, crate::cell::id(i), &mut p);
                }
            }
        }
        for j in 0..cx.st.tr.young_snapshot.len() {
            let o = cx.st.tr.young_snapshot[j];
            let f = cx.heap.objs.flags(o);
            if f & flag::LIVE != 0 && cx.heap.objs.mark(o) == epoch {
                cx.heap.objs.set_flags(o, f & !flag::YOUNG);
            }
        }
    }
    cx.st.rec.freed_objects += p.fast_objs;
    cx.st.rec.freed_bytes += p.fast_bytes;
    cx.heap.bytes_allocated -= p.fast_bytes;
    let mut buf = std::mem::take(&mut cx.st.tr.sort_buf);
    sort_by_address(&cx.heap.objs, &mut p.rescue, &mut buf);
    sort_by_address(&cx.heap.objs, &mut p.sweep, &mut buf);
    cx.st.tr.sort_buf = buf;
    cx.st.tr.rescue = p.rescue;
    cx.st.tr.sweep = p.sweep;
}

/// Sort `v` by (space, address), ascending. Each object's key is read once into `buf` and the
/// keys are sorted, rather than the records being read again at every comparison (host
/// performance: that was most of a mark-sweep collection's sweep). Two live objects never share
/// a space and an address, so the order is the same as any sort by that key.
fn sort_by_address(objs: &crate::object::Objects, v: &mut Vec<ObjId>, buf: &mut Vec<u64>) {
    // One word per object: space (3 bits) and address in 8-byte units (29 bits: 4 GiB) above
    // the id, so the sort compares plain integers. Addresses are 8-byte aligned.
    let mut fits = true;
    buf.clear();
    buf.extend(v.iter().map(|&o| {
        let (sp, a) = (objs.space(o) as u64, objs.addr(o));
        fits &= sp < 8 && a < 1 << 32 && a % 8 == 0;
        (sp << 61 | (a >> 3) << 32) | o as u64
    }));
    if fits {
        buf.sort_unstable();
        debug_assert!(buf.windows(2).all(|w| w[0] >> 32 != w[1] >> 32), "two objects at one address of one space");
        v.clear();
        v.extend(buf.iter().map(|&k| k as ObjId));
    } else {
        v.sort_unstable_by_key(|&o| (objs.space(o), objs.addr(o)));
    }
}

/// Free the dead fresh units' bytes (see `Heap::unit_dead`): every one died before this
/// collection began, so its objects are among this collection's garbage, all in region space —
/// those of from-space regions go with their region, the others leave their region's count.
fn reclaim_dead_fresh(cx: &mut Cx) {
    let h = &mut *cx.heap;
    for &r in &h.dead_regions {
        let i = r as usize;
        let (n, b) = (h.dead_objects[i], h.dead_bytes[i]);
        cx.st.rec.freed_objects += n as u64;
        cx.st.rec.freed_bytes += b as u64;
        h.bytes_allocated -= b as u64;
        if !h.regions.in_from[i] {
            h.regions.obj_bytes[i] = h.regions.obj_bytes[i].saturating_sub(b);
        }
        h.dead_objects[i] = 0;
        h.dead_bytes[i] = 0;
    }
    h.dead_regions.clear();
    h.dead_total = (0, 0);
}

/// What the first pass of reclaim sets aside and counts.
struct FirstPass {
    rescue: Vec<ObjId>,
    sweep: Vec<ObjId>,
    fast_objs: u64,
    fast_bytes: u64,
}

#[inline]
fn reclaim_one(cx: &mut Cx, o: ObjId, p: &mut FirstPass) {
    let w = cx.heap.objs.w(o);
    if w.flags & flag::LIVE == 0 || w.space >= SpaceId::Zygote as u8 {
        return;
    }
    if w.mark == cx.heap.mark_epoch {
        if cx.st.sticky {
            cx.heap.objs.set_flags(o, w.flags & !flag::YOUNG); // a survivor is old from now on
        }
        return;
    }
    if cx.st.scope_hook && !cx.hooks.scope.as_ref().map(|s| s.follow(cx.heap, o)).unwrap_or(true) {
        // Out of scope: kept (marked, old). If it sits in a region being evacuated, it is moved
        // out in the second pass; otherwise its bytes are live bytes of its region (a later
        // collection chooses what to evacuate by them).
        let h = &mut *cx.heap;
        h.objs.set_mark(o, h.mark_epoch);
        h.objs.set_flags(o, w.flags & !flag::YOUNG);
        if w.space == SpaceId::Main as u8 && h.collector.uses_regions() {
            let r = RegionSpace::region_of(h.objs.addr(o)) as usize;
            if !h.regions.in_from[r] {
                let size = h.objs.size(o);
                h.regions.add_live(r, size);
            }
        }
        p.rescue.push(o);
        return;
    }
    let h = &mut *cx.heap;
    if !(h.collector.uses_regions() && w.space == SpaceId::Main as u8) {
        p.sweep.push(o);
        return;
    }
    // A dead object in a region being evacuated costs nothing by itself (the region is freed
    // whole): only its id and the byte count are returned (and a stub's object freed).
    let (addr, size) = (h.objs.addr(o), h.objs.size(o));
    if h.regions.in_from[(addr / REGION_SIZE) as usize] {
        if w.flags & flag::STUB != 0 {
            h.free_stubbed(cx.k, cx.t, o);
        }
        p.fast_objs += 1;
        p.fast_bytes += size as u64;
        h.objs.free(o);
    } else {
        free_dead(cx, o);
    }
}

/// Free one dead object, with its sweep cost and freed-bytes accounting.
pub fn free_dead(cx: &mut Cx, o: ObjId) {
    let size = cx.heap.objs.size(o) as u64;
    let sp = cx.heap.objs.space_of(o);
    match sp {
        SpaceId::Los => {
            cx.st.rec.freed_los_objects += 1;
            cx.st.rec.freed_los_bytes += size;
        }
        _ => {
            cx.st.rec.freed_objects += 1;
            cx.st.rec.freed_bytes += size;
        }
    }
    // Region-space objects are reclaimed with their region; free-list spaces sweep per object.
    if !(sp == SpaceId::Main && cx.heap.collector.uses_regions()) {
        cx.t.cpu(cx.heap.costs.sweep_object_ns);
    }
    cx.heap.free_object(cx.k, cx.t, o);
}

/// After objects are reclaimed: free the from-space regions and regions left without objects;
/// record live bytes of the regions this collection filled or measured.
pub fn reclaim_regions(cx: &mut Cx) {
    let release = cx.cfg.release_regions_at_gc;
    let n = cx.heap.regions.num_regions;
    let tlab = cx.heap.tlab.region;
    for r in 0..n {
        let i = r as usize;
        let st = cx.heap.regions.state[i];
        if st == RegionState::Free || st == RegionState::LargeTail {
            continue;
        }
        let in_from = cx.heap.regions.in_from[i];
        let is_evac = cx.heap.evac_region.contains(&r);
        let empty = cx.heap.regions.obj_bytes[i] == 0 && r != tlab && !is_evac;
        if in_from || empty {
            if in_from {
                cx.st.rec.regions_evacuated += 1;
            }
            cx.st.rec.regions_freed += 1;
            cx.t.cpu(cx.heap.costs.region_ns);
            cx.heap.release_region(cx.k, cx.t, r, release);
        } else if !cx.heap.regions.newly[i] && cx.heap.regions.live[i] == LIVE_UNKNOWN {
            // A to-space region: its live bytes are what was copied into it.
            cx.heap.regions.live[i] = cx.heap.regions.obj_bytes[i];
        }
    }
    cx.heap.retire_evac_regions();
}

/// Choose the evacuation set at a flip. `all` = every allocated region (semi-space, transition).
/// Resets live bytes of regions that this collection will measure by marking in place.
pub fn choose_from_space(cx: &mut Cx, all: bool) {
    let sticky = cx.st.sticky;
    let thr = cx.cfg.evacuate_live_percent;
    let n = cx.heap.regions.num_regions;
    for r in 0..n {
        let i = r as usize;
        let st = cx.heap.regions.state[i];
        if st == RegionState::Free || st == RegionState::LargeTail {
            continue;
        }
        let proposed = match st {
            RegionState::Allocated => {
                if sticky {
                    cx.heap.regions.newly[i]
                } else if all {
                    true
                } else {
                    cx.heap.regions.should_evacuate_full(r, thr)
                }
            }
            _ => false,
        };
        let ev = match cx.hooks.scope.as_ref() {
            Some(s) => s.evacuate_region(cx.heap, r, proposed),
            None => proposed,
        } && st == RegionState::Allocated;
        let regs = &mut cx.heap.regions;
        regs.in_from[i] = ev;
        if !ev && (!sticky || regs.newly[i]) {
            regs.live[i] = 0;
        }
        regs.newly[i] = false;
        cx.t.cpu(cx.heap.costs.region_ns);
    }
}

/// Whether `o` is in a region of the current from-space.
#[inline]
pub fn in_from_space(cx: &Cx, o: ObjId) -> bool {
    cx.heap.objs.space(o) == SpaceId::Main as u8 && cx.heap.collector.uses_regions() && cx.heap.regions.in_from[(cx.heap.objs.addr(o) / REGION_SIZE) as usize]
}

/// The GC type as used for logs.
pub fn is_full(cx: &Cx) -> bool {
    cx.st.gc_type == GcType::Full
}
