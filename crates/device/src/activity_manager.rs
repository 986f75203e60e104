//! Android's ActivityManager as far as memory is concerned: process states, `oom_score_adj`
//! assignment, the cached- and empty-process limits, and the kernel's notice of the foreground
//! app.
//!
//! Adj values follow AOSP `ProcessList`: foreground 0, visible 100, perceptible 200, home 600,
//! previous app 700, cached processes 900–999. As in Android 10's `OomAdjuster`, cached
//! processes are walked from the most recently used: processes with (stopped) activities take
//! the slots 900, 910, … and empty processes (no activity: preinstalled apps' processes started
//! for a broadcast or a provider) 905, 915, …, each slot shared by `count / 10` processes, the
//! last slot capped at 999. The device's process limit (`CUR_MAX_CACHED_PROCESSES`) is split
//! between empty processes (`computeEmptyProcessLimit`: half of it) and cached processes with
//! activities (the rest): the walk kills every cached process beyond that many ("too many
//! cached") and every empty one beyond its limit ("too many empty"); an empty process unused
//! for 30 minutes is killed once more than half the empty limit are kept ("empty for 30 min",
//! `CUR_TRIM_EMPTY_PROCESSES` and `MAX_EMPTY_TIME`). The limits count processes, not apps.
//! Persistent system processes are negative and never counted.
//!
//! **Memory factor and trim levels** (`updateLowMemStateLocked`, unless the session turns them off):
//! after each update the ActivityManager computes its memory factor — from the kernel's PSI
//! through `LowMemDetector` on Android 10+ with a PSI kernel, otherwise from the number of cached
//! and empty processes kept (moderate when at most `CUR_TRIM_CACHED_PROCESSES` cached and
//! `CUR_TRIM_EMPTY_PROCESSES` empty ones are left, low at 5 or fewer together, critical at 3).
//! The factor may only get worse after a process died other than by the ActivityManager's hand
//! and the process count fell (`mAllowLowerMemLevel`); it gets better at once. While it is not
//! normal, the processes from home down (home unless it is on screen, previous, cached, empty)
//! get trim levels in the order of the process LRU list: `factor` of them
//! `TRIM_MEMORY_COMPLETE`, the next `factor` `TRIM_MEMORY_MODERATE`, the rest
//! `TRIM_MEMORY_BACKGROUND`, where `factor` is a third of them but at least 2 (+1 with a home
//! process, +1 with a previous one); the others get `TRIM_MEMORY_RUNNING_MODERATE`/`LOW`/
//! `CRITICAL` by the factor. Up to Android 11 the walk starts from the most recently used end of
//! the list (`for (i = N-1; i >= 0; i--)`), so the most recently used of them get `COMPLETE`;
//! Android 12's `AppProfiler` walks from the least recently used end (`trim_oldest_first`). A
//! level is sent only when it is above the one the process last got; a normal factor resets
//! every process's level.
//!
//! **Secondary processes** of an app (`set_owner`) follow their app's state: one the app binds is
//! visible while the app is on screen, previous with it and cached just below it while it is
//! cached — counted with the cached processes with activities
//! (`PROCESS_STATE_CACHED_ACTIVITY_CLIENT`); one running a started service is at `SERVICE_ADJ`
//! while the app is in use and empty after; both are empty once the app's main process is gone.
//!
//! **Scheduling groups and cpusets** (with the device's cpusets, unless the session turns them
//! off): after each update every process is moved to the cpuset of its scheduling group
//! (`OomAdjuster.applyOomAdjLocked` → `setProcessGroup`): the app on screen (and home when it is
//! on screen) to `top-app`; visible and perceptible processes and the persistent system
//! processes (`SCHED_GROUP_DEFAULT`) to `foreground`; services, the previous app, cached and
//! empty processes, and home behind an app (`SCHED_GROUP_BACKGROUND`) to `background`. Its
//! threads, the runtime's GC thread among them, then run only on those cores.
//!
//! Left out: other bound-process importance (only an app's own secondary processes have a
//! client), connection groups (a group of an app's processes counted once), the freezer,
//! `onLowMemory` when no background process is left.

use crate::low_mem_detector::LowMemDetector;
pub use crate::low_mem_detector::MemFactor;
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use serde::Serialize;

pub const FOREGROUND_APP_ADJ: i32 = 0;
pub const VISIBLE_APP_ADJ: i32 = 100;
pub const PERCEPTIBLE_APP_ADJ: i32 = 200;
pub const HOME_APP_ADJ: i32 = 600;
pub const SERVICE_ADJ: i32 = 500;
pub const PREVIOUS_APP_ADJ: i32 = 700;
pub const CACHED_APP_MIN_ADJ: i32 = 900;
pub const CACHED_APP_MAX_ADJ: i32 = 999;
pub const PERSISTENT_PROC_ADJ: i32 = -800;
pub const SYSTEM_ADJ: i32 = -900;
/// Distance between consecutive cached apps' adj (a simplification of AOSP's slot spreading).
pub const CACHED_ADJ_STEP: i32 = 10;

