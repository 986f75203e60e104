//! Android's ActivityManager as far as memory is concerned: process states, `oom_score_adj`
//! assignment, the cached-process limit, and the kernel's notice of the foreground app.
//!
//! Adj values follow AOSP `ProcessList`: foreground 0, visible 100, perceptible 200, previous
//! app 700, home 600, cached apps 900–999 by recency (the most recently used cached app gets the
//! lowest value). Cached apps are spread over the range in steps of `CACHED_ADJ_STEP` (AOSP
//! spreads them over slots whose width depends on how many there are; a fixed step is a
//! simplification). The device's `max_cached_processes` (`CUR_MAX_CACHED_PROCESSES`) is shared,
//! as in AOSP's `OomAdjuster.updateOomAdjLocked`, between empty processes
//! (`CUR_MAX_EMPTY_PROCESSES` = half of it, `ProcessList.computeEmptyProcessLimit`) and cached
//! processes with activities, which get the rest: beyond that many cached apps the oldest are
//! killed (reason "too many cached"). The foreground and previous apps are not cached.
//! Persistent system processes are negative. Left out: services and bound-process importance,
//! empty processes (an app here is one process with an activity), connection groups, the
//! freezer.

use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use serde::Serialize;

pub const FOREGROUND_APP_ADJ: i32 = 0;
pub const VISIBLE_APP_ADJ: i32 = 100;
pub const PERCEPTIBLE_APP_ADJ: i32 = 200;
pub const HOME_APP_ADJ: i32 = 600;
pub const PREVIOUS_APP_ADJ: i32 = 700;
pub const CACHED_APP_MIN_ADJ: i32 = 900;
pub const CACHED_APP_MAX_ADJ: i32 = 999;
pub const PERSISTENT_PROC_ADJ: i32 = -800;
pub const SYSTEM_ADJ: i32 = -900;
/// Distance between consecutive cached apps' adj (a simplification of AOSP's slot spreading).
pub const CACHED_ADJ_STEP: i32 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ProcState {
    System,
    Home,
    Foreground,
    Visible,
    Perceptible,
    Previous,
    Cached,
}

#[derive(Clone, Debug, Serialize)]
pub struct AmProc {
    /// Kernel process index.
    pub proc_idx: u32,
    pub state: ProcState,
    /// When the process last left (or was in) the foreground: recency order of cached apps.
    pub last_used: Nanos,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct AmKill {
    pub time_ns: Nanos,
    pub proc_idx: u32,
    pub reason: String,
}

/// `ProcessList.computeEmptyProcessLimit`: half of the process limit is for empty processes.
pub fn empty_process_limit(max_cached_processes: u32) -> u32 {
    max_cached_processes / 2
}

#[derive(Clone, Debug)]
pub struct ActivityManager {
    /// Cached processes with activities kept before the oldest is killed: the device's process
    /// limit minus the empty-process limit (half of it).
    pub max_cached: u32,
    pub procs: Vec<AmProc>,
}

impl ActivityManager {
    /// An activity manager with the device's process limit (`CUR_MAX_CACHED_PROCESSES`).
    pub fn new(max_cached_processes: u32) -> Self {
        Self { max_cached: max_cached_processes - empty_process_limit(max_cached_processes), procs: Vec::new() }
    }

    pub fn add(&mut self, proc_idx: u32, state: ProcState, now: Nanos) {
        self.procs.push(AmProc { proc_idx, state, last_used: now });
    }

    pub fn remove(&mut self, proc_idx: u32) {
        self.procs.retain(|p| p.proc_idx != proc_idx);
    }

    fn find(&mut self, proc_idx: u32) -> Option<&mut AmProc> {
        self.procs.iter_mut().find(|p| p.proc_idx == proc_idx)
    }

    /// `proc_idx` comes to the foreground: the current foreground app becomes the previous app,
    /// the previous one becomes cached.
    pub fn move_to_foreground(&mut self, proc_idx: u32, now: Nanos) {
        for p in self.procs.iter_mut() {
            match p.state {
                ProcState::Foreground if p.proc_idx != proc_idx => {
                    p.state = ProcState::Previous;
                    p.last_used = now;
                }
                ProcState::Previous if p.proc_idx != proc_idx => p.state = ProcState::Cached,
                _ => {}
            }
        }
        if let Some(p) = self.find(proc_idx) {
            p.state = ProcState::Foreground;
            p.last_used = now;
        }
    }

