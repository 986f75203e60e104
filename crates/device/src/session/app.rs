//! A running app: its process, runtime and mutator workload, graphics buffers and framework
//! mapping, and what happens to it in each lifecycle step — cold launch, hot launch, frames in
//! the foreground, background activity, home.
//!
//! **Launch time** is time to initial display (TTID): from the launch request to the end of the
//! first frame. Its breakdown is read from the model's state, not estimated: the app's mutator
//! task records its CPU wait, minor and major faults by kind (zram / flash swap / file) with their
//! time, and direct-reclaim stalls; the runtime records the mutator's waits for the GC; the
//! system part (system_server binding, the zygote's fork) is the time before the app's thread
//! starts. `cpu_ms` is the compute the app model charged to the main thread (launch work,
//! allocation, barriers, object accesses) and `idle_ms` its idle time other than GC waits; the
//! components sum to the TTID to the nanosecond (a debug assertion and a session test check it).
//!
//! **Graphics memory** (gralloc/dmabuf window buffers, the renderer's GPU textures in kgsl/ion)
//! is modelled as locked anonymous mappings: real graphics memory is not on the LRU at all, and
//! an mlocked mapping is the nearest thing the kernel model has. Two parts: the window's buffers
//! and the GPU cache above the background limit, allocated when the app becomes visible and
//! released when it goes to the background (the window manager destroys a stopped activity's
//! surface; HWUI's `TRIM_MEMORY_UI_HIDDEN` trim purges its GPU cache down to the limit); and the
//! textures the cache keeps (up to the device's `gpu_cache_background_mib`), held from the first
//! frame until the process dies. So a cached app keeps memory that neither reclaim nor swap can
//! take. Left out: the later purge of textures unused for some seconds (HWUI's
//! `trimStaleResources`), since the app drew them just before it was hidden.
//!
//! Left out: multiple activities, services, the swipe pattern of use (frames are uniform),
//! RenderThread as a separate thread (its work is part of the frame).

use super::inputs::AppSpec;
use crate::activity_manager::trim;
use mobmem_engine::Nanos;
use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Breakdown, Kernel};
use mobmem_runtime::workload::Workload;
use mobmem_runtime::{AppState, Runtime};
use serde::Serialize;

/// Where a launch's time went (milliseconds unless a count).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LaunchBreakdown {
    /// Before the app's main thread runs: system_server's work, the zygote's fork.
    pub(crate) system_ms: f64,
    /// The app's own compute (launch work, allocation, object accesses).
    pub(crate) cpu_ms: f64,
    pub(crate) cpu_wait_ms: f64,
    /// Extra CPU time because the core was slower than the reference core at its top frequency
    /// (a little core, or a lower frequency).
    pub(crate) cpu_slow_ms: f64,
    pub(crate) minor_faults: u64,
    pub(crate) minor_fault_ms: f64,
    pub(crate) major_faults_zram: u64,
    pub(crate) major_fault_zram_ms: f64,
    pub(crate) major_faults_flash_swap: u64,
    pub(crate) major_fault_flash_swap_ms: f64,
    pub(crate) major_faults_file: u64,
    pub(crate) major_fault_file_ms: f64,
    /// Waits for file pages still being read by readahead.
    pub(crate) file_read_waits: u64,
    pub(crate) file_read_wait_ms: f64,
    /// Objects read back from the app's own swap file (object-granularity swap, e.g. Marvin's
    /// swap-in pause on returning to the foreground).
    pub(crate) object_swap_ins: u64,
    pub(crate) object_swap_in_ms: f64,
    pub(crate) reclaim_stall_ms: f64,
    pub(crate) allocstalls: u64,
    /// The main thread waiting for the GC (pauses, blocking collections).
    pub(crate) gc_wait_ms: f64,
    /// The main thread idle for any other reason (waiting for the first frame's vsync).
    pub(crate) idle_ms: f64,
    /// Collections that ran during the launch, on any of the app's threads.
    pub(crate) gcs: u64,
    pub(crate) gc_cpu_ms: f64,
}