/// `ComponentCallbacks2.TRIM_MEMORY_*` levels.
pub mod trim {
    pub const RUNNING_MODERATE: u32 = 5;
    pub const RUNNING_LOW: u32 = 10;
    pub const RUNNING_CRITICAL: u32 = 15;
    pub const UI_HIDDEN: u32 = 20;
    pub const BACKGROUND: u32 = 40;
    pub const MODERATE: u32 = 60;
    pub const COMPLETE: u32 = 80;

    /// The constant's name, as `TRIM_MEMORY_COMPLETE`.
    pub fn name(level: u32) -> &'static str {
        match level {
            RUNNING_MODERATE => "TRIM_MEMORY_RUNNING_MODERATE",
            RUNNING_LOW => "TRIM_MEMORY_RUNNING_LOW",
            RUNNING_CRITICAL => "TRIM_MEMORY_RUNNING_CRITICAL",
            UI_HIDDEN => "TRIM_MEMORY_UI_HIDDEN",
            BACKGROUND => "TRIM_MEMORY_BACKGROUND",
            MODERATE => "TRIM_MEMORY_MODERATE",
            COMPLETE => "TRIM_MEMORY_COMPLETE",
            _ => "TRIM_MEMORY_?",
        }
    }
}

/// `ActivityManagerConstants.CUR_TRIM_CACHED_PROCESSES` for a process limit: (limit - limit/2) / 3.
fn trim_cached_processes(max_cached_processes: u32) -> u32 {
    (max_cached_processes - empty_process_limit(max_cached_processes)) / 3
}
/// `ProcessList.TRIM_CRITICAL_THRESHOLD` and `TRIM_LOW_THRESHOLD`.
const TRIM_CRITICAL_THRESHOLD: u32 = 3;
const TRIM_LOW_THRESHOLD: u32 = 5;

/// Where the memory factor comes from.
#[derive(Clone, Debug)]
pub enum MemFactorSource {
    /// Not computed: apps get only `TRIM_MEMORY_UI_HIDDEN` when hidden.
    Off,
    /// The number of cached and empty processes kept.
    ProcessCounts,
    /// The kernel's PSI (`LowMemDetector`).
    Psi(LowMemDetector),
}

/// A trim level sent to a process (`scheduleTrimMemory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimMemory {
    pub proc_idx: u32,
    pub level: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ProcState {
    System,
    Home,
    Foreground,
    Visible,
    Perceptible,
    /// Running a started service of an app in use (`SERVICE_ADJ`).
    Service,
    Previous,
    /// Cached with (stopped) activities: an app the user left.
    Cached,
    /// Cached without activities (`PROCESS_STATE_CACHED_EMPTY`).
    Empty,
}

#[derive(Clone, Debug, Serialize)]
pub struct AmProc {
    /// Kernel process index.
    pub(crate) proc_idx: u32,
    pub(crate) state: ProcState,
    /// When the process last left (or was in) the foreground: recency order of cached apps.
    pub(crate) last_used: Nanos,
    /// The trim level last given (`ProcessRecord.trimMemoryLevel`).
    pub(crate) trim_level: u32,
    /// A secondary process's app: the kernel index of the app's main process while it lives
    /// (the state follows it, see [`ActivityManager::follow_owners`]).
    pub(crate) owner: Option<u32>,
    /// The owner binds it (its client) rather than it running a started service.
    pub(crate) bound: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AmKill {
    pub(crate) time_ns: Nanos,
    pub(crate) proc_idx: u32,
    pub(crate) reason: String,
}

/// The cpuset of a process in `state`: its scheduling group's (`computeOomAdj`'s `schedGroup`).
fn sched_group_cpuset(state: ProcState, home_on_top: bool, c: &crate::device::CpusetMasks) -> u64 {
    match state {
        ProcState::Foreground => c.top_app,
        ProcState::Home if home_on_top => c.top_app,
        ProcState::System | ProcState::Visible | ProcState::Perceptible => c.foreground,
        ProcState::Home | ProcState::Service | ProcState::Previous | ProcState::Cached | ProcState::Empty => c.background,
    }
}

/// `ProcessList.computeEmptyProcessLimit`: half of the process limit is for empty processes.
pub fn empty_process_limit(max_cached_processes: u32) -> u32 {
    max_cached_processes / 2
}

/// Cached-adj slots (`(CACHED_APP_MAX_ADJ - CACHED_APP_MIN_ADJ + 1) / 2 /
/// CACHED_APP_IMPORTANCE_LEVELS`, Android 10).
const CACHED_SLOTS: u32 = 10;
/// `ProcessList.CACHED_APP_IMPORTANCE_LEVELS`.
const CACHED_IMPORTANCE_LEVELS: i32 = 5;
/// `ActivityManagerConstants.MAX_EMPTY_TIME`: an empty process older than this may be trimmed.
pub const MAX_EMPTY_TIME_NS: Nanos = 30 * 60 * 1_000_000_000;

#[derive(Clone, Debug)]
pub struct ActivityManager {
    /// Cached processes with activities kept before the oldest is killed: the device's process
    /// limit minus the empty-process limit (half of it).
    pub(crate) max_cached: u32,
    /// Empty processes kept before the oldest is killed (`CUR_MAX_EMPTY_PROCESSES`).
    pub(crate) max_empty: u32,
    /// Empty processes kept whatever their age (`CUR_TRIM_EMPTY_PROCESSES`).
    pub(crate) trim_empty: u32,
    pub(crate) procs: Vec<AmProc>,
    pub(crate) mem_factor_source: MemFactorSource,
    /// Trim levels walk the LRU list from its least recently used end (Android 12+).
    pub(crate) trim_oldest_first: bool,
    /// `CUR_TRIM_CACHED_PROCESSES`.
    trim_cached: u32,
    /// `mLastMemoryLevel`, `mLastNumProcesses`, `mAllowLowerMemLevel`.
    pub(crate) last_memory_level: MemFactor,
    last_num_processes: usize,
    allow_lower_mem_level: bool,
    /// Trim levels to deliver, filled by `update`.
    pub(crate) trims: Vec<TrimMemory>,
    /// The device's cpusets as core masks; `None`: processes are not moved (every core).
    pub(crate) cpusets: Option<crate::device::CpusetMasks>,
}

impl ActivityManager {
    /// An activity manager with the device's process limit (`CUR_MAX_CACHED_PROCESSES`).
    pub fn new(max_cached_processes: u32) -> Self {
        let max_empty = empty_process_limit(max_cached_processes);
        Self {
            max_cached: max_cached_processes - max_empty,
            max_empty,
            trim_empty: max_empty / 2,
            procs: Vec::new(),
            mem_factor_source: MemFactorSource::Off,
            trim_oldest_first: false,
            trim_cached: trim_cached_processes(max_cached_processes),
            last_memory_level: MemFactor::Normal,
            last_num_processes: 0,
            allow_lower_mem_level: false,
            trims: Vec::new(),
            cpusets: None,
        }
    }

