//! ActivityManager's `LowMemDetector` (Android 10+): the memory factor read from the kernel's
//! pressure stall information instead of from the number of cached processes.
//!
//! Its native side registers three PSI triggers on `/proc/pressure/memory`, each over a 1 s
//! window: `some` 15 ms → low pressure, `full` 30 ms → medium, `full` 50 ms → high
//! (`com_android_server_am_LowMemDetector.cpp`). Its thread waits for a trigger; the pressure is
//! the highest level among the triggers that fired together, and it falls back to none when no
//! trigger fires for 1 s (the wait's timeout once the pressure is up). The Java side hands the
//! pressure to the ActivityManager as its memory factor, the levels numbered alike (none →
//! normal, low → moderate, medium → low, high → critical: `LowMemDetector.getMemFactor`). The
//! ActivityManager reads it whenever it updates process states.
//!
//! Here the detector is read lazily: the pressure at a time is the highest level among the
//! triggers whose last event is the latest event, if that event is less than 1 s old. That is the
//! native loop's state, since every wake resets the level to what the wake delivered and a wake
//! with nothing after 1 s resets it to none.
//!
//! Left out: the `EPOLLERR` path (PSI disabled at run time), which makes the detector
//! unavailable; the kernel is configured with PSI or not for the whole run.

use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use serde::Serialize;

/// The ActivityManager's memory factor (`ProcessStats.ADJ_MEM_FACTOR_*`, the `MemFactor` that
/// `LowMemDetector` declares), worst last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum MemFactor {
    Normal,
    Moderate,
    Low,
    Critical,
}

/// `PSI_LOW_STALL_US`, `PSI_MEDIUM_STALL_US`, `PSI_HIGH_STALL_US`: (full, stall) per level.
const TRIGGERS: [(MemFactor, bool, Nanos); 3] =
    [(MemFactor::Moderate, false, 15_000_000), (MemFactor::Low, true, 30_000_000), (MemFactor::Critical, true, 50_000_000)];
/// The wait's timeout once the pressure is up (`epoll_wait(..., 1000)`), and the triggers'
/// window (`PSI_WINDOW_SIZE_US`).
const HOLD_NS: Nanos = 1_000_000_000;

/// The detector's triggers in the kernel's PSI.
#[derive(Clone, Debug)]
pub struct LowMemDetector {
    monitors: [usize; 3],
}

impl LowMemDetector {
    /// Register the three triggers (`LowMemDetector.init`).
    pub fn new(k: &mut Kernel) -> Self {
        Self { monitors: TRIGGERS.map(|(_, full, stall)| k.psi.add_monitor(full, stall)) }
    }

    /// The memory factor at `now` (`getMemFactor`).
    pub fn mem_factor(&self, k: &Kernel, now: Nanos) -> MemFactor {
        let events = self.monitors.map(|m| k.psi.monitor(m).last_event);
        let Some(last) = events.iter().flatten().copied().max() else { return MemFactor::Normal };
        if now >= last + HOLD_NS {
            return MemFactor::Normal;
        }
        TRIGGERS.iter().zip(events).filter(|(_, e)| *e == Some(last)).map(|((f, _, _), _)| *f).max().unwrap_or(MemFactor::Normal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobmem_kernel::KernelConfig;

    #[test]
    fn no_pressure_is_normal() {
        let mut k = Kernel::new(KernelConfig::default()).unwrap();
        let d = LowMemDetector::new(&mut k);
        assert_eq!(d.mem_factor(&k, 5_000_000_000), MemFactor::Normal);
    }

    #[test]
    fn the_level_is_the_last_wake_and_falls_after_a_quiet_second() {
        let mut k = Kernel::new(KernelConfig::default()).unwrap();
        let d = LowMemDetector::new(&mut k);
        let ms = 1_000_000;
        // 20 ms of `some` stall (kswapd's): the low trigger only.
        k.psi.record(100 * ms, 20 * ms, false);
        k.psi.check_monitors(120 * ms);
        assert_eq!(d.mem_factor(&k, 130 * ms), MemFactor::Moderate);
        // 40 ms more of `full` stall: the medium trigger fires (the low one fired in this window).
        k.psi.record(200 * ms, 40 * ms, true);
        k.psi.check_monitors(240 * ms);
        assert_eq!(d.mem_factor(&k, 250 * ms), MemFactor::Low);
        // A later wake by the low trigger alone (the medium one fired less than a window ago)
        // sets the level to what that wake delivered, lower than before.
        k.psi.record(1_150 * ms, 20 * ms, false);
        k.psi.check_monitors(1_170 * ms);
        assert_eq!(d.mem_factor(&k, 1_180 * ms), MemFactor::Moderate);
        // A second after the last event: none.
        assert_eq!(d.mem_factor(&k, 2_170 * ms), MemFactor::Normal);
        // Below every threshold in a later window: nothing fires.
        k.psi.record(3_500 * ms, 10 * ms, true);
        k.psi.check_monitors(3_510 * ms);
        assert_eq!(d.mem_factor(&k, 3_520 * ms), MemFactor::Normal);
    }
}