impl LaunchBreakdown {
    pub fn major_faults(&self) -> u64 {
        self.major_faults_zram + self.major_faults_flash_swap + self.major_faults_file
    }
    pub fn major_fault_ms(&self) -> f64 {
        self.major_fault_zram_ms + self.major_fault_flash_swap_ms + self.major_fault_file_ms
    }
}

/// Objects a hot launch touched, by class (docs/runtime.md, "Launch access set").
#[derive(Clone, Debug, Default, Serialize)]
pub struct LaunchObjects {
    pub(crate) near_root: u64,
    pub(crate) foreground_young: u64,
    pub(crate) other: u64,
}

/// The app's heap pages of one region class at a hot launch: in swap when it started, in swap
/// when its first frame was drawn, resident when it started (what a placement policy's classes
/// held where, and what the launch brought back).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LaunchClassPages {
    pub(crate) class: String,
    pub(crate) pages: u64,
    pub(crate) resident_before: u64,
    pub(crate) swapped_before: u64,
    pub(crate) swapped_after: u64,
}

fn launch_class_pages(before: Vec<mobmem_runtime::heap::ClassPages>, after: &[mobmem_runtime::heap::ClassPages]) -> Vec<LaunchClassPages> {
    before
        .into_iter()
        .map(|b| {
            let swapped_after = after.iter().find(|a| a.class == b.class).map_or(0, |a| a.swapped);
            LaunchClassPages { class: b.class, pages: b.pages, resident_before: b.resident, swapped_before: b.swapped, swapped_after }
        })
        .collect()
}

#[derive(Clone, Debug, Serialize)]
pub struct LaunchRecord {
    pub(crate) index: u32,
    pub(crate) t_s: f64,
    pub(crate) app: String,
    /// "cold" or "hot".
    pub(crate) kind: &'static str,
    /// A cold launch of an app that had been running before and was killed.
    pub(crate) relaunch: bool,
    /// A warm-up launch (the script's `warmup = true`): left out of the launch statistics.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) warmup: bool,
    pub(crate) ttid_ms: f64,
    pub(crate) breakdown: LaunchBreakdown,
    pub(crate) objects: LaunchObjects,
    /// Hot launches: the heap's pages by region class before and after (empty for cold ones).
    pub(crate) heap_pages: Vec<LaunchClassPages>,
    /// Apps of the scenario alive right after this launch (this one included).
    pub(crate) alive_after: u32,
    pub(crate) cached_after: u32,
}

/// Frames of an app in the foreground.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct FrameStats {
    pub(crate) frames: u64,
    pub(crate) janky: u64,
    /// Vsyncs that passed without a new frame because the previous one overran.
    pub(crate) missed_vsyncs: u64,
    pub(crate) max_frame_ms: f64,
}

impl FrameStats {
    pub fn add(&mut self, o: &FrameStats) {
        self.frames += o.frames;
        self.janky += o.janky;
        self.missed_vsyncs += o.missed_vsyncs;
        self.max_frame_ms = self.max_frame_ms.max(o.max_frame_ms);
    }
}

/// One incarnation of an app's process.
pub struct Live {
    pub(crate) pid: u32,
    pub proc_idx: u32,
    pub(crate) rt: Runtime,
    pub(crate) w: Workload,
    /// Released when hidden: the window's buffers and the GPU cache above the background limit.
    gfx_vma: Option<u32>,
    gfx_pages: u32,
    /// Kept when hidden (locked from the first frame until the process dies): the textures the
    /// renderer's GPU cache retains in the background.
    gpu_cache_vma: Option<u32>,
    gpu_cache_pages: u32,
    fw_vma: Option<u32>,
    fw_pages: u32,
    zygote_vma: Option<u32>,
    zygote_pages: u32,
    /// Threads the process starts in its cold launch (`system.app_threads`).
    pub(crate) threads: u32,
    pub(crate) visible: bool,
    pub(crate) frozen: bool,
    /// Cached and idle: no units of work until the app leaves the cache (see
    /// `system.cached_app_work`).
    pub(crate) idle: bool,
    pub(crate) frames: FrameStats,
    /// Janky frames: (vsync, duration).
    pub(crate) janky_frames: Vec<(Nanos, Nanos)>,
    /// Frames drawn so far (for the framework-code touch pattern).
    frame_no: u64,
}