    /// A process died: by the ActivityManager's hand (`killedByAm`) or not (the kernel's OOM
    /// killer, lmkd, a crash), which lets the memory factor get worse (`appDiedLocked`).
    pub fn process_died(&mut self, proc_idx: u32, killed_by_am: bool) {
        if self.procs.iter().any(|p| p.proc_idx == proc_idx) {
            self.allow_lower_mem_level = !killed_by_am;
            self.remove(proc_idx);
        }
    }

    /// Cached and empty processes, most recently used first (the order of AOSP's walk).
    fn lru_cached(&self) -> Vec<usize> {
        let mut v: Vec<usize> = (0..self.procs.len()).filter(|&i| matches!(self.procs[i].state, ProcState::Cached | ProcState::Empty)).collect();
        v.sort_by(|&a, &b| (self.procs[b].last_used, self.procs[b].proc_idx).cmp(&(self.procs[a].last_used, self.procs[a].proc_idx)));
        v
    }

    pub fn add(&mut self, proc_idx: u32, state: ProcState, now: Nanos) {
        self.procs.push(AmProc { proc_idx, state, last_used: now, trim_level: 0, owner: None, bound: false });
    }

    /// `proc_idx` is a secondary process of the app whose main process is `owner`; `bound`:
    /// the main process binds it. Its state follows the owner's from the next update on.
    pub fn set_owner(&mut self, proc_idx: u32, owner: u32, bound: bool) {
        if let Some(p) = self.find(proc_idx) {
            p.owner = Some(owner);
            p.bound = bound;
        }
    }

    /// The states of secondary processes from their owners' (`computeOomAdjLocked` for a
    /// service's connections, Android 10). Bound by an app on screen, a process is visible
    /// (`VISIBLE_APP_ADJ`: a client above perceptible raises it to visible, not to foreground);
    /// bound by the previous app, previous; bound by a cached app, cached, just below its client
    /// in the process list (`PROCESS_STATE_CACHED_ACTIVITY_CLIENT`: counted with the cached
    /// activities against their limit). A started service runs (`SERVICE_ADJ`) while its app is
    /// on screen or previous and is an empty process once the app is cached (Android 8+ stops a
    /// background app's services within a minute). Once the owner is gone, so is the binding: the
    /// process is empty, used last when its owner was.
    fn follow_owners(&mut self) {
        for i in 0..self.procs.len() {
            let Some(o) = self.procs[i].owner else { continue };
            let owner = self.procs.iter().find(|p| p.proc_idx == o).map(|p| (p.state, p.last_used));
            let p = &mut self.procs[i];
            match owner {
                None => {
                    p.owner = None;
                    p.state = ProcState::Empty;
                }
                Some((st, used)) => {
                    let (state, last_used) = match (st, p.bound) {
                        (ProcState::Foreground | ProcState::Visible | ProcState::Perceptible, true) => (ProcState::Visible, used),
                        (ProcState::Foreground | ProcState::Visible | ProcState::Perceptible | ProcState::Previous, false) => (ProcState::Service, used),
                        (ProcState::Previous, true) => (ProcState::Previous, used),
                        (ProcState::Cached, true) => (ProcState::Cached, used.saturating_sub(1)),
                        // A started service of a cached app has stopped: the process is empty
                        // from then on (its recency is when it became so).
                        (_, false) => (ProcState::Empty, if p.state == ProcState::Empty { p.last_used } else { used }),
                        (_, true) => (ProcState::Empty, used.saturating_sub(1)),
                    };
                    p.state = state;
                    p.last_used = last_used;
                }
            }
        }
    }

    pub fn remove(&mut self, proc_idx: u32) {
        self.procs.retain(|p| p.proc_idx != proc_idx);
    }