    /// Home pressed: the foreground app becomes the previous app.
    pub fn home(&mut self, now: Nanos) {
        for p in self.procs.iter_mut() {
            match p.state {
                ProcState::Foreground => {
                    p.state = ProcState::Previous;
                    p.last_used = now;
                }
                ProcState::Previous => p.state = ProcState::Cached,
                _ => {}
            }
        }
    }

    /// The adj each process should have (`computeOomAdj`), in `procs` order.
    pub fn compute_adj(&self) -> Vec<i32> {
        // Cached apps by recency, most recent first.
        let mut cached: Vec<(Nanos, u32)> = self.procs.iter().filter(|p| p.state == ProcState::Cached).map(|p| (p.last_used, p.proc_idx)).collect();
        cached.sort_by(|a, b| b.cmp(a));
        self.procs
            .iter()
            .map(|p| match p.state {
                ProcState::System => SYSTEM_ADJ,
                ProcState::Home => HOME_APP_ADJ,
                ProcState::Foreground => FOREGROUND_APP_ADJ,
                ProcState::Visible => VISIBLE_APP_ADJ,
                ProcState::Perceptible => PERCEPTIBLE_APP_ADJ,
                ProcState::Previous => PREVIOUS_APP_ADJ,
                ProcState::Cached => {
                    let rank = cached.iter().position(|c| c.1 == p.proc_idx).unwrap_or(0) as i32;
                    (CACHED_APP_MIN_ADJ + rank * CACHED_ADJ_STEP).min(CACHED_APP_MAX_ADJ)
                }
            })
            .collect()
    }

    /// Apply adj values to the kernel and kill cached apps beyond the limit, oldest first
    /// (`updateOomAdj` + `trimApplications`). Returns the kills; killed processes are removed.
    pub fn update(&mut self, k: &mut Kernel, now: Nanos) -> Vec<AmKill> {
        // Forget processes the kernel side killed (lmkd, OOM).
        self.procs.retain(|p| k.procs[p.proc_idx as usize].alive);
        let mut kills = Vec::new();
        let mut cached: Vec<(Nanos, u32)> = self.procs.iter().filter(|p| p.state == ProcState::Cached).map(|p| (p.last_used, p.proc_idx)).collect();
        cached.sort();
        while cached.len() > self.max_cached as usize {
            let (_, victim) = cached.remove(0);
            k.kill_process(victim, "too many cached", CACHED_APP_MIN_ADJ, "activity_manager", now, k.cfg.reap_delay_ns);
            kills.push(AmKill { time_ns: now, proc_idx: victim, reason: "too many cached".into() });
            self.remove(victim);
        }
        let adj = self.compute_adj();
        for (p, a) in self.procs.iter().zip(adj) {
            // Valid by construction (all adj constants are within [-1000, 1000]).
            let _ = k.set_adj(p.proc_idx, a, now);
            k.procs[p.proc_idx as usize].app = p.state != ProcState::System;
        }
        // The foreground app (the launcher at home), as Acclaim's activity manager tells its
        // kernel.
        let fg = self.procs.iter().find(|p| p.state == ProcState::Foreground).or_else(|| self.procs.iter().find(|p| p.state == ProcState::Home));
        k.set_foreground(fg.map(|p| p.proc_idx));
        kills
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
    fn cached_limit_kills_oldest_first() {
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
        // app5 fg, app4 previous, cached app3, app2 kept; app1 and app0 (the oldest) killed, oldest first.
        assert_eq!(kills.iter().map(|x| x.proc_idx).collect::<Vec<_>>(), vec![0, 1]);
        assert!(!k.procs[0].alive && !k.procs[1].alive && k.procs[2].alive);
        assert_eq!(k.kills.iter().filter(|x| x.reason == "too many cached").count(), 2);
    }
}