/// Snapshot of the counters a launch breakdown is the difference of.
struct Snap {
    t: Nanos,
    bd: Breakdown,
    idle: Nanos,
    wait: Nanos,
    gcs: usize,
    gc_cpu: Nanos,
}

impl Live {
    fn snap(&self) -> Snap {
        Snap {
            t: self.rt.mutator.now,
            bd: self.rt.mutator.bd,
            idle: self.rt.mutator_idle_ns,
            wait: self.rt.stats.mutator_wait_ns,
            gcs: self.rt.records.len(),
            gc_cpu: self.rt.gc_cpu_ns(),
        }
    }

    fn breakdown_since(&self, s: &Snap, system_ns: Nanos) -> LaunchBreakdown {
        let d = self.rt.mutator.bd.since(&s.bd);
        let elapsed = self.rt.mutator.now - s.t;
        // Waits for the GC are part of the runtime's idle time (the mutator's clock moves on
        // while it is stopped); the rest of the idle time is the main thread's own.
        let idle = self.rt.mutator_idle_ns - s.idle;
        let wait = self.rt.stats.mutator_wait_ns - s.wait;
        debug_assert!(wait <= idle, "GC waits {wait} ns exceed the idle time {idle} ns");
        // Every nanosecond of the main thread's clock is booked to one component.
        debug_assert_eq!(d.total_ns() + idle, elapsed, "launch breakdown does not cover the main thread's time: {d:?}, idle {idle} ns");
        let ms = |ns: Nanos| ns as f64 / 1e6;
        LaunchBreakdown {
            system_ms: ms(system_ns),
            cpu_ms: ms(d.cpu_ns),
            cpu_wait_ms: ms(d.cpu_wait_ns),
            cpu_slow_ms: ms(d.cpu_slow_ns),
            minor_faults: d.minor_faults,
            minor_fault_ms: ms(d.minor_fault_ns),
            major_faults_zram: d.major_faults_zram,
            major_fault_zram_ms: ms(d.major_fault_zram_ns),
            major_faults_flash_swap: d.major_faults_flash_swap,
            major_fault_flash_swap_ms: ms(d.major_fault_flash_swap_ns),
            major_faults_file: d.major_faults_file,
            major_fault_file_ms: ms(d.major_fault_file_ns),
            file_read_waits: d.file_read_waits,
            file_read_wait_ms: ms(d.file_read_wait_ns),
            object_swap_ins: d.object_swap_ins,
            object_swap_in_ms: ms(d.object_swap_in_ns),
            reclaim_stall_ms: ms(d.reclaim_stall_ns),
            allocstalls: d.allocstalls,
            gc_wait_ms: ms(wait),
            idle_ms: ms(idle - wait),
            gcs: (self.rt.records.len() - s.gcs) as u64,
            gc_cpu_ms: ms(self.rt.gc_cpu_ns() - s.gc_cpu),
        }
    }