    fn find(&mut self, proc_idx: u32) -> Option<&mut AmProc> {
        self.procs.iter_mut().find(|p| p.proc_idx == proc_idx)
    }

    /// `proc_idx` comes to the foreground: the current foreground app (if another app is in the
    /// foreground) becomes the previous app and the previous one becomes cached. Launched from
    /// home, the previous app stays: the previous process is the last *app* whose activity
    /// stopped, never home (`updatePreviousProcess`), so it is not counted against the limits.
    pub fn move_to_foreground(&mut self, proc_idx: u32, now: Nanos) {
        self.stop_foreground(Some(proc_idx), now);
        if let Some(p) = self.find(proc_idx) {
            p.state = ProcState::Foreground;
            p.last_used = now;
        }
    }

    /// Home pressed: the foreground app becomes the previous app, and home is the most recently
    /// used process.
    pub fn home(&mut self, now: Nanos) {
        self.stop_foreground(None, now);
        for p in self.procs.iter_mut().filter(|p| p.state == ProcState::Home) {
            p.last_used = now;
        }
    }

    /// The foreground app other than `except` (if any) stops: it becomes the previous app and
    /// the previous app becomes cached.
    fn stop_foreground(&mut self, except: Option<u32>, now: Nanos) {
        let leaving = |p: &AmProc| p.state == ProcState::Foreground && Some(p.proc_idx) != except;
        if !self.procs.iter().any(leaving) {
            return;
        }
        for p in self.procs.iter_mut() {
            if leaving(p) {
                p.state = ProcState::Previous;
                p.last_used = now;
            } else if p.state == ProcState::Previous && Some(p.proc_idx) != except {
                p.state = ProcState::Cached;
            }
        }
    }

    /// The adj each process should have (`computeOomAdj` and the cached-slot walk of
    /// `updateOomAdjLocked`), in `procs` order.
    pub fn compute_adj(&self) -> Vec<i32> {
        let mut adj: Vec<i32> = self
            .procs
            .iter()
            .map(|p| match p.state {
                ProcState::System => SYSTEM_ADJ,
                ProcState::Home => HOME_APP_ADJ,
                ProcState::Foreground => FOREGROUND_APP_ADJ,
                ProcState::Visible => VISIBLE_APP_ADJ,
                ProcState::Perceptible => PERCEPTIBLE_APP_ADJ,
                ProcState::Service => SERVICE_ADJ,
                ProcState::Previous => PREVIOUS_APP_ADJ,
                ProcState::Cached | ProcState::Empty => CACHED_APP_MAX_ADJ,
            })
            .collect();
        let lru = self.lru_cached();
        let n_cached = lru.iter().filter(|&&i| self.procs[i].state == ProcState::Cached).count() as u32;
        let n_empty = (lru.len() as u32 - n_cached).min(self.max_cached);
        // Each kind steps through its own slots: activities 900, 910, …; empty 905, 915, ….
        struct Slots {
            cur: i32,
            next: i32,
            step: u32,
            factor: u32,
        }
        impl Slots {
            fn new(first: i32, n: u32) -> Self {
                Self { cur: first, next: first + 2 * CACHED_IMPORTANCE_LEVELS, step: 0, factor: (n / CACHED_SLOTS).max(1) }
            }
            fn take(&mut self) -> i32 {
                let a = self.cur;
                if self.cur != self.next {
                    self.step += 1;
                    if self.step >= self.factor {
                        self.step = 0;
                        self.cur = self.next;
                        self.next = (self.next + 2 * CACHED_IMPORTANCE_LEVELS).min(CACHED_APP_MAX_ADJ);
                    }
                }
                a
            }
        }
        let mut cached = Slots::new(CACHED_APP_MIN_ADJ, n_cached);
        let mut empty = Slots::new(CACHED_APP_MIN_ADJ + CACHED_IMPORTANCE_LEVELS, n_empty);
        for i in lru {
            adj[i] = if self.procs[i].state == ProcState::Cached { cached.take() } else { empty.take() };
        }
        adj
    }

