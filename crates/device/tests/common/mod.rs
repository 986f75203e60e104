//! Helpers of the session tests: small scenarios written to a temporary file and run with the
//! shipped data.
#![allow(dead_code)]

use mobmem_device::session::run::run_file;
use serde_json::Value;
use std::path::PathBuf;

pub fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../python/mobmem/data")
}

pub fn scenario_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mobmem-session-tests-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Every calibration knob at its default. These tests check mechanisms on the app profiles as
/// written ("a roomy phone", "a 1.5 GB phone"), so a device's fitted calibration file, which
/// changes whenever it is refitted, must not move them; a test's own settings still override.
pub fn uncalibrated() -> Vec<(String, String)> {
    use mobmem_device::calibration::{Knobs, SETTINGS};
    let k = Knobs::default();
    SETTINGS.entries.iter().map(|s| (format!("calibration.{}", s.key), (s.get)(&k))).collect()
}

pub fn run(name: &str, text: &str, set: &[(&str, &str)]) -> Value {
    let path = scenario_file(name, text);
    let mut o = uncalibrated();
    o.extend(set.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    run_file(&path, &data(), &o, None).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub const APPS: [&str; 5] = ["telegram", "spotify", "line", "gmail", "googlenews"];
pub const MORE: [&str; 8] = ["telegram", "spotify", "line", "gmail", "googlenews", "discord", "airbnb", "acrobat"];

pub fn decl(apps: &[&str]) -> String {
    apps.iter().map(|a| format!("[[apps]]\nname = {a:?}\n")).collect()
}

pub fn list(apps: &[&str]) -> String {
    apps.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>().join(", ")
}

pub const STEPS: &str = r#"steps = [{ action = "launch", app = "{app}" }, { action = "use", seconds = 2.0 }, { action = "home" }]"#;

/// Launch each app (used 2 s, then home), twice.
pub fn two_passes(apps: &[&str]) -> String {
    format!("name = \"test\"\ndevice = \"pixel3\"\nseed = 7\n{}\n[[script]]\naction = \"repeat\"\ntimes = 2\n[[script.steps]]\naction = \"each\"\napps = [{}]\n{STEPS}\n", decl(apps), list(apps))
}

/// Launch `bg` apps, use the `other` apps (pressure), then bring the `bg` apps back.
pub fn away_and_back(bg: &[&str], other: &[&str]) -> String {
    let all: Vec<&str> = bg.iter().chain(other).copied().collect();
    let each = |a: &[&str]| format!("[[script]]\naction = \"each\"\napps = [{}]\n{STEPS}\n", list(a));
    format!("name = \"test\"\ndevice = \"pixel3\"\nseed = 7\n{}\n{}{}{}", decl(&all), each(bg), each(other), each(bg))
}

pub fn launches(v: &Value) -> &Vec<Value> {
    v["launches"].as_array().unwrap()
}
