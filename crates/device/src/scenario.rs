//! Scenario scripts: a device, a system configuration, the apps, and what the user does.
//!
//! ```toml
//! name = "caching-capacity"
//! device = "pixel3"
//! seed = 1
//! [system]
//! collector = "cc"            # cc | cmc | ss | ms | nogc
//! lmkd = "psi"                # psi | psi-minfree | minfree | off (overrides the device)
//! policies = []
//! [system.kernel]             # any kernel.<key> setting
//! [system.runtime]            # any runtime setting (heapgrowthlimit, heaptargetutilization, …)
//! swappiness = 100
//! [[apps]]
//! name = "twitter"            # an app profile, or synthetic:footprint=180m,objsize=512
//! [[script]]
//! action = "each"             # launch | use | home | wait | kill | repeat | each
//! apps = ["twitter", "chrome"]
//! steps = [ { action = "launch", app = "{app}" }, { action = "use", seconds = 30 } ]
//! ```
//! Every error names the file, line, column and field.

use crate::input::{self, InputError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::Spanned;

use mobmem_kernel::lmkd;
use mobmem_runtime::CollectorKind;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct System {
    #[serde(default = "default_collector")]
    pub(crate) collector: Spanned<String>,
    #[serde(default)]
    pub(crate) lmkd: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) policies: Vec<Spanned<String>>,
    /// Kernel settings (`kernel.<key>` without the prefix), with their place in the file for
    /// error messages.
    #[serde(default)]
    pub(crate) kernel: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    /// Runtime settings (ART's `dalvik.vm.*` heap properties and the runtime's other settings),
    /// for every app: how the measured phone's build configured them.
    #[serde(default)]
    pub(crate) runtime: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
    /// Cached-app compaction (process_madvise PAGEOUT on private anon of cached apps).
    #[serde(default)]
    pub(crate) cached_app_compaction: bool,
    #[serde(default)]
    pub(crate) freezer: bool,
    /// Cached apps keep a small background activity (default); false: they are idle.
    #[serde(default = "yes")]
    pub(crate) cached_app_work: bool,
}

fn yes() -> bool {
    true
}

fn default_collector() -> Spanned<String> {
    Spanned::new(0..0, "cc".to_string())
}

impl Default for System {
    fn default() -> Self {
        Self {
            collector: default_collector(),
            lmkd: None,
            policies: Vec::new(),
            kernel: BTreeMap::new(),
            runtime: BTreeMap::new(),
            cached_app_compaction: false,
            freezer: false,
            cached_app_work: true,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppRef {
    pub(crate) name: Spanned<String>,
}

/// The longest `use` or `wait` step, in seconds (about 116 days; repeat a step for longer). With
/// the largest time scale this keeps one step far below the 584 years a nanosecond clock holds.
pub const MAX_STEP_SECONDS: f64 = 1e7;

/// One step of the user's script, as written (fields keep their position for error messages).
/// Actions: `launch {app}` (cold if not running, hot if cached; `warmup = true` leaves its time out
/// of the launch statistics, as a benchmark's warm-up pass), `use {seconds}` (frames at
/// 60 Hz), `home`, `wait {seconds}`, `kill {app}`, `file_io {mib, mode}` (the foreground app
/// reads or writes a new file sequentially), `repeat {times, steps}`, `each {apps, steps}` (with
/// "{app}" standing for each app in turn).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub(crate) action: Spanned<String>,
    #[serde(default)]
    pub(crate) app: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) warmup: Option<Spanned<bool>>,
    #[serde(default)]
    pub(crate) seconds: Option<Spanned<f64>>,
    #[serde(default)]
    pub(crate) times: Option<Spanned<u32>>,
    #[serde(default)]
    pub(crate) apps: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub(crate) steps: Option<Vec<Step>>,
    #[serde(default)]
    pub(crate) mib: Option<Spanned<u32>>,
    #[serde(default)]
    pub(crate) mode: Option<Spanned<String>>,
}

/// A validated step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Action {
    /// Launch an app; a warm-up launch happens like any other but its time is left out of the
    /// launch statistics (the unmeasured first pass of a benchmark's protocol).
    Launch {
        app: String,
        warmup: bool,
    },
    Use(f64),
    Home,
    Wait(f64),
    Kill(String),
    /// The foreground app reads or writes a new file of this many MiB sequentially, 4 KiB at a
    /// time (a storage-throughput test).
    FileIo {
        mib: u32,
        write: bool,
    },
    Repeat(u32, Vec<Action>),
    Each(Vec<String>, Vec<Action>),
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub(crate) name: String,
    #[serde(default)]
    pub description: String,
    pub(crate) device: Spanned<String>,
    #[serde(default = "default_seed")]
    pub(crate) seed: u64,
    #[serde(default)]
    pub(crate) system: System,
    pub(crate) apps: Vec<AppRef>,
    pub(crate) script: Vec<Step>,
    /// What the scenario is meant to produce (checked by the shipped-scenario test).
    #[serde(default)]
    pub(crate) expect: Expect,
    /// The script after validation.
    #[serde(skip)]
    pub actions: Vec<Action>,
}

