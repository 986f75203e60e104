//! The mutator engine: a [`Workload`] builds an app's long-lived structure, then runs units of
//! work (allocation, deaths, accesses, native and file touches) and hot launches on a runtime;
//! its units and slots, the timing wheels of their lifetimes, its counters, and the runs of file
//! pages a launch reads.

use super::profile::AppProfile;
use super::startup::StartupPace;
use crate::frames::{FrameTimes, GcFreePacing};
use crate::object::{AppState, ObjId, SpaceId, NULL};
use crate::runtime::Runtime;
use mobmem_engine::rng::{stream, Rng, Stream};
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    /// Root slot index.
    Root(u32),
    /// (object, field).
    Field(ObjId, u32),
}

/// Which of the workload's slot arrays holds a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SlotKind {
    Temp,
    Medium,
    Long,
}

/// A unit (small tree) the workload holds: its root object, where it is held (a root slot or an
/// object's field, and the workload's slot that records it), when allocated.
#[derive(Clone, Copy, Debug)]
pub struct Unit {
    pub(crate) obj: ObjId,
    pub(crate) gen: u32,
    holder: Holder,
    kind: SlotKind,
    slot: u32,
    /// Allocated-bytes clock at allocation.
    pub(crate) clock: u64,
}

/// A timing wheel over the allocated-bytes clock.
struct Wheel {
    bucket: u64,
    buckets: Vec<Vec<u32>>,
    pos: u64,
}

impl Wheel {
    fn new(bucket: u64, n: usize) -> Self {
        Self { bucket, buckets: (0..n).map(|_| Vec::new()).collect(), pos: 0 }
    }
    fn insert(&mut self, now_clock: u64, life: u64, id: u32) {
        let n = self.buckets.len() as u64;
        let b = ((now_clock + life) / self.bucket).clamp(self.pos + 1, self.pos + n - 1);
        self.buckets[(b % n) as usize].push(id);
    }
    /// Advance to `clock`, handing expired ids to `f`.
    fn advance(&mut self, clock: u64, out: &mut Vec<u32>) {
        let target = clock / self.bucket;
        let n = self.buckets.len() as u64;
        while self.pos < target {
            self.pos += 1;
            let b = (self.pos % n) as usize;
            out.append(&mut self.buckets[b]);
        }
    }
}

/// Counters of a workload run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct WorkloadStats {
    pub(crate) units_of_work: u64,
    pub(crate) late_units: u64,
    pub objects_allocated: u64,
    pub bytes_allocated: u64,
    pub reads: u64,
    pub(crate) temp_units: u64,
    pub(crate) medium_units: u64,
    pub(crate) long_units: u64,
    pub(crate) structure_objects: u64,
    pub(crate) structure_bytes: u64,
    pub(crate) near_root_bytes: u64,
}

/// Result of a hot launch's accesses.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LaunchAccess {
    pub(crate) objects: u64,
    pub near_root: u64,
    pub foreground_young: u64,
    pub other: u64,
    pub(crate) time_ns: Nanos,
    pub major_faults: u64,
}

pub struct Workload {
    pub(crate) p: AppProfile,
    rng: Stream,
    /// Cumulative count probabilities of the size classes: as allocated (temporaries) and for
    /// objects that outlive their first collection ([`AppProfile::survivor_object_bytes`]).
    cdf: Vec<f64>,
    survivor_cdf: Vec<f64>,
    /// Stable structure: depth-1 and depth-2 objects.
    pub near: Vec<ObjId>,
    holders: Vec<ObjId>,
    caches: Vec<ObjId>,
    /// Long-lived slots: (holder, field) and the unit in it.
    long_slots: Vec<Unit>,
    hot_slots: Vec<u32>,
    medium_slots: Vec<Unit>,
    medium_free: Vec<u32>,
    temp_slots: Vec<Unit>,
    temp_free: Vec<u32>,
    temp_wheel: Wheel,
    medium_wheel: Wheel,
    expired: Vec<u32>,
    /// Ring of recently allocated units (for accesses and the launch set).
    recent: Vec<Unit>,
    recent_pos: usize,
    /// Units allocated just before going to background.
    pub fyo: Vec<Unit>,
    temp_root_base: u32,
    alloc_debt: f64,
    /// The unit being allocated: (size, reference fields) per object (a reused buffer).
    plan: Vec<(u32, u16)>,
    pub next_unit_at: Nanos,
    native_vma: Option<u32>,
    native_pages: u32,
    /// Hot native pages at the end of the hot range released by `trim_native` since the app last
    /// came to the foreground: background work leaves them alone (it draws nothing), foreground
    /// use fills them again.
    native_trimmed: u32,
    file_vma: Option<u32>,
    file_pages: u32,
    /// Runs of file pages (first page, pages), in the order a cold launch reads them and by
    /// how much use touches them: a cold launch reads the first `launch_run_count`, a hot launch
    /// a leading share of those, and use touches pages of the first `ws_run_count`.
    launch_runs: Vec<(u32, u32)>,
    launch_run_count: usize,
    ws_run_count: usize,
    pub stats: WorkloadStats,
    /// Frame times of the units of work [`Workload::run_until`] runs in the foreground.
    pub(crate) frames: FrameTimes,
    /// The same units of work paced without GC stalls: what collections cost in wall time.
    pub(crate) pacing: GcFreePacing,
    pub(crate) built: bool,
    /// The start-up CPU work paced over the build (none outside a paced build).
    startup: StartupPace,
    pub oom: bool,
}

const RECENT: usize = 4096;

