//! The device's other processes running beside an app's launch.
//!
//! A launch runs as one call (`Live::cold_launch`, `Live::hot_launch`). Before it, the session
//! moves every other process it drives into a `CoRun`: the other apps' processes, every app's
//! secondary processes (the launching app's renderer among them) and the system processes. The
//! kernel runs it whenever the launch's threads advance it (a sync at a page, CPU work, a wait),
//! slice by slice as the launch's clock passes each slice boundary, in the order
//! `Session::advance` uses; so the launch's allocations and theirs interleave in time, and
//! kswapd's progress serves both.
//!
//! Left out during the launch (the session does them when it catches up after it, as before):
//! the ActivityManager's updates, reaping bookkeeping, sampling, the session services and the
//! observer. A Java OOM of another app is recorded with its time and reported then.

use super::app::Live;
use super::system::SysProc;
use mobmem_engine::Nanos;
use mobmem_kernel::{CoRunner, Kernel};

/// One app's processes moved out of the session for the launch.
pub(crate) struct CoApp {
    pub(crate) index: usize,
    /// Its main process (`None` for the launching app, which the launch drives).
    pub(crate) live: Option<Live>,
    pub(crate) secondary: Vec<SysProc>,
}

pub(crate) struct CoRun {
    pub(crate) apps: Vec<CoApp>,
    pub(crate) sys: Vec<SysProc>,
    slice: Nanos,
    budget: Nanos,
    /// The slice boundary everything has run to.
    pos: Nanos,
    /// Java OOMs of other apps: (app index, time); the process is already killed.
    pub(crate) ooms: Vec<(usize, Nanos)>,
}

impl CoRun {
    pub(crate) fn new(apps: Vec<CoApp>, sys: Vec<SysProc>, slice: Nanos, budget: Nanos, now: Nanos) -> Self {
        Self { apps, sys, slice, budget, pos: now, ooms: Vec::new() }
    }

    /// The first time it wants to run: the slice boundary after `pos`.
    pub(crate) fn next_boundary(&self) -> Nanos {
        self.pos - self.pos % self.slice + self.slice
    }
}

impl CoRunner for CoRun {
    fn run_until(&mut self, k: &mut Kernel, until: Nanos) -> Nanos {
        let mut end = self.next_boundary();
        while end <= until {
            for a in &mut self.apps {
                let Some(l) = a.live.as_mut() else { continue };
                if !l.run_until(k, end, self.budget) {
                    self.ooms.push((a.index, end));
                    k.kill_process(l.proc_idx, "java oom", 0, "runtime", end, 0);
                }
            }
            for s in self.sys.iter_mut().chain(self.apps.iter_mut().flat_map(|a| a.secondary.iter_mut())) {
                s.run_until(k, end);
            }
            k.advance_to(end);
            self.pos = end;
            end = self.next_boundary();
        }
        end
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}
