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
//! Preinstalled apps' processes (`cached = true`) are the same, but cached without activities:
//! the ActivityManager sets their adj and may trim them, and they are not restarted. Apps'
//! secondary processes (an app profile's `[[process]]`) run as such processes too, started by
//! their app (see the session's `start_secondary`); they write their memory evenly over their
//! `populate_ms` (processes started at boot, before the session begins, at once).
//!
//! Left out: binder transactions as such, system_server's own Java heap and GC, SurfaceFlinger's
//! composition of app buffers (apps' graphics memory is counted in the apps).

use super::inputs::{SysProcSpec, ZygoteSpec};
use mobmem_engine::rng::Rng;
use mobmem_engine::rng::{stream, Stream};
use mobmem_engine::Nanos;
use mobmem_kernel::{Kernel, Task};

/// The activity period of system processes.
pub const SYS_PERIOD_NS: Nanos = 100_000_000;

/// File name of the framework code shared by the zygote and every app.
pub const FRAMEWORK_FILE: &str = "framework-code";

pub struct SysProc {
    pub(crate) spec: SysProcSpec,
    pub(crate) proc_idx: u32,
    pub(crate) task: Task,
    anon_vma: Option<u32>,
    anon_pages: u32,
    file_vma: Option<u32>,
    file_pages: u32,
    /// Pages touched so far by its start (anonymous first, then file).
    populated: u32,
    started_at: Nanos,
    /// Time over which its start populates its memory (0: at once).
    populate_ns: Nanos,
    next_at: Nanos,
    rng: Stream,
    /// Starts (1 + restarts after kills).
    pub(crate) starts: u32,
}

fn pages(mib: f64) -> u32 {
    (mib * 256.0).round() as u32
}

impl SysProc {
    /// Start the process at `now`: map and populate its memory.
    pub fn start(k: &mut Kernel, spec: &SysProcSpec, pid: u32, seed: u64, now: Nanos) -> Result<Self, String> {
        let proc_idx = k.create_process(pid, &spec.name, spec.adj, now).map_err(|e| e.to_string())?;
        let task = Task::new(k.thread_of(proc_idx), proc_idx, now);
        k.cpus.set_class(task.thread, mobmem_engine::cpufreq::Class::System);
        let anon_pages = pages(spec.anon_mib);
        let file_pages = pages(spec.file_mib);
        let anon_vma = if anon_pages > 0 { Some(k.map_anon(proc_idx, "[anon:libc_malloc]", anon_pages).map_err(|e| e.to_string())?) } else { None };
        // Each process's own code/resources; named per process so they are not shared.
        let file_vma = if file_pages > 0 {
            Some(k.map_file(proc_idx, "code", &format!("{}.code", spec.name), file_pages, true).map_err(|e| e.to_string())?)
        } else {
            None
        };
        let rng = stream(seed, pid as u64, "sysproc");
        let populate_ns = (spec.populate_ms * 1e6).round() as Nanos;
        let mut p = Self {
            spec: spec.clone(),
            proc_idx,
            task,
            anon_vma,
            anon_pages,
            file_vma,
            file_pages,
            populated: 0,
            started_at: now,
            populate_ns,
            next_at: now + populate_ns,
            rng,
            starts: 1,
        };
        if populate_ns == 0 {
            p.populate(k, Nanos::MAX);
        }
        Ok(p)
    }

    /// Touch its pages not yet populated whose turn comes before `until` (anonymous first,
    /// then its code), evenly over `populate_ns` from the start. Returns whether all are.
    /// Kernel threads (kswapd, lmkd) run alongside each page, as beside an app's launch:
    /// without the sync a start's whole fault burst ran before kswapd could take a page, so
    /// every page past the low watermark was reclaimed directly.
    fn populate(&mut self, k: &mut Kernel, until: Nanos) -> bool {
        let total = self.anon_pages as u64 + self.file_pages as u64;
        while (self.populated as u64) < total {
            let at = self.started_at + (self.populate_ns as u128 * self.populated as u128 / total as u128) as Nanos;
            if at >= until {
                break;
            }
            if self.task.now < at {
                self.task.now = at;
            }
            let (v, pg, write) = match self.populated.checked_sub(self.anon_pages) {
                None => (self.anon_vma, self.populated, true),
                Some(pg) => (self.file_vma, pg, false),
            };
            if let Some(v) = v {
                k.touch(&mut self.task, v, pg, write);
            }
            self.populated += 1;
            if self.task.killed {
                break;
            }
            k.sync(&mut self.task);
        }
        k.book_cpu(&mut self.task);
        self.populated as u64 >= total
    }

    pub fn alive(&self, k: &Kernel) -> bool {
        k.procs[self.proc_idx as usize].alive
    }