impl Workload {
    pub fn new(p: AppProfile) -> Self {
        let rng = stream(p.seed, 0x4150_5000, "workload");
        let cdf = p.count_cdf();
        let survivor_cdf = p.survivor_cdf();
        let temp_bucket = (p.temp_life / 64).max(1024);
        let med_bucket = (p.medium_life / 128).max(4096);
        Self {
            rng,
            cdf,
            survivor_cdf,
            near: Vec::new(),
            holders: Vec::new(),
            caches: Vec::new(),
            long_slots: Vec::new(),
            hot_slots: Vec::new(),
            medium_slots: Vec::new(),
            medium_free: Vec::new(),
            temp_slots: Vec::new(),
            temp_free: Vec::new(),
            temp_wheel: Wheel::new(temp_bucket, 128),
            medium_wheel: Wheel::new(med_bucket, 1024),
            expired: Vec::new(),
            recent: Vec::with_capacity(RECENT),
            recent_pos: 0,
            fyo: Vec::new(),
            temp_root_base: p.roots,
            alloc_debt: 0.0,
            plan: Vec::new(),
            next_unit_at: 0,
            native_vma: None,
            native_pages: 0,
            native_trimmed: 0,
            file_vma: None,
            file_pages: 0,
            launch_runs: Vec::new(),
            launch_run_count: 0,
            ws_run_count: 0,
            stats: WorkloadStats::default(),
            frames: FrameTimes::default(),
            pacing: GcFreePacing::default(),
            built: false,
            startup: StartupPace::default(),
            oom: false,
            p,
        }
    }

    /// An object size: from the survivors' mix or the allocation mix.
    fn draw_size(&mut self, survivor: bool) -> u32 {
        let u: f64 = self.rng.gen();
        let cdf = if survivor { &self.survivor_cdf } else { &self.cdf };
        // The first class whose cumulative share exceeds u, counted without a branch per class
        // (the cdf is non-decreasing; a draw the search mispredicted was ~2 % of a session).
        let i = cdf.iter().filter(|&&c| c <= u).count().min(cdf.len() - 1);
        let c = &self.p.size_mix[i];
        let s = if c.hi > c.lo { self.rng.gen_range(c.lo..=c.hi) } else { c.lo };
        (s.max(8) + 7) & !7
    }

    /// Reference fields for an object of `size` bytes (never growing the object).
    fn draw_nrefs(&mut self, size: u32) -> u16 {
        if size >= 12 * 1024 {
            return 0;
        }
        let max = (size.saturating_sub(8) / 4) as f64;
        let mean = self.p.fanout;
        let n = if mean <= 0.0 { 0.0 } else { round_nonneg(self.rng.gen::<f64>() * 2.0 * mean) };
        n.min(max).min(255.0) as u16
    }

    fn alloc(&mut self, rt: &mut Runtime, k: &mut Kernel, size: u32, nrefs: u16, pinned: bool) -> Option<ObjId> {
        let r = if pinned { rt.alloc_pinned(k, size, nrefs) } else { rt.alloc(k, size, nrefs) };
        match r {
            Ok(o) => {
                self.stats.objects_allocated += 1;
                self.stats.bytes_allocated += rt.heap.objs.size(o) as u64;
                Some(o)
            }
            Err(_) => {
                self.oom = true;
                None
            }
        }
    }

    /// Allocate a unit (a small tree) and return its root; the root is held in temporary root
    /// slot `hold` while its children are allocated ([`Runtime::alloc_unit`]). `survivor`: the
    /// unit is meant to outlive the next collection (its sizes come from the survivors' mix).
    fn alloc_unit(&mut self, rt: &mut Runtime, k: &mut Kernel, hold: u32, survivor: bool) -> Option<ObjId> {
        let n = 1 + round_nonneg(self.rng.gen::<f64>() * 2.0 * (self.p.unit_objects - 1.0)) as u32;
        let size = self.draw_size(survivor);
        let want = (n - 1).min(255) as u16;
        let nrefs = self.draw_nrefs(size).max(want.min(((size.saturating_sub(8)) / 4) as u16));
        let mut plan = std::mem::take(&mut self.plan);
        plan.clear();
        plan.push((size, nrefs));
        for _ in 0..(n - 1).min(nrefs as u32) {
            let s = self.draw_size(survivor);
            let nr = self.draw_nrefs(s);
            plan.push((s, nr));
        }
        let r = rt.alloc_unit(k, hold as usize, &plan);
        if r.is_ok() {
            self.stats.objects_allocated += plan.len() as u64;
            self.stats.bytes_allocated += plan.iter().map(|&(s, nr)| crate::object::object_size(s, nr) as u64).sum::<u64>();
        } else {
            self.oom = true;
        }
        self.plan = plan;
        r.ok()
    }

    // ------------------------------------------------------------------ building

    /// Build the long-lived structure (app start-up) and map native and file memory.
    pub fn build(&mut self, rt: &mut Runtime, k: &mut Kernel) {
        self.build_paced(rt, k, 0);
    }

    /// [`Self::build`] with `cpu_ns` of start-up CPU work run as the build writes its memory
    /// (see [`super::startup`]); all of it has run when this returns, unless the build failed.
    pub fn build_paced(&mut self, rt: &mut Runtime, k: &mut Kernel, cpu_ns: Nanos) {
        self.plan_launch_runs();
        self.startup = StartupPace::new(cpu_ns, self.expected_build_bytes());
        self.build_structure(rt, k);
        let mut pace = std::mem::take(&mut self.startup);
        if !self.built {
            return;
        }
        pace.finish(rt, k);
        self.next_unit_at = self.next_unit_at.max(rt.mutator.now);
    }