    /// Fork the process from the zygote at `t`, attach its runtime (which finds the boot image
    /// and the zygote space inherited), and map its graphics buffers.
    pub fn spawn(
        k: &mut Kernel,
        spec: &AppSpec,
        pid: u32,
        rcfg: mobmem_runtime::RuntimeConfig,
        policies: &[String],
        zygote: &super::system::Zygote,
        t: Nanos,
    ) -> Result<Self, String> {
        let pi = k.fork_process(zygote.proc_idx, pid, &spec.name, crate::activity_manager::FOREGROUND_APP_ADJ, t).map_err(|e| e.to_string())?;
        let mut rt = Runtime::attach(k, pi, rcfg, t)?;
        rt.keep_log = false;
        // The session samples memory itself; the runtime's per-app footprint series is not kept.
        rt.sample_interval_ns = 0;
        for p in policies {
            rt.install_policy(p)?;
        }
        let framework_pages = zygote.framework_pages;
        let fw_vma = k.vma_index(pi, "framework").ok();
        let zygote_vma = k.vma_index(pi, mobmem_runtime::heap::ZYGOTE_SPACE_VMA).ok();
        let gfx_pages = spec.graphics_pages - spec.gpu_cache_kept_pages;
        // Graphics buffers come from a driver (gralloc/ION, KGSL): unmovable pages.
        let gfx_map = |k: &mut Kernel, name: &str, n: u32| -> Result<u32, String> {
            let v = k.map_anon(pi, name, n).map_err(|e| e.to_string())?;
            k.set_unmovable(v).map_err(|e| e.to_string())?;
            Ok(v)
        };
        let gfx_vma = if gfx_pages > 0 { Some(gfx_map(k, "[anon:graphics]", gfx_pages)?) } else { None };
        let gpu_cache_vma = if spec.gpu_cache_kept_pages > 0 { Some(gfx_map(k, "[anon:graphics] gpu cache", spec.gpu_cache_kept_pages)?) } else { None };
        let w = Workload::new(spec.workload.clone());
        Ok(Self {
            pid,
            proc_idx: pi,
            rt,
            w,
            gfx_vma,
            gfx_pages,
            gpu_cache_vma,
            gpu_cache_pages: spec.gpu_cache_kept_pages,
            fw_vma,
            fw_pages: framework_pages,
            zygote_vma,
            zygote_pages: zygote.zygote_space_pages,
            threads: 1,
            visible: false,
            frozen: false,
            idle: false,
            frames: FrameStats::default(),
            janky_frames: Vec::new(),
            frame_no: 0,
        })
    }

    pub fn alive(&self, k: &Kernel) -> bool {
        k.procs[self.proc_idx as usize].alive && !self.rt.mutator.killed
    }

    /// Allocate and fill the graphics buffers (becoming visible).
    fn attach_surface(&mut self, k: &mut Kernel) {
        if let Some(v) = self.gfx_vma {
            k.mlock(&mut self.rt.mutator, v, 0, self.gfx_pages);
        }
        if let Some(v) = self.gpu_cache_vma {
            if !k.vmas[v as usize].locked {
                k.mlock(&mut self.rt.mutator, v, 0, self.gpu_cache_pages);
            }
        }
        self.visible = true;
    }

    /// Release the graphics buffers (going invisible).
    fn detach_surface(&mut self, k: &mut Kernel) {
        if let Some(v) = self.gfx_vma {
            k.munlock(v);
            let _ = k.madvise(&mut self.rt.mutator, v, 0, self.gfx_pages, Advice::DontNeed);
        }
        self.visible = false;
    }

    /// One frame at vsync: the app's unit of work plus framework code; `budget` is the vsync
    /// period. Returns false on Java OOM.
    pub fn frame(&mut self, k: &mut Kernel, budget: Nanos) -> bool {
        let vsync = self.w.next_unit_at;
        let at = vsync.max(self.rt.mutator.now);
        self.rt.mutator_idle_until(at);
        k.advance_to(self.rt.mutator.now);
        self.rt.poll(k);
        if !self.w.unit_of_work(&mut self.rt, k) {
            return false;
        }
        if let Some(v) = self.fw_vma {
            // Framework code (view system, hwui): a few pages per frame from its hot part.
            let hot = (self.fw_pages / 4).max(1) as u64;
            for j in 0..4u64 {
                let pg = ((self.frame_no * 4 + j).wrapping_mul(0x9E37_79B9) % hot) as u32;
                k.touch(&mut self.rt.mutator, v, pg, false);
            }
            k.book_cpu(&mut self.rt.mutator);
        }
        self.frame_no += 1;
        self.rt.poll(k);
        let end = self.rt.mutator.now;
        let dur = end - vsync;
        self.frames.frames += 1;
        if dur > budget {
            self.frames.janky += 1;
            self.janky_frames.push((vsync, dur));
        }
        self.frames.max_frame_ms = self.frames.max_frame_ms.max(dur as f64 / 1e6);
        // The next frame starts at the first vsync after this one ends.
        self.w.next_unit_at = vsync + budget;
        while self.w.next_unit_at < end {
            self.w.next_unit_at += budget;
            self.frames.missed_vsyncs += 1;
        }
        true
    }

