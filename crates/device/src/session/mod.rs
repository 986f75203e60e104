//! The session simulator: one phone running a scenario script from boot to the last step.
//!
//! A session boots the kernel model, starts the zygote and the system processes, then executes
//! the script: `launch` (cold if the app has no process, hot if it is cached), `use` (the
//! foreground app draws 60 Hz frames while everything else keeps running), `home`, `wait`,
//! `kill`, `repeat`, `each`. The ActivityManager assigns `oom_score_adj` from process states
//! and recency and kills cached apps beyond its limit; lmkd and the OOM killer act inside the
//! kernel model; a killed app's next launch is cold.
//!
//! **Interleaving.** Every thread has its own clock (kernel `Task`). The session advances in
//! slices (`session.slice_ms`, default 20 ms): the foreground app, then each background app,
//! then the system processes run up to the slice's end, then the kernel's own events (kswapd,
//! lmkd, writeback, the reaper) up to it. Within a slice, page references of different processes
//! reach the LRU in process order rather than time order; a launch runs as one piece, so
//! other processes' activity during it is simulated after it (their references arrive late by
//! at most the launch time). CPU contention between them is modelled by the core booking.
//!
//! Modules: [`inputs`] (loading and settings), [`system`] (zygote, system processes), [`app`]
//! (an app's process and lifecycle steps, launch breakdowns, frames), [`metrics`] (the result).

pub mod app;
pub mod co_run;
pub mod file_io;
pub mod gc_service;
pub mod inputs;
pub mod metrics;
pub mod mmu;
pub mod records;
pub mod run;
pub mod service;
pub mod services;
pub mod system;

use crate::activity_manager::{ActivityManager, MemFactorSource, ProcState};
use crate::low_mem_detector::LowMemDetector;
use crate::scenario::Action;
use app::{FrameStats, LaunchObjects, LaunchRecord, Live};
use inputs::Inputs;
use mobmem_engine::{CpuSet, Nanos};
use mobmem_kernel::Kernel;
use mobmem_runtime::RuntimeConfig;
use records::{AppSample, AppTotals, Event, GcPhaseRow, GcRow, JankyFrame, MutatorStopRecord, Sample};
use system::{SysProc, Zygote};

/// One declared app and its current process, if any.
pub struct AppSlot {
    pub(crate) spec: inputs::AppSpec,
    pub live: Option<Live>,
    pub(crate) launched_before: bool,
    pub(crate) totals: AppTotals,
    /// Its secondary processes as last started (each may have died since), in the profile's
    /// order; empty until the first cold launch.
    pub(crate) secondary: Vec<SysProc>,
}

impl co_run::SliceApp for AppSlot {
    fn processes(&mut self) -> (Option<&mut Live>, &mut [SysProc]) {
        (self.live.as_mut(), &mut self.secondary)
    }
}

/// Watches a running session: called after every slice (`session.now` is the simulated time).
/// An `Err` stops the session, which returns that error (a caller's interruption, say).
pub type Observer = Box<dyn FnMut(&Session) -> Result<(), String> + Send>;

pub struct Session {
    pub inp: Inputs,
    pub k: Kernel,
    pub(crate) rcfg: RuntimeConfig,
    pub zygote: Zygote,
    pub(crate) sys: Vec<SysProc>,
    pub apps: Vec<AppSlot>,
    pub(crate) am: ActivityManager,
    pub(crate) now: Nanos,
    next_pid: u32,
    /// The app in the foreground (index into `apps`).
    pub(crate) fg: Option<usize>,
    pub(crate) launches: Vec<LaunchRecord>,
    /// Storage-throughput tests (`file_io` steps).
    pub(crate) file_io: Vec<file_io::FileIoRecord>,
    pub(crate) events: Vec<Event>,
    pub(crate) samples: Vec<Sample>,
    /// Every collection of every app (structured; the event log has the same as text), with its
    /// phases until the end of the session moves them to `gc_phases`.
    pub(crate) gcs: Vec<(GcRow, Vec<mobmem_runtime::gc::record::PhaseRecord>)>,
    /// The phases of every collection (`gc` indexes `gcs`), filled at the end of the session.
    pub(crate) gc_phases: Vec<GcPhaseRow>,
    /// Janky frames of every app (on-time frames are only counted).
    pub(crate) janky_frames: Vec<JankyFrame>,
    /// Every app's mutator stops for its collector (pauses, waits, checkpoints).
    pub(crate) mutator_stops: Vec<MutatorStopRecord>,
    /// The per-app memory series (`session.app_sample_ms`).
    pub(crate) app_memory: Vec<AppSample>,
    next_sample: Nanos,
    next_app_sample: Nanos,
    /// Kill records of the kernel already turned into events.
    kills_seen: usize,
    /// Kernel process index → app slot (for naming kills).
    proc_app: Vec<Option<usize>>,
    /// Called after every slice (progress, interruption); none by default.
    pub(crate) observer: Option<Observer>,
    /// The session services that are on (`system.services`), in the order named.
    pub services: Vec<services::Running>,
    /// The kernel's counters when the script's first launch began: the start of the case a
    /// measurement on a phone would log (after boot), for the result's `case` block.
    pub(crate) case_start: Option<CaseStart>,
}

