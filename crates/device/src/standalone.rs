//! The inputs of a standalone runtime run — one app's runtime, or GCBench, on a device model
//! outside a session (`mobmem runtime run` / `gcbench`): the same data files a session reads,
//! layered the same way (model defaults ← the device's `[kernel]` and `[runtime]` tables ← the
//! runtime calibration file ← the user's `--set` pairs), and the device's calibration knobs of
//! apps (its calibration file ← `--set calibration.*`) applied to the app as in a session.
//!
//! Leaves out everything a session adds on top (zygote, system processes, launches, the
//! scenario's `[system]` table).

use crate::app;
use crate::device;
use crate::input::{self, InputError};
use mobmem_runtime::workload::{AppProfile as Workload, SETTINGS as APP_SETTINGS};
use std::path::Path;

pub type Settings = Vec<(String, String)>;

/// The calibration file `runtime_costs.toml` of `data_dir` as `cost.NAME` runtime settings (its
/// `[cost]` table); none when the file is absent.
pub fn calibration(data_dir: &Path) -> Result<Settings, InputError> {
    let file = data_dir.join("runtime_costs.toml").to_string_lossy().into_owned();
    let Ok(text) = std::fs::read_to_string(&file) else { return Ok(Vec::new()) };
    let v: toml::Value = input::parse(&file, &text)?;
    let mut out = Vec::new();
    if let Some(toml::Value::Table(t)) = v.get("cost") {
        for (k, v) in t {
            out.push((format!("cost.{k}"), input::value_text(v)));
        }
    }
    Ok(out)
}

/// Layered settings of a standalone run.
#[derive(Debug, Default)]
pub struct RunSettings {
    pub kernel: Settings,
    pub runtime: Settings,
    /// The user's `app.*` pairs (applied to the app's workload after its profile).
    pub app: Settings,
    /// The calibration knobs: the device's calibration file, then the user's `calibration.*`.
    pub knobs: crate::calibration::Knobs,
}

/// The settings of a run on device `device` (none: the model's defaults) with the user's pairs:
/// `kernel.*` go to the kernel, `app.*` to the app, the rest to the runtime.
pub fn settings(data_dir: &Path, device: Option<&str>, user: &[(String, String)]) -> Result<RunSettings, InputError> {
    let mut s = RunSettings::default();
    let mut knobs = Settings::new();
    if let Some(name) = device {
        let d = device::load_named(data_dir, name)?;
        s.kernel = d.kernel_settings();
        s.runtime = d.runtime_settings();
        knobs = crate::calibration::load(data_dir, name)?;
    }
    s.runtime.extend(calibration(data_dir)?);
    for (k, v) in user {
        let to = if k.starts_with("calibration.") {
            &mut knobs
        } else if k.starts_with("kernel.") {
            &mut s.kernel
        } else if APP_SETTINGS.prefixes.iter().any(|p| k.starts_with(p)) {
            &mut s.app
        } else {
            &mut s.runtime
        };
        to.push((k.clone(), v.clone()));
    }
    s.knobs = crate::calibration::knobs(&knobs).map_err(|msg| InputError { file: "--set".into(), line: 0, col: 0, msg })?;
    Ok(s)
}

/// The workload of app `spec` (a profile name of `data_dir` or a `synthetic:…` spec) with the
/// calibration `knobs` and then the user's `app.*` pairs applied; the model's default workload seed.
pub fn app_workload(data_dir: &Path, spec: &str, knobs: &crate::calibration::Knobs, overrides: &[(String, String)]) -> Result<Workload, InputError> {
    let (mut w, heap_given) = app::workload(data_dir, spec, Workload::default().seed)?;
    crate::calibration::apply_to_app(knobs, &mut w, heap_given);
    for (k, v) in overrides {
        w.set(k, v).map_err(|msg| InputError { file: "--set".into(), line: 0, col: 0, msg })?;
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data")
    }

    #[test]
    fn user_pairs_go_to_their_layer_after_the_device() {
        let user = [("kernel.swappiness", "100"), ("app.live_heap", "8m"), ("heap", "64m")].map(|(k, v)| (k.to_string(), v.to_string()));
        let device = input::stems(&data().join("devices")).into_iter().next().expect("shipped devices");
        let s = settings(&data(), Some(&device), &user).unwrap();
        assert_eq!(s.kernel.last().unwrap().0, "kernel.swappiness");
        assert!(s.kernel.len() > 1, "the device's kernel table comes first");
        assert_eq!(s.app, vec![("app.live_heap".to_string(), "8m".to_string())]);
        assert_eq!(s.runtime.last().unwrap().0, "heap");
        let e = settings(&data(), Some("nosuchphone"), &[]).unwrap_err().to_string();
        assert!(e.contains("unknown device") && e.contains(&device), "{e}");
    }

    #[test]
    fn apps_come_from_the_session_profiles() {
        let names = input::stems(&data().join("apps"));
        let name = names.first().expect("shipped app profiles");
        let w = app_workload(&data(), name, &Default::default(), &[("app.live_heap".into(), "8m".into())]).unwrap();
        let p = app::load_named(&data(), name).unwrap();
        assert_eq!(w.live_heap, 8 << 20);
        assert_eq!(w.alloc_rate_fg, (p.java_heap.alloc_fg_mib_s * (1u64 << 20) as f64) as u64);
        assert_eq!(app_workload(&data(), "synthetic:footprint=8m", &Default::default(), &[]).unwrap().live_heap, 8 << 20);
        let e = app_workload(&data(), "no-such-app", &Default::default(), &[]).unwrap_err().to_string();
        assert!(e.contains("unknown app \"no-such-app\"") && e.contains(&names.join(", ")), "{e}");
        let e = app_workload(&data(), name, &Default::default(), &[("app.live_heap".into(), "-1".into())]).unwrap_err().to_string();
        assert!(e.contains("live_heap"), "{e}");
    }

    #[test]
    fn a_standalone_app_gets_the_calibration_knobs_as_in_a_session() {
        let user = [("calibration.app_native_scale", "2"), ("calibration.app_java_scale", "1.5")].map(|(k, v)| (k.to_string(), v.to_string()));
        let s = settings(&data(), Some("pixel3"), &user).unwrap();
        assert_eq!((s.knobs.app_native_scale, s.knobs.app_java_scale), (2.0, 1.5));
        assert!(s.runtime.iter().all(|(k, _)| !k.starts_with("calibration.")));
        let plain = app_workload(&data(), "twitter", &Default::default(), &[]).unwrap();
        let cal = app_workload(&data(), "twitter", &s.knobs, &[]).unwrap();
        assert_eq!(cal.native_anon, plain.native_anon * 2);
        assert_eq!(cal.live_heap, (plain.live_heap as f64 * 1.5) as u64);
        // A measured heap (Twitch's, from its GC log) and a synthetic app's specified one stay.
        let twitch = app_workload(&data(), "twitch", &s.knobs, &[]).unwrap();
        assert_eq!(twitch.live_heap, app_workload(&data(), "twitch", &Default::default(), &[]).unwrap().live_heap);
        assert_eq!(app_workload(&data(), "synthetic:footprint=8m", &s.knobs, &[]).unwrap().live_heap, 8 << 20);
        // The user's app.* pairs come last.
        let w = app_workload(&data(), "twitter", &s.knobs, &[("app.live_heap".into(), "8m".into())]).unwrap();
        assert_eq!(w.live_heap, 8 << 20);
        assert!(settings(&data(), Some("pixel3"), &[("calibration.app_native_scale".into(), "99".into())]).is_err());
    }
}
