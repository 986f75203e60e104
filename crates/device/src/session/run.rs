//! Running a scenario file end to end: inputs loaded, the phone booted, the script executed, the
//! result reported — with an optional progress observer.

use super::metrics;
use super::{inputs, Session};
use crate::scenario::Action;
use mobmem_engine::Nanos;
use serde_json::Value;

/// Run a scenario file with the data directory `data`; returns the result JSON.
pub fn run_file(scenario: &str, data: &std::path::Path, overrides: &inputs::Settings, seed: Option<u64>) -> Result<Value, String> {
    run_file_observed(scenario, data, overrides, seed, None)
}

/// The script's `use` and `wait` seconds (unscaled) and its launches, `repeat` and `each` expanded.
pub fn script_totals(actions: &[Action]) -> (f64, f64) {
    actions.iter().fold((0.0, 0.0), |(secs, launches), a| {
        let (s, l) = match a {
            Action::Use(s) | Action::Wait(s) => (*s, 0.0),
            Action::Launch { .. } => (0.0, 1.0),
            Action::Repeat(n, body) => {
                let (s, l) = script_totals(body);
                (*n as f64 * s, *n as f64 * l)
            }
            Action::Each(list, body) => {
                let (s, l) = script_totals(body);
                (list.len() as f64 * s, list.len() as f64 * l)
            }
            Action::Home | Action::Kill(_) | Action::FileIo { .. } => (0.0, 0.0),
        };
        (secs + s, launches + l)
    })
}

/// [`run_file`] with a progress observer: `progress(now, estimated_end)` after every slice, both
/// in simulated ns since boot. The estimate is the boot time, plus the script's use and wait time
/// ([`script_totals`], times `session.time_scale`), plus its launches at the mean time-to-display
/// of those done so far (none before the first). An `Err` from it stops the session.
/// A session's observer: called with (simulated now, estimated end) after slices; an `Err`
/// stops the run.
pub type Progress = Box<dyn FnMut(Nanos, Nanos) -> Result<(), String> + Send>;

pub fn run_file_observed(
    scenario: &str,
    data: &std::path::Path,
    overrides: &inputs::Settings,
    seed: Option<u64>,
    progress: Option<Progress>,
) -> Result<Value, String> {
    let inp = inputs::load(scenario, data, overrides, seed).map_err(|e| e.to_string())?;
    let wall = std::time::Instant::now();
    run_booted(Session::boot(inp)?, progress, wall)
}

/// Run a booted session's script to its end and report it (what [`run_file_observed`] does after
/// boot; a caller may first add to the session, e.g. a session service of its own).
pub fn run_booted(mut s: Session, progress: Option<Progress>, wall: std::time::Instant) -> Result<Value, String> {
    let actions = s.inp.scenario.actions.clone();
    if let Some(mut p) = progress {
        let (secs, launches) = script_totals(&actions);
        let base = s.now as f64 + secs * s.inp.options.time_scale * 1e9;
        let (mut seen, mut ttid_ns) = (0, 0.0);
        s.observer = Some(Box::new(move |s: &Session| {
            for l in &s.launches[seen..] {
                ttid_ns += l.ttid_ms * 1e6;
            }
            seen = s.launches.len();
            let per_launch = if seen > 0 { ttid_ns / seen as f64 } else { 0.0 };
            let end = (base + launches.max(seen as f64) * per_launch).min(Nanos::MAX as f64) as Nanos;
            p(s.now, end)
        }));
    }
    s.execute(&actions, None)?;
    s.finish();
    s.sample();
    #[cfg(debug_assertions)]
    s.k.check_invariants().map_err(|e| format!("kernel invariant violated at the end of the session: {e}"))?;
    Ok(metrics::result(&s, wall.elapsed().as_secs_f64()))
}