/// What the counters were at the start of the case (see [`Session::case_start`]).
#[derive(Clone, Debug)]
pub(crate) struct CaseStart {
    pub(crate) at: Nanos,
    pub(crate) vmstat: mobmem_kernel::vmstat::VmStat,
    /// The system processes' activating file refaults by then.
    pub(crate) sys_activate_file: u64,
}

impl Session {
    /// Boot the phone: kernel, zygote, system processes.
    pub fn boot(inp: Inputs) -> Result<Self, String> {
        let kcfg = mobmem_runtime::sim::kernel_config(&inp.kernel)?;
        let rcfg = mobmem_runtime::sim::runtime_config(&inp.runtime)?;
        let mut k = Kernel::new(kcfg).map_err(|e| e.to_string())?;
        // The device's CPU clusters (big cores first), their frequency governor and power.
        let clusters = inp.device.device.cpu.iter().map(|c| c.spec()).collect::<Result<Vec<_>, _>>()?;
        let has_power = inp.device.device.cpu.iter().all(|c| c.has_power());
        k.install_cpus(CpuSet::with_dvfs(mobmem_kernel::cpufreq::build(clusters, &k.cfg, has_power)?));
        if k.cfg.sample_interval_ns == 0 {
            k.cfg.sample_interval_ns = inp.options.sample_ns;
        }
        let mut next_pid = 600;
        let zygote = Zygote::start(&mut k, &inp.system.zygote, &rcfg, next_pid)?;
        next_pid += 1;
        let mut sys = Vec::new();
        for spec in &inp.system.process {
            sys.push(SysProc::start(&mut k, spec, next_pid, inp.seed, 0)?);
            next_pid += 1;
        }
        if inp.options.memtester_mib > 0 {
            // memtester started from adb: it inherits adbd's oom_score_adj (-1000), so neither lmkd
            // nor the OOM killer takes it; its memory is locked, so reclaim cannot either.
            let pages = u32::try_from(inp.options.memtester_mib * 256).map_err(|_| "system.memtester_mib: too large".to_string())?;
            let pi = k.create_process(next_pid, "memtester", -1000, 0).map_err(|e| e.to_string())?;
            let mut t = mobmem_kernel::Task::new(k.thread_of(pi), pi, 0);
            let v = k.map_anon(pi, "[anon:memtester]", pages).map_err(|e| e.to_string())?;
            k.mlock(&mut t, v, 0, pages);
            k.book_cpu(&mut t);
        }
        let limit = match inp.options.max_cached_processes {
            0 => inp.device.device.max_cached_processes,
            n => n,
        };
        let mut am = ActivityManager::new(limit);
        if inp.options.trim_levels {
            am.mem_factor_source =
                if inp.device.device.low_mem_detector { MemFactorSource::Psi(LowMemDetector::new(&mut k)) } else { MemFactorSource::ProcessCounts };
            am.trim_oldest_first = inp.device.device.trim_oldest_first;
        }
        if inp.options.cpusets {
            am.cpusets = inp.device.device.cpuset_masks()?;
            // init starts the zygote in foreground (init.zygote64.rc: writepid
            // /dev/cpuset/foreground/tasks); an app forked from it starts there.
            if let Some(c) = am.cpusets {
                k.set_cpuset(zygote.proc_idx, c.foreground);
            }
        }
        for s in &sys {
            let st = match (s.spec.home, s.spec.cached) {
                (true, _) => ProcState::Home,
                (false, true) => ProcState::Empty,
                (false, false) => ProcState::System,
            };
            am.add(s.proc_idx, st, 0);
        }
        let apps = inp
            .apps
            .iter()
            .map(|a| AppSlot { spec: a.clone(), live: None, launched_before: false, totals: AppTotals::default(), secondary: Vec::new() })
            .collect();
        let boot_end = sys.iter().map(|s| s.task.now).chain([zygote.task.now]).max().unwrap_or(0);
        k.advance_to(boot_end);
        let mut s = Self {
            inp,
            k,
            rcfg,
            zygote,
            sys,
            apps,
            am,
            now: boot_end,
            next_pid: 10_000,
            fg: None,
            launches: Vec::new(),
            file_io: Vec::new(),
            events: Vec::new(),
            samples: Vec::new(),
            gcs: Vec::new(),
            gc_phases: Vec::new(),
            janky_frames: Vec::new(),
            mutator_stops: Vec::new(),
            app_memory: Vec::new(),
            next_sample: 0,
            next_app_sample: 0,
            kills_seen: 0,
            proc_app: Vec::new(),
            observer: None,
            services: Vec::new(),
            case_start: None,
        };
        s.services = services::build(&s.inp.options.services, &s.inp.options, s.now)?;
        s.update_am();
        s.sample();
        Ok(s)
    }

