//! The device's other processes running beside an app's launch.
//!
//! A launch runs as one call (`Live::cold_launch`, `Live::hot_launch`). Before it, the session
//! moves every other process it drives into a `CoRun`: the other apps' processes, every app's
//! secondary processes (the launching app's renderer among them) and the system processes. The
//! kernel runs it whenever the launch's threads advance it (a sync at a page, CPU work, a wait),
//! slice by slice as the launch's clock passes each slice boundary, with the slice body
//! `Session::advance` uses (`run_slice`); so the launch's allocations and theirs interleave in
//! time, and kswapd's progress serves both.
//!
//! Left out during the launch (the session does them when it catches up after it, as before):
//! the ActivityManager's updates, reaping bookkeeping, sampling, the session services and the
//! observer. A Java OOM of another app is recorded with its time and reported then.

use super::app::Live;
use super::system::SysProc;
use mobmem_engine::Nanos;
use mobmem_kernel::{CoRunner, Kernel};

/// An app's processes as one slice runs them: its main process (if the slice drives it) and
/// its secondary processes.
pub(crate) trait SliceApp {
    fn processes(&mut self) -> (Option<&mut Live>, &mut [SysProc]);
}

/// One slice, up to `end`: each app's main process in `order` (a Java OOM kills the process and
/// is passed to `on_oom` with the app's index), then the system processes, then every app's
/// secondary processes, then the kernel (kswapd, lmkd, writeback) to `end`.
pub(crate) fn run_slice<A: SliceApp>(
    k: &mut Kernel,
    end: Nanos,
    budget: Nanos,
    apps: &mut [A],
    order: impl Iterator<Item = usize>,
    sys: &mut [SysProc],
    mut on_oom: impl FnMut(usize),
) {
    for i in order {
        let Some(l) = apps[i].processes().0 else { continue };
        if !l.run_until(k, end, budget) {
            k.kill_process(l.proc_idx, "java oom", 0, "runtime", end, 0);
            on_oom(i);
        }
    }
    for s in sys.iter_mut() {
        s.run_until(k, end);
    }
    for a in apps.iter_mut() {
        for s in a.processes().1 {
            s.run_until(k, end);
        }
    }
    k.advance_to(end);
}

/// One app's processes moved out of the session for the launch (`CoRun::apps` holds every app,
/// in the session's order).
pub(crate) struct CoApp {
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

impl SliceApp for CoApp {
    fn processes(&mut self) -> (Option<&mut Live>, &mut [SysProc]) {
        (self.live.as_mut(), &mut self.secondary)
    }
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
            let (n, ooms) = (self.apps.len(), &mut self.ooms);
            run_slice(k, end, self.budget, &mut self.apps, 0..n, &mut self.sys, |i| ooms.push((i, end)));
            self.pos = end;
            end = self.next_boundary();
        }
        end
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}
