//! One app's runtime: heap + collector + triggers + heap sizing, running on a mutator thread and a
//! GC thread (ART's HeapTaskDaemon) in the kernel model.
//!
//! Threads and time: the mutator and the GC thread each have a kernel [`Task`] with its own clock.
//! The driver (a workload, a test, the device layer) runs the mutator in slices and calls
//! [`Runtime::poll`] between them; `poll` runs timed runtime events (collector transition, heap
//! trim) and the GC thread up to the mutator's clock. A pause stops the mutator for the pause's
//! duration; a blocking collection (allocation failure, explicit GC) makes the mutator wait until
//! the collection ends. A checkpoint phase (on-the-fly root scanning) runs on the mutator at its
//! safepoint — its work charged to the mutator (`checkpoint_ns`, `mutator_gc_work_ns`), the GC
//! thread waiting for it — or on the GC thread when the mutator is idle or blocked. Everything is charged where it happens: GC work to the GC thread, read
//! barrier copies and compaction faults to the mutator that took them.
//!
//! Triggers (ART `Heap`): a concurrent collection starts when `bytes_allocated` reaches
//! `concurrent_start_bytes`; an allocation beyond the target footprint fails for non-concurrent
//! collectors, and any allocation beyond the growth limit or without room in its space fails;
//! a failed allocation waits for a running collection, then runs blocking collections of the next
//! kind and full (sticky → full escalation), then grows the target up to the limit, then throws
//! out-of-memory. Explicit GC; the collector transition a delay after going to background; heap
//! trim a delay after each collection.
//!
//! Where collections run (`gc_concurrency`): on the GC thread concurrently (`bg`, ART's way), in
//! the mutator that triggers them (`fg`: it waits for the whole collection, so nothing runs
//! concurrently; the work is still booked on the GC thread's task, one core at a time), or on the
//! GC thread pinned to the slowest core at a capped frequency (`pin`).

use crate::config::{CollectorKind, RuntimeConfig};
use crate::gc::{self, Collector, Cx, GcCause, GcRecord, GcState, GcType, PhaseKind, PhaseRecord};
use crate::heap::Heap;
use crate::hooks::{AfterGcAction, Hooks, PolicyAction};
use crate::object::{flag, object_size, AppState, ObjId, SpaceId, NULL};
use crate::sizing::{initial_concurrent_start, SizingInput};
use crate::space::PAGE;
use mobmem_engine::Nanos;
use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, Task};
use serde::Serialize;

/// The allocation failed: out of memory beyond the growth limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    pub(crate) requested: u32,
}

/// CPU time of a task so far: its clock minus time not on a core (major faults, reclaim stalls,
/// waiting for a core) minus time it was idle or blocked (tracked by the runtime).
#[inline]
pub fn busy_ns(t: &Task, idle: Nanos) -> Nanos {
    let b = &t.bd;
    t.now - b.major_fault_zram_ns - b.major_fault_flash_swap_ns - b.major_fault_file_ns - b.reclaim_stall_ns - b.cpu_wait_ns - b.object_swap_in_ns - idle
}

/// `t` touches the pages of the contents of an object with a stub (record `rec`) in the
/// swapped-in space's mapping `v`.
fn touch_contents(k: &mut Kernel, t: &mut Task, v: u32, rec: &crate::object_swap::StubRec, write: bool) {
    let (first, n) = rec.pages();
    for p in first..first + n {
        k.touch(t, v, p, write);
    }
}

/// A footprint sample.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FootprintSample {
    pub(crate) t_ns: Nanos,
    pub(crate) bytes_allocated: u64,
    pub(crate) footprint_bytes: u64,
    pub(crate) target_footprint: u64,
    pub(crate) rss_pages: u64,
    pub(crate) swap_pages: u64,
}

/// Run-level counters.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunStats {
    pub mutator_wait_ns: Nanos,
    pub(crate) mutator_gc_work_ns: Nanos,
    pub(crate) read_barriers: u64,
    pub(crate) write_barriers: u64,
    pub trims: u64,
    pub(crate) trimmed_pages: u64,
    pub transitions: u64,
    pub(crate) explicit_gcs: u64,
}

pub struct Runtime {
    pub cfg: RuntimeConfig,
    pub heap: Heap,
    pub hooks: Hooks,
    collector: Option<Box<dyn Collector>>,
    pub(crate) collector_kind: CollectorKind,
    gc: Option<Box<GcState>>,
    pub mutator: Task,
    pub gc_task: Task,
    pub mutator_idle_ns: Nanos,
    pub(crate) gc_idle_ns: Nanos,
    /// The mutator's last idle interval [from, to) (sleeping between units of work): a pause
    /// that starts while it is idle does not wait for it and only delays it if it outlasts it.
    idle_from: Nanos,
    idle_to: Nanos,
    pub proc_idx: u32,
    pub state: AppState,
    pub target_footprint: u64,
    pub concurrent_start_bytes: u64,
    pub next_gc_type: GcType,
    pub(crate) last_full_throughput: f64,
    pub records: Vec<GcRecord>,
    /// Intervals of the mutator's clock in which it did none of its own work because of the
    /// collector: stopped for a pause, waiting for a collection, or running a checkpoint (start,
    /// end, kind) — what minimum mutator utilisation is computed from.
    pub mutator_stops: Vec<MutatorStop>,
    pub log: Vec<String>,
    pub oom: bool,
    /// Allocation units are kept as unit cells (the unit grain; see [`crate::cell`]).
    pub(crate) cells: bool,
    pub(crate) pending_transition: Option<Nanos>,
    pub(crate) pending_trim: Option<Nanos>,
    pub(crate) footprint: Vec<FootprintSample>,
    pub sample_interval_ns: Nanos,
    next_sample: Nanos,
    pub stats: RunStats,
    gc_count: u32,
    next_ev: Nanos,
    /// Keep GC log lines (off for benchmarks).
    pub keep_log: bool,
    /// Measure the host's wall time per phase name (benchmarks only; never part of results).
    pub(crate) host_timing: bool,
    pub(crate) host_phase_ns: Vec<(&'static str, u128)>,
    /// A delegate (the device layer's GC service) decides when this app collects and trims
    /// (see [`crate::trigger`]): the runtime starts no concurrent collection and schedules no
    /// trim of its own; allocation failures still collect.
    pub(crate) external_triggers: bool,
}

impl Runtime {
    /// Create a process `pid` and its runtime.
    pub fn new(k: &mut Kernel, pid: u32, name: &str, adj: i32, cfg: RuntimeConfig, now: Nanos) -> Result<Self, String> {
        let proc_idx = k.create_process(pid, name, adj, now).map_err(|e| e.to_string())?;
        Self::attach(k, proc_idx, cfg, now)
    }