    fn budget(&self) -> Nanos {
        self.inp.options.frame_budget_ns
    }

    fn event(&mut self, t: Nanos, kind: &'static str, app: &str, detail: String) {
        self.events.push(Event { t_s: t as f64 / 1e9, kind, app: app.to_string(), detail });
    }

    /// Apply process states to adj values; ActivityManager kills beyond the cached limit.
    fn update_am(&mut self) {
        let now = self.now;
        let kills = self.am.update(&mut self.k, now);
        for _ in kills {
            // Recorded with the kernel's kill records in `reap_dead`.
        }
        self.reap_dead();
        self.deliver_trims();
    }

    /// The trim levels the ActivityManager sent: apps answer them (`Live::trim_memory`); system
    /// processes do not (their caches are not modelled). A frozen app answers at once too (the
    /// freezer's holding of one-way binder calls until the app thaws is left out).
    fn deliver_trims(&mut self) {
        let now = self.now;
        for t in std::mem::take(&mut self.am.trims) {
            let Some(i) = self.proc_app.get(t.proc_idx as usize).copied().flatten() else { continue };
            let Some(l) = self.apps[i].live.as_mut() else { continue };
            if l.proc_idx != t.proc_idx || !l.alive(&self.k) {
                continue;
            }
            l.trim_memory(&mut self.k, t.level, now);
            let name = self.apps[i].spec.name.clone();
            self.event(now, "trim", &name, format!("onTrimMemory({})", crate::activity_manager::trim::name(t.level)));
        }
    }

    fn system_server(&mut self) -> Option<usize> {
        self.sys.iter().position(|s| s.spec.name == "system_server")
    }

    /// Turn new kernel kill records into events, and drop apps whose process died.
    fn reap_dead(&mut self) {
        while self.kills_seen < self.k.kills.len() {
            let r = self.k.kills[self.kills_seen].clone();
            self.kills_seen += 1;
            let app = self.proc_app.get(r.proc_idx as usize).copied().flatten();
            let name = app.map(|a| self.apps[a].spec.name.clone()).unwrap_or_else(|| r.name.clone());
            self.event(
                r.time_ns,
                "kill",
                &name,
                format!("{} by {} (oom_score_adj {}, rss {} kB, swap {} kB)", r.reason, r.killer, r.oom_score_adj, r.rss_kb, r.swap_kb),
            );
        }
        for i in 0..self.apps.len() {
            let dead = match &self.apps[i].live {
                Some(l) => !l.alive(&self.k),
                None => false,
            };
            if dead {
                self.retire(i);
            }
        }
    }

    /// An app's process is gone: fold its counters into the app's totals.
    fn retire(&mut self, i: usize) {
        if let Some(l) = self.apps[i].live.take() {
            self.gc_events(i, &l);
            self.apps[i].totals.absorb(&l, &self.k);
            // Killed by the ActivityManager it is already gone from its list.
            self.am.process_died(l.proc_idx, false);
            if self.fg == Some(i) {
                self.fg = None;
            }
        }
    }

    /// Apps alive and apps alive but not in the foreground, counted as the Fleet artifact counts
    /// them: an app is alive while its main process lives (the artifact matches each word of
    /// `dumpsys meminfo` against the package names, so a secondary process, `PACKAGE:name`, never
    /// counts).
    fn alive_counts(&self) -> (u32, u32) {
        let mut alive = 0;
        let mut cached = 0;
        for (i, a) in self.apps.iter().enumerate() {
            if a.live.as_ref().is_some_and(|l| l.alive(&self.k)) {
                alive += 1;
                if self.fg != Some(i) {
                    cached += 1;
                }
            }
        }
        (alive, cached)
    }