    /// Run up to `until`: frames while visible, background units otherwise. False on Java OOM.
    pub fn run_until(&mut self, k: &mut Kernel, until: Nanos, budget: Nanos) -> bool {
        if self.frozen {
            return true;
        }
        if self.visible {
            while self.w.next_unit_at < until {
                if !self.alive(k) {
                    return true;
                }
                if !self.frame(k, budget) {
                    return false;
                }
            }
            true
        } else if self.idle {
            self.w.idle_until(&mut self.rt, k, until);
            true
        } else {
            self.w.run_until(&mut self.rt, k, until)
        }
    }

    /// Cold launch, from `t0` (the request) with the app's thread starting at `t_start` (after
    /// binding and fork). Returns (ttid, breakdown) or None if the app died or ran out of memory.
    pub fn cold_launch(&mut self, k: &mut Kernel, spec: &AppSpec, t0: Nanos, budget: Nanos) -> Option<(Nanos, LaunchBreakdown)> {
        let s = self.snap();
        let system_ns = s.t - t0;
        k.advance_to(self.rt.mutator.now);
        // The app's threads start: a kernel stack each (allocated only with kernel.buddy, where
        // the order-2 allocation may compact, reclaim or invoke the OOM killer).
        if !k.alloc_kernel_stacks(&mut self.rt.mutator, self.proc_idx, self.threads) || !self.alive(k) {
            return None;
        }
        if let Some(v) = self.fw_vma {
            let n = (self.fw_pages as f64 * spec.framework_read_share) as u32;
            for pg in 0..n {
                k.touch(&mut self.rt.mutator, v, pg, false);
                // Kernel threads (kswapd, lmkd) run alongside the launch.
                k.sync(&mut self.rt.mutator);
            }
        }
        // Class initialisation writes statics and lock words of preloaded classes: those zygote
        // space pages are copied (COW) into the app (estimate: a tenth of the zygote space;
        // `dumpsys meminfo` shows a few MB of private dirty .art/zygote pages per app).
        if let Some(v) = self.zygote_vma {
            let n = self.zygote_pages;
            for j in 0..n / 10 {
                k.touch(&mut self.rt.mutator, v, (j * 10) % n, true);
                k.sync(&mut self.rt.mutator);
            }
        }
        // bindApplication and the first activity: the heap's start-up structure, native heap,
        // code and resources, written as the start-up's CPU work runs.
        self.w.build_paced(&mut self.rt, k, spec.cold_cpu_ns);
        if self.w.oom || !self.alive(k) {
            return None;
        }
        self.attach_surface(k);
        self.w.next_unit_at = self.rt.mutator.now;
        if !self.alive(k) || !self.frame(k, budget) || !self.alive(k) {
            return None;
        }
        Some((self.rt.mutator.now - t0, self.breakdown_since(&s, system_ns)))
    }