    /// Attach a runtime to an existing process.
    pub fn attach(k: &mut Kernel, proc_idx: u32, cfg: RuntimeConfig, now: Nanos) -> Result<Self, String> {
        let kind = cfg.fg_collector;
        let mut heap = Heap::new(k, proc_idx, &cfg, kind)?;
        if cfg.bg_collector.uses_regions() != kind.uses_regions() {
            return Err(format!("collectors {} (foreground) and {} (background) need different heap layouts", kind.short(), cfg.bg_collector.short()));
        }
        if !cfg.write_barrier {
            for c in [kind, cfg.bg_collector] {
                if gc::registry::create(c).reads_cards() {
                    let free: Vec<_> = CollectorKind::all().into_iter().filter(|&k| !gc::registry::create(k).reads_cards()).map(|k| k.short()).collect();
                    return Err(format!(
                        "write_barrier = false: collector {} reads the card table the barrier maintains (only {} run without it)",
                        c.short(),
                        free.join(", ")
                    ));
                }
            }
        }
        let mutator = Task::new(k.thread_of(proc_idx), proc_idx, now);
        let gc_task = Task::new(k.new_thread_in(proc_idx), proc_idx, now);
        k.cpus.set_class(gc_task.thread, mobmem_engine::cpufreq::Class::Gc);
        if cfg.gc_concurrency == crate::config::GcConcurrency::Pin {
            let last = k.cpus.cores() - 1;
            k.cpus.pin(gc_task.thread, last, (cfg.gc_pin_mhz > 0).then_some(cfg.gc_pin_mhz)).map_err(|e| format!("runtime.gc_pin_mhz: {e}"))?;
        }
        heap.objs.threads = (gc_task.thread, mutator.thread);
        let fixed = cfg.heap_sizing == crate::config::HeapSizing::Fixed;
        let target = if fixed { cfg.heap.limit() } else { cfg.heap.start_size.min(cfg.heap.limit()) };
        let concurrent_start =
            if kind.concurrent() && cfg.gc_concurrency != crate::config::GcConcurrency::Fg { initial_concurrent_start(target) } else { u64::MAX };
        let next_gc_type = if cfg.generational && gc::registry::create(kind).supports_sticky() { GcType::Sticky } else { GcType::Full };
        Ok(Self {
            collector: Some(gc::registry::create(kind)),
            collector_kind: kind,
            gc: None,
            mutator,
            gc_task,
            // Busy time is a thread's clock minus its waits and idle time; a process started at
            // `now` was not running before, so that time counts as idle.
            mutator_idle_ns: now,
            gc_idle_ns: now,
            idle_from: 0,
            idle_to: 0,
            proc_idx,
            state: AppState::Foreground,
            target_footprint: target,
            concurrent_start_bytes: concurrent_start,
            next_gc_type,
            last_full_throughput: 0.0,
            records: Vec::new(),
            mutator_stops: Vec::new(),
            log: Vec::new(),
            oom: false,
            pending_transition: None,
            pending_trim: None,
            external_triggers: false,
            footprint: Vec::new(),
            sample_interval_ns: 100_000_000,
            next_sample: now,
            stats: RunStats::default(),
            gc_count: 0,
            next_ev: 0,
            keep_log: true,
            host_timing: false,
            host_phase_ns: Vec::new(),
            cells: cfg.grain == crate::config::Grain::Unit && heap.cell_addressable(),
            heap,
            hooks: Hooks { sizing: if fixed { Box::new(crate::sizing::FixedHeap) } else { Box::new(crate::sizing::GrowForUtilization) }, ..Hooks::default() },
            cfg,
        })
    }

    /// Install a named policy from the registry.
    pub fn install_policy(&mut self, name: &str) -> Result<(), String> {
        crate::policies::install(name, &mut self.hooks, &mut self.heap, &self.cfg)?;
        self.refresh_mutator_class();
        Ok(())
    }

    fn refresh_mutator_class(&mut self) {
        if let Some(p) = self.hooks.placement.as_mut() {
            let c = p.mutator_class(&self.heap, self.state);
            if c != self.heap.mutator_class {
                self.heap.mutator_class = c;
                self.heap.revoke_tlab();
            }
        }
    }

    /// Whether collections start concurrently at `concurrent_start_bytes` (a concurrent collector
    /// on its daemon); with `gc_concurrency = fg` they run when an allocation would exceed the
    /// target footprint, as for a non-concurrent collector (ART's allocation-failure GC).
    fn triggers_concurrently(&self) -> bool {
        self.collector_kind.concurrent() && self.cfg.gc_concurrency != crate::config::GcConcurrency::Fg
    }

    pub fn gc_running(&self) -> bool {
        self.gc.is_some()
    }
    pub fn gc_thread(&self) -> u32 {
        self.gc_task.thread
    }
    pub fn mutator_cpu_ns(&self) -> Nanos {
        busy_ns(&self.mutator, self.mutator_idle_ns)
    }
    pub fn gc_cpu_ns(&self) -> Nanos {
        busy_ns(&self.gc_task, self.gc_idle_ns)
    }
    pub fn limit(&self) -> u64 {
        self.cfg.heap.limit()
    }

    /// Move the mutator's clock to `t` (idle: sleeping, waiting for input).
    pub fn mutator_idle_until(&mut self, t: Nanos) {
        if t > self.mutator.now {
            self.mutator_idle_ns += t - self.mutator.now;
            self.idle_from = self.mutator.now;
            self.idle_to = t;
            self.mutator.now = t;
        }
    }

    /// `ns` of CPU work on the mutator, in steps of at most a millisecond so that the kernel's
    /// events (kswapd, lmkd, other processes) and this runtime's collector run in between.
    pub fn compute(&mut self, k: &mut Kernel, ns: Nanos) {
        let mut left = ns;
        while left > 0 && !self.mutator.killed {
            let c = left.min(1_000_000);
            self.mutator.cpu(c);
            left -= c;
            k.book_cpu(&mut self.mutator);
            k.advance_to(self.mutator.now);
            self.poll(k);
        }
    }

    fn collector_for_state(&mut self) -> CollectorKind {
        let d = match self.state {
            AppState::Foreground => self.cfg.fg_collector,
            AppState::Background => self.cfg.bg_collector,
        };
        let c = match self.hooks.collector_choice.as_mut() {
            Some(h) => h.collector(self.state, d),
            None => d,
        };
        if c.uses_regions() == self.heap.collector.uses_regions() {
            c
        } else {
            self.collector_kind
        }
    }

    // ------------------------------------------------------------------ mutator operations