    /// Apply adj values to the kernel and kill cached apps beyond the limit, oldest first
    /// (`updateOomAdj` + `trimApplications`). Returns the kills; killed processes are removed.
    pub fn update(&mut self, k: &mut Kernel, now: Nanos) -> Vec<AmKill> {
        // Forget processes the kernel side killed (lmkd, OOM).
        let n = self.procs.len();
        self.procs.retain(|p| k.procs[p.proc_idx as usize].alive);
        if self.procs.len() < n {
            self.allow_lower_mem_level = true;
        }
        self.follow_owners();
        // The LRU list's size as the memory factor sees it: the victims below stay on it until
        // their deaths are reported (`appDiedLocked`).
        let lru_size = self.procs.len();
        let mut kills = Vec::new();
        // The walk from the most recently used: the processes beyond each limit are killed.
        let (mut n_cached, mut n_empty) = (0u32, 0u32);
        let mut victims = Vec::new();
        for i in self.lru_cached() {
            let p = &self.procs[i];
            if p.state == ProcState::Cached {
                n_cached += 1;
                if n_cached > self.max_cached {
                    victims.push((p.proc_idx, "too many cached"));
                }
            } else if n_empty > self.trim_empty && now.saturating_sub(p.last_used) > MAX_EMPTY_TIME_NS {
                victims.push((p.proc_idx, "empty for 30 min"));
            } else {
                n_empty += 1;
                if n_empty > self.max_empty {
                    victims.push((p.proc_idx, "too many empty"));
                }
            }
        }
        let am_killed = !victims.is_empty();
        for (victim, reason) in victims {
            k.kill_process(victim, reason, CACHED_APP_MIN_ADJ, "activity_manager", now, k.cfg.reap_delay_ns);
            kills.push(AmKill { time_ns: now, proc_idx: victim, reason: reason.into() });
            self.remove(victim);
        }
        let adj = self.compute_adj();
        for (p, a) in self.procs.iter().zip(adj) {
            // Valid by construction (all adj constants are within [-1000, 1000]).
            let _ = k.set_adj(p.proc_idx, a, now);
            k.procs[p.proc_idx as usize].app = p.state != ProcState::System;
        }
        if let Some(c) = self.cpusets {
            let home_on_top = !self.procs.iter().any(|p| p.state == ProcState::Foreground);
            for p in &self.procs {
                k.set_cpuset(p.proc_idx, sched_group_cpuset(p.state, home_on_top, &c));
            }
        }
        // The foreground app (the launcher at home), as Acclaim's activity manager tells its
        // kernel.
        let fg = self.procs.iter().find(|p| p.state == ProcState::Foreground).or_else(|| self.procs.iter().find(|p| p.state == ProcState::Home));
        k.set_foreground(fg.map(|p| p.proc_idx));
        self.update_low_mem_state(k, now, lru_size);
        if am_killed {
            // Their deaths reach `appDiedLocked` as killed by the ActivityManager.
            self.allow_lower_mem_level = false;
        }
        kills
    }

