//! Per-unit costs of runtime work, in nanoseconds of simulated CPU time on the reference (big)
//! core. Page faults, swap-ins and reclaim stalls are not here: they come from the kernel model,
//! charged to the thread that touched the page.
//!
//! Every value says where it comes from; "estimate" means an order-of-magnitude engineering
//! estimate (a few instructions and cache misses on a 2.5 GHz big core), to be calibrated. The
//! runtime settings table (`config::SETTINGS`, `cost.NAME`) lists each with its source, and the
//! calibration file `python/mobmem/data/runtime_costs.toml` overrides any of them.

use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct RuntimeCosts {
    /// Scanning one object (read header and class, find reference fields). estimate: ~20 ns.
    pub(crate) scan_object_ns: u64,
    /// Visiting one reference field (load, null/immune check, mark-bit test). estimate: 4 ns.
    pub(crate) visit_ref_ns: u64,
    /// Marking one object in place (mark bitmap set, mark-stack push). estimate: 8 ns.
    pub(crate) mark_object_ns: u64,
    /// Fixed cost of copying one object (to-space allocation, forwarding CAS). estimate: 25 ns.
    pub(crate) copy_object_ns: u64,
    /// Copying, per 1024 bytes (memcpy at ~4 GB/s on a phone big core). estimate: 250 ns/KiB.
    pub(crate) copy_per_kib_ns: u64,
    /// Processing one region at flip or reclaim (state, bitmap clearing). estimate: 300 ns.
    pub(crate) region_ns: u64,
    /// Processing one non-clean card (aging it, or finding the objects on it when scanning), and
    /// skipping 128 clean cards (word-at-a-time reads of the table). estimate: 15 ns.
    pub(crate) card_ns: u64,
    /// Freeing one dead object in a sweep (bitmap walk, free-list push). estimate: 10 ns.
    pub(crate) sweep_object_ns: u64,
    /// Computing a forwarding address in mark-compact (per live object). estimate: 10 ns.
    pub(crate) forward_object_ns: u64,
    /// Visiting one root (stack slot, static field, JNI global). estimate: 10 ns.
    pub(crate) root_ns: u64,
    /// Suspending and resuming all mutator threads for a pause (checkpoint + flip). estimate:
    /// 80 µs (ART CC flip pauses are typically 0.1–1 ms on phones; this is the fixed part).
    pub suspend_ns: u64,
    /// Running a checkpoint on one mutator thread (request, run at its next suspend check, pass
    /// the barrier), besides the checkpoint's own work. estimate: 5 µs (a fraction of a global
    /// suspend-all).
    pub(crate) checkpoint_ns: u64,
    /// Read barrier fast path, per reference load while a concurrent copy/compaction runs.
    /// estimate: 2 ns (Baker gray-bit test).
    pub(crate) read_barrier_ns: u64,
    /// Write barrier (card mark), per reference store, always. estimate: 1 ns.
    pub(crate) write_barrier_ns: u64,
    /// Bump allocation inside a TLAB, per object (plus zeroing, below). estimate: 5 ns.
    pub(crate) tlab_alloc_ns: u64,
    /// Getting a new TLAB from the region space. estimate: 150 ns.
    pub(crate) new_tlab_ns: u64,
    /// Getting a new region. estimate: 400 ns.
    pub(crate) new_region_ns: u64,
    /// Free-list (RosAlloc-like) allocation, per object. estimate: 40 ns.
    pub(crate) freelist_alloc_ns: u64,
    /// Large object allocation (page map / mmap), per object. estimate: 3 µs.
    pub(crate) los_alloc_ns: u64,
    /// Freeing a large object (besides the madvise, which the kernel model charges). estimate: 1 µs.
    pub(crate) los_free_ns: u64,
    /// Zeroing/initialising a new object, per 1024 bytes. estimate: 60 ns/KiB (~16 GB/s memset).
    pub(crate) init_per_kib_ns: u64,
    /// Copying one object's contents out to the per-app swap file / back (object swap), fixed
    /// part; the storage I/O is charged per page from the kernel model's flash costs. estimate: 2 µs.
    pub(crate) object_swap_ns: u64,
}

impl Default for RuntimeCosts {
    fn default() -> Self {
        Self {
            scan_object_ns: 20,
            visit_ref_ns: 4,
            mark_object_ns: 8,
            copy_object_ns: 25,
            copy_per_kib_ns: 250,
            region_ns: 300,
            card_ns: 15,
            sweep_object_ns: 10,
            forward_object_ns: 10,
            root_ns: 10,
            suspend_ns: 80_000,
            checkpoint_ns: 5_000,
            read_barrier_ns: 2,
            write_barrier_ns: 1,
            tlab_alloc_ns: 5,
            new_tlab_ns: 150,
            new_region_ns: 400,
            freelist_alloc_ns: 40,
            los_alloc_ns: 3_000,
            los_free_ns: 1_000,
            init_per_kib_ns: 60,
            object_swap_ns: 2_000,
        }
    }
}

impl RuntimeCosts {
    #[inline]
    pub fn copy_ns(&self, bytes: u32) -> u64 {
        self.copy_object_ns + bytes as u64 * self.copy_per_kib_ns / 1024
    }
    #[inline]
    pub fn init_ns(&self, bytes: u32) -> u64 {
        bytes as u64 * self.init_per_kib_ns / 1024
    }
}