    /// Allocate an object of (at least) `size` bytes with `nrefs` reference fields.
    pub fn alloc(&mut self, k: &mut Kernel, size: u32, nrefs: u16) -> Result<ObjId, OutOfMemory> {
        self.alloc_in(k, size, nrefs, false, None)
    }

    /// Allocate a pinned object in the non-moving space.
    pub fn alloc_pinned(&mut self, k: &mut Kernel, size: u32, nrefs: u16) -> Result<ObjId, OutOfMemory> {
        self.alloc_in(k, size, nrefs, true, None)
    }

    /// Allocate an allocation unit of the mutator model (see [`crate::cell`]): `plan` gives each
    /// object's (size, reference fields), root first. The root is held in root slot `hold`, then
    /// each child is allocated, its field 0 set to the previous child (if it has fields) and the
    /// root's next field set to it — the same allocations, stores, barriers and page touches in
    /// both grains; the unit grain keeps the objects in one cell.
    pub fn alloc_unit(&mut self, k: &mut Kernel, hold: usize, plan: &[(u32, u16)]) -> Result<ObjId, OutOfMemory> {
        debug_assert!(!plan.is_empty() && plan.len() - 1 <= plan[0].1 as usize, "a unit's children are its root's fields");
        let unit = (self.cells && plan.len() <= crate::cell::MAX_OBJECTS).then(|| self.heap.objs.cells.new_unit(plan.len(), self.state as u8));
        if let Some(u) = unit {
            if self.may_be_fresh(plan) {
                let h = &mut self.heap.objs.cells.unit[u as usize];
                h.fresh = true;
                let gen = h.gen;
                self.heap.fresh.push((u, gen));
            }
        }
        let root = match self.alloc_in(k, plan[0].0, plan[0].1, false, unit) {
            Ok(o) => o,
            Err(e) => {
                if let Some(u) = unit {
                    self.heap.objs.cells.abandon(u);
                }
                return Err(e);
            }
        };
        self.set_root(k, hold, root);
        let mut prev = NULL;
        for (j, &(size, nr)) in plan[1..].iter().enumerate() {
            let c = self.alloc_in(k, size, nr, false, unit)?;
            if nr > 0 && prev != NULL {
                self.write_ref(k, c, 0, prev);
            }
            self.write_ref(k, root, j as u32, c);
            prev = c;
        }
        Ok(root)
    }

    /// Whether a unit allocated now may be fresh (see `Heap::settle_fresh`): no collection in
    /// progress, a region heap, all of its objects in region space, and no policy that follows
    /// individual young objects before a collection finds them (a tracing scope keeps dead
    /// out-of-scope objects; object swap selects objects).
    fn may_be_fresh(&self, plan: &[(u32, u16)]) -> bool {
        let h = &self.heap;
        self.gc.is_none()
            && h.collector.uses_regions()
            && self.hooks.scope.is_none()
            && self.hooks.object_swap.is_none()
            && plan.iter().all(|&(s, nr)| {
                let s = object_size(s, nr);
                s as u64 <= crate::space::REGION_SIZE && !(h.use_los && s >= h.los_threshold)
            })
    }

    /// The mutator let go of unit `root` (cleared the only reference to it): see
    /// [`Heap::unit_dead`].
    pub fn unit_dead(&mut self, root: ObjId) {
        self.heap.unit_dead(root);
    }

    fn alloc_in(&mut self, k: &mut Kernel, size: u32, nrefs: u16, pinned: bool, unit: Option<u32>) -> Result<ObjId, OutOfMemory> {
        if self.oom {
            return Err(OutOfMemory { requested: size });
        }
        let size = object_size(size, nrefs);
        if !self.over_limit(size, false) {
            if let Ok(o) = self.heap.alloc(k, &mut self.mutator, size, nrefs, self.state, pinned, unit) {
                self.after_alloc(k);
                return Ok(o);
            }
        }
        self.alloc_slow(k, size, nrefs, pinned, unit)
    }

    /// ART `IsOutOfMemoryOnAllocation`: beyond the target footprint a non-concurrent collector
    /// must collect first; beyond the growth limit every collector fails.
    fn over_limit(&self, size: u32, grow: bool) -> bool {
        let new = self.heap.bytes_allocated + size as u64;
        if new <= self.target_footprint {
            false
        } else if new > self.limit() {
            true
        } else {
            !(self.triggers_concurrently() || grow || !self.collector_kind.collects())
        }
    }

    #[inline]
    fn after_alloc(&mut self, k: &mut Kernel) {
        if self.gc.is_none() && self.triggers_concurrently() && !self.external_triggers && self.heap.bytes_allocated >= self.concurrent_start_bytes {
            let ty = self.next_gc_type;
            self.start_gc(k, GcCause::Background, ty);
        }
    }

    fn alloc_slow(&mut self, k: &mut Kernel, size: u32, nrefs: u16, pinned: bool, unit: Option<u32>) -> Result<ObjId, OutOfMemory> {
        let try_alloc = |rt: &mut Self, k: &mut Kernel, grow: bool| -> Option<ObjId> {
            if rt.over_limit(size, grow) {
                return None;
            }
            rt.heap.alloc(k, &mut rt.mutator, size, nrefs, rt.state, pinned, unit).ok()
        };
        if self.gc.is_some() {
            self.wait_for_gc(k);
            if let Some(o) = try_alloc(self, k, false) {
                return Ok(o);
            }
        }
        if self.collector_kind.collects() {
            let first = self.next_gc_type;
            let mut kinds = vec![first];
            if first != GcType::Full {
                kinds.push(GcType::Full);
            }
            for ty in kinds {
                self.collect_blocking(k, GcCause::Alloc, ty);
                if let Some(o) = try_alloc(self, k, false) {
                    return Ok(o);
                }
            }
            if let Some(o) = try_alloc(self, k, true) {
                let need = self.heap.bytes_allocated;
                self.target_footprint = self.target_footprint.max(need).min(self.limit());
                return Ok(o);
            }
        } else if let Some(o) = try_alloc(self, k, true) {
            return Ok(o);
        }
        self.oom = true;
        if self.keep_log {
            self.log.push(format!(
                "Throwing OutOfMemoryError \"Failed to allocate a {size} byte allocation with {} free bytes and {} until OOM, target footprint {}, growth limit {}\"",
                self.target_footprint.saturating_sub(self.heap.bytes_allocated),
                fmt_bytes(self.limit().saturating_sub(self.heap.bytes_allocated)),
                self.target_footprint,
                self.limit()
            ));
        }
        Err(OutOfMemory { requested: size })
    }