    /// The runs of file pages a launch reads (a cold launch the first `launch_run_count`, use
    /// the first `ws_run_count`): one sequence for both sets, since the leading runs of a longer
    /// draw are those of a shorter one, so the launch reads the most used part of the working set.
    fn plan_launch_runs(&mut self) {
        let p = &self.p;
        self.file_pages = p.file_bytes.div_ceil(4096) as u32;
        let share = p.launch_file_share.max(p.file_ws_share);
        self.launch_runs = launch_runs(self.file_pages, share, p.launch_read_run_pages, p.seed);
        self.launch_run_count = runs_covering(&self.launch_runs, self.file_pages, p.launch_file_share);
        self.ws_run_count = runs_covering(&self.launch_runs, self.file_pages, p.file_ws_share);
    }

    /// What the build will write, as the pacing counts it: the structure's Java bytes (the
    /// near-root budget and nine tenths of the rest: the last tenth is left to the medium-lived
    /// units allocated later), the native heap's pages and the file pages a cold launch reads.
    /// The Java part is an estimate (unit sizes are drawn); a build that writes more runs its
    /// last part after the CPU work is done.
    fn expected_build_bytes(&self) -> u64 {
        let p = &self.p;
        let near = (p.live_heap as f64 * p.near_root_share) as u64;
        let java = near + (p.live_heap.saturating_sub(near) as f64 * 0.9) as u64;
        let file_pages: u64 = self.launch_runs[..self.launch_run_count].iter().map(|&(_, n)| n as u64).sum();
        java + p.native_anon.div_ceil(4096) * 4096 + file_pages * 4096
    }

    /// A point of the build where every object allocated so far is reachable: run the start-up
    /// CPU work due by the bytes written (the Java objects allocated, the pages counted by
    /// [`StartupPace::add_pages`]). False once the process has been killed (the build stops).
    #[must_use]
    fn pace(&mut self, rt: &mut Runtime, k: &mut Kernel) -> bool {
        let java = self.stats.bytes_allocated;
        self.startup.wrote(rt, k, java);
        !rt.mutator.killed
    }