    /// The app `i` comes to the foreground with its main process `main` (just started by a cold
    /// launch, or resumed by a hot one): its secondary processes that are not running start at
    /// `now`, and every one is bound to (or owned by) `main`.
    fn start_secondary(&mut self, i: usize, main: u32, now: Nanos) -> Result<(), String> {
        if !self.inp.options.secondary_processes {
            return Ok(());
        }
        let specs = self.apps[i].spec.secondary.clone();
        for (j, sp) in specs.iter().enumerate() {
            let running = self.apps[i].secondary.get(j).is_some_and(|p| p.alive(&self.k));
            if !running {
                let pid = self.next_pid;
                self.next_pid += 1;
                let starts = self.apps[i].secondary.get(j).map_or(0, |p| p.starts);
                let mut p = SysProc::start(&mut self.k, &sp.proc, pid, self.inp.seed, now)?;
                p.starts = starts + 1;
                self.am.add(p.proc_idx, ProcState::Empty, now);
                if j < self.apps[i].secondary.len() {
                    self.apps[i].secondary[j] = p;
                } else {
                    self.apps[i].secondary.push(p);
                }
            }
            let pi = self.apps[i].secondary[j].proc_idx;
            self.am.set_owner(pi, main, sp.bound);
        }
        Ok(())
    }

    fn sample(&mut self) {
        let (alive, cached) = self.alive_counts();
        self.samples.push(Sample::take(&self.k, self.now, alive, cached));
        if self.samples.len() >= mobmem_kernel::mmzone::SERIES_CAP {
            // A run far beyond its script (an absurd cost): keep memory bounded, see SERIES_CAP.
            mobmem_kernel::mmzone::keep_even(&mut self.samples);
            self.inp.options.sample_ns *= 2;
        }
        self.next_sample = self.now - self.now % self.inp.options.sample_ns + self.inp.options.sample_ns;
    }

    /// The per-app memory series: every live app's RSS, PSS and swap (a read of the page
    /// tables; it changes nothing in the simulation).
    fn sample_apps(&mut self) {
        let t_s = self.now as f64 / 1e9;
        let mib = |pages: f64| pages / 256.0;
        for i in 0..self.apps.len() {
            let a = &self.apps[i];
            let Some(l) = &a.live else { continue };
            if !l.alive(&self.k) {
                continue;
            }
            let mut u = mobmem_kernel::mmzone::ProcUsage::default();
            let mut cat = [0u64; 6];
            let mut java_pss = 0.0;
            for &v in &self.k.procs[l.proc_idx as usize].vmas {
                let vu = self.k.vma_usage(v);
                let vm = &self.k.vmas[v as usize];
                let c = records::meminfo_category(&vm.name, vm.file);
                cat[c] += vu.anon + vu.file;
                if c == 0 {
                    java_pss += vu.pss;
                }
                u.add(&vu);
            }
            let c = |i: usize| mib(cat[i] as f64);
            let sample = AppSample {
                t_s,
                app: a.spec.name.clone(),
                pid: l.pid,
                rss_mib: mib((u.anon + u.file) as f64),
                pss_mib: mib(u.pss),
                swap_mib: mib(u.swap as f64),
                java_heap_mib: c(0),
                native_heap_mib: c(1),
                code_mib: c(2),
                graphics_mib: c(3),
                stack_mib: c(4),
                other_mib: c(5),
                java_heap_pss_mib: mib(java_pss),
            };
            if self.fg == Some(i) && u.pss > 0.0 {
                let t = &mut self.apps[i].totals;
                t.java_share_fg_sum += 100.0 * java_pss / u.pss;
                t.java_share_fg_n += 1;
            }
            self.app_memory.push(sample);
        }
        let every = self.inp.options.app_sample_ns;
        self.next_app_sample = self.now - self.now % every + every;
    }

    /// Move every process but the launching app's main one into a co-runner that the kernel
    /// runs beside the launch of app `i` (see `co_run`).
    fn begin_co_run(&mut self, i: usize) {
        let apps = self
            .apps
            .iter_mut()
            .enumerate()
            .map(|(j, a)| co_run::CoApp { live: if j == i { None } else { a.live.take() }, secondary: std::mem::take(&mut a.secondary) })
            .collect();
        let co = co_run::CoRun::new(apps, std::mem::take(&mut self.sys), self.inp.options.slice_ns, self.budget(), self.now);
        let next = co.next_boundary();
        self.k.install_co_runner(Box::new(co), next);
    }