    /// The memory factor and the trim levels (`updateLowMemStateLocked`); the levels to send are
    /// left in `trims`.
    fn update_low_mem_state(&mut self, k: &Kernel, now: Nanos, lru_size: usize) {
        let count = |s: ProcState| self.procs.iter().filter(|p| p.state == s).count() as u32;
        let mut factor = match &self.mem_factor_source {
            MemFactorSource::Off => return,
            MemFactorSource::Psi(d) => d.mem_factor(k, now),
            MemFactorSource::ProcessCounts => {
                let (num_cached, num_empty) = (count(ProcState::Cached), count(ProcState::Empty));
                if num_cached <= self.trim_cached && num_empty <= self.trim_empty {
                    match num_cached + num_empty {
                        n if n <= TRIM_CRITICAL_THRESHOLD => MemFactor::Critical,
                        n if n <= TRIM_LOW_THRESHOLD => MemFactor::Low,
                        _ => MemFactor::Moderate,
                    }
                } else {
                    MemFactor::Normal
                }
            }
        };
        // Better at once; worse only after a death not by our hand that lowered the count.
        if factor > self.last_memory_level && (!self.allow_lower_mem_level || lru_size >= self.last_num_processes) {
            factor = self.last_memory_level;
        }
        self.last_memory_level = factor;
        self.last_num_processes = lru_size;
        if factor == MemFactor::Normal {
            for p in self.procs.iter_mut() {
                p.trim_level = 0;
            }
            return;
        }
        let fg_level = match factor {
            MemFactor::Critical => trim::RUNNING_CRITICAL,
            MemFactor::Low => trim::RUNNING_LOW,
            _ => trim::RUNNING_MODERATE,
        };
        let has = |s: ProcState| self.procs.iter().any(|p| p.state == s) as u32;
        // With no app in the foreground the launcher is on screen: the top process, not one to trim.
        let home_on_top = has(ProcState::Foreground) == 0;
        let trimming = |s: ProcState| match s {
            ProcState::Home => !home_on_top,
            ProcState::Previous | ProcState::Cached | ProcState::Empty => true,
            _ => false,
        };
        let num_trimming = self.procs.iter().filter(|p| trimming(p.state)).count() as u32;
        let step_len = (num_trimming / 3).max(2 + has(ProcState::Home) + has(ProcState::Previous));
        // The process LRU list (the least recently used first), walked from the device's end.
        let mut order: Vec<usize> = (0..self.procs.len()).collect();
        order.sort_by_key(|&i| (self.procs[i].last_used, self.procs[i].proc_idx));
        if !self.trim_oldest_first {
            order.reverse();
        }
        let (mut level, mut step) = (trim::COMPLETE, 0);
        for i in order {
            let p = &mut self.procs[i];
            let give = if trimming(p.state) {
                let l = level;
                step += 1;
                if step >= step_len {
                    step = 0;
                    level = match level {
                        trim::COMPLETE => trim::MODERATE,
                        _ => trim::BACKGROUND,
                    };
                }
                l
            } else {
                fg_level
            };
            if p.trim_level < give {
                self.trims.push(TrimMemory { proc_idx: p.proc_idx, level: give });
            }
            p.trim_level = give;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobmem_kernel::KernelConfig;

    fn kernel_with(n: u32) -> Kernel {
        let mut cfg = KernelConfig::default();
        cfg.set("ram_mib", "64").unwrap();
        let mut k = Kernel::new(cfg).unwrap();
        for i in 0..n {
            k.create_process(100 + i, &format!("app{i}"), 0, 0).unwrap();
        }
        k
    }

    #[test]
    fn adj_by_state_and_recency() {
        let mut k = kernel_with(5);
        let mut am = ActivityManager::new(32);
        for i in 0..5 {
            am.add(i, ProcState::Cached, 0);
            am.move_to_foreground(i, 1000 * (i as u64 + 1));
        }
        am.update(&mut k, 10_000);
        let adj: Vec<i32> = (0..5).map(|i| k.procs[i].oom_score_adj).collect();
        // app4 foreground, app3 previous, then cached by recency: app2 900, app1 910, app0 920.
        assert_eq!(adj, vec![920, 910, 900, PREVIOUS_APP_ADJ, FOREGROUND_APP_ADJ]);
        am.home(20_000);
        am.update(&mut k, 20_000);
        assert_eq!(k.procs[4].oom_score_adj, PREVIOUS_APP_ADJ);
        assert_eq!(k.procs[3].oom_score_adj, 900, "the former previous app is the most recent cached");
    }

    #[test]
    fn launching_from_home_keeps_the_previous_app() {
        let mut k = kernel_with(3);
        let mut am = ActivityManager::new(32);
        for i in 0..3 {
            am.add(i, ProcState::Cached, 0);
        }
        am.move_to_foreground(0, 1000);
        am.home(2000);
        am.home(2500);
        am.move_to_foreground(1, 3000);
        am.update(&mut k, 3000);
        // Home is never the previous process: app0, left for home, stays previous (700), and a
        // second press of home changes nothing.
        assert_eq!((k.procs[0].oom_score_adj, k.procs[1].oom_score_adj), (PREVIOUS_APP_ADJ, FOREGROUND_APP_ADJ));
        // An app switch without home: app1 becomes previous, app0 cached.
        am.move_to_foreground(2, 4000);
        am.update(&mut k, 4000);
        assert_eq!((k.procs[0].oom_score_adj, k.procs[1].oom_score_adj), (900, PREVIOUS_APP_ADJ));
    }

    #[test]
    fn cached_limit_kills_beyond_the_limit() {
        let mut k = kernel_with(6);
        // A process limit of 4: 2 for empty processes, 2 for cached apps.
        let mut am = ActivityManager::new(4);
        assert_eq!(am.max_cached, 2);
        assert_eq!(ActivityManager::new(32).max_cached, 16, "Android's default: 16 cached apps with activities");
        for i in 0..6 {
            am.add(i, ProcState::Cached, 0);
            am.move_to_foreground(i, 1000 * (i as u64 + 1));
        }
        let kills = am.update(&mut k, 10_000);
        // app5 fg, app4 previous, cached app3, app2 kept; app1 and app0 (the oldest) killed, in
        // the order of the walk from the most recently used.
        assert_eq!(kills.iter().map(|x| x.proc_idx).collect::<Vec<_>>(), vec![1, 0]);
        assert!(!k.procs[0].alive && !k.procs[1].alive && k.procs[2].alive);
        assert_eq!(k.kills.iter().filter(|x| x.reason == "too many cached").count(), 2);
    }

    #[test]
    fn a_bound_secondary_process_follows_its_app_and_takes_a_cached_slot() {
        let mut k = kernel_with(6);
        // A process limit of 4: 2 cached processes with activities kept.
        let mut am = ActivityManager::new(4);
        // Apps 0..4 launched in turn (main processes); process 5, started with app 1, is a
        // secondary process that app 1 binds.
        let launch = |am: &mut ActivityManager, k: &mut Kernel, i: u32| {
            let t = 1000 * (i as u64 + 1);
            am.add(i, ProcState::Foreground, t);
            am.move_to_foreground(i, t);
            if i == 1 {
                am.add(5, ProcState::Empty, t);
                am.set_owner(5, 1, true);
            }
            am.update(k, t)
        };
        launch(&mut am, &mut k, 0);
        launch(&mut am, &mut k, 1);
        assert_eq!(k.procs[5].oom_score_adj, VISIBLE_APP_ADJ, "bound by the app on screen: visible");
        launch(&mut am, &mut k, 2);
        assert_eq!(k.procs[5].oom_score_adj, PREVIOUS_APP_ADJ, "bound by the previous app: previous");
        // 3 fg, 2 previous; cached by recency: app 1, its client process just below it, app 0 —
        // three cached processes with activities against a limit of 2: app 0 goes, where without
        // the client process it would have stayed.
        let ids = |v: Vec<AmKill>| v.iter().map(|x| (x.proc_idx, x.reason.clone())).collect::<Vec<_>>();
        assert_eq!(ids(launch(&mut am, &mut k, 3)), vec![(0, "too many cached".to_string())]);
        // 4 fg, 3 previous; cached: app 2, app 1, its client: the client is the oldest.
        assert_eq!(ids(launch(&mut am, &mut k, 4)), vec![(5, "too many cached".to_string())]);
        assert!(k.procs[1].alive && k.procs[2].alive);
    }

    #[test]
    fn a_secondary_process_is_empty_once_its_app_is_gone_or_cached_unbound() {
        let mut k = kernel_with(4);
        let mut am = ActivityManager::new(32);
        for i in 0..2 {
            am.add(i, ProcState::Cached, 0);
        }
        // 2: bound by app 0; 3: a started service of app 0.
        am.add(2, ProcState::Empty, 0);
        am.add(3, ProcState::Empty, 0);
        am.set_owner(2, 0, true);
        am.set_owner(3, 0, false);
        am.move_to_foreground(0, 1000);
        am.update(&mut k, 1000);
        assert_eq!((k.procs[2].oom_score_adj, k.procs[3].oom_score_adj), (VISIBLE_APP_ADJ, SERVICE_ADJ));
        am.move_to_foreground(1, 2000);
        am.home(3000);
        am.update(&mut k, 3000);
        // App 0 is cached now (the previous app is 1): its client is cached with it, 905 is the
        // empty process's first slot.
        let st = |am: &ActivityManager, i: u32| am.procs.iter().find(|p| p.proc_idx == i).unwrap().state;
        assert_eq!((st(&am, 2), st(&am, 3)), (ProcState::Cached, ProcState::Empty));
        assert_eq!(k.procs[3].oom_score_adj, CACHED_APP_MIN_ADJ + CACHED_IMPORTANCE_LEVELS);
        // App 0 dies: its bound process loses its client and is empty too.
        k.kill_process(0, "test", 0, "test", 4000, 0);
        am.update(&mut k, 4000);
        assert_eq!(st(&am, 2), ProcState::Empty);
        assert!(am.procs.iter().all(|p| p.owner.is_none() || p.owner == Some(1)));
    }

    #[test]
    fn empty_processes_take_their_own_slots_and_limit() {
        let mut k = kernel_with(8);
        // A process limit of 8: 4 for empty processes (2 kept whatever their age), 4 for cached apps.
        let mut am = ActivityManager::new(8);
        assert_eq!((am.max_cached, am.max_empty, am.trim_empty), (4, 4, 2));
        // Five empty processes started at boot (0..5 by recency), three apps used in turn.
        for i in 0..5 {
            am.add(i, ProcState::Empty, i as u64);
        }
        for i in 5..8 {
            am.add(i, ProcState::Cached, 0);
            am.move_to_foreground(i, 1000 * i as u64);
        }
        am.home(10_000);
        let kills = am.update(&mut k, 20_000);
        // The oldest empty process is the fifth: killed as beyond the empty limit.
        assert_eq!(kills.iter().map(|x| (x.proc_idx, x.reason.as_str())).collect::<Vec<_>>(), vec![(0, "too many empty")]);
        let adj: Vec<i32> = (0..8).map(|i| k.procs[i].oom_score_adj).collect();
        // Apps: 7 previous (700), cached 6 → 900, 5 → 910; empty by recency 4 → 905, 3 → 915, 2 → 925, 1 → 935.
        assert_eq!(adj[1..], [935, 925, 915, 905, 910, 900, PREVIOUS_APP_ADJ]);
    }

    #[test]
    fn old_empty_processes_are_trimmed_beyond_the_trim_level() {
        let mut k = kernel_with(4);
        let mut am = ActivityManager::new(8);
        for i in 0..4 {
            am.add(i, ProcState::Empty, i as u64);
        }
        // Within 30 minutes every one of the four is kept (the empty limit is 4).
        assert!(am.update(&mut k, MAX_EMPTY_TIME_NS).is_empty());
        // Later, old ones are trimmed once more than the trim level (2) are counted: AOSP checks
        // the count before counting the process, so three are kept.
        let kills = am.update(&mut k, MAX_EMPTY_TIME_NS + 10);
        assert_eq!(kills.iter().map(|x| (x.proc_idx, x.reason.as_str())).collect::<Vec<_>>(), vec![(0, "empty for 30 min")]);
    }

    /// `n` apps used in turn (0 first), home pressed last: app n-1 is previous, the rest cached.
    fn used_in_turn(k: &mut Kernel, am: &mut ActivityManager, n: u32) {
        for i in 0..n {
            am.add(i, ProcState::Cached, 0);
            am.move_to_foreground(i, 1000 * (i as u64 + 1));
            am.update(k, 1000 * (i as u64 + 1));
        }
        am.home(100_000);
        am.update(k, 100_000);
    }

    #[test]
    fn memory_factor_from_counts_worsens_only_after_a_death_not_by_am() {
        let mut k = kernel_with(8);
        let mut am = ActivityManager::new(32);
        am.mem_factor_source = MemFactorSource::ProcessCounts;
        // Four cached apps are at most CUR_TRIM_CACHED_PROCESSES (5) and at most 5 in all: low.
        // But no process has died yet, so the factor stays normal and nothing is trimmed.
        used_in_turn(&mut k, &mut am, 5);
        assert_eq!(am.last_memory_level, MemFactor::Normal);
        assert!(am.trims.is_empty());
        // The kernel kills one (not the ActivityManager): the count falls, the factor may worsen.
        k.kill_process(0, "oom", 900, "oom_kill", 200_000, 0);
        am.update(&mut k, 200_000);
        // Three cached apps left: critical.
        assert_eq!(am.last_memory_level, MemFactor::Critical);
        assert!(!am.trims.is_empty());
        // It gets better at once when more processes are kept, whatever died.
        am.trims.clear();
        for i in 5..8 {
            am.add(i, ProcState::Cached, 0);
            am.move_to_foreground(i, 300_000 + i as u64);
            am.update(&mut k, 300_000 + i as u64);
        }
        assert_eq!(am.last_memory_level, MemFactor::Low, "five cached apps: low");
    }

    /// 12 apps used in turn, then high PSI pressure and a kernel kill of the oldest: the levels
    /// each remaining app gets, walking the LRU list from `oldest_first`'s end.
    fn levels_under_pressure(oldest_first: bool) -> Vec<Option<u32>> {
        let n = 12;
        let mut k = kernel_with(n);
        let mut am = ActivityManager::new(32);
        am.mem_factor_source = MemFactorSource::Psi(LowMemDetector::new(&mut k));
        am.trim_oldest_first = oldest_first;
        used_in_turn(&mut k, &mut am, n);
        assert!(am.trims.is_empty(), "no pressure yet");
        // 60 ms of full stall in a second (the high trigger), then a death not by the
        // ActivityManager: critical.
        k.psi.record(150_000, 60_000_000, true);
        k.psi.check_monitors(150_000 + 60_000_000);
        k.kill_process(0, "oom", 900, "oom_kill", 200_000, 0);
        am.update(&mut k, 200_000);
        assert_eq!(am.last_memory_level, MemFactor::Critical);
        let levels = (1..n).map(|p| am.trims.iter().find(|t| t.proc_idx == p).map(|t| t.level)).collect();
        // Sent once: the same levels again send nothing.
        am.trims.clear();
        am.update(&mut k, 210_000);
        assert!(am.trims.is_empty());
        // A second without a trigger: normal again at once, every level reset.
        am.update(&mut k, 2_000_000_000);
        assert_eq!(am.last_memory_level, MemFactor::Normal);
        assert!(am.procs.iter().all(|p| p.trim_level == 0));
        levels
    }

    #[test]
    fn trim_levels_go_by_the_lru_list_from_the_devices_end() {
        // 11 left: 10 cached + the previous app (11, the most recent); factor max(11 / 3, 2 +
        // previous) = 3 per level.
        let (c, m, b) = (Some(trim::COMPLETE), Some(trim::MODERATE), Some(trim::BACKGROUND));
        // Android 10 and earlier: from the most recently used end.
        let recent_first = levels_under_pressure(false);
        assert_eq!(recent_first, [vec![b; 5], vec![m; 3], vec![c; 3]].concat(), "apps 1..=11");
        // Android 12+: from the least recently used end.
        let oldest_first = levels_under_pressure(true);
        assert_eq!(oldest_first, [vec![c; 3], vec![m; 3], vec![b; 5]].concat(), "apps 1..=11");
    }

    #[test]
    fn the_activity_managers_own_kills_do_not_lower_the_level() {
        let mut k = kernel_with(5);
        let mut am = ActivityManager::new(32);
        am.mem_factor_source = MemFactorSource::Psi(LowMemDetector::new(&mut k));
        used_in_turn(&mut k, &mut am, 5);
        // A kernel kill without pressure: the level may now worsen, but there is no pressure.
        k.kill_process(0, "oom", 900, "oom_kill", 200_000, 0);
        am.update(&mut k, 200_000);
        assert_eq!(am.last_memory_level, MemFactor::Normal);
        // Pressure, and the ActivityManager itself kills two cached apps (a lower limit): its
        // victims stay on the list until they are reported dead, so the count has not fallen.
        k.psi.record(300_000, 60_000_000, true);
        k.psi.check_monitors(300_000 + 60_000_000);
        am.max_cached = 1;
        let kills = am.update(&mut k, 400_000_000);
        assert_eq!(kills.len(), 2);
        assert_eq!(am.last_memory_level, MemFactor::Normal);
        // Their deaths do not let it worsen either; a user's removal from recents neither.
        am.update(&mut k, 410_000_000);
        assert_eq!(am.last_memory_level, MemFactor::Normal);
        am.process_died(3, true);
        k.kill_process(3, "user", 0, "user", 420_000_000, 0);
        am.update(&mut k, 420_000_000);
        assert_eq!(am.last_memory_level, MemFactor::Normal);
        // A crash does.
        am.process_died(4, false);
        k.kill_process(4, "crash", 0, "runtime", 430_000_000, 0);
        am.update(&mut k, 430_000_000);
        assert_eq!(am.last_memory_level, MemFactor::Critical);
    }

    #[test]
    fn many_cached_processes_share_slots() {
        let n = 24u32;
        let mut k = kernel_with(n);
        let mut am = ActivityManager::new(64);
        for i in 0..n {
            am.add(i, ProcState::Cached, 0);
            am.move_to_foreground(i, 1000 * (i as u64 + 1));
        }
        am.home(100_000);
        am.update(&mut k, 100_000);
        // 23 cached apps (the last is previous): 2 per slot (factor 23 / 10), the last slot 999.
        let mut adj: Vec<i32> = (0..n - 1).map(|i| k.procs[i as usize].oom_score_adj).collect();
        adj.reverse();
        assert_eq!(adj, [900, 900, 910, 910, 920, 920, 930, 930, 940, 940, 950, 950, 960, 960, 970, 970, 980, 980, 990, 990, 999, 999, 999]);
    }
}
