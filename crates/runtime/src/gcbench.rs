//! A simulated GCBench (Boehm's binary-trees benchmark): `Node{left, right, i, j}` objects
//! (8-byte header + two 4-byte references + two ints = 24 bytes); a stretch tree
//! of depth 18 (dropped), a long-lived tree of depth 16 and a 500,000-double array kept alive;
//! then for depths 4..16 step 2, `2·TreeSize(18)/TreeSize(d)` trees built top-down (Populate)
//! and as many bottom-up (MakeTree), each dropped. TreeSize(d) = 2^(d+1) − 1.
//!
//! Recursion is explicit: the nodes on the current path are held in root slots (the thread's
//! stack), so every collection sees exactly what the real program's stack would hold. Mutator
//! compute per node (the constructor and loop) costs `node_ns` (estimate: 10 ns).

use crate::object::{ObjId, NULL};
use crate::runtime::Runtime;
use mobmem_kernel::Kernel;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct GcBenchParams {
    pub stretch_depth: u32,
    pub long_lived_depth: u32,
    pub array_doubles: u32,
    pub min_depth: u32,
    pub max_depth: u32,
    pub node_ns: u64,
}

impl Default for GcBenchParams {
    fn default() -> Self {
        Self { stretch_depth: 18, long_lived_depth: 16, array_doubles: 500_000, min_depth: 4, max_depth: 16, node_ns: 10 }
    }
}

impl GcBenchParams {
    /// A smaller instance with the same structure (for tests).
    pub fn scaled(stretch: u32) -> Self {
        Self { stretch_depth: stretch, long_lived_depth: stretch - 2, array_doubles: 50_000, min_depth: 4, max_depth: stretch - 2, node_ns: 10 }
    }
}

pub fn tree_size(d: u32) -> u64 {
    (1u64 << (d + 1)) - 1
}

const NODE_BYTES: u32 = 24;
/// Root slots: 0 = long-lived tree, 1 = array, 2 = temp tree, 3.. = the recursion stack.
const STACK_BASE: usize = 3;

#[derive(Clone, Debug, Default, Serialize)]
pub struct GcBenchResult {
    pub nodes_allocated: u64,
    pub(crate) trees_built: u64,
    pub oom: bool,
    pub(crate) sim_time_ns: u64,
}

struct Bench<'a> {
    rt: &'a mut Runtime,
    k: &'a mut Kernel,
    p: &'a GcBenchParams,
    nodes: u64,
}

impl Bench<'_> {
    fn node(&mut self) -> Option<ObjId> {
        self.rt.mutator.cpu(self.p.node_ns);
        self.nodes += 1;
        self.rt.alloc(self.k, NODE_BYTES, 2).ok()
    }

    /// Build a tree of depth `d` top-down under `root` (held in slot `slot`).
    fn populate(&mut self, d: u32, root: ObjId, slot: usize) -> Option<()> {
        if d == 0 {
            return Some(());
        }
        // Iterative: a stack of (node, depth, next child) in root slots.
        self.rt.set_root(self.k, slot, root);
        let mut stack: Vec<(ObjId, u32)> = vec![(root, d)];
        while let Some((n, depth)) = stack.pop() {
            let l = self.node()?;
            self.rt.write_ref(self.k, n, 0, l);
            let r = self.node()?;
            self.rt.write_ref(self.k, n, 1, r);
            if depth > 1 {
                stack.push((r, depth - 1));
                stack.push((l, depth - 1));
            }
        }
        Some(())
    }

    /// Build a tree of depth `d` bottom-up; the finished subtrees wait in stack slots.
    fn make_tree(&mut self, d: u32) -> Option<ObjId> {
        // Post-order: slot STACK_BASE + level holds the pending left subtree of that level.
        fn go(b: &mut Bench, d: u32, level: usize) -> Option<ObjId> {
            if d == 0 {
                return b.node();
            }
            let l = go(b, d - 1, level + 1)?;
            b.rt.set_root(b.k, STACK_BASE + level, l);
            let r = go(b, d - 1, level + 1)?;
            b.rt.set_root(b.k, STACK_BASE + level + 32, r);
            let n = b.node()?;
            let l = b.rt.heap.roots[STACK_BASE + level];
            let r = b.rt.heap.roots[STACK_BASE + level + 32];
            b.rt.write_ref(b.k, n, 0, l);
            b.rt.write_ref(b.k, n, 1, r);
            b.rt.set_root(b.k, STACK_BASE + level, NULL);
            b.rt.set_root(b.k, STACK_BASE + level + 32, NULL);
            Some(n)
        }
        go(self, d, 0)
    }

    fn poll(&mut self) {
        self.rt.poll(self.k);
        self.k.sync(&mut self.rt.mutator);
    }
}

/// Run GCBench on `rt`. The runtime's collector and heap size are the experiment's.
pub fn run(rt: &mut Runtime, k: &mut Kernel, p: &GcBenchParams) -> GcBenchResult {
    let t0 = rt.mutator.now;
    let mut b = Bench { rt, k, p, nodes: 0 };
    let mut res = GcBenchResult::default();
    let ok = (|| -> Option<()> {
        // Stretch the heap.
        let t = b.make_tree(p.stretch_depth)?;
        b.rt.set_root(b.k, 2, t);
        b.rt.set_root(b.k, 2, NULL);
        b.poll();
        // Long-lived tree and array.
        let ll = b.node()?;
        b.populate(p.long_lived_depth, ll, 0)?;
        let arr = b.rt.alloc(b.k, 16 + 8 * p.array_doubles, 0).ok()?;
        b.rt.set_root(b.k, 1, arr);
        b.poll();
        let mut d = p.min_depth;
        while d <= p.max_depth {
            let iters = 2 * tree_size(p.stretch_depth) / tree_size(d);
            for _ in 0..iters {
                let t = b.node()?;
                b.populate(d, t, 2)?;
                b.rt.set_root(b.k, 2, NULL);
                let t = b.make_tree(d)?;
                b.rt.set_root(b.k, 2, t);
                b.rt.set_root(b.k, 2, NULL);
                res.trees_built += 2;
                b.poll();
            }
            d += 2;
        }
        // Keep the long-lived data alive to the end.
        let ll = b.rt.heap.roots[0];
        b.rt.read(b.k, ll);
        Some(())
    })();
    res.oom = ok.is_none();
    res.nodes_allocated = b.nodes;
    b.rt.finish(b.k);
    res.sim_time_ns = b.rt.mutator.now - t0;
    res
}