    /// Put the processes back after the launch of app `i`; report other apps' Java OOMs.
    fn end_co_run(&mut self, i: usize) {
        let Some(co) = self.k.take_co_runner() else { return };
        let co = *co.into_any().downcast::<co_run::CoRun>().expect("the session installs only its own co-runner");
        self.sys = co.sys;
        for (j, a) in co.apps.into_iter().enumerate() {
            if j != i {
                self.apps[j].live = a.live;
            }
            self.apps[j].secondary = a.secondary;
        }
        for (j, t) in co.ooms {
            let name = self.apps[j].spec.name.clone();
            self.event(t, "oom", &name, "java.lang.OutOfMemoryError: the app crashed".into());
            self.apps[j].totals.java_ooms += 1;
        }
    }

    /// Run everything up to `until`.
    pub fn advance(&mut self, until: Nanos) -> Result<(), String> {
        let slice = self.inp.options.slice_ns;
        let budget = self.budget();
        while self.now < until {
            let end = (self.now - self.now % slice + slice).min(until);
            let order = self.fg.into_iter().chain((0..self.apps.len()).filter(|&i| Some(i) != self.fg));
            let mut ooms = Vec::new();
            co_run::run_slice(&mut self.k, end, budget, &mut self.apps, order, &mut self.sys, |i| ooms.push(i));
            for i in ooms {
                let name = self.apps[i].spec.name.clone();
                self.event(end, "oom", &name, "java.lang.OutOfMemoryError: the app crashed".into());
                self.apps[i].totals.java_ooms += 1;
            }
            self.now = end;
            self.run_services(end);
            debug_assert!(self.k.frames_conserved(), "page frames not conserved at {end} ns");
            if self.k.kills.len() > self.kills_seen {
                self.reap_dead();
                self.update_am();
            }
            if self.now >= self.next_sample {
                self.sample();
            }
            if self.inp.options.app_sample_ns > 0 && self.now >= self.next_app_sample {
                self.sample_apps();
            }
            if let Some(mut obs) = self.observer.take() {
                let r = obs(self);
                self.observer = Some(obs);
                r?;
            }
        }
        Ok(())
    }

    /// The session services that are due, in order: their decisions, their CPU on system_server.
    fn run_services(&mut self, now: Nanos) {
        // Gathering the live apps allocates: only in a slice where some service has work.
        if !self.services.iter().any(|(_, svc)| svc.due(now)) {
            return;
        }
        let mut live: Vec<&mut Live> = self.apps.iter_mut().filter_map(|a| a.live.as_mut()).filter(|l| l.alive(&self.k)).collect();
        let mut cpu = 0;
        for (_, svc) in self.services.iter_mut() {
            if svc.due(now) {
                cpu += svc.run(&mut self.k, &mut live, now);
            }
        }
        if cpu > 0 {
            if let Some(ss) = self.system_server() {
                self.sys[ss].task.cpu(cpu);
            }
        }
    }

    fn app_index(&self, name: &str) -> Result<usize, String> {
        self.apps.iter().position(|a| a.spec.name == name).ok_or_else(|| format!("unknown app {name:?}"))
    }

    /// The current foreground app leaves the screen.
    fn leave_foreground(&mut self) {
        if let Some(i) = self.fg.take() {
            let now = self.now;
            if let Some(l) = self.apps[i].live.as_mut() {
                l.to_background(&mut self.k, now);
            }
        }
    }

    /// Cached-app compaction, freezer and idleness for apps that became cached.
    fn cached_actions(&mut self) {
        let compaction = self.inp.options.cached_app_compaction;
        let freezer = self.inp.options.freezer;
        let idle = !self.inp.options.cached_app_work;
        if !compaction && !freezer && !idle {
            return;
        }
        let ss = self.system_server();
        for i in 0..self.apps.len() {
            let Some(l) = self.apps[i].live.as_ref() else { continue };
            let cached = self.am.procs.iter().any(|p| p.proc_idx == l.proc_idx && p.state == ProcState::Cached);
            if !cached || l.frozen {
                continue;
            }
            if compaction {
                if let Some(s) = ss {
                    let now = self.now;
                    let t = &mut self.sys[s].task;
                    if t.now < now {
                        t.now = now;
                    }
                    let l = self.apps[i].live.as_ref().unwrap();
                    l.compact(&mut self.k, &mut self.sys[s].task);
                    let name = self.apps[i].spec.name.clone();
                    self.event(now, "compact", &name, "process_madvise PAGEOUT (anon), COLD (file)".into());
                }
            }
            let l = self.apps[i].live.as_mut().unwrap();
            l.frozen = freezer;
            l.idle = idle;
        }
    }