    /// Read an object (the mutator touches its pages; read-barrier slow path if needed).
    #[inline]
    pub fn read(&mut self, k: &mut Kernel, o: ObjId) {
        self.access(k, o);
        self.heap.touch_object(k, &mut self.mutator, o, false);
    }

    /// Load reference field `field` of `o` (read barrier on the loaded reference).
    #[inline]
    pub fn read_ref(&mut self, k: &mut Kernel, o: ObjId, field: u32) -> ObjId {
        self.read(k, o);
        let v = self.heap.objs.get_ref(o, field);
        if v != NULL {
            self.barrier(k, v);
        }
        v
    }

    /// Store `v` into reference field `field` of `o` (write barrier: the card of `o` is marked
    /// dirty and its card-table page touched, `write_barrier_ns`).
    #[inline]
    pub fn write_ref(&mut self, k: &mut Kernel, o: ObjId, field: u32, v: ObjId) {
        self.access_as(k, o, true);
        if v != NULL {
            self.barrier(k, v);
        }
        self.heap.touch_object(k, &mut self.mutator, o, true);
        if self.heap.write_barrier {
            self.mutator.cpu(self.heap.costs.write_barrier_ns);
            self.stats.write_barriers += 1;
        }
        if let Some(b) = self.hooks.barrier.as_mut() {
            b.on_write(&self.heap, o, field, v, self.mutator.now);
        }
        if let Some(c) = self.heap.store_ref(o, field, v) {
            self.heap.touch_card(k, &mut self.mutator, c);
        }
    }

    /// Set root slot `i` (a static field or stack slot), growing the root set as needed.
    pub fn set_root(&mut self, k: &mut Kernel, i: usize, v: ObjId) {
        if v != NULL {
            self.barrier(k, v);
        }
        if i >= self.heap.roots.len() {
            self.heap.roots.resize(i + 1, NULL);
        }
        self.heap.roots[i] = v;
    }

    /// Everything a mutator access to `o` needs before touching it: stub swap-in, barrier hook,
    /// read barrier / compaction fault.
    #[inline]
    fn access(&mut self, k: &mut Kernel, o: ObjId) {
        self.access_as(k, o, false);
    }

    #[inline]
    fn access_as(&mut self, k: &mut Kernel, o: ObjId, write: bool) {
        self.track_access(k, o, write);
        if let Some(b) = self.hooks.barrier.as_mut() {
            b.on_read(&self.heap, o, self.mutator.now);
        }
        self.barrier(k, o);
    }

    /// Object swap's part of an access: through the stub to the object, or the access bits of a
    /// tracked object.
    #[inline(always)]
    fn track_access(&mut self, k: &mut Kernel, o: ObjId, write: bool) {
        if self.heap.objs.flags(o) & flag::STUB != 0 {
            self.stub_access(k, o, write);
        } else if self.heap.oswap.track_bytes != 0 && self.heap.objs.size(o) >= self.heap.oswap.track_bytes {
            self.heap.oswap.note_access(o, write);
        }
    }

    #[inline(always)]
    fn barrier(&mut self, k: &mut Kernel, o: ObjId) {
        if let Some(st) = self.gc.as_ref() {
            if st.barrier {
                self.barrier_slow(k, o);
            }
        }
    }

    #[inline(never)]
    fn barrier_slow(&mut self, k: &mut Kernel, o: ObjId) {
        self.mutator.cpu(self.heap.costs.read_barrier_ns);
        self.stats.read_barriers += 1;
        if let (Some(st), Some(c)) = (self.gc.as_ref(), self.collector.as_ref()) {
            if !c.mutator_access_needed(&self.heap, st, o) {
                return;
            }
        }
        let mut st = self.gc.take().unwrap();
        let mut c = self.collector.take().unwrap();
        let before = busy_ns(&self.mutator, self.mutator_idle_ns);
        let next_ev = k.next_event_at();
        {
            let mut cx = Cx { heap: &mut self.heap, k, t: &mut self.mutator, hooks: &mut self.hooks, st: &mut st, cfg: &self.cfg, gc_thread: false, next_ev };
            c.mutator_access(&mut cx, o);
        }
        let spent = busy_ns(&self.mutator, self.mutator_idle_ns) - before;
        st.rec.mutator_gc_work_ns += spent;
        self.stats.mutator_gc_work_ns += spent;
        self.gc = Some(st);
        self.collector = Some(c);
    }

    // ------------------------------------------------------------------ object-granularity swap

    /// A mutator access to `o`, which has a stub: the access goes through the stub to the object
    /// (read back whole from the app's swap file first if its pages were released), whose pages
    /// it touches; recorded for the object's access bits.
    #[inline(never)]
    fn stub_access(&mut self, k: &mut Kernel, o: ObjId, write: bool) {
        self.heap.oswap.note_access(o, write);
        let Some(rec) = self.heap.oswap.get(o).copied() else { return };
        if !rec.resident {
            self.swap_in(k, o);
        }
        touch_contents(k, &mut self.mutator, self.heap.oswap.vma(), &rec, write);
        if write {
            if let Some(r) = self.heap.oswap.get_mut(o) {
                r.dirty = true;
            }
        }
    }

    /// Read object `o` (with a stub, not resident) back from the app's swap file into its pages:
    /// one synchronous read of its whole extent by the mutator (the device's flash latency, then
    /// its bandwidth), booked as an object swap-in in the thread's breakdown.
    pub fn swap_in(&mut self, k: &mut Kernel, o: ObjId) {
        let Some(rec) = self.heap.oswap.get(o).copied() else { return };
        if rec.resident {
            return;
        }
        let off = rec.file_off.expect("a non-resident object was written to the swap file");
        self.file_read(k, off, rec.size as u64, 1);
        self.read_back(k, o);
    }

    /// The mutator reads `bytes` at `off` of the app's swap file, for `objects` objects: the
    /// flash latency once, then the blocks at the device's read bandwidth.
    fn file_read(&mut self, k: &mut Kernel, off: u64, bytes: u64, objects: u64) {
        let blocks = (off + bytes).div_ceil(PAGE) - off / PAGE;
        let c = &k.cfg.costs;
        let io = c.flash_read_ns + (blocks - 1) * PAGE * 1_000_000_000 / c.flash_read_bw.max(1);
        self.mutator.now += io;
        self.mutator.bd.object_swap_ins += objects;
        self.mutator.bd.object_swap_in_ns += io;
    }