    fn build_structure(&mut self, rt: &mut Runtime, k: &mut Kernel) {
        let p = self.p.clone();
        let scratch = p.roots; // a temporary root used while building
        self.temp_root_base = p.roots + 1;
        let near_target = (p.live_heap as f64 * p.near_root_share) as u64;
        let boot: Vec<ObjId> = rt.heap.immune_objects(SpaceId::Boot).take(256).collect();
        // Depth 1: one container (an object array) per root, wide enough for the depth-2 objects
        // that the near-root budget pays for.
        let mut near_bytes = 0u64;
        let n_d2 = (near_target as f64 / (self.mean_obj_bytes().max(64.0) + 4.0)).ceil() as u64;
        let d2_per = (n_d2.div_ceil(p.roots as u64) + 1).clamp(16, 16_000) as u16;
        let mut d1 = Vec::new();
        for r in 0..p.roots {
            // Some containers are class-like pinned objects in the non-moving space.
            let pinned = self.rng.gen::<f64>() < p.pinned_share * 10.0;
            let Some(o) = self.alloc(rt, k, 8 + 4 * d2_per as u32 + 8, d2_per, pinned) else { return };
            rt.set_root(k, r as usize, o);
            near_bytes += rt.heap.objs.size(o) as u64;
            d1.push(o);
            self.near.push(o);
            if !self.pace(rt, k) {
                return;
            }
        }
        // Depth 2 objects until the near-root budget is used; each keeps fields for holders.
        let mut d2 = Vec::new();
        let mut slot = 0usize;
        while near_bytes < near_target && slot < d1.len() * d2_per as usize {
            let s = self.draw_size(true).max(64);
            let nrefs = ((s - 8) / 4).min(8) as u16;
            let Some(o) = self.alloc(rt, k, s, nrefs, false) else { return };
            let parent = d1[slot % d1.len()];
            rt.write_ref(k, parent, (slot / d1.len()) as u32, o);
            if nrefs > 1 && !boot.is_empty() {
                let b = boot[self.rng.gen_range(0..boot.len())];
                rt.write_ref(k, o, nrefs as u32 - 1, b);
            }
            near_bytes += rt.heap.objs.size(o) as u64;
            d2.push(o);
            self.near.push(o);
            slot += 1;
            if !self.pace(rt, k) {
                return;
            }
        }
        if d2.is_empty() {
            d2 = d1.clone();
        }
        self.stats.near_root_bytes = near_bytes;
        // Holders (depth 3) under depth-2 objects; caches too.
        let far_target = p.live_heap.saturating_sub(near_bytes);
        let mean_unit = self.mean_unit_bytes();
        let nlong = ((far_target as f64 * (1.0 - 0.1)) / mean_unit).max(1.0) as usize;
        let holder_fields = 64u16;
        let nholders = nlong.div_ceil(holder_fields as usize);
        // Caches big enough that eviction follows the medium lifetime, not the cache size.
        let medium_slots = p.medium_share * p.medium_life as f64 / mean_unit * 1.5;
        let ncaches = ((medium_slots / 64.0).ceil() as usize).max(1);
        let mut d2_cursor = 0usize;
        let mut last_holder = NULL;
        // Attach to the first free field of a depth-2 object (the last field is kept for the
        // boot-image reference); when none is left, chain under the previous holder.
        let mut attach = |rt: &mut Runtime, k: &mut Kernel, o: ObjId, d2: &Vec<ObjId>, last: ObjId| {
            while d2_cursor < d2.len() * 8 {
                let parent = d2[d2_cursor % d2.len()];
                let n = rt.heap.objs.nrefs(parent) as u32;
                let f = (d2_cursor / d2.len()) as u32;
                d2_cursor += 1;
                if n >= 2 && f < n - 1 {
                    rt.write_ref(k, parent, f, o);
                    return;
                }
            }
            let n = rt.heap.objs.nrefs(last) as u32;
            rt.write_ref(k, last, n - 1, o);
        };
        for _ in 0..nholders {
            let Some(h) = self.alloc(rt, k, 8 + 4 * (holder_fields as u32 + 1), holder_fields + 1, false) else { return };
            rt.set_root(k, scratch as usize, h);
            attach(rt, k, h, &d2, last_holder);
            last_holder = h;
            self.holders.push(h);
            if !self.pace(rt, k) {
                return;
            }
        }
        for _ in 0..ncaches {
            let Some(c) = self.alloc(rt, k, 8 + 4 * 65, 65, false) else { return };
            rt.set_root(k, scratch as usize, c);
            attach(rt, k, c, &d2, last_holder);
            last_holder = c;
            self.caches.push(c);
            for f in 0..64 {
                self.medium_free.push(self.medium_slots.len() as u32);
                self.medium_slots.push(Unit {
                    obj: NULL,
                    gen: 0,
                    holder: Holder::Field(c, f),
                    kind: SlotKind::Medium,
                    slot: self.medium_slots.len() as u32,
                    clock: 0,
                });
            }
            if !self.pace(rt, k) {
                return;
            }
        }
        // Fill the holders with long-lived units.
        let hold = scratch;
        'fill: for hi in 0..self.holders.len() {
            for f in 0..holder_fields as u32 {
                if self.long_slots.len() >= nlong {
                    break 'fill;
                }
                let h = self.holders[hi];
                let Some(u) = self.alloc_unit(rt, k, hold, true) else { return };
                rt.write_ref(k, h, f, u);
                let gen = rt.heap.objs.gen(u);
                self.long_slots.push(Unit {
                    obj: u,
                    gen,
                    holder: Holder::Field(h, f),
                    kind: SlotKind::Long,
                    slot: self.long_slots.len() as u32,
                    clock: rt.heap.alloc_clock,
                });
                rt.poll(k);
                if !self.pace(rt, k) {
                    return;
                }
            }
        }
        rt.set_root(k, scratch as usize, NULL);
        let nhot = ((self.long_slots.len() as f64 * p.hot_fraction).ceil() as usize).min(self.long_slots.len());
        for _ in 0..nhot {
            let s = self.rng.gen_range(0..self.long_slots.len()) as u32;
            self.hot_slots.push(s);
        }
        self.stats.structure_objects = self.stats.objects_allocated;
        self.stats.structure_bytes = self.stats.bytes_allocated;
        // Native anon memory and file-backed pages.
        let pi = rt.proc_idx;
        if p.native_anon > 0 {
            self.native_pages = p.native_anon.div_ceil(4096) as u32;
            if let Ok(v) = k.map_anon(pi, "[anon:libc_malloc]", self.native_pages) {
                self.native_vma = Some(v);
                for pg in 0..self.native_pages {
                    k.touch(&mut rt.mutator, v, pg, true);
                    // kswapd and the other kernel threads run alongside (they are events due
                    // by this thread's clock): without this, a start-up that writes its whole
                    // native heap at once would leave reclaim to direct reclaim.
                    k.sync(&mut rt.mutator);
                    // Stops here once the process is killed.
                    self.startup.add_pages(1);
                    if !self.pace(rt, k) {
                        return;
                    }
                }
            }
        }
        if p.file_bytes > 0 {
            let file = format!("{}.apk", p.name.replace([':', ',', '='], "_"));
            if let Ok(v) = k.map_file(pi, "base.apk", &file, self.file_pages, true) {
                self.file_vma = Some(v);
                self.read_launch_runs(rt, k, v, self.launch_run_count);
            }
        }
        k.book_cpu(&mut rt.mutator);
        self.next_unit_at = rt.mutator.now;
        self.built = true;
    }

    /// Mean bytes of a surviving object (the structure's budgets are sized with it).
    fn mean_obj_bytes(&self) -> f64 {
        self.mean_unit_bytes() / self.p.unit_objects
    }

    /// Mean bytes of a surviving unit.
    fn mean_unit_bytes(&self) -> f64 {
        let w: f64 = self
            .survivor_cdf
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let prev = if i == 0 { 0.0 } else { self.survivor_cdf[i - 1] };
                (c - prev) * ((self.p.size_mix[i].lo + self.p.size_mix[i].hi) as f64 / 2.0)
            })
            .sum();
        w * self.p.unit_objects
    }

    // ------------------------------------------------------------------ running

    /// Whether `u` is still the unit its slot records. Only the workload writes the holders and
    /// it updates the slot with every write, so this is exactly "its holder still references it"
    /// ([`Self::holder_still`], checked in debug builds) without reading the heap.
    #[inline]
    fn current(&self, rt: &Runtime, u: &Unit) -> bool {
        let s = match u.kind {
            SlotKind::Temp => &self.temp_slots[u.slot as usize],
            SlotKind::Medium => &self.medium_slots[u.slot as usize],
            SlotKind::Long => &self.long_slots[u.slot as usize],
        };
        let c = u.obj != NULL && s.obj == u.obj && s.gen == u.gen;
        debug_assert!(rt.oom || c == Self::holder_still(rt, u), "unit {u:?}");
        c
    }

    fn holder_still(rt: &Runtime, u: &Unit) -> bool {
        if u.obj == NULL || !rt.heap.objs.is_live(u.obj) || rt.heap.objs.gen(u.obj) != u.gen {
            return false;
        }
        match u.holder {
            Holder::Root(i) => rt.heap.roots.get(i as usize).copied() == Some(u.obj),
            Holder::Field(o, f) => rt.heap.objs.get_ref(o, f) == u.obj,
        }
    }

    fn kill(rt: &mut Runtime, k: &mut Kernel, u: &Unit) {
        match u.holder {
            Holder::Root(i) => rt.set_root(k, i as usize, NULL),
            Holder::Field(o, f) => rt.write_ref(k, o, f, NULL),
        }
        rt.unit_dead(u.obj);
    }

    /// Host cache hints for the units expiring a few steps ahead of `ex[i]`: their slot, then
    /// their root's record and holder, then their unit header (each stage needs the previous
    /// one's data; no effect on the simulation).
    #[inline(always)]
    fn prefetch_expiring(&self, rt: &Runtime, ex: &[u32], i: usize, kind: SlotKind) {
        let slots = if kind == SlotKind::Temp { &self.temp_slots } else { &self.medium_slots };
        if let Some(&s) = ex.get(i + 12) {
            crate::object::prefetch(&slots[s as usize]);
        }
        if let Some(&s) = ex.get(i + 6) {
            let u = &slots[s as usize];
            if u.obj != NULL {
                rt.heap.objs.prefetch(u.obj);
                match u.holder {
                    Holder::Root(r) => {
                        if let Some(r) = rt.heap.roots.get(r as usize) {
                            crate::object::prefetch(r);
                        }
                    }
                    Holder::Field(o, _) => rt.heap.objs.prefetch(o),
                }
            }
        }
        if let Some(&s) = ex.get(i + 2) {
            let u = &slots[s as usize];
            if u.obj != NULL {
                rt.heap.objs.prefetch_unit(u.obj);
            }
        }
    }

    /// Run expired lifetimes.
    fn expire(&mut self, rt: &mut Runtime, k: &mut Kernel) {
        let clock = rt.heap.alloc_clock;
        let mut ex = std::mem::take(&mut self.expired);
        self.temp_wheel.advance(clock, &mut ex);
        for (i, &s) in ex.iter().enumerate() {
            self.prefetch_expiring(rt, &ex, i, SlotKind::Temp);
            let u = self.temp_slots[s as usize];
            if self.current(rt, &u) {
                Self::kill(rt, k, &u);
            }
            self.temp_slots[s as usize].obj = NULL;
            self.temp_free.push(s);
        }
        ex.clear();
        self.medium_wheel.advance(clock, &mut ex);
        for (i, &s) in ex.iter().enumerate() {
            self.prefetch_expiring(rt, &ex, i, SlotKind::Medium);
            let u = self.medium_slots[s as usize];
            if self.current(rt, &u) {
                Self::kill(rt, k, &u);
            }
            self.medium_slots[s as usize].obj = NULL;
            self.medium_free.push(s);
        }
        ex.clear();
        self.expired = ex;
    }

    /// Allocate one unit with a lifetime class drawn for the current state.
    fn allocate_one(&mut self, rt: &mut Runtime, k: &mut Kernel) -> bool {
        let bg = rt.state == AppState::Background;
        let u: f64 = self.rng.gen();
        let (temp_p, med_p) = if bg { (self.p.bg_temp_share, (1.0 - self.p.bg_temp_share) * 0.5) } else { (self.p.temp_share, self.p.medium_share) };
        let class = if u < temp_p {
            0
        } else if u < temp_p + med_p {
            1
        } else {
            2
        };
        let class = if class == 2 && self.long_slots.is_empty() { 0 } else { class };
        let class = if class == 1 && self.medium_slots.is_empty() { 0 } else { class };
        // Temporaries live in stack root slots.
        let ts = match self.temp_free.pop() {
            Some(s) => s,
            None => {
                self.temp_slots.push(Unit {
                    obj: NULL,
                    gen: 0,
                    holder: Holder::Root(self.temp_root_base + self.temp_slots.len() as u32),
                    kind: SlotKind::Temp,
                    slot: self.temp_slots.len() as u32,
                    clock: 0,
                });
                (self.temp_slots.len() - 1) as u32
            }
        };
        let Holder::Root(root_slot) = self.temp_slots[ts as usize].holder else { unreachable!() };
        let Some(o) = self.alloc_unit(rt, k, root_slot, class != 0) else { return false };
        let gen = rt.heap.objs.gen(o);
        let clock = rt.heap.alloc_clock;
        let unit;
        match class {
            0 => {
                self.stats.temp_units += 1;
                let life = (self.rng.gen::<f64>() * self.p.temp_life as f64) as u64;
                unit = Unit { obj: o, gen, holder: Holder::Root(root_slot), kind: SlotKind::Temp, slot: ts, clock };
                self.temp_slots[ts as usize] = unit;
                self.temp_wheel.insert(clock, life, ts);
            }
            1 => {
                self.stats.medium_units += 1;
                let ms = match self.medium_free.pop() {
                    Some(s) => s,
                    None => {
                        // Cache full: evict a random entry.
                        let s = self.rng.gen_range(0..self.medium_slots.len()) as u32;
                        let old = self.medium_slots[s as usize];
                        if self.current(rt, &old) {
                            Self::kill(rt, k, &old);
                        }
                        s
                    }
                };
                let Holder::Field(c, f) = self.medium_slots[ms as usize].holder else { unreachable!() };
                rt.write_ref(k, c, f, o);
                rt.set_root(k, root_slot as usize, NULL);
                self.temp_free.push(ts);
                unit = Unit { obj: o, gen, holder: Holder::Field(c, f), kind: SlotKind::Medium, slot: ms, clock };
                self.medium_slots[ms as usize] = unit;
                let life = (-(1.0 - self.rng.gen::<f64>()).ln() * self.p.medium_life as f64) as u64;
                self.medium_wheel.insert(clock, life, ms);
            }
            _ => {
                self.stats.long_units += 1;
                let s = self.rng.gen_range(0..self.long_slots.len());
                let Holder::Field(h, f) = self.long_slots[s].holder else { unreachable!() };
                let old = self.long_slots[s];
                let old_live = self.current(rt, &old);
                rt.write_ref(k, h, f, o); // the old unit dies with its subtree
                if old_live {
                    rt.unit_dead(old.obj);
                }
                rt.set_root(k, root_slot as usize, NULL);
                self.temp_free.push(ts);
                unit = Unit { obj: o, gen, holder: Holder::Field(h, f), kind: SlotKind::Long, slot: s as u32, clock };
                self.long_slots[s] = unit;
            }
        }
        if self.recent.len() < RECENT {
            self.recent.push(unit);
        } else {
            self.recent[self.recent_pos] = unit;
        }
        self.recent_pos = (self.recent_pos + 1) % RECENT;
        true
    }

    /// Read a unit: its root and children through their references.
    fn read_unit(&mut self, rt: &mut Runtime, k: &mut Kernel, o: ObjId) {
        rt.read(k, o);
        self.stats.reads += 1;
        let n = rt.heap.objs.nrefs(o) as u32;
        if n > 0 {
            let f = self.rng.gen_range(0..n);
            let c = rt.read_ref(k, o, f);
            if c != NULL && !rt.heap.objs.space_of(c).immune() {
                rt.read(k, c);
                self.stats.reads += 1;
            }
        }
    }

    fn access(&mut self, rt: &mut Runtime, k: &mut Kernel, reads: u32) {
        for _ in 0..reads {
            let u: f64 = self.rng.gen();
            if u < self.p.recent_share && !self.recent.is_empty() {
                let i = self.rng.gen_range(0..self.recent.len());
                let unit = self.recent[i];
                if self.current(rt, &unit) {
                    self.read_unit(rt, k, unit.obj);
                }
            } else if u < self.p.recent_share + self.p.hot_share && !self.hot_slots.is_empty() {
                let s = self.hot_slots[self.rng.gen_range(0..self.hot_slots.len())];
                let unit = self.long_slots[s as usize];
                if self.current(rt, &unit) {
                    self.read_unit(rt, k, unit.obj);
                    if self.rng.gen::<f64>() < 0.1 {
                        // a data-field write (no reference store, no barrier)
                        rt.write_data(k, unit.obj);
                    }
                }
            } else {
                // A path from a root.
                let r = self.rng.gen_range(0..self.p.roots) as usize;
                let mut o = rt.heap.roots.get(r).copied().unwrap_or(NULL);
                for _ in 0..6 {
                    if o == NULL || rt.heap.objs.space_of(o).immune() {
                        break;
                    }
                    rt.read(k, o);
                    self.stats.reads += 1;
                    let n = rt.heap.objs.nrefs(o) as u32;
                    if n == 0 {
                        break;
                    }
                    let f = self.rng.gen_range(0..n);
                    o = rt.read_ref(k, o, f);
                }
            }
        }
    }

    /// One unit of work (a frame in the foreground). Returns false if the app ran out of memory.
    pub fn unit_of_work(&mut self, rt: &mut Runtime, k: &mut Kernel) -> bool {
        let bg = rt.state == AppState::Background;
        let period = if bg { self.p.bg_period_ns } else { self.p.frame_ns };
        let start = rt.mutator.now;
        let cpu = if bg { self.p.cpu_bg } else { self.p.cpu_fg };
        rt.mutator.cpu((period as f64 * cpu) as Nanos);
        let rate = if bg { self.p.alloc_rate_bg } else { self.p.alloc_rate_fg };
        self.alloc_debt += rate as f64 * period as f64 / 1e9;
        let reads = if bg { self.p.reads_bg } else { self.p.reads_fg };
        let target = rt.heap.alloc_clock + self.alloc_debt.max(0.0) as u64;
        let mut reads_left = reads;
        let steps = ((self.alloc_debt / 4096.0) as u32).max(1);
        let reads_per_step = reads / steps + 1;
        while rt.heap.alloc_clock < target {
            let before = rt.heap.alloc_clock;
            if !self.allocate_one(rt, k) {
                return false;
            }
            self.alloc_debt -= (rt.heap.alloc_clock - before) as f64;
            self.expire(rt, k);
            let r = reads_per_step.min(reads_left);
            self.access(rt, k, r);
            reads_left -= r;
            self.sync(rt, k);
        }
        self.access(rt, k, reads_left);
        // Native memory and file pages.
        let (nt, ft) = if bg { (self.p.native_touch_fg / 16, self.p.file_touch_fg / 16) } else { (self.p.native_touch_fg, self.p.file_touch_fg) };
        if let Some(v) = self.native_vma {
            let hot = self.native_hot_pages();
            let hot = if bg { (hot - self.native_trimmed.min(hot)).max(1) } else { hot };
            for _ in 0..nt {
                let pg = self.rng.gen_range(0..hot);
                k.touch(&mut rt.mutator, v, pg, self.rng.gen::<bool>());
            }
        }
        if let (Some(v), true) = (self.file_vma, self.ws_run_count > 0) {
            // Popularity 1/rank over the working set's runs: run i with probability
            // ln((i+2)/(i+1)) / ln(n+1) (a log-uniform draw), so its head stays hot and its tail
            // is touched seldom enough to be evicted and read back under pressure.
            let ln_n = ((self.ws_run_count + 1) as f64).ln();
            for _ in 0..ft {
                let i = (((self.rng.gen::<f64>() * ln_n).exp() - 1.0) as usize).min(self.ws_run_count - 1);
                let (first, count) = self.launch_runs[i];
                let pg = first + self.rng.gen_range(0..count);
                k.touch(&mut rt.mutator, v, pg, false);
            }
        }
        self.stats.units_of_work += 1;
        if rt.mutator.now - start > period {
            self.stats.late_units += 1;
        }
        k.book_cpu(&mut rt.mutator);
        true
    }

    /// Read the first `n` launch runs of the file VMA `v`, in order (a cold launch all of them,
    /// a hot launch a leading share), until the process is killed.
    fn read_launch_runs(&mut self, rt: &mut Runtime, k: &mut Kernel, v: u32, n: usize) {
        for i in 0..n {
            let (first, count) = self.launch_runs[i];
            k.touch_range(&mut rt.mutator, v, first, count, false);
            if rt.mutator.killed {
                return;
            }
            // Hundreds of reads: let kswapd, lmkd and the samplers run in between.
            k.sync(&mut rt.mutator);
            // In a cold launch, the start-up code that needs them runs as they come in.
            self.startup.add_pages(count);
            if !self.pace(rt, k) {
                return;
            }
        }
    }

    #[inline]
    fn sync(&mut self, rt: &mut Runtime, k: &mut Kernel) {
        k.sync(&mut rt.mutator);
    }

    /// The app does no work until `until` (a cached app on the phone: no frames, no units of
    /// work): its runtime still runs what is pending (a collection in flight, the collector
    /// transition) and the kernel's events go on.
    pub fn idle_until(&mut self, rt: &mut Runtime, k: &mut Kernel, until: Nanos) {
        if k.procs[rt.proc_idx as usize].alive {
            rt.mutator_idle_until(until);
            k.advance_to(until);
            rt.poll(k);
        }
        self.next_unit_at = self.next_unit_at.max(until);
    }

    /// Run the app until simulated time `until` (units of work at their period, the GC thread
    /// and kernel events in between). Returns false if the app ran out of memory.
    pub fn run_until(&mut self, rt: &mut Runtime, k: &mut Kernel, until: Nanos) -> bool {
        while self.next_unit_at < until {
            match self.step(rt, k) {
                Some(true) => {}
                Some(false) => return false,
                None => return true,
            }
        }
        rt.mutator_idle_until(until);
        k.advance_to(until);
        rt.poll(k);
        true
    }

    /// Run the app until it has allocated `bytes` more (a fixed amount of work, whatever the
    /// collector and heap make it cost in time). Returns false if the app ran out of memory.
    pub fn run_allocating(&mut self, rt: &mut Runtime, k: &mut Kernel, bytes: u64) -> bool {
        let target = rt.heap.alloc_clock.saturating_add(bytes);
        while rt.heap.alloc_clock < target {
            match self.step(rt, k) {
                Some(true) => {}
                Some(false) => return false,
                None => return true,
            }
        }
        true
    }

    /// One unit of work at its period (a frame in the foreground, its time recorded). `None`:
    /// the process is dead; `Some(false)`: the app ran out of memory.
    fn step(&mut self, rt: &mut Runtime, k: &mut Kernel) -> Option<bool> {
        if !k.procs[rt.proc_idx as usize].alive {
            return None;
        }
        let vsync = self.next_unit_at;
        let at = vsync.max(rt.mutator.now);
        let wait0 = rt.stats.mutator_wait_ns;
        rt.mutator_idle_until(at);
        k.advance_to(rt.mutator.now);
        rt.poll(k);
        k.advance_to(rt.mutator.now);
        if !self.unit_of_work(rt, k) {
            return Some(false);
        }
        rt.poll(k);
        let fg = rt.state != AppState::Background;
        let period = if fg { self.p.frame_ns } else { self.p.bg_period_ns };
        if fg {
            self.frames.record(rt.mutator.now - vsync, period);
        }
        self.pacing.record(vsync, at, rt.mutator.now, rt.stats.mutator_wait_ns - wait0);
        self.next_unit_at += period;
        Some(true)
    }

    /// The leading pages of the native heap that units of work use (`native_hot_share`).
    #[inline]
    fn native_hot_pages(&self) -> u32 {
        // (+1e-9: a share of 1/3 gives exactly native_pages / 3, as integer division would.)
        ((self.native_pages as f64 * self.p.native_hot_share + 1e-9).floor() as u32).clamp(1, self.native_pages.max(1))
    }

    /// `onTrimMemory`: the app frees `halves` halves of
    /// its caches, a half being `ui_hidden_release_share` of its native heap's used part (an
    /// image loader halves its cache at `TRIM_MEMORY_UI_HIDDEN` and clears it from
    /// `TRIM_MEMORY_BACKGROUND` up: bumptech/glide `LruResourceCache.trimMemory`). The pages go
    /// from the end of the hot range, and background work leaves them released until the app
    /// comes back to the foreground (in the foreground nothing is kept released). Returns the
    /// size of the range it released now (pages released before are not counted again).
    pub fn trim_native(&mut self, rt: &mut Runtime, k: &mut Kernel, halves: u32) -> u32 {
        let Some(v) = self.native_vma else { return 0 };
        let hot = self.native_hot_pages();
        let half = (hot as f64 * self.p.ui_hidden_release_share) as u32;
        let n = half.saturating_mul(halves).min(hot);
        // In the foreground (a RUNNING_* level) use fills the caches again at once: nothing is
        // kept released.
        let fg = rt.state == AppState::Foreground;
        let already = if fg { 0 } else { self.native_trimmed };
        if n <= already {
            return 0;
        }
        let fresh = n - already;
        let _ = k.madvise(&mut rt.mutator, v, hot - n, fresh, mobmem_kernel::madvise::Advice::DontNeed);
        k.book_cpu(&mut rt.mutator);
        if !fg {
            self.native_trimmed = n;
        }
        fresh
    }

    /// The app goes to background or foreground (runtime state + the foreground-young set).
    pub fn set_state(&mut self, rt: &mut Runtime, state: AppState) {
        if state == AppState::Foreground {
            self.native_trimmed = 0;
        }
        if state == AppState::Background && rt.state == AppState::Foreground {
            let clock = rt.heap.alloc_clock;
            let w = self.p.launch_fyo_window;
            self.fyo = self.recent.iter().copied().filter(|u| clock - u.clock <= w).collect();
        }
        rt.set_state(state);
    }

    /// A hot launch's accesses: near-root objects, foreground-young objects, a sample of other
    /// live units, and the launch share of the file pages.
    pub fn hot_launch(&mut self, rt: &mut Runtime, k: &mut Kernel) -> LaunchAccess {
        let t0 = rt.mutator.now;
        let maj0 = rt.mutator.bd.major_faults_zram + rt.mutator.bd.major_faults_flash_swap + rt.mutator.bd.major_faults_file;
        let mut la = LaunchAccess::default();
        k.advance_to(rt.mutator.now);
        let near = self.near.clone();
        for o in near {
            if self.rng.gen::<f64>() < self.p.launch_near_share && rt.heap.objs.is_live(o) {
                rt.read(k, o);
                la.near_root += 1;
            }
        }
        let fyo = std::mem::take(&mut self.fyo);
        for u in &fyo {
            if self.current(rt, u) {
                rt.read(k, u.obj);
                la.foreground_young += 1;
            }
        }
        self.fyo = fyo;
        let n = (self.long_slots.len() as f64 * self.p.launch_other_share) as usize;
        for _ in 0..n {
            let u = self.long_slots[self.rng.gen_range(0..self.long_slots.len())];
            if self.current(rt, &u) {
                self.read_unit(rt, k, u.obj);
                la.other += 1;
            }
        }
        if let Some(v) = self.file_vma {
            // The hot launch reads the same scattered runs as a cold one, fewer of them.
            let share = if self.p.launch_file_share > 0.0 { (self.p.hot_launch_file_share / self.p.launch_file_share).min(1.0) } else { 0.0 };
            let n = (self.launch_run_count as f64 * share).round() as usize;
            self.read_launch_runs(rt, k, v, n);
        }
        k.book_cpu(&mut rt.mutator);
        la.objects = la.near_root + la.foreground_young + la.other;
        la.time_ns = rt.mutator.now - t0;
        la.major_faults = rt.mutator.bd.major_faults_zram + rt.mutator.bd.major_faults_flash_swap + rt.mutator.bd.major_faults_file - maj0;
        la
    }
}

