//! Frame times of an app's UI thread when its runtime runs alone (`mobmem runtime run`, the LBO
//! back end): how long each frame took from its vsync to the end of its work, GC pauses, waits
//! for the collector and page-fault stalls included.
//!
//! A frame is *janky* when it ends after its deadline, one frame period after its vsync (the
//! session's frame model uses the same rule). The run does a fixed amount of work — a late frame
//! delays the next one instead of dropping it — so a long pause makes the frames queued behind it
//! late too, as a backlog of input would on a phone. Times are kept in a histogram of
//! [`BUCKET_NS`] buckets (percentiles to that resolution), so recording allocates nothing.
//!
//! [`GcFreePacing`] replays the same units of work as they would have been paced had no
//! collection stopped the mutator: the wall time a run's collections cost is how much later its
//! last unit ended than in that replay. A pause inside a frame that still ends before the next
//! vsync costs nothing; one that makes frames late costs the backlog it creates.
//!
//! Left out: RenderThread and the GPU (a frame is its UI-thread work), triple buffering.

use mobmem_engine::Nanos;
use serde::Serialize;

/// Histogram resolution: 0.1 ms.
pub const BUCKET_NS: Nanos = 100_000;
/// Frames longer than this share the last bucket (their exact maximum is kept).
const BUCKETS: usize = 20_000; // 2 s

#[derive(Clone, Debug, Default)]
pub struct FrameTimes {
    hist: Vec<u32>,
    pub(crate) frames: u64,
    pub(crate) janky: u64,
    pub(crate) total_ns: u128,
    pub(crate) max_ns: Nanos,
}

/// What a run reports of its frames.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FrameSummary {
    pub(crate) frames: u64,
    pub(crate) janky_frames: u64,
    /// Janky frames / frames (0 with no frame).
    pub(crate) jank_ratio: f64,
    pub(crate) mean_ms: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p90_ms: f64,
    pub(crate) p99_ms: f64,
    pub(crate) max_ms: f64,
}

impl FrameTimes {
    /// Record a frame that took `ns` from its vsync, with a deadline `budget` after it.
    pub fn record(&mut self, ns: Nanos, budget: Nanos) {
        if self.hist.is_empty() {
            self.hist = vec![0; BUCKETS];
        }
        self.hist[((ns / BUCKET_NS) as usize).min(BUCKETS - 1)] += 1;
        self.frames += 1;
        self.janky += (ns > budget) as u64;
        self.total_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
    }

    /// The `q`-quantile (0 < q ≤ 1) in ms: the upper edge of the bucket holding the
    /// ⌈q·frames⌉-th shortest frame, never above the longest frame; 0 with no frame.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.frames == 0 {
            return 0.0;
        }
        let rank = ((q * self.frames as f64).ceil() as u64).clamp(1, self.frames);
        let mut seen = 0u64;
        for (i, &c) in self.hist.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                if i == BUCKETS - 1 {
                    break; // the overflow bucket: its frames are known by the longest only
                }
                let edge = (i as Nanos + 1) * BUCKET_NS;
                return edge.min(self.max_ns) as f64 / 1e6;
            }
        }
        self.max_ns as f64 / 1e6
    }

    pub fn summary(&self) -> FrameSummary {
        let n = self.frames;
        FrameSummary {
            frames: n,
            janky_frames: self.janky,
            jank_ratio: if n == 0 { 0.0 } else { self.janky as f64 / n as f64 },
            mean_ms: if n == 0 { 0.0 } else { self.total_ns as f64 / n as f64 / 1e6 },
            p50_ms: self.quantile_ms(0.5),
            p90_ms: self.quantile_ms(0.9),
            p99_ms: self.quantile_ms(0.99),
            max_ms: self.max_ns as f64 / 1e6,
        }
    }
}

/// The units of work of a run (frames in the foreground, periodic units in the background)
/// paced again without the time collections stopped the mutator. A unit is due at its vsync and
/// starts then or when the previous one ended, whichever is later; without its GC stall it would
/// have taken its elapsed time minus the stall, and started when the GC-free previous unit ended.
/// Everything else (CPU, faults, barrier and other mutator GC work) stays as it was.
#[derive(Clone, Debug, Default)]
pub struct GcFreePacing {
    /// When the last unit would have ended without GC stalls.
    end_ns: Nanos,
    /// When the last unit ended.
    real_end_ns: Nanos,
    /// The GC stall inside the paced units (pauses while the mutator ran, waits for collections).
    pub(crate) stall_ns: Nanos,
    pub(crate) units: u64,
}