    /// Hot launch at `t0`; the app's thread resumes at `t_start` (after system_server's work).
    pub fn hot_launch(
        &mut self,
        k: &mut Kernel,
        spec: &AppSpec,
        t0: Nanos,
        t_start: Nanos,
        budget: Nanos,
    ) -> Option<(Nanos, LaunchBreakdown, LaunchObjects, Vec<LaunchClassPages>)> {
        self.frozen = false;
        self.idle = false;
        self.rt.mutator_idle_until(t_start);
        k.advance_to(self.rt.mutator.now);
        self.rt.poll(k);
        let pages_before = self.rt.heap.pages_by_class(k);
        let s = self.snap();
        let system_ns = s.t.saturating_sub(t0);
        self.w.set_state(&mut self.rt, AppState::Foreground);
        self.rt.resume_foreground(k);
        self.rt.compute(k, spec.hot_cpu_ns);
        let la = self.w.hot_launch(&mut self.rt, k);
        self.attach_surface(k);
        self.w.next_unit_at = self.rt.mutator.now;
        if !self.alive(k) || !self.frame(k, budget) || !self.alive(k) {
            return None;
        }
        let objs = LaunchObjects { near_root: la.near_root, foreground_young: la.foreground_young, other: la.other };
        let pages = launch_class_pages(pages_before, &self.rt.heap.pages_by_class(k));
        Some((self.rt.mutator.now - t0, self.breakdown_since(&s, system_ns), objs, pages))
    }

    /// The user leaves the app (home or another app): it goes to the background and gets
    /// `TRIM_MEMORY_UI_HIDDEN` (with or without the ActivityManager's memory factor).
    pub fn to_background(&mut self, k: &mut Kernel, now: Nanos) {
        self.rt.mutator_idle_until(now);
        self.detach_surface(k);
        self.trim_memory(k, trim::UI_HIDDEN, now);
        self.w.set_state(&mut self.rt, AppState::Background);
        self.w.next_unit_at = self.w.next_unit_at.max(self.rt.mutator.now);
    }

    /// `onTrimMemory(level)` on the app's main thread at `now` (`ActivityThread.handleTrimMemory`):
    /// its caches (`Workload::trim_native`: half at `UI_HIDDEN` and `RUNNING_CRITICAL`, all from
    /// `BACKGROUND` up) and, from `COMPLETE` up on a hidden app, the renderer's GPU cache
    /// (`WindowManagerGlobal.trimMemory` destroys the windows' hardware resources and HWUI frees
    /// its whole cache; on a high-end-graphics phone only at `COMPLETE`). The GPU cache is taken
    /// again when the app is next visible.
    pub fn trim_memory(&mut self, k: &mut Kernel, level: u32, now: Nanos) {
        self.rt.mutator_idle_until(now);
        let halves = match level {
            l if l >= trim::BACKGROUND => 2,
            trim::UI_HIDDEN | trim::RUNNING_CRITICAL => 1,
            _ => 0,
        };
        if halves > 0 {
            self.w.trim_native(&mut self.rt, k, halves);
        }
        if level >= trim::COMPLETE && !self.visible {
            if let Some(v) = self.gpu_cache_vma.filter(|&v| k.vmas[v as usize].locked) {
                k.munlock(v);
                let _ = k.madvise(&mut self.rt.mutator, v, 0, self.gpu_cache_pages, Advice::DontNeed);
            }
        }
        k.book_cpu(&mut self.rt.mutator);
    }

    /// Android's cached-app compaction (CachedAppOptimizer): process_madvise PAGEOUT on the
    /// app's anon mappings, COLD on its file mappings, done by system_server's thread `t`.
    pub fn compact(&self, k: &mut Kernel, t: &mut mobmem_kernel::Task) {
        let vmas = k.procs[self.proc_idx as usize].vmas.clone();
        for v in vmas {
            let (file, n, locked) = {
                let m = &k.vmas[v as usize];
                (m.file, m.npages, m.locked)
            };
            if locked {
                continue;
            }
            let advice = if file { Advice::Cold } else { Advice::PageOut };
            let _ = k.madvise(t, v, 0, n, advice);
        }
        k.book_cpu(t);
    }
}