/// How many leading runs of `runs` it takes to cover `share` of a file of `file_pages` (the
/// count [`launch_runs`] stops at when drawn for that share).
fn runs_covering(runs: &[(u32, u32)], file_pages: u32, share: f64) -> usize {
    let want = ((file_pages as f64 * share) as u32).min(file_pages);
    if want == 0 {
        return 0;
    }
    let mut n = 0u32;
    for (i, &(_, c)) in runs.iter().enumerate() {
        n += c;
        if n >= want {
            return i + 1;
        }
    }
    runs.len()
}

/// The runs of file pages a launch reads: runs of geometric length (mean `run_pages`) at
/// uniformly random places in a file of `file_pages`, in the order drawn, until they cover
/// `share` of the file; a run's pages already covered by earlier runs are left out (so the runs
/// are disjoint and a leading share of them is that share of the pages). Launch I/O is
/// scattered: class loading and resource lookups read small pieces all over the APK and its
/// libraries (AOSP iorap's recorded launch traces).
fn launch_runs(file_pages: u32, share: f64, run_pages: f64, seed: u64) -> Vec<(u32, u32)> {
    let want = ((file_pages as f64 * share) as u32).min(file_pages);
    let mut runs = Vec::new();
    if want == 0 {
        return runs;
    }
    let mut rng = stream(seed, 0x4150_4b00, "launch-runs");
    let mut covered = vec![false; file_pages as usize];
    let mut n = 0u32;
    // P(length = k) = (1 - q) q^(k-1) has mean 1 / (1 - q).
    let q = 1.0 - 1.0 / run_pages.max(1.0);
    while n < want {
        let u: f64 = 1.0 - rng.gen::<f64>();
        let len = if q > 0.0 { 1 + (u.ln() / q.ln()) as u32 } else { 1 };
        let first = rng.gen_range(0..file_pages);
        let end = first + len.min(file_pages - first);
        // The uncovered stretches of [first, end), each a run.
        let mut pg = first;
        while pg < end {
            let start = pg;
            while pg < end && !covered[pg as usize] {
                covered[pg as usize] = true;
                pg += 1;
            }
            if pg > start {
                runs.push((start, pg - start));
                n += pg - start;
            } else {
                pg += 1;
            }
        }
    }
    runs
}