    /// Run the background activity up to `until`.
    pub fn run_until(&mut self, k: &mut Kernel, until: Nanos) {
        if !self.alive(k) || !self.populate(k, until) {
            return;
        }
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
                k.sync(&mut self.task);
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

/// The zygote: the boot image, the zygote space (its preloaded heap, private anon memory), its
/// native heap, and the framework code. Apps are forked from it (`Kernel::fork_process`), so its
/// anon pages are shared copy-on-write with every app until one writes, and its file mappings
/// share the page cache.
pub struct Zygote {
    pub proc_idx: u32,
    pub(crate) task: Task,
    pub(crate) framework_pages: u32,
    pub zygote_space_pages: u32,
    pub(crate) fork_ns: Nanos,
}

impl Zygote {
    pub fn start(k: &mut Kernel, spec: &ZygoteSpec, cfg: &mobmem_runtime::RuntimeConfig, pid: u32) -> Result<Self, String> {
        let e = |r: Result<u32, mobmem_kernel::KernelError>| r.map_err(|e| e.to_string());
        let pi = e(k.create_process(pid, "zygote64", -1000, 0))?;
        let mut t = Task::new(k.thread_of(pi), pi, 0);
        k.cpus.set_class(t.thread, mobmem_engine::cpufreq::Class::System);
        // The runtime's names and sizes, so that an app's heap finds them inherited.
        use mobmem_runtime::heap::{immune_space_pages, BOOT_IMAGE_FILE, BOOT_IMAGE_VMA, ZYGOTE_SPACE_VMA};
        let (boot_pages, zy_pages) = immune_space_pages(cfg);
        let boot = e(k.map_file(pi, BOOT_IMAGE_VMA, BOOT_IMAGE_FILE, boot_pages, false))?;
        k.touch_range(&mut t, boot, 0, boot_pages, false);
        // Preloading classes fills the zygote space (written: private dirty anon pages).
        let zy = e(k.map_anon(pi, ZYGOTE_SPACE_VMA, zy_pages))?;
        k.touch_range(&mut t, zy, 0, zy_pages, true);
        let np = pages(spec.native_anon_mib);
        if np > 0 {
            // Named apart from the apps' own malloc heap (which the workload maps after fork).
            let v = e(k.map_anon(pi, "[anon:libc_malloc] (zygote)", np))?;
            k.touch_range(&mut t, v, 0, np, true);
        }
        let framework_pages = pages(spec.framework_code_mib);
        if framework_pages > 0 {
            let v = e(k.map_file(pi, "framework", FRAMEWORK_FILE, framework_pages, true))?;
            // The zygote preloads (reads) about half of the framework code (estimate).
            k.touch_range(&mut t, v, 0, framework_pages / 2, false);
        }
        k.book_cpu(&mut t);
        Ok(Self { proc_idx: pi, task: t, framework_pages, zygote_space_pages: zy_pages, fork_ns: (spec.fork_ms * 1e6) as Nanos })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobmem_kernel::KernelConfig;

    fn spec(name: &str, anon_mib: f64, file_mib: f64) -> SysProcSpec {
        SysProcSpec {
            name: name.into(),
            adj: 0,
            home: false,
            cached: false,
            anon_mib,
            file_mib,
            hot_share: 0.1,
            touches_per_s: 0,
            cpu_ms_per_s: 0.0,
            bind_cpu_ms: 0.0,
            resume_cpu_ms: 0.0,
            populate_ms: 0.0,
            source: "test".into(),
        }
    }

    #[test]
    fn kswapd_reclaims_while_a_process_populates_its_memory() {
        // A process starting into a full memory: kswapd, woken at the low watermark, runs beside
        // its faults and takes part of what it needs (before, the whole burst ran first and every
        // page past the watermark was reclaimed directly).
        let mut cfg = KernelConfig::default();
        cfg.set("ram_mib", "64").unwrap();
        let mut k = Kernel::new(cfg).unwrap();
        SysProc::start(&mut k, &spec("cache", 0.0, 40.0), 1, 1, 0).unwrap();
        let (kswapd0, direct0) = (k.vmstat.pgsteal_kswapd, k.vmstat.pgsteal_direct);
        let p = SysProc::start(&mut k, &spec("burst", 30.0, 0.0), 2, 1, 0).unwrap();
        assert!(p.alive(&k));
        let (kswapd, direct) = (k.vmstat.pgsteal_kswapd - kswapd0, k.vmstat.pgsteal_direct - direct0);
        assert!(kswapd > 0, "kswapd reclaimed nothing during the start ({direct} pages directly)");
        assert!(kswapd > direct, "kswapd {kswapd} pages, direct reclaim {direct}");
    }

    #[test]
    fn a_paced_start_grows_over_its_populate_time() {
        let mut k = Kernel::new(KernelConfig::default()).unwrap();
        let mut sp = spec("renderer", 20.0, 4.0);
        sp.populate_ms = 2000.0;
        let mut p = SysProc::start(&mut k, &sp, 1, 1, 0).unwrap();
        let pi = p.proc_idx;
        let resident = |k: &Kernel| {
            let u = k.proc_usage(pi);
            u.anon + u.file
        };
        let total = (24 * 256) as u64;
        assert_eq!(resident(&k), 0, "nothing is touched before its first page's turn");
        p.run_until(&mut k, 1_000_000_000);
        let half = resident(&k);
        assert!(half.abs_diff(total / 2) <= total / 100, "{half} of {total} pages after half its populate time");
        p.run_until(&mut k, 2_100_000_000);
        assert_eq!(resident(&k), total);
    }

    #[test]
    fn a_paced_start_into_a_full_memory_leaves_the_reclaim_to_kswapd() {
        // The same process started into a full memory, in one burst and over two seconds: paced,
        // kswapd keeps ahead of its faults and it reclaims (almost) nothing itself.
        let direct = |populate_ms: f64| {
            let mut cfg = KernelConfig::default();
            cfg.set("ram_mib", "64").unwrap();
            let mut k = Kernel::new(cfg).unwrap();
            SysProc::start(&mut k, &spec("cache", 0.0, 40.0), 1, 1, 0).unwrap();
            let d0 = k.vmstat.pgsteal_direct;
            let mut sp = spec("renderer", 30.0, 0.0);
            sp.populate_ms = populate_ms;
            let mut p = SysProc::start(&mut k, &sp, 2, 1, 0).unwrap();
            p.run_until(&mut k, 3_000_000_000);
            assert!(p.alive(&k));
            k.vmstat.pgsteal_direct - d0
        };
        let (burst, paced) = (direct(0.0), direct(2000.0));
        assert!(burst > 0, "the burst reclaimed nothing directly");
        assert!(paced * 10 <= burst, "paced {paced} pages reclaimed directly, burst {burst}");
    }
}