fn default_seed() -> u64 {
    1
}

/// A scenario's intent, so that a run that misses it fails loudly instead of reporting numbers
/// that measure nothing.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The scenario creates memory pressure: its run must swap out, reclaim directly or kill.
    #[serde(default)]
    pub(crate) pressure: bool,
    /// Some app is meant to run out of Java heap (otherwise a Java OOM is a failed run).
    #[serde(default)]
    pub(crate) java_oom: bool,
}

/// Names a scenario may refer to.
pub struct Known<'a> {
    pub devices: &'a [String],
    pub apps: &'a [String],
}

impl Scenario {
    /// Cross-checks: known device, collector, lmkd mode, apps; script references declared apps;
    /// positive durations.
    pub fn validate(&mut self, file: &str, text: &str, known: &Known) -> Result<(), InputError> {
        let at = |span: std::ops::Range<usize>, msg: String| input::at(file, text, span, msg);
        if !known.devices.iter().any(|d| d == self.device.get_ref()) {
            return Err(at(self.device.span(), format!("device: unknown device {:?}; known: {}", self.device.get_ref(), known.devices.join(", "))));
        }
        let c = &self.system.collector;
        if let Err(e) = CollectorKind::named(c.get_ref()) {
            return Err(at(c.span(), format!("system.collector: {e}")));
        }
        if let Some(l) = &self.system.lmkd {
            lmkd::KILLERS.get(l.get_ref()).map_err(|e| at(l.span(), format!("system.lmkd: {e}")))?;
        }
        let mut declared = Vec::new();
        for a in &self.apps {
            let n = a.name.get_ref();
            let ok = if n.starts_with("synthetic:") {
                mobmem_runtime::workload::AppProfile::synthetic(n).map_err(|e| at(a.name.span(), format!("apps.name: {e}")))?;
                true
            } else {
                known.apps.iter().any(|k| k == n)
            };
            if !ok {
                return Err(at(a.name.span(), format!("apps.name: unknown app {n:?}; known profiles: {}", known.apps.join(", "))));
            }
            if declared.contains(n) {
                return Err(at(a.name.span(), format!("apps.name: {n:?} listed twice")));
            }
            declared.push(n.clone());
        }
        if self.script.is_empty() {
            return Err(InputError { file: file.into(), line: 0, col: 0, msg: "script: empty".into() });
        }
        self.actions = check_steps(&self.script, &declared, false, &at)?;
        Ok(())
    }
}