    /// `o`'s contents, just read, fill its pages: it is resident and clean again.
    fn read_back(&mut self, k: &mut Kernel, o: ObjId) {
        let rec = *self.heap.oswap.get(o).unwrap();
        self.mutator.cpu(self.heap.costs.object_swap_ns);
        touch_contents(k, &mut self.mutator, self.heap.oswap.vma(), &rec, true);
        let r = self.heap.oswap.get_mut(o).unwrap();
        r.resident = true;
        r.dirty = false;
        self.heap.oswap.space.as_mut().unwrap().restore(rec.addr, rec.size);
        let st = &mut self.heap.oswap.stats;
        st.objects_swapped_in += 1;
        st.bytes_swapped_in += rec.size as u64;
    }

    /// Write objects with stubs to the app's swap file (on the GC thread: it reads each object's
    /// pages and waits for the write at the device's write bandwidth), then release the pages of
    /// those in `reclaim` that are clean. The file is compacted when a quarter of it is holes.
    fn object_swap_io(&mut self, k: &mut Kernel, write: &[ObjId], reclaim: &[ObjId]) {
        let v = self.heap.oswap.vma();
        let bw = k.cfg.costs.flash_write_bw.max(1);
        let mut io_bytes = 0u64;
        for &o in write {
            let Some(rec) = self.heap.oswap.get(o).copied() else { continue };
            if !rec.resident || !rec.dirty {
                continue;
            }
            touch_contents(k, &mut self.gc_task, v, &rec, false);
            self.gc_task.cpu(self.heap.costs.object_swap_ns);
            if let Some(b) = self.heap.oswap.write(o) {
                io_bytes += b;
            }
        }
        let rewritten = self.heap.oswap.compact_if_due();
        // A compaction reads and writes the live extents again.
        io_bytes += rewritten;
        let io = io_bytes * 1_000_000_000 / bw + rewritten * 1_000_000_000 / k.cfg.costs.flash_read_bw.max(1);
        self.gc_task.now += io;
        self.gc_idle_ns += io;
        let mut pages = std::mem::take(&mut self.heap.oswap.scratch);
        for &o in reclaim {
            let Some(rec) = self.heap.oswap.get(o).copied() else { continue };
            if !rec.resident || rec.dirty || rec.file_off.is_none() {
                continue;
            }
            let sp = self.heap.oswap.space.as_mut().unwrap();
            let before = pages.len();
            sp.release(rec.addr, rec.size, &mut pages);
            self.heap.oswap.get_mut(o).unwrap().resident = false;
            let st = &mut self.heap.oswap.stats;
            st.objects_reclaimed += 1;
            st.bytes_reclaimed += rec.size as u64;
            st.pages_reclaimed += (pages.len() - before) as u64;
        }
        self.heap.oswap.scratch = pages;
        self.heap.release_swapped_pages(k, &mut self.gc_task);
    }

    /// The app is back in the foreground and about to run: if its object-swap policy asks for
    /// it, every object whose pages were released is read back now, on the main thread, before
    /// the app continues (Marvin's swap-in pause). The reads go in file order, and objects that
    /// lie next to each other in the file are read in one sequential read.
    pub fn resume_foreground(&mut self, k: &mut Kernel) {
        let Some(p) = self.hooks.object_swap.as_ref() else { return };
        if !p.swap_in_on_foreground() {
            return;
        }
        let mut out: Vec<(u64, u32, ObjId)> = self.heap.oswap.stubs().filter(|r| !r.resident).map(|r| (r.file_off.unwrap(), r.size, r.obj)).collect();
        if out.is_empty() {
            return;
        }
        out.sort_unstable();
        self.heap.oswap.stats.pauses += 1;
        let mut i = 0;
        while i < out.len() {
            let (start, mut end) = (out[i].0, out[i].0 + out[i].1 as u64);
            let mut j = i + 1;
            while j < out.len() && out[j].0 == end {
                end += out[j].1 as u64;
                j += 1;
            }
            self.file_read(k, start, end - start, (j - i) as u64);
            for &(_, _, o) in &out[i..j] {
                self.read_back(k, o);
                self.heap.oswap.stats.pause_swap_ins += 1;
            }
            if self.mutator.killed {
                return;
            }
            i = j;
        }
    }

    /// A write of `o`'s data fields just after reading it (no reference store: no barrier; an
    /// object with a stub is written through it and becomes dirty).
    pub fn write_data(&mut self, k: &mut Kernel, o: ObjId) {
        self.track_access(k, o, true);
        self.heap.touch_object(k, &mut self.mutator, o, true);
    }

    // ------------------------------------------------------------------ app state

    /// The app goes to the foreground or background.
    pub fn set_state(&mut self, state: AppState) {
        if state == self.state {
            return;
        }
        self.state = state;
        match state {
            AppState::Background => {
                let replaced = self.hooks.state.iter().any(|h| h.replaces_transition());
                if self.cfg.transition_gc && self.collector_kind.collects() && !replaced {
                    self.pending_transition = Some(self.mutator.now + self.cfg.transition_delay_ns);
                }
            }
            AppState::Foreground => {
                self.pending_transition = None;
                let c = self.collector_for_state();
                self.switch_collector(c);
            }
        }
        let now = self.mutator.now;
        for h in self.hooks.state.iter_mut() {
            h.on_state(&self.heap, state, now);
        }
        self.refresh_mutator_class();
    }

    fn switch_collector(&mut self, c: CollectorKind) {
        if c != self.collector_kind && self.gc.is_none() {
            self.collector = Some(gc::registry::create(c));
            self.collector_kind = c;
            if !gc::registry::create(c).supports_sticky() {
                self.next_gc_type = GcType::Full;
            }
            if !self.triggers_concurrently() {
                self.concurrent_start_bytes = u64::MAX;
            } else if self.concurrent_start_bytes == u64::MAX {
                self.concurrent_start_bytes = initial_concurrent_start(self.target_footprint);
            }
        }
    }

    // ------------------------------------------------------------------ the GC thread

    /// Run timed events due by the mutator's clock and the GC thread up to it. Call between
    /// mutator slices.
    pub fn poll(&mut self, k: &mut Kernel) {
        let now = self.mutator.now;
        if let Some(t) = self.pending_transition {
            if now >= t && self.gc.is_none() {
                self.pending_transition = None;
                let c = self.collector_for_state();
                self.switch_collector(c);
                self.stats.transitions += 1;
                self.start_gc_at(k, GcCause::CollectorTransition, GcType::Full, t);
            }
        }
        if let Some(t) = self.pending_trim {
            if now >= t && self.gc.is_none() {
                self.pending_trim = None;
                self.trim_at(k, t);
            }
        }
        if !self.hooks.state.is_empty() && self.gc.is_none() {
            self.run_state_hooks(k, now);
        }
        if self.gc.is_some() && self.gc_task.now < now {
            self.gc_step(k, now, false);
        }
        if now >= self.next_sample && self.sample_interval_ns > 0 {
            self.sample(k);
            self.next_sample = now - now % self.sample_interval_ns + self.sample_interval_ns;
        }
    }

