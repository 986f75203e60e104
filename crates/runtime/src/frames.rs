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
    pub frames: u64,
    pub janky: u64,
    pub total_ns: u128,
    pub max_ns: Nanos,
}

/// What a run reports of its frames.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct FrameSummary {
    pub frames: u64,
    pub janky_frames: u64,
    /// Janky frames / frames (0 with no frame).
    pub jank_ratio: f64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p90_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
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

#[cfg(test)]
mod tests {
    use super::*;

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
