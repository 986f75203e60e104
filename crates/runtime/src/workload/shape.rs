//! Measures of a heap's shape: the bytes within a depth of the roots, the objects reachable from
//! them.

use crate::object::{ObjId, NULL};
use crate::runtime::Runtime;

/// Depth of every object reachable from the roots (breadth-first over the heap's references) —
/// for measuring a heap's shape. Returns (bytes at depth ≤ `d`, all reachable bytes), immune
/// objects excluded.
pub fn near_root_bytes(rt: &Runtime, d: u16) -> (u64, u64) {
    let objs = &rt.heap.objs;
    let mut depth: std::collections::HashMap<ObjId, u16> = std::collections::HashMap::new();
    let mut q: std::collections::VecDeque<ObjId> = std::collections::VecDeque::new();
    for &r in &rt.heap.roots {
        if r != NULL && !depth.contains_key(&r) {
            depth.insert(r, 1);
            q.push_back(r);
        }
    }
    let (mut near, mut all) = (0u64, 0u64);
    while let Some(o) = q.pop_front() {
        if objs.space_of(o).immune() {
            continue;
        }
        let s = objs.size(o) as u64;
        let od = depth[&o];
        all += s;
        if od <= d {
            near += s;
        }
        objs.for_each_ref(o, |c| {
            if c != NULL && !depth.contains_key(&c) {
                depth.insert(c, od + 1);
                q.push_back(c);
            }
        });
    }
    (near, all)
}

/// Objects reachable from the roots (a plain marking over the heap's references).
pub fn reachable_set(rt: &Runtime) -> std::collections::HashSet<ObjId> {
    let objs = &rt.heap.objs;
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<ObjId> = rt.heap.roots.iter().copied().filter(|&r| r != NULL).collect();
    while let Some(o) = stack.pop() {
        if !seen.insert(o) {
            continue;
        }
        objs.for_each_ref(o, |c| {
            if c != NULL && !seen.contains(&c) {
                stack.push(c);
            }
        });
    }
    seen
}
