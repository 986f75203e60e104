//! The processes that are always there: the zygote and the system processes.
//!
//! The **zygote** owns a runtime whose boot image and zygote space every app shares (the
//! runtime maps them by file name, so their pages are shared through the page cache), its own
//! native heap, and the framework code every app maps (`framework` by name, shared likewise).
//! **System processes** (system_server, SystemUI, persistent services, SurfaceFlinger, the
//! launcher) have anonymous and file-backed memory sized from `data/system.toml` and a steady
//! background activity: every 100 ms each re-references a slice of its hot pages and does some
//! CPU work. They are never killed by the ActivityManager; lmkd kills only what its adj allows
//! (the launcher, at adj 600, can be killed and is restarted at the next press of home).
//!
//! Left out: binder transactions as such, system_server's own Java heap and GC, SurfaceFlinger's
//! composition of app buffers (apps' graphics memory is counted in the apps).

use super::inputs::{SysProcSpec, ZygoteSpec};
use mobmem_engine::rng::{stream, Stream};
use mobmem_engine::Nanos;
use mobmem_kernel::{Kernel, Task};
use mobmem_engine::rng::Rng;

/// The activity period of system processes.
pub const SYS_PERIOD_NS: Nanos = 100_000_000;

/// File name of the framework code shared by the zygote and every app.
pub const FRAMEWORK_FILE: &str = "framework-code";

pub struct SysProc {
    pub spec: SysProcSpec,
    pub proc_idx: u32,
    pub task: Task,
    anon_vma: Option<u32>,
    anon_pages: u32,
    file_vma: Option<u32>,
    file_pages: u32,
    next_at: Nanos,
    rng: Stream,
    /// Starts (1 + restarts after kills).
    pub starts: u32,
}

fn pages(mib: f64) -> u32 {
    (mib * 256.0).round() as u32
}

impl SysProc {
    /// Start the process at `now`: map and populate its memory.
    pub fn start(k: &mut Kernel, spec: &SysProcSpec, pid: u32, seed: u64, now: Nanos) -> Result<Self, String> {
        let proc_idx = k.create_process(pid, &spec.name, spec.adj, now).map_err(|e| e.to_string())?;
        let mut task = Task::new(k.thread_of(proc_idx), proc_idx, now);
        let anon_pages = pages(spec.anon_mib);
        let file_pages = pages(spec.file_mib);
        let anon_vma = if anon_pages > 0 { Some(k.map_anon(proc_idx, "[anon:libc_malloc]", anon_pages).map_err(|e| e.to_string())?) } else { None };
        // Each process's own code/resources; named per process so they are not shared.
        let file_vma = if file_pages > 0 {
            Some(k.map_file(proc_idx, "code", &format!("{}.code", spec.name), file_pages, true).map_err(|e| e.to_string())?)
        } else {
            None
        };
        if let Some(v) = anon_vma {
            for pg in 0..anon_pages {
                k.touch(&mut task, v, pg, true);
            }
        }
        if let Some(v) = file_vma {
            for pg in 0..file_pages {
                k.touch(&mut task, v, pg, false);
            }
        }
        k.book_cpu(&mut task);
        let rng = stream(seed, pid as u64, "sysproc");
        Ok(Self { spec: spec.clone(), proc_idx, task, anon_vma, anon_pages, file_vma, file_pages, next_at: now, rng, starts: 1 })
    }

    pub fn alive(&self, k: &Kernel) -> bool {
        k.procs[self.proc_idx as usize].alive
    }

    /// Run the background activity up to `until`.
    pub fn run_until(&mut self, k: &mut Kernel, until: Nanos) {
        while self.next_at < until {
            if !self.alive(k) {
                return;
            }
            if self.task.now < self.next_at {
                self.task.now = self.next_at;
            }
            let n = (self.spec.touches_per_s as u64 * SYS_PERIOD_NS / 1_000_000_000) as u32;
            for _ in 0..n {
                let file = self.file_vma.is_some() && (self.anon_vma.is_none() || self.rng.gen::<f64>() < 0.3);
                let (v, total) = if file { (self.file_vma, self.file_pages) } else { (self.anon_vma, self.anon_pages) };
                let Some(v) = v else { continue };
                let hot = ((total as f64 * self.spec.hot_share) as u32).max(1);
                let pg = self.rng.gen_range(0..hot);
                let write = !file && self.rng.gen::<f64>() < 0.3;
                k.touch(&mut self.task, v, pg, write);
                if self.task.killed {
                    return;
                }
            }
            self.task.cpu((self.spec.cpu_ms_per_s * 1e6 * SYS_PERIOD_NS as f64 / 1e9) as Nanos);
            k.book_cpu(&mut self.task);
            self.next_at += SYS_PERIOD_NS;
        }
    }

    /// CPU work done on behalf of another process (binding an app), starting no earlier than
    /// `at`. Returns when it is done.
    pub fn work(&mut self, k: &mut Kernel, at: Nanos, ns: Nanos) -> Nanos {
        if self.task.now < at {
            self.task.now = at;
        }
        self.task.cpu(ns);
        k.book_cpu(&mut self.task);
        self.task.now
    }

    /// The launcher draws the home screen: re-reference its hot pages.
    pub fn draw(&mut self, k: &mut Kernel, at: Nanos) {
        if self.task.now < at {
            self.task.now = at;
        }
        for (v, total) in [(self.anon_vma, self.anon_pages), (self.file_vma, self.file_pages)] {
            if let Some(v) = v {
                let hot = (total as f64 * self.spec.hot_share) as u32;
                for pg in 0..hot {
                    k.touch(&mut self.task, v, pg, false);
                }
            }
        }
        k.book_cpu(&mut self.task);
    }
}

/// The zygote: a runtime (boot image, zygote space), native heap, and the framework code.
pub struct Zygote {
    pub proc_idx: u32,
    pub runtime: mobmem_runtime::Runtime,
    pub framework_pages: u32,
    pub fork_ns: Nanos,
}

impl Zygote {
    pub fn start(k: &mut Kernel, spec: &ZygoteSpec, cfg: mobmem_runtime::RuntimeConfig, pid: u32) -> Result<Self, String> {
        let mut runtime = mobmem_runtime::Runtime::new(k, pid, "zygote64", -1000, cfg, 0)?;
        runtime.keep_log = false;
        let pi = runtime.proc_idx;
        let t = &mut runtime.mutator;
        // Preloading touches the boot image and the zygote space.
        for name in ["boot.art", "dalvik-zygote space"] {
            if let Ok(v) = k.vma_index(pi, name) {
                let n = k.vmas[v as usize].npages;
                for pg in 0..n {
                    k.touch(t, v, pg, false);
                }
            }
        }
        let np = pages(spec.native_anon_mib);
        if np > 0 {
            let v = k.map_anon(pi, "[anon:libc_malloc]", np).map_err(|e| e.to_string())?;
            for pg in 0..np {
                k.touch(t, v, pg, true);
            }
        }
        let framework_pages = pages(spec.framework_code_mib);
        if framework_pages > 0 {
            let v = k.map_file(pi, "framework", FRAMEWORK_FILE, framework_pages, true).map_err(|e| e.to_string())?;
            // The zygote preloads (reads) about half of the framework code (estimate).
            for pg in 0..framework_pages / 2 {
                k.touch(t, v, pg, false);
            }
        }
        k.book_cpu(t);
        Ok(Self { proc_idx: pi, runtime, framework_pages, fork_ns: (spec.fork_ms * 1e6) as Nanos })
    }
}