/// Validate steps and turn them into actions.
fn check_steps(
    steps: &[Step],
    declared: &[String],
    in_each: bool,
    at: &dyn Fn(std::ops::Range<usize>, String) -> InputError,
) -> Result<Vec<Action>, InputError> {
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let act = s.action.get_ref().as_str();
        let aspan = s.action.span();
        let allowed: &[&str] = match act {
            "launch" | "kill" => &["app"],
            "use" | "wait" => &["seconds"],
            "home" => &[],
            "repeat" => &["times", "steps"],
            "each" => &["apps", "steps"],
            "file_io" => &["mib", "mode"],
            _ => return Err(at(aspan, format!("script.action: unknown action {act:?}; expected launch, use, home, wait, kill, file_io, repeat or each"))),
        };
        let present = [
            ("app", s.app.is_some()),
            ("seconds", s.seconds.is_some()),
            ("times", s.times.is_some()),
            ("apps", s.apps.is_some()),
            ("steps", s.steps.is_some()),
            ("mib", s.mib.is_some()),
            ("mode", s.mode.is_some()),
        ];
        if let (Some(w), false) = (&s.warmup, act == "launch") {
            return Err(at(w.span(), format!("script.{act}: field `warmup` does not belong to a `{act}` step (only a launch is a warm-up)")));
        }
        for (f, p) in present {
            if p && !allowed.contains(&f) {
                return Err(at(aspan.clone(), format!("script.{act}: field `{f}` does not belong to a `{act}` step")));
            }
            if !p && allowed.contains(&f) {
                return Err(at(aspan.clone(), format!("script.{act}: missing field `{f}`")));
            }
        }
        let check_app = |a: &Spanned<String>, field: &str| -> Result<String, InputError> {
            let n = a.get_ref();
            if n == "{app}" {
                if !in_each {
                    return Err(at(a.span(), format!("{field}: \"{{app}}\" is only meaningful inside an `each` step")));
                }
            } else if !declared.contains(n) {
                return Err(at(a.span(), format!("{field}: app {n:?} is not in the scenario's [[apps]]")));
            }
            Ok(n.clone())
        };
        let seconds = |f: &Option<Spanned<f64>>| -> Result<f64, InputError> {
            let v = f.as_ref().expect("checked above");
            let x = *v.get_ref();
            if !(x > 0.0 && x.is_finite()) {
                return Err(at(v.span(), format!("script.{act}.seconds: must be positive, got {x}")));
            }
            if x > MAX_STEP_SECONDS {
                return Err(at(v.span(), format!("script.{act}.seconds: at most {MAX_STEP_SECONDS} (about 116 days) per step, got {x:e}")));
            }
            Ok(x)
        };
        out.push(match act {
            "launch" => {
                Action::Launch { app: check_app(s.app.as_ref().unwrap(), "script.launch.app")?, warmup: s.warmup.as_ref().is_some_and(|w| *w.get_ref()) }
            }
            "kill" => Action::Kill(check_app(s.app.as_ref().unwrap(), "script.kill.app")?),
            "use" => Action::Use(seconds(&s.seconds)?),
            "wait" => Action::Wait(seconds(&s.seconds)?),
            "home" => Action::Home,
            "file_io" => {
                let (m, mode) = (s.mib.as_ref().unwrap(), s.mode.as_ref().unwrap());
                if *m.get_ref() == 0 || *m.get_ref() > 65_536 {
                    return Err(at(m.span(), format!("script.file_io.mib: from 1 to 65536, got {}", m.get_ref())));
                }
                let write = match mode.get_ref().as_str() {
                    "read" => false,
                    "write" => true,
                    other => return Err(at(mode.span(), format!("script.file_io.mode: expected read or write, got {other:?}"))),
                };
                Action::FileIo { mib: *m.get_ref(), write }
            }
            "repeat" => {
                let t = s.times.as_ref().unwrap();
                if *t.get_ref() == 0 {
                    return Err(at(t.span(), "script.repeat.times: must be positive".into()));
                }
                Action::Repeat(*t.get_ref(), check_steps(s.steps.as_ref().unwrap(), declared, in_each, at)?)
            }
            "each" => {
                let apps = s.apps.as_ref().unwrap();
                let mut names = Vec::new();
                for a in apps {
                    names.push(check_app(a, "script.each.apps")?);
                }
                Action::Each(names, check_steps(s.steps.as_ref().unwrap(), declared, true, at)?)
            }
            _ => unreachable!(),
        });
    }
    Ok(out)
}

/// Load, parse and validate a scenario file.
pub fn load(path: &str, known: &Known) -> Result<Scenario, InputError> {
    let text = input::read(path)?;
    let mut s: Scenario = input::parse(path, &text)?;
    s.validate(path, &text, known)?;
    Ok(s)
}