    /// The system processes' activating file refaults so far.
    pub(crate) fn sys_activate_file(&self) -> u64 {
        self.sys.iter().map(|p| self.k.procs[p.proc_idx as usize].stats.activate_file).sum()
    }

    fn launch(&mut self, name: &str, warmup: bool) -> Result<(), String> {
        let i = self.app_index(name)?;
        if self.case_start.is_none() {
            self.case_start = Some(CaseStart { at: self.now, vmstat: self.k.vmstat.clone(), sys_activate_file: self.sys_activate_file() });
        }
        let t0 = self.now;
        let budget = self.budget();
        if self.fg == Some(i) {
            return Ok(());
        }
        self.leave_foreground();
        let ss = self.system_server();
        let spec = self.apps[i].spec.clone();
        let relaunch = self.apps[i].launched_before;
        let record;
        if self.apps[i].live.is_some() {
            // Hot launch: system_server resumes the activity, then the app draws.
            let t_start = match ss {
                Some(s) => {
                    let ns = (self.sys[s].spec.resume_cpu_ms * 1e6) as Nanos;
                    self.sys[s].work(&mut self.k, t0, ns)
                }
                None => t0,
            };
            let l = self.apps[i].live.as_mut().unwrap();
            let main = l.proc_idx;
            self.am.move_to_foreground(main, t0);
            self.fg = Some(i);
            // The activity binds its processes again as it resumes: those killed meanwhile restart.
            self.start_secondary(i, main, t_start)?;
            self.update_am();
            if self.apps[i].live.is_none() {
                return self.launch(name, warmup);
            }
            self.begin_co_run(i);
            let l = self.apps[i].live.as_mut().unwrap();
            let out = l.hot_launch(&mut self.k, &spec, t0, t_start, budget);
            self.end_co_run(i);
            match out {
                Some((ttid, bd, objs, pages)) => record = Some(("hot", ttid, bd, objs, pages)),
                None => record = None,
            }
        } else {
            // Cold launch: system_server binds, the zygote forks, the app starts.
            let t_bind = match ss {
                Some(s) => {
                    let ns = (self.sys[s].spec.bind_cpu_ms * 1e6) as Nanos;
                    self.sys[s].work(&mut self.k, t0, ns)
                }
                None => t0,
            };
            let zt = &mut self.zygote.task;
            if zt.now < t_bind {
                zt.now = t_bind;
            }
            zt.cpu(self.zygote.fork_ns);
            self.k.book_cpu(zt);
            let t_start = zt.now;
            let pid = self.next_pid;
            self.next_pid += 1;
            let mut l = Live::spawn(&mut self.k, &spec, pid, spec.workload.runtime_config(&self.rcfg), &self.inp.options.policies, &self.zygote, t_start)?;
            l.threads = self.inp.options.app_threads;
            l.rt.delegate_triggers(self.services.iter().any(|(_, s)| s.takes_gc_triggers()));
            let pi = l.proc_idx as usize;
            if self.proc_app.len() <= pi {
                self.proc_app.resize(pi + 1, None);
            }
            self.proc_app[pi] = Some(i);
            self.am.add(l.proc_idx, ProcState::Foreground, t0);
            self.am.move_to_foreground(l.proc_idx, t0);
            self.fg = Some(i);
            let main = l.proc_idx;
            self.start_secondary(i, main, t_start)?;
            self.update_am();
            self.begin_co_run(i);
            let out = l.cold_launch(&mut self.k, &spec, t0, budget);
            self.end_co_run(i);
            self.apps[i].live = Some(l);
            self.apps[i].launched_before = true;
            record = out.map(|(ttid, bd)| ("cold", ttid, bd, LaunchObjects::default(), Vec::new()));
        }
        let end = self.apps[i].live.as_ref().map(|l| l.rt.mutator.now).unwrap_or(self.now).max(self.now);
        // Everything else catches up with the launch.
        self.advance(end)?;
        self.reap_dead();
        let (alive, cached) = self.alive_counts();
        match record {
            Some((kind, ttid, bd, objects, heap_pages)) => {
                let r = LaunchRecord {
                    index: self.launches.len() as u32,
                    t_s: t0 as f64 / 1e9,
                    app: name.to_string(),
                    kind,
                    relaunch: kind == "cold" && relaunch,
                    warmup,
                    ttid_ms: ttid as f64 / 1e6,
                    breakdown: bd,
                    objects,
                    heap_pages,
                    alive_after: alive,
                    cached_after: cached,
                };
                self.event(t0, "launch", name, format!("{kind} launch, TTID {:.1} ms", r.ttid_ms));
                self.launches.push(r);
            }
            None => {
                self.event(t0, "launch-failed", name, "the app died during its launch".into());
                self.reap_dead();
            }
        }
        self.cached_actions();
        Ok(())
    }

