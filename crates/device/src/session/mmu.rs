//! Minimum mutator utilisation (MMU, Cheng and Blelloch, PLDI 2001) of a session's apps.
//!
//! For a window length *w*, MMU(*w*) is the smallest share of any window of that length, inside
//! the run, in which the app's main thread was not stopped by its collector. The stops are the
//! ones the runtime records (a result's `mutator_stops`: stop-the-world pauses, waits for a
//! collection, checkpoints run at the thread's safepoint); time the thread is idle between
//! frames counts as available, as in the definition. An MMU curve shows at once the worst pause
//! (where the curve leaves 0) and the utilisation a collector leaves over longer windows.
//!
//! The maximum stopped time over windows of length *w* is reached where a window starts at a
//! stop's start or ends at a stop's end, so those candidates are evaluated exactly (prefix sums
//! over the merged stops): O(*n* log *n*) per window length, no sampling.

use super::records::MutatorStopRecord;
use serde::Serialize;

/// Window lengths of a result's curve, ms (1 ms … 1 s).
pub const WINDOWS_MS: [f64; 10] = [1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];

/// Sorted, non-overlapping intervals (empty ones dropped, touching ones joined).
pub fn merge(intervals: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut v: Vec<(f64, f64)> = intervals.iter().copied().filter(|(a, b)| b > a).collect();
    v.sort_by(|x, y| x.partial_cmp(y).expect("finite stop times"));
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// MMU for each window length of `windows` over the run `span` = (start, end), given the stop
/// `intervals` (same unit); None for a window not longer than 0 or longer than the span.
pub fn mmu(intervals: &[(f64, f64)], span: (f64, f64), windows: &[f64]) -> Vec<Option<f64>> {
    let (t0, t1) = span;
    let iv: Vec<(f64, f64)> = merge(intervals).into_iter().map(|(a, b)| (a.max(t0), b.min(t1))).filter(|(a, b)| b > a).collect();
    // Stopped time before interval k.
    let mut before = Vec::with_capacity(iv.len() + 1);
    before.push(0.0);
    for (a, b) in &iv {
        before.push(before.last().unwrap() + (b - a));
    }
    let stopped_before = |x: f64| -> f64 {
        // The last stop starting at or before x.
        match iv.partition_point(|(a, _)| *a <= x) {
            0 => 0.0,
            n => {
                let (a, b) = iv[n - 1];
                before[n - 1] + (x - a).clamp(0.0, b - a)
            }
        }
    };
    windows
        .iter()
        .map(|&w| {
            if w <= 0.0 || w > t1 - t0 {
                return None;
            }
            if iv.is_empty() {
                return Some(1.0);
            }
            let starts = iv.iter().map(|(a, _)| *a).chain(iv.iter().map(|(_, b)| b - w)).chain([t0, t1 - w]);
            let worst = starts.map(|c| c.clamp(t0, t1 - w)).map(|c| stopped_before(c + w) - stopped_before(c)).fold(f64::MIN, f64::max);
            Some((1.0 - worst / w).max(0.0))
        })
        .collect()
}

/// One point of an app's curve.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MmuRow {
    pub(crate) app: String,
    pub(crate) window_ms: f64,
    pub(crate) mmu: Option<f64>,
}

/// The curve of every app of `apps` (then of any other app with stops) over the whole session
/// of `sim_ms`, at [`WINDOWS_MS`].
pub fn rows(apps: &[String], stops: &[MutatorStopRecord], sim_ms: f64) -> Vec<MmuRow> {
    curves(apps, stops.iter().map(|st| (st.app.as_str(), st.t_s, st.dur_ms)), sim_ms)
}