/// The seed of the scenario file at `path` (its `seed`, or the default), read with the same
/// parser and errors as a run (a seed sequence for several runs starts there).
pub fn seed_of(path: &str) -> Result<u64, crate::InputError> {
    let text = crate::input::read(path)?;
    let s: Scenario = crate::input::parse(path, &text)?;
    Ok(s.seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn known() -> (Vec<String>, Vec<String>) {
        (vec!["pixel3".into()], vec!["twitter".into(), "chrome".into()])
    }

    fn check(text: &str) -> Result<Scenario, String> {
        let (d, a) = known();
        let k = Known { devices: &d, apps: &a };
        let mut s: Scenario = input::parse("s.toml", text).map_err(|e| e.to_string())?;
        s.validate("s.toml", text, &k).map_err(|e| e.to_string())?;
        Ok(s)
    }

    const GOOD: &str = r#"name = "t"
device = "pixel3"
[system]
collector = "cmc"
[[apps]]
name = "twitter"
[[apps]]
name = "synthetic:footprint=180m,objsize=512"
[[script]]
action = "each"
apps = ["twitter"]
steps = [{ action = "launch", app = "{app}" }, { action = "use", seconds = 30 }, { action = "home" }]
[[script]]
action = "wait"
seconds = 5
"#;

    #[test]
    fn good_scenario_parses() {
        let s = check(GOOD).unwrap();
        assert_eq!(s.script.len(), 2);
        assert_eq!(s.actions[1], Action::Wait(5.0));
        assert!(matches!(&s.actions[0], Action::Each(a, st) if a == &vec!["twitter".to_string()] && st.len() == 3));
        assert_eq!(s.system.collector.get_ref(), "cmc");
        // every name and alias of the catalogue is accepted
        for c in mobmem_runtime::config::COLLECTORS {
            for n in std::iter::once(&c.name).chain(c.aliases) {
                assert!(check(&GOOD.replace("collector = \"cmc\"", &format!("collector = \"{n}\""))).is_ok(), "{n}");
            }
        }
    }

    #[test]
    fn errors_name_line_and_field() {
        let e = check(&GOOD.replace("collector = \"cmc\"", "collector = \"g1\"")).unwrap_err();
        assert!(e.starts_with("s.toml:4:13: system.collector: unknown collector \"g1\""), "{e}");
        let e = check(&GOOD.replace("device = \"pixel3\"", "device = \"pixel9\"")).unwrap_err();
        assert!(e.starts_with("s.toml:2:10: device: unknown device"), "{e}");
        let e = check(&GOOD.replace("apps = [\"twitter\"]", "apps = [\"chrome\"]")).unwrap_err();
        assert!(e.contains("s.toml:11:") && e.contains("not in the scenario's [[apps]]"), "{e}");
        let e = check(&GOOD.replace("seconds = 5", "secs = 5")).unwrap_err();
        assert!(e.contains("s.toml:") && e.contains("secs"), "{e}");
        let e = check(&GOOD.replace("name = \"synthetic:footprint=180m,objsize=512\"", "name = \"synthetic:footprint=0m\"")).unwrap_err();
        assert!(e.starts_with("s.toml:8:8: apps.name:"), "{e}");
        let e = check(&GOOD.replace("action = \"wait\"", "action = \"sleep\"")).unwrap_err();
        assert!(e.starts_with("s.toml:14:10: script.action: unknown action \"sleep\""), "{e}");
        let e = check(&GOOD.replace("seconds = 5", "seconds = -5")).unwrap_err();
        assert!(e.starts_with("s.toml:15:11: script.wait.seconds: must be positive"), "{e}");
        // Beyond what the clock can hold: refused, not wrapped into a short step.
        let e = check(&GOOD.replace("seconds = 5", "seconds = 1e300")).unwrap_err();
        assert!(e.starts_with("s.toml:15:11: script.wait.seconds: at most"), "{e}");
        let e = check(&GOOD.replace("seconds = 5", "app = \"twitter\"")).unwrap_err();
        assert!(e.contains("field `app` does not belong to a `wait` step"), "{e}");
    }
}