    /// A storage-throughput test (see [`file_io`]): the foreground app reads or writes a new
    /// file of `mib` MiB sequentially.
    fn file_io(&mut self, mib: u32, write: bool) -> Result<(), String> {
        let i = self.fg.ok_or("script: a file_io step needs an app in the foreground")?;
        let name = self.apps[i].spec.name.clone();
        let n = self.file_io.len();
        let Some(l) = self.apps[i].live.as_mut() else { return Ok(()) };
        let file = format!("storage-test-{n}");
        let pages = mib * 256;
        let v = self.k.map_file(l.proc_idx, &file, &file, pages, false).map_err(|e| e.to_string())?;
        let t = &mut l.rt.mutator;
        t.now = t.now.max(self.now);
        let (t0, bd0) = (t.now, t.bd);
        for pg in 0..pages {
            t.cpu(file_io::CALL_NS);
            if write {
                self.k.write_file_page(t, v, pg);
            } else {
                self.k.touch(t, v, pg, false);
            }
            if t.killed {
                break;
            }
            self.k.sync(t);
        }
        self.k.book_cpu(t);
        let secs = (t.now - t0) as f64 / 1e9;
        let d = t.bd.since(&bd0);
        let end = t.now;
        l.w.next_unit_at = l.w.next_unit_at.max(end);
        self.file_io.push(file_io::FileIoRecord {
            t_s: t0 as f64 / 1e9,
            app: name.clone(),
            mode: if write { "write" } else { "read" },
            mib,
            seconds: secs,
            mb_per_s: if secs > 0.0 { mib as f64 * 1.048576 / secs } else { 0.0 },
            major_faults: d.major_faults_zram + d.major_faults_flash_swap + d.major_faults_file,
            file_read_wait_ms: d.file_read_wait_ns as f64 / 1e6,
            reclaim_stall_ms: d.reclaim_stall_ns as f64 / 1e6,
            allocstalls: d.allocstalls,
        });
        self.event(t0, "file_io", &name, format!("{} {mib} MiB in {secs:.2} s", if write { "wrote" } else { "read" }));
        self.advance(end.max(self.now))?;
        self.reap_dead();
        Ok(())
    }

    fn home(&mut self) -> Result<(), String> {
        self.leave_foreground();
        self.am.home(self.now);
        // The launcher draws; restarted if it was killed.
        let now = self.now;
        let seed = self.inp.seed;
        for si in 0..self.sys.len() {
            if !self.sys[si].spec.home {
                continue;
            }
            if !self.sys[si].alive(&self.k) {
                let spec = self.sys[si].spec.clone();
                let pid = self.next_pid;
                self.next_pid += 1;
                let starts = self.sys[si].starts;
                self.am.remove(self.sys[si].proc_idx);
                let mut s = SysProc::start(&mut self.k, &spec, pid, seed, now)?;
                s.starts = starts + 1;
                self.am.add(s.proc_idx, ProcState::Home, now);
                self.event(now, "restart", &spec.name, "home app restarted".into());
                self.sys[si] = s;
            }
            self.sys[si].draw(&mut self.k, now);
        }
        self.update_am();
        self.cached_actions();
        Ok(())
    }

    fn kill(&mut self, name: &str) -> Result<(), String> {
        let i = self.app_index(name)?;
        if let Some(l) = self.apps[i].live.as_ref() {
            let pi = l.proc_idx;
            // The user removes the app from recents: the ActivityManager kills it.
            self.am.process_died(pi, true);
            self.k.kill_process(pi, "user", 0, "user", self.now, 0);
            self.reap_dead();
            self.update_am();
        }
        Ok(())
    }

