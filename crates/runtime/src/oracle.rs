//! An independent reachability oracle for tests: a test's mutator records every allocation,
//! reference store and root change here as well as in the runtime; the oracle keeps its own
//! adjacency lists and computes reachability itself (it never reads the heap's reference
//! arrays), so a collector that drops, corrupts or wrongly keeps objects is caught by
//! [`Oracle::check_after_gc`].

use crate::heap::Heap;
use crate::object::{flag, ObjId, SpaceId, NULL};
use crate::space::{RegionState, REGION_SIZE};
use std::collections::HashMap;

#[derive(Default, Clone)]
pub struct Oracle {
    /// id → (generation, reference fields).
    pub objects: HashMap<ObjId, (u32, Vec<ObjId>)>,
    pub roots: Vec<ObjId>,
}

impl Oracle {
    pub fn alloc(&mut self, heap: &Heap, o: ObjId, nrefs: u16) {
        debug_assert!(self.objects.get(&o).map(|(g, _)| *g != heap.objs.gen(o)).unwrap_or(true));
        self.objects.insert(o, (heap.objs.gen(o), vec![NULL; nrefs as usize]));
    }
    pub fn set_ref(&mut self, o: ObjId, f: u32, v: ObjId) {
        self.objects.get_mut(&o).expect("store into an unknown object").1[f as usize] = v;
    }
    pub fn set_root(&mut self, i: usize, v: ObjId) {
        if i >= self.roots.len() {
            self.roots.resize(i + 1, NULL);
        }
        self.roots[i] = v;
    }

    /// Objects reachable from `starts` (ids not in the oracle, e.g. immune objects, are leaves).
    pub fn reachable_from(&self, starts: impl IntoIterator<Item = ObjId>) -> std::collections::HashSet<ObjId> {
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<ObjId> = starts.into_iter().filter(|&o| o != NULL).collect();
        while let Some(o) = stack.pop() {
            if !seen.insert(o) {
                continue;
            }
            if let Some((_, refs)) = self.objects.get(&o) {
                stack.extend(refs.iter().copied().filter(|&c| c != NULL && !seen.contains(&c)));
            }
        }
        seen
    }

    pub fn reachable(&self) -> std::collections::HashSet<ObjId> {
        self.reachable_from(self.roots.clone())
    }

    /// Objects a collection starting now must free: for a full collection, every object not
    /// reachable from the roots; for a sticky one, every young object not reachable from the
    /// roots or from any old object.
    pub fn must_free(&self, heap: &Heap, sticky: bool) -> Vec<(ObjId, u32)> {
        let live = if sticky {
            let old: Vec<ObjId> = self.objects.keys().copied().filter(|&o| heap.objs.flags(o) & flag::YOUNG == 0).collect();
            self.reachable_from(self.roots.iter().copied().chain(old))
        } else {
            self.reachable()
        };
        let mut v: Vec<(ObjId, u32)> = self
            .objects
            .iter()
            .filter(|(o, _)| !live.contains(o) && (!sticky || heap.objs.flags(**o) & flag::YOUNG != 0))
            .map(|(&o, &(g, _))| (o, g))
            .collect();
        v.sort_unstable();
        v
    }

    /// After a collection: reachable objects are live, same identity, same references; the
    /// objects in `must_free` are gone; live objects do not overlap and lie in allocated space.
    /// Forgets freed objects. Returns the number of objects the collector freed.
    pub fn check_after_gc(&mut self, heap: &Heap, must_free: &[(ObjId, u32)]) -> Result<usize, String> {
        let reach = self.reachable();
        for &o in &reach {
            if !self.objects.contains_key(&o) && heap.objs.space_of(o).immune() {
                continue;
            }
            let (gen, refs) = self.objects.get(&o).ok_or_else(|| format!("oracle lost object {o}"))?;
            if !heap.objs.is_live(o) || heap.objs.gen(o) != *gen {
                return Err(format!("reachable object {o} was freed"));
            }
            let mut have = Vec::new();
            heap.objs.for_each_ref(o, |c| have.push(c));
            if have != *refs {
                return Err(format!("reachable object {o} has corrupted references: heap {have:?} oracle {refs:?}"));
            }
        }
        for &(o, gen) in must_free {
            if heap.objs.is_live(o) && heap.objs.gen(o) == gen {
                return Err(format!("unreachable object {o} survived the collection"));
            }
        }
        let before = self.objects.len();
        self.objects.retain(|&o, (gen, _)| heap.objs.is_live(o) && heap.objs.gen(o) == *gen);
        check_layout(heap)?;
        heap.check_accounting()?;
        Ok(before - self.objects.len())
    }
}

/// No two live objects of a space overlap; region-space objects lie inside allocated regions.
pub fn check_layout(heap: &Heap) -> Result<(), String> {
    let mut spans: Vec<(u8, u64, u64, ObjId)> = Vec::new();
    for o in heap.objs.live_ids() {
        if heap.objs.space_of(o).immune() {
            continue;
        }
        let a = heap.objs.addr(o);
        let s = heap.objs.size(o) as u64;
        if heap.objs.space(o) == SpaceId::Main as u8 && heap.collector.uses_regions() {
            let r = (a / REGION_SIZE) as usize;
            let st = heap.regions.state[r];
            if st == RegionState::Free || st == RegionState::LargeTail {
                return Err(format!("object {o} at {a:#x} lies in a {} region {r}", st.name()));
            }
            if st == RegionState::Allocated && (a % REGION_SIZE) + s > heap.regions.top[r] as u64 {
                return Err(format!("object {o} at {a:#x}+{s} beyond region {r} top {}", heap.regions.top[r]));
            }
        }
        spans.push((heap.objs.space(o), a, a + s, o));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[0].0 == w[1].0 && w[1].1 < w[0].2 {
            return Err(format!("objects {} and {} overlap in space {}", w[0].3, w[1].3, SpaceId::from_u8(w[0].0).name()));
        }
    }
    Ok(())
}