/// `x.round()` for `0 <= x < 2^52`, without the libm call `f64::round` compiles to on baseline
/// x86-64 (no SSE4.1 `roundsd`): it was about 1 % of a session, drawn once per object. Exact:
/// the truncation and the subtraction of the integer part are both exact in that range, and
/// halves round away from zero as `f64::round` does.
#[inline]
fn round_nonneg(x: f64) -> f64 {
    debug_assert!((0.0..4503599627370496.0).contains(&x), "round_nonneg({x})");
    let i = x as u64 as f64;
    if x - i >= 0.5 {
        i + 1.0
    } else {
        i
    }
}

#[cfg(test)]
mod tests {
    use super::round_nonneg;
    use proptest::prelude::*;

    #[test]
    fn round_nonneg_matches_round_at_the_edges() {
        for x in [0.0, 0.5, 1.5, 2.5, 0.49999999999999994, 1.4999999999999998, 4503599627370495.5, 1e15 + 0.5, 7.0] {
            assert_eq!(round_nonneg(x).to_bits(), x.round().to_bits(), "{x}");
        }
    }

    proptest! {
        #[test]
        fn round_nonneg_matches_round(x in 0.0f64..4.5e15, u in 0.0f64..1.0, m in 0.0f64..600.0) {
            prop_assert_eq!(round_nonneg(x).to_bits(), x.round().to_bits());
            // The draws it serves: a uniform variate times twice a mean.
            let y = u * 2.0 * m;
            prop_assert_eq!(round_nonneg(y).to_bits(), y.round().to_bits());
        }
    }
}