    /// Execute script actions; `{app}` in an `each` body stands for the current app.
    pub fn execute(&mut self, actions: &[Action], app: Option<&str>) -> Result<(), String> {
        let subst = |s: &str| -> String {
            match app {
                Some(a) => s.replace("{app}", a),
                None => s.to_string(),
            }
        };
        for a in actions {
            match a {
                Action::Launch { app: n, warmup } => self.launch(&subst(n), *warmup)?,
                Action::Use(secs) | Action::Wait(secs) => {
                    let step = (secs * self.inp.options.time_scale * 1e9) as Nanos;
                    let until = self.now.checked_add(step).ok_or_else(|| "the script runs past the simulated clock's range (584 years)".to_string())?;
                    self.advance(until)?
                }
                Action::Home => self.home()?,
                Action::Kill(n) => self.kill(&subst(n))?,
                Action::FileIo { mib, write } => self.file_io(*mib, *write)?,
                Action::Repeat(times, body) => {
                    for _ in 0..*times {
                        self.execute(body, app)?;
                    }
                }
                Action::Each(list, body) => {
                    for x in list {
                        let x = subst(x);
                        self.execute(body, Some(&x))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// The collections of a process incarnation as event-log lines (ART's log format plus the
    /// GC thread's working set).
    fn gc_events(&mut self, i: usize, l: &Live) {
        let name = self.apps[i].spec.name.clone();
        for &(t, d) in &l.janky_frames {
            self.janky_frames.push(JankyFrame { t_s: t as f64 / 1e9, app: name.clone(), dur_ms: d as f64 / 1e6 });
        }
        for st in &l.rt.mutator_stops {
            self.mutator_stops.push(MutatorStopRecord {
                t_s: st.start_ns as f64 / 1e9,
                app: name.clone(),
                dur_ms: (st.end_ns - st.start_ns) as f64 / 1e6,
                kind: st.kind.name(),
            });
        }
        for r in &l.rt.records {
            let line = mobmem_runtime::runtime::gc_log_line(r, r.bytes_allocated_after, r.target_footprint_after);
            let f = &r.gc_faults;
            self.gcs.push((
                GcRow {
                    t_s: r.start_ns as f64 / 1e9,
                    app: name.clone(),
                    collector: r.collector,
                    r#type: r.gc_type,
                    cause: r.cause,
                    state: r.state,
                    duration_ms: (r.end_ns - r.start_ns) as f64 / 1e6,
                    pause_ms: r.pause_total_ns as f64 / 1e6,
                    gc_cpu_ms: r.gc_cpu_ns as f64 / 1e6,
                    freed_bytes: r.freed_bytes + r.freed_los_bytes,
                    objects_touched: r.gc_objects_touched,
                    pages_touched: r.gc_pages_touched,
                    major_faults: f.major_faults_zram + f.major_faults_flash_swap + f.major_faults_file,
                },
                r.phases.clone(),
            ));
            self.events.push(records::Event {
                t_s: r.start_ns as f64 / 1e9,
                kind: "gc",
                app: name.clone(),
                detail: format!("{line}; GC thread touched {} objects on {} pages", r.gc_objects_touched, r.gc_pages_touched),
            });
        }
    }

    /// Fold the still-running apps into their totals (end of the session); order the event log.
    fn finish(&mut self) {
        for i in 0..self.apps.len() {
            if let Some(l) = self.apps[i].live.take() {
                self.gc_events(i, &l);
                let slot = &mut self.apps[i];
                slot.totals.absorb(&l, &self.k);
                slot.totals.alive_at_end = true;
                slot.totals.memory_at_end = self.k.smaps(l.proc_idx);
                slot.live = Some(l);
            }
        }
        self.events.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        self.gcs.sort_by(|a, b| a.0.t_s.total_cmp(&b.0.t_s));
        // The phases go to their own table (`gc_phases`, keyed by the collection's index in
        // `gcs`): `gcs` stays small enough for a run's summary.
        for (i, (g, phases)) in self.gcs.iter_mut().enumerate() {
            for p in phases.drain(..) {
                self.gc_phases.push(GcPhaseRow {
                    gc: i,
                    app: g.app.clone(),
                    name: p.name,
                    kind: p.kind,
                    t_s: p.start_ns as f64 / 1e9,
                    duration_ms: (p.end_ns - p.start_ns) as f64 / 1e6,
                    gc_cpu_ms: p.gc_cpu_ns as f64 / 1e6,
                });
            }
        }
        self.janky_frames.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
        self.mutator_stops.sort_by(|a, b| a.t_s.total_cmp(&b.t_s));
    }
}

/// Frames drawn by every app so far.
pub fn all_frames(s: &Session) -> FrameStats {
    let mut f = FrameStats::default();
    for a in &s.apps {
        f.add(&a.totals.frames);
    }
    f
}