impl GcFreePacing {
    /// A unit due at `vsync` that started at `start` and ended at `end`, of which the mutator
    /// spent `stall` stopped by collections.
    pub fn record(&mut self, vsync: Nanos, start: Nanos, end: Nanos, stall: Nanos) {
        let work = end.saturating_sub(start).saturating_sub(stall);
        self.end_ns = vsync.max(self.end_ns) + work;
        self.real_end_ns = end;
        self.stall_ns += stall;
        self.units += 1;
    }

    /// The wall time the stalls cost: how much later the last unit ended than it would have
    /// without them (never negative: a stall cannot make work end sooner). In a run of a fixed
    /// amount of work this is the wall time its collections cost; in a run of fixed length they
    /// cost units of work instead, which this does not measure.
    pub fn delay_ns(&self) -> Nanos {
        self.real_end_ns.saturating_sub(self.end_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gc_free_pacing_charges_only_the_delay_a_stall_causes() {
        const P: Nanos = 16_000_000;
        // Frame 0: 4 ms of work + a 5 ms pause, ends at 9 ms, before the next vsync: free.
        let mut p = GcFreePacing::default();
        p.record(0, 0, 9_000_000, 5_000_000);
        assert_eq!(p.delay_ns(), 5_000_000, "the last unit itself ends 5 ms later");
        // Frame 1 at 16 ms: 4 ms of work, no stall; the earlier pause no longer shows.
        p.record(P, P, P + 4_000_000, 0);
        assert_eq!(p.delay_ns(), 0);
        // Frame 2 at 32 ms: 4 ms of work + a 30 ms pause: ends at 66 ms, past two vsyncs, and
        // frame 3 (due at 48 ms) starts late at 66 ms and ends at 70 ms. Without the pause frame
        // 2 ends at 36 ms and frame 3 runs 48–52 ms: 18 ms of delay.
        p.record(2 * P, 2 * P, 2 * P + 34_000_000, 30_000_000);
        p.record(3 * P, 66_000_000, 70_000_000, 0);
        assert_eq!(p.delay_ns(), 18_000_000);
        assert_eq!((p.units, p.stall_ns), (4, 35_000_000));
        // The backlog drains: frame 4 (due 64 ms) started at 70 ms in the real run.
        p.record(4 * P, 70_000_000, 74_000_000, 0);
        assert_eq!(p.delay_ns(), 74_000_000 - (4 * P + 4_000_000));
        p.record(5 * P, 5 * P, 5 * P + 4_000_000, 0);
        assert_eq!(p.delay_ns(), 0, "once frames are on time again, the delay is gone");
        assert_eq!(GcFreePacing::default().delay_ns(), 0);
    }

    #[test]
    fn quantiles_follow_the_recorded_frames() {
        let mut f = FrameTimes::default();
        assert_eq!(f.summary(), FrameSummary::default());
        // 90 frames of 5 ms, 9 of 20 ms, one of 3 s (past the last bucket).
        for _ in 0..90 {
            f.record(5_000_000, 16_666_667);
        }
        for _ in 0..9 {
            f.record(20_000_000, 16_666_667);
        }
        f.record(3_000_000_000, 16_666_667);
        let s = f.summary();
        assert_eq!((s.frames, s.janky_frames), (100, 10));
        assert!((s.jank_ratio - 0.1).abs() < 1e-12);
        assert!((s.p50_ms - 5.1).abs() < 1e-9, "{s:?}");
        assert!((s.p90_ms - 5.1).abs() < 1e-9, "{s:?}");
        assert!((s.p99_ms - 20.1).abs() < 1e-9, "{s:?}");
        assert_eq!(s.max_ms, 3000.0);
        assert!((s.mean_ms - (90.0 * 5.0 + 9.0 * 20.0 + 3000.0) / 100.0).abs() < 1e-9);
        // The top quantile is the longest frame itself, not its bucket's edge.
        assert_eq!(f.quantile_ms(1.0), 3000.0);
    }
}