/// [`rows`] of a saved result's JSON (its `per_app`, `mutator_stops` and `sim_seconds`): for
/// results written before runs recorded their curves.
pub fn rows_of_result(res: &serde_json::Value) -> Vec<MmuRow> {
    let apps: Vec<String> = res["per_app"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default();
    let stops = res["mutator_stops"].as_array().map(Vec::as_slice).unwrap_or_default();
    let stops = stops.iter().map(|st| (st["app"].as_str().unwrap_or_default(), st["t_s"].as_f64().unwrap_or(0.0), st["dur_ms"].as_f64().unwrap_or(0.0)));
    curves(&apps, stops, res["sim_seconds"].as_f64().unwrap_or(0.0) * 1e3)
}

fn curves<'a>(apps: &[String], stops: impl Iterator<Item = (&'a str, f64, f64)>, sim_ms: f64) -> Vec<MmuRow> {
    let mut by_app: Vec<(String, Vec<(f64, f64)>)> = apps.iter().map(|a| (a.clone(), Vec::new())).collect();
    for (app, t_s, dur_ms) in stops {
        let a = t_s * 1e3;
        let i = match by_app.iter().position(|(n, _)| n == app) {
            Some(i) => i,
            None => {
                by_app.push((app.to_string(), Vec::new()));
                by_app.len() - 1
            }
        };
        by_app[i].1.push((a, a + dur_ms));
    }
    let mut out = Vec::new();
    for (app, iv) in by_app {
        for (w, m) in WINDOWS_MS.iter().zip(mmu(&iv, (0.0, sim_ms), &WINDOWS_MS)) {
            out.push(MmuRow { app: app.clone(), window_ms: *w, mmu: m });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every integer window position (exact for integer stops and windows: the stopped time in a
    /// window is piecewise linear with integer breakpoints).
    fn brute(intervals: &[(f64, f64)], span: (i64, i64), w: i64) -> f64 {
        let iv = merge(intervals);
        let mut worst = 0.0f64;
        for t in span.0..=span.1 - w {
            let (a0, b0) = (t as f64, (t + w) as f64);
            let stopped: f64 = iv.iter().map(|(a, b)| (b.min(b0) - a.max(a0)).max(0.0)).sum();
            worst = worst.max(stopped);
        }
        1.0 - worst / w as f64
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn mmu_equals_brute_force(stops in prop::collection::vec((0i64..200, 0i64..40), 0..12), w in 1i64..120) {
            let iv: Vec<(f64, f64)> = stops.iter().map(|&(a, d)| (a as f64, (a + d) as f64)).collect();
            let got = mmu(&iv, (0.0, 240.0), &[w as f64])[0].unwrap();
            prop_assert!((got - brute(&iv, (0, 240), w)).abs() < 1e-9);
        }
    }

    #[test]
    fn edges() {
        assert_eq!(mmu(&[], (0.0, 100.0), &[10.0, 200.0]), [Some(1.0), None]);
        assert_eq!(mmu(&[(0.0, 100.0)], (0.0, 100.0), &[10.0]), [Some(0.0)]);
        // One 5-unit pause: windows up to 5 can be fully stopped, a 10-unit window half.
        assert_eq!(mmu(&[(50.0, 55.0)], (0.0, 100.0), &[1.0, 5.0, 10.0, 100.0]), [Some(0.0), Some(0.0), Some(0.5), Some(0.95)]);
        // Overlapping stops count once.
        assert_eq!(mmu(&[(10.0, 20.0), (15.0, 25.0)], (0.0, 100.0), &[100.0]), [Some(0.85)]);
    }

    #[test]
    fn rows_cover_every_app_and_window() {
        let stop = |app: &str, t_s: f64, dur_ms: f64| MutatorStopRecord { t_s, app: app.into(), dur_ms, kind: "pause" };
        let r = rows(&["a".into(), "b".into()], &[stop("a", 1.0, 5.0), stop("z", 2.0, 1.0)], 10_000.0);
        assert_eq!(r.len(), 3 * WINDOWS_MS.len());
        let at = |app: &str, w: f64| r.iter().find(|x| x.app == app && x.window_ms == w).unwrap().mmu;
        assert_eq!((at("a", 5.0), at("a", 10.0), at("b", 1000.0), at("z", 1.0)), (Some(0.0), Some(0.5), Some(1.0), Some(0.0)));
    }
}