    /// Run the state hooks' timed work due by `now`, each at the time it was due (on the GC
    /// thread), in order of due time.
    fn run_state_hooks(&mut self, k: &mut Kernel, now: Nanos) {
        let mut actions = Vec::new();
        loop {
            let due = self.hooks.state.iter().enumerate().filter_map(|(i, h)| h.next_at().map(|t| (t, i))).min();
            let Some((t, i)) = due else { return };
            if t > now || self.gc.is_some() {
                return;
            }
            actions.clear();
            self.hooks.state[i].due(&self.heap, t, &mut actions);
            debug_assert!(self.hooks.state[i].next_at().is_none_or(|n| n > t), "a state hook must advance its next_at");
            for a in actions.drain(..) {
                match a {
                    PolicyAction::Collect { cause, gc_type, order, evacuate_all } => self.start_gc_with(k, cause, gc_type, t, order, evacuate_all),
                    PolicyAction::Heap(a) => {
                        self.wake_gc_thread(t);
                        k.advance_to(self.gc_task.now);
                        self.apply_heap_action(k, a);
                        k.book_cpu(&mut self.gc_task);
                    }
                }
            }
            // The policy's mode may have changed where new objects go.
            self.refresh_mutator_class();
        }
    }

    /// A madvise or trim asked by a policy, on the GC thread.
    fn apply_heap_action(&mut self, k: &mut Kernel, a: AfterGcAction) {
        match a {
            AfterGcAction::Madvise { space, first_page, count, advice } => {
                self.heap.drop_touch_caches();
                let v = self.heap.vma[space as usize];
                let _ = match Advice::parse(&advice) {
                    Some(adv) => k.madvise(&mut self.gc_task, v, first_page, count, adv),
                    None => k.madvise_custom(&mut self.gc_task, v, first_page, count, &advice),
                };
            }
            AfterGcAction::Trim => {
                let pages = self.heap.trim(k, &mut self.gc_task);
                self.stats.trims += 1;
                self.stats.trimmed_pages += pages;
            }
        }
    }

    /// Record a footprint sample now.
    pub fn sample(&mut self, k: &Kernel) {
        let (rss, swap) = k.proc_rss_swap(self.proc_idx);
        self.footprint.push(FootprintSample {
            t_ns: self.mutator.now,
            bytes_allocated: self.heap.bytes_allocated,
            footprint_bytes: self.heap.footprint_bytes(),
            target_footprint: self.target_footprint,
            rss_pages: rss,
            swap_pages: swap,
        });
    }

    fn trim_at(&mut self, k: &mut Kernel, t: Nanos) {
        self.wake_gc_thread(t);
        k.advance_to(self.gc_task.now);
        let pages = self.heap.trim(k, &mut self.gc_task);
        k.book_cpu(&mut self.gc_task);
        self.stats.trims += 1;
        self.stats.trimmed_pages += pages;
    }

    /// Trim the heap now (on the GC thread).
    pub fn trim(&mut self, k: &mut Kernel) {
        let t = self.mutator.now;
        self.trim_at(k, t);
    }

    fn wake_gc_thread(&mut self, t: Nanos) {
        if self.gc_task.now < t {
            self.gc_idle_ns += t - self.gc_task.now;
            self.gc_task.now = t;
        }
    }

    /// Start a collection now (no-op if one is running or the collector never collects).
    pub fn start_gc(&mut self, k: &mut Kernel, cause: GcCause, ty: GcType) {
        let t = self.mutator.now;
        self.start_gc_at(k, cause, ty, t);
    }

    fn start_gc_at(&mut self, k: &mut Kernel, cause: GcCause, ty: GcType, t: Nanos) {
        let evacuate_all = cause == GcCause::CollectorTransition;
        self.start_gc_with(k, cause, ty, t, self.cfg.trace_order, evacuate_all);
    }

    /// Start a collection at `t` in trace order `order`; `evacuate_all`: a copying collector
    /// evacuates every region (as the collector transition does).
    fn start_gc_with(&mut self, k: &mut Kernel, cause: GcCause, ty: GcType, t: Nanos, order: crate::config::TraceOrder, evacuate_all: bool) {
        if self.gc.is_some() || !self.collector_kind.collects() {
            return;
        }
        let c = self.collector.as_ref().unwrap();
        let mut ty = if !self.cfg.generational || !c.supports_sticky() { GcType::Full } else { ty };
        if let Some(h) = self.hooks.collector_choice.as_mut() {
            ty = h.gc_type(self.state, cause, ty);
            if !c.supports_sticky() {
                ty = GcType::Full;
            }
        }
        self.wake_gc_thread(t);
        self.gc_count += 1;
        self.heap.next_epoch();
        self.heap.gc_pages_touched = 0;
        let c = self.collector.as_mut().unwrap();
        c.begin(ty);
        let mut st = Box::new(GcState::new(ty, cause, c.plan(ty), order));
        st.scope_hook = self.hooks.scope.is_some();
        st.tr.prefetch_fifo = c.mark_stack_prefetch() && st.tr.order == crate::config::TraceOrder::DepthFirst;
        st.tr.record_depth |= self.hooks.placement.is_some() || self.hooks.record_depth;
        st.force_evacuate_all = evacuate_all;
        st.rec.id = self.gc_count;
        st.rec.collector = self.collector_kind.short();
        st.rec.name = c.name(ty);
        st.rec.gc_type = ty.name();
        st.rec.cause = cause.name();
        st.rec.state = self.state.name();
        st.rec.start_ns = self.gc_task.now;
        st.rec.bytes_allocated_before = self.heap.bytes_allocated;
        st.bd_start = self.gc_task.bd;
        st.pswpin_start = k.vmstat.pswpin;
        st.majflt_start = k.vmstat.pgmajfault;
        st.cpu_start = busy_ns(&self.gc_task, self.gc_idle_ns);
        self.gc = Some(st);
        if self.cfg.gc_concurrency == crate::config::GcConcurrency::Fg {
            // The mutator that triggered it does the whole collection before it continues.
            self.wait_for_gc(k);
        }
    }

    /// Run the GC thread (only) until its clock reaches `until` or the collection ends.
    pub fn run_gc_until(&mut self, k: &mut Kernel, until: Nanos) {
        if self.gc.is_some() {
            self.gc_step(k, until, false);
        }
    }

    /// The running collection's kind, if any.
    pub fn running_gc_type(&self) -> Option<GcType> {
        self.gc.as_ref().map(|s| s.gc_type)
    }