/// Check a session's inputs without running it: the scenario and everything it names load, and
/// every setting (`overrides` included) is a known key with a valid value for its layer.
pub fn check(scenario: &str, data: &std::path::Path, overrides: &inputs::Settings, seed: Option<u64>) -> Result<(), String> {
    let inp = inputs::load(scenario, data, overrides, seed).map_err(|e| e.to_string())?;
    mobmem_runtime::sim::kernel_config(&inp.kernel)?;
    let rcfg = mobmem_runtime::sim::runtime_config(&inp.runtime)?;
    mobmem_runtime::sim::check_policies(&rcfg, &inp.options.policies)?;
    super::services::check(&inp.options.services)
}

/// The kernel configuration a session of `scenario` would boot with (device ← scenario
/// `[system.kernel]` ← `overrides`), without running it: what named systems resolve their
/// `${ram_mib}`-style variables against.
pub fn kernel_config(scenario: &str, data: &std::path::Path, overrides: &inputs::Settings) -> Result<mobmem_kernel::KernelConfig, String> {
    let inp = inputs::load(scenario, data, overrides, None).map_err(|e| e.to_string())?;
    mobmem_runtime::sim::kernel_config(&inp.kernel)
}

#[cfg(test)]
mod observer_tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    const SCRIPT: &str = r#"name = "obs"
device = "pixel3"
seed = 1
[[apps]]
name = "synthetic:footprint=8m,objsize=512"
[[script]]
action = "launch"
app = "synthetic:footprint=8m,objsize=512"
[[script]]
action = "repeat"
times = 3
steps = [{ action = "use", seconds = 0.5 }, { action = "wait", seconds = 0.25 }]
"#;

    fn file() -> String {
        let dir = std::env::temp_dir().join(format!("mobmem-observer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("obs.toml");
        std::fs::write(&p, SCRIPT).unwrap();
        p.to_string_lossy().into_owned()
    }

    fn data() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data")
    }

    #[test]
    fn script_totals_expand_repeat_and_each() {
        let each = Action::Each(vec!["a".into(), "b".into()], vec![Action::Launch { app: "{app}".into(), warmup: false }, Action::Use(0.5), Action::Home]);
        let a = vec![Action::Use(2.0), Action::Repeat(10, vec![Action::Wait(1.0), each])];
        assert_eq!(script_totals(&a), (22.0, 20.0));
        let (secs, _) = script_totals(&[Action::Repeat(u32::MAX, vec![Action::Repeat(u32::MAX, vec![Action::Use(1e12)])])]);
        assert!(secs.is_finite() && secs > 1e30);
    }

    #[test]
    fn observer_sees_every_slice_and_can_stop_the_session() {
        let path = file();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s2 = seen.clone();
        let v = run_file_observed(
            &path,
            &data(),
            &vec![],
            None,
            Some(Box::new(move |now, end| {
                s2.lock().unwrap().push((now, end));
                Ok(())
            })),
        )
        .unwrap();
        let seen = seen.lock().unwrap();
        assert!(seen.len() > 10 && seen.windows(2).all(|w| w[0].0 < w[1].0), "{:?}", &seen[..5]);
        let (last, end) = *seen.last().unwrap();
        assert_eq!(last as f64 / 1e9, v["sim_seconds"].as_f64().unwrap());
        // Boot, 2.25 s of use and wait, and the launch (its TTID once it is done).
        assert!(seen[0].1 >= 2_250_000_000 && (end as f64 - last as f64).abs() < 0.05 * last as f64, "estimate {end} vs {last}");
        // Same result as without an observer (the wall-time keys aside).
        let mut plain = run_file(&path, &data(), &vec![], None).unwrap();
        let mut observed = v;
        for r in [&mut plain, &mut observed] {
            r.as_object_mut().unwrap().remove("wall_seconds");
            r.as_object_mut().unwrap().remove("sim_speed");
        }
        assert_eq!(plain, observed);
        let mut calls = 0;
        let e = run_file_observed(
            &path,
            &data(),
            &vec![],
            None,
            Some(Box::new(move |_, _| {
                calls += 1;
                if calls == 3 {
                    Err("stopped".into())
                } else {
                    Ok(())
                }
            })),
        )
        .unwrap_err();
        assert_eq!(e, "stopped");
    }
}