    /// Run the current collection to its end while the mutator waits.
    pub fn wait_for_gc(&mut self, k: &mut Kernel) {
        if self.gc.is_none() {
            return;
        }
        if let Some(st) = self.gc.as_mut() {
            st.blocking = true;
        }
        let id = self.gc_count;
        self.gc_step(k, Nanos::MAX, true);
        let end = self.gc_task.now;
        if end > self.mutator.now {
            let w = end - self.mutator.now;
            self.mutator_stops.push(MutatorStop { start_ns: self.mutator.now, end_ns: end, kind: StopKind::Wait });
            self.mutator_idle_ns += w;
            self.mutator.now = end;
            self.stats.mutator_wait_ns += w;
            if let Some(r) = self.records.iter_mut().rev().find(|r| r.id == id) {
                r.mutator_wait_ns += w;
            }
        }
    }

    /// Run a blocking collection (waiting first for a running one).
    pub fn collect_blocking(&mut self, k: &mut Kernel, cause: GcCause, ty: GcType) {
        self.wait_for_gc(k);
        self.start_gc(k, cause, ty);
        self.wait_for_gc(k);
    }

    /// System.gc(): a full blocking collection.
    pub fn explicit_gc(&mut self, k: &mut Kernel) {
        self.stats.explicit_gcs += 1;
        self.collect_blocking(k, GcCause::Explicit, GcType::Full);
    }

    /// Run the GC thread until its clock reaches `until` or the collection ends.
    fn gc_step(&mut self, k: &mut Kernel, until: Nanos, blocking: bool) {
        let Some(mut st) = self.gc.take() else { return };
        let mut c = self.collector.take().unwrap();
        k.advance_to(self.gc_task.now);
        self.heap.gc_cache.clear();
        let mut finished = false;
        loop {
            let Some(phase) = st.current() else {
                finished = true;
                break;
            };
            let pause = phase.kind() == PhaseKind::Pause;
            let checkpoint = phase.kind() == PhaseKind::Checkpoint;
            if !st.phase_started {
                let mutator_idle = self.gc_task.now >= self.idle_from && self.gc_task.now < self.idle_to;
                if (pause || checkpoint) && !blocking && !mutator_idle && self.mutator.now > self.gc_task.now {
                    // The pause (or checkpoint) waits for the mutator to reach a safepoint.
                    let w = self.mutator.now - self.gc_task.now;
                    self.gc_idle_ns += w;
                    self.gc_task.now = self.mutator.now;
                }
                st.phase_started = true;
                st.phase_start_ns = self.gc_task.now;
                st.phase_cpu_start = busy_ns(&self.gc_task, self.gc_idle_ns);
            }
            let next_ev = k.next_event_at();
            let host_t0 = self.host_timing.then(std::time::Instant::now);
            // A checkpoint runs on the mutator at its safepoint, unless it is idle (sleeping) or
            // blocked waiting for this collection: then the GC thread runs it on its behalf.
            let mutator_idle = self.gc_task.now >= self.idle_from && self.gc_task.now < self.idle_to;
            let done = if checkpoint && !blocking && !mutator_idle {
                let before = busy_ns(&self.mutator, self.mutator_idle_ns);
                let t0 = self.mutator.now;
                {
                    let mut cx =
                        Cx { heap: &mut self.heap, k, t: &mut self.mutator, hooks: &mut self.hooks, st: &mut st, cfg: &self.cfg, gc_thread: false, next_ev };
                    c.run_phase(phase, &mut cx, Nanos::MAX);
                }
                let spent = busy_ns(&self.mutator, self.mutator_idle_ns) - before;
                st.rec.mutator_gc_work_ns += spent;
                self.stats.mutator_gc_work_ns += spent;
                st.rec.checkpoint_ns += self.mutator.now - t0;
                if self.mutator.now > t0 {
                    self.mutator_stops.push(MutatorStop { start_ns: t0, end_ns: self.mutator.now, kind: StopKind::Checkpoint });
                }
                // The GC thread waits until the checkpoint has run.
                if self.mutator.now > self.gc_task.now {
                    self.gc_idle_ns += self.mutator.now - self.gc_task.now;
                    self.gc_task.now = self.mutator.now;
                }
                true
            } else {
                let mut cx =
                    Cx { heap: &mut self.heap, k, t: &mut self.gc_task, hooks: &mut self.hooks, st: &mut st, cfg: &self.cfg, gc_thread: true, next_ev };
                let u = if pause || checkpoint { Nanos::MAX } else { until };
                c.run_phase(phase, &mut cx, u)
            };
            k.book_cpu(&mut self.gc_task);
            if let Some(t0) = host_t0 {
                let ns = t0.elapsed().as_nanos();
                match self.host_phase_ns.iter_mut().find(|(n, _)| *n == phase.name()) {
                    Some(e) => e.1 += ns,
                    None => self.host_phase_ns.push((phase.name(), ns)),
                }
            }
            if !done {
                break;
            }
            let end = self.gc_task.now;
            let cpu = busy_ns(&self.gc_task, self.gc_idle_ns) - st.phase_cpu_start;
            st.rec.phases.push(PhaseRecord { name: phase.name(), kind: phase.kind(), start_ns: st.phase_start_ns, end_ns: end, gc_cpu_ns: cpu });
            if pause {
                let d = end - st.phase_start_ns;
                st.rec.pauses_ns.push(d);
                st.rec.pause_total_ns += d;
                st.rec.pause_max_ns = st.rec.pause_max_ns.max(d);
                st.rec.gc_cpu_pause_ns += cpu;
                if !blocking {
                    // The mutator is stopped for the pause (if it was idle when the pause began,
                    // only for the part that outlasts its idleness).
                    let was_idle = st.phase_start_ns >= self.idle_from && st.phase_start_ns < self.idle_to;
                    let w = if was_idle { end.saturating_sub(self.mutator.now) } else { d };
                    if w > 0 {
                        self.mutator_stops.push(MutatorStop { start_ns: self.mutator.now, end_ns: self.mutator.now + w, kind: StopKind::Pause });
                    }
                    self.mutator.now += w;
                    self.mutator_idle_ns += w;
                    self.stats.mutator_wait_ns += w;
                    st.rec.mutator_wait_ns += w;
                }
            }
            st.phase += 1;
            st.phase_started = false;
            if self.gc_task.now >= until && !pause && !blocking {
                break;
            }
        }
        self.collector = Some(c);
        if finished || st.current().is_none() {
            self.finish_gc(k, st);
        } else {
            self.gc = Some(st);
        }
    }

    fn finish_gc(&mut self, k: &mut Kernel, mut st: Box<GcState>) {
        let end = self.gc_task.now;
        let rec = &mut st.rec;
        rec.end_ns = end;
        rec.gc_cpu_ns = busy_ns(&self.gc_task, self.gc_idle_ns) - st.cpu_start;
        rec.gc_thread_ns = rec.phases.iter().map(|p| p.end_ns - p.start_ns).sum();
        rec.gc_faults = self.gc_task.bd.since(&st.bd_start);
        rec.pswpin = k.vmstat.pswpin - st.pswpin_start;
        rec.pgmajfault = k.vmstat.pgmajfault - st.majflt_start;
        rec.gc_pages_touched = self.heap.gc_pages_touched;
        rec.gc_objects_touched = rec.objects_scanned.max(rec.objects_marked);
        rec.bytes_allocated_after = self.heap.bytes_allocated;
        let freed = rec.freed_bytes + rec.freed_los_bytes;
        let dur = (end - rec.start_ns).max(1) as f64 / 1e9;
        let throughput = freed as f64 / dur;
        let ty = st.gc_type;
        let supports_sticky = self.cfg.generational && self.collector.as_ref().unwrap().supports_sticky();
        let input = SizingInput {
            gc_type: ty,
            bytes_allocated: self.heap.bytes_allocated,
            bytes_allocated_before: rec.bytes_allocated_before,
            freed_bytes: freed,
            target_footprint: self.target_footprint,
            limit: self.cfg.heap.limit(),
            foreground: self.state == AppState::Foreground,
            concurrent: self.triggers_concurrently(),
            supports_sticky,
            throughput,
            last_full_throughput: self.last_full_throughput,
        };
        let d = self.hooks.sizing.after_gc(&self.cfg.heap, &input);
        if ty == GcType::Full {
            self.last_full_throughput = throughput;
        }
        self.target_footprint = d.target_footprint;
        self.concurrent_start_bytes = d.concurrent_start_bytes;
        self.next_gc_type = if supports_sticky { d.next_gc_type } else { GcType::Full };
        rec.target_footprint_after = self.target_footprint;
        if self.keep_log {
            self.log.push(gc_log_line(rec, self.heap.bytes_allocated, self.target_footprint));
        }
        self.heap.objs.maybe_compact_edges();
        // After-GC policies and object swap run on the GC thread.
        let mut actions = Vec::new();
        for p in self.hooks.after_gc.iter_mut() {
            p.after_gc(&self.heap, rec, self.state, &mut actions);
        }
        let rec = st.rec.clone();
        self.records.push(rec);
        for a in actions {
            self.apply_heap_action(k, a);
        }
        // The access bits shift at every collection that is not sticky.
        if self.heap.oswap.track_bytes != 0 && st.gc_type != GcType::Sticky {
            self.heap.oswap.epoch += 1;
        }
        if let Some(mut p) = self.hooks.object_swap.take() {
            let (mut write, mut reclaim) = (Vec::new(), Vec::new());
            p.after_gc(&self.heap, &st.rec, self.state, &mut write, &mut reclaim);
            self.hooks.object_swap = Some(p);
            if !write.is_empty() || !reclaim.is_empty() {
                self.object_swap_io(k, &write, &reclaim);
            }
        }
        k.book_cpu(&mut self.gc_task);
        if !self.external_triggers {
            self.pending_trim = Some(self.gc_task.now + self.cfg.trim_delay_ns);
        }
        // A policy's mode may have changed with this collection (where new objects go).
        self.refresh_mutator_class();
        #[cfg(debug_assertions)]
        if let Err(e) = self.heap.check_accounting() {
            panic!("heap accounting broken after GC {}: {e}", self.gc_count);
        }
    }

    /// Finish the run: run the GC to its end and book CPU.
    pub fn finish(&mut self, k: &mut Kernel) {
        if self.gc.is_some() {
            if let Some(st) = self.gc.as_mut() {
                st.blocking = true;
            }
            self.gc_step(k, Nanos::MAX, true);
        }
        k.book_cpu(&mut self.mutator);
        k.book_cpu(&mut self.gc_task);
        self.sample(k);
        let _ = self.next_ev;
    }

    /// Bytes that are live objects in `space`.
    pub fn space_bytes(&self, space: SpaceId) -> u64 {
        match space {
            SpaceId::Los => self.heap.los.bytes_allocated,
            SpaceId::NonMoving => self.heap.non_moving.bytes_allocated,
            _ => self.heap.bytes_allocated - self.heap.los.bytes_allocated - self.heap.non_moving.bytes_allocated,
        }
    }
}

/// Human size as ART prints it (B, KB, MB).
pub fn fmt_bytes(b: u64) -> String {
    if b >= 10 << 20 {
        format!("{}MB", b >> 20)
    } else if b >= 10 << 10 {
        format!("{}KB", b >> 10)
    } else {
        format!("{b}B")
    }
}

fn fmt_dur(ns: Nanos) -> String {
    if ns >= 1_000_000 {
        format!("{:.3}ms", ns as f64 / 1e6)
    } else {
        format!("{}us", ns / 1000)
    }
}

/// ART's GC log line (`Heap::LogGC`).
pub fn gc_log_line(r: &GcRecord, allocated: u64, footprint: u64) -> String {
    let free_pct = (100 * footprint.saturating_sub(allocated)).checked_div(footprint).unwrap_or(0);
    let pauses: Vec<String> = r.pauses_ns.iter().map(|&p| fmt_dur(p)).collect();
    format!(
        "{} {} GC freed {}({}) AllocSpace objects, {}({}) LOS objects, {}% free, {}/{}, paused {} total {}",
        r.cause,
        r.name,
        r.freed_objects,
        fmt_bytes(r.freed_bytes),
        r.freed_los_objects,
        fmt_bytes(r.freed_los_bytes),
        free_pct,
        fmt_bytes(allocated),
        fmt_bytes(footprint),
        if pauses.is_empty() { "0us".to_string() } else { pauses.join(",") },
        fmt_dur(r.end_ns - r.start_ns)
    )
}

/// Why the mutator did no work of its own for a while (see [`Runtime::mutator_stops`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum StopKind {
    /// A stop-the-world pause of the collector.
    Pause,
    /// Waiting for a collection to finish (a blocking collection, or one the allocation needs).
    Wait,
    /// Running the collector's checkpoint at its safepoint (a per-thread pause).
    Checkpoint,
}

impl StopKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Pause => "pause",
            Self::Wait => "wait",
            Self::Checkpoint => "checkpoint",
        }
    }
}

/// One interval of [`Runtime::mutator_stops`].
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MutatorStop {
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    pub kind: StopKind,
}
