//! App profiles: what an app needs from the device, as inputs to the simulation.
//!
//! A profile is a TOML file (`python/mobmem/data/apps/NAME.toml`). Popular-app profiles are
//! estimates, not measurements: each section must carry a `source` string saying where its values
//! come from ("estimate: …" with the rationale, or a citation). Synthetic apps
//! (`synthetic:footprint=180m,objsize=512`) are built from their spec by the runtime
//! ([`Workload::synthetic`]), not from a file. [`workload_of`] maps a profile onto the runtime's
//! mutator workload.

use crate::input::{self, InputError};
use mobmem_runtime::workload::AppProfile as Workload;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The Java heap as the runtime's mutator model sees it (see docs/runtime.md, "Mutator workload model").
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JavaHeap {
    /// Live heap while in the foreground, MiB.
    pub(crate) live_fg_mib: f64,
    /// Allocation rate in the foreground / background, MiB per second.
    pub(crate) alloc_fg_mib_s: f64,
    pub(crate) alloc_bg_mib_s: f64,
    /// Share of heap bytes within depth ≤ 2 of a root.
    pub(crate) near_root_share: f64,
    /// Reference fields per object (mean).
    pub(crate) fanout: f64,
    /// Share of allocated objects that die within the first MiB of allocation, and that are long-lived.
    pub(crate) short_lived_share: f64,
    pub(crate) long_lived_share: f64,
    /// Launch access set: share of near-root + foreground-young objects among the objects a hot
    /// launch touches, and the share of other live objects touched.
    pub(crate) launch_nro_fyo_share: f64,
    pub(crate) launch_other_live_share: f64,
    /// Whether the app sizes caches from the reported maximum heap (heap-size feedback).
    pub(crate) introspects_heap_size: bool,
    /// The manifest declares `android:largeHeap` (its heap limit is `dalvik.vm.heapsize`).
    #[serde(default)]
    pub(crate) large_heap: bool,
    pub(crate) source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Native {
    /// Native anonymous memory (malloc), MiB.
    pub(crate) anon_mib: f64,
    /// Graphics buffers (anon, touched every frame while visible), MiB.
    pub(crate) graphics_mib: f64,
    pub(crate) source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Files {
    /// Executable code (oat/odex/.so), MiB; mapped exec.
    pub(crate) code_mib: f64,
    /// Resources and other data files, MiB.
    pub(crate) resources_mib: f64,
    /// Share of the file pages read during a cold launch.
    pub(crate) cold_launch_read_share: f64,
    /// Share of the file pages touched during a hot launch.
    pub(crate) hot_launch_read_share: f64,
    pub(crate) source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// CPU work of a cold / hot launch on the reference big core, ms.
    pub(crate) cold_cpu_ms: f64,
    pub(crate) hot_cpu_ms: f64,
    pub(crate) source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Activity {
    /// CPU work per frame in the foreground, ms (60 Hz frames).
    pub(crate) frame_cpu_ms: f64,
    /// Background activity as a fraction of foreground work.
    pub(crate) background_share: f64,
    pub(crate) source: String,
}

/// A secondary process of the app (`android:process=":name"` in its manifest): a renderer, a
/// video player, a push or sync service. It starts with the app's cold launch and keeps its own
/// memory and a steady background activity, as a system process does (its own runtime's heap and
/// collections are not modelled apart: its memory is anonymous and file-backed pages).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SecondaryProcess {
    /// The process name's suffix after the package, starting with ':' (`:browser`).
    pub(crate) name: String,
    /// The app's main process binds it (`bindService` from its activities): while the app is
    /// cached the ActivityManager counts it as a cached process with client activities
    /// (`PROCESS_STATE_CACHED_ACTIVITY_CLIENT`), against the same limit as the apps. Otherwise it
    /// runs a started service while the app is in use and is an empty process once the app is not.
    pub(crate) bound: bool,
    /// Anonymous memory (its heaps, native and Java), MiB.
    pub(crate) anon_mib: f64,
    /// Its own mapped code and data, MiB (the app's shared code is counted in the app).
    pub(crate) file_mib: f64,
    /// Share of its pages that its background activity re-references.
    pub(crate) hot_share: f64,
    pub(crate) touches_per_s: u32,
    pub(crate) cpu_ms_per_s: f64,
    /// Time over which its memory grows after it starts, ms: a renderer takes its memory as it
    /// loads its page, not in one burst of faults (0: at once).
    pub(crate) populate_ms: f64,
    pub(crate) source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppProfile {
    pub name: String,
    pub(crate) package: String,
    /// True for profiles whose values are estimates (all popular-app profiles shipped so far).
    pub estimate: bool,
    /// A benchmark program run as an app (DaCapo, SPECjvm98 on the phone), not a popular app:
    /// the popular apps' measured Java-heap shares do not bound its memory.
    #[serde(default)]
    pub benchmark: bool,
    pub(crate) java_heap: JavaHeap,
    pub(crate) native: Native,
    pub(crate) files: Files,
    pub(crate) launch: Launch,
    pub(crate) activity: Activity,
    /// Its secondary processes (`[[process]]` tables; none by default).
    #[serde(default)]
    pub(crate) process: Vec<SecondaryProcess>,
}

impl AppProfile {
    /// Share of the app's memory that is Java heap (measured 7.1–25.9 % for twelve popular apps on a Pixel 3; one study reported ≈ 4 % for a game).
    pub fn java_share(&self) -> f64 {
        let j = self.java_heap.live_fg_mib;
        j / (j + self.native.anon_mib + self.native.graphics_mib + self.files.code_mib + self.files.resources_mib)
    }

    /// Check ranges; errors point at the file (the fields are named).
    pub fn validate(&self, file: &str) -> Result<(), InputError> {
        let bad = |field: &str, msg: String| InputError { file: file.into(), line: 0, col: 0, msg: format!("{field}: {msg}") };
        let nonneg = [
            ("java_heap.live_fg_mib", self.java_heap.live_fg_mib),
            ("java_heap.alloc_fg_mib_s", self.java_heap.alloc_fg_mib_s),
            ("java_heap.alloc_bg_mib_s", self.java_heap.alloc_bg_mib_s),
            ("java_heap.fanout", self.java_heap.fanout),
            ("native.anon_mib", self.native.anon_mib),
            ("native.graphics_mib", self.native.graphics_mib),
            ("files.code_mib", self.files.code_mib),
            ("files.resources_mib", self.files.resources_mib),
            ("launch.cold_cpu_ms", self.launch.cold_cpu_ms),
            ("launch.hot_cpu_ms", self.launch.hot_cpu_ms),
            ("activity.frame_cpu_ms", self.activity.frame_cpu_ms),
        ];
        for (f, v) in nonneg {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(bad(f, format!("must be a non-negative number, got {v}")));
            }
        }
        // Sizes become kernel mappings: none may exceed the largest mapping the model holds.
        let max_mib = mobmem_kernel::config::MAX_MODEL_MIB as f64;
        for (f, v) in [
            ("java_heap.live_fg_mib", self.java_heap.live_fg_mib),
            ("native.anon_mib", self.native.anon_mib),
            ("native.graphics_mib", self.native.graphics_mib),
            ("files.code_mib", self.files.code_mib),
            ("files.resources_mib", self.files.resources_mib),
        ] {
            if v > max_mib {
                return Err(bad(f, format!("at most {max_mib} MiB (64 GiB), got {v}")));
            }
        }
        let shares = [
            ("java_heap.near_root_share", self.java_heap.near_root_share),
            ("java_heap.short_lived_share", self.java_heap.short_lived_share),
            ("java_heap.long_lived_share", self.java_heap.long_lived_share),
            ("java_heap.launch_nro_fyo_share", self.java_heap.launch_nro_fyo_share),
            ("java_heap.launch_other_live_share", self.java_heap.launch_other_live_share),
            ("files.cold_launch_read_share", self.files.cold_launch_read_share),
            ("files.hot_launch_read_share", self.files.hot_launch_read_share),
            ("activity.background_share", self.activity.background_share),
        ];
        for (f, v) in shares {
            if !(0.0..=1.0).contains(&v) {
                return Err(bad(f, format!("must be within [0, 1], got {v}")));
            }
        }
        for (i, sp) in self.process.iter().enumerate() {
            let f = |field: &str| format!("process[{i}].{field}");
            if !(sp.name.len() > 1 && sp.name.starts_with(':') && !sp.name[1..].contains(char::is_whitespace)) {
                return Err(bad(&f("name"), format!("must be a process-name suffix such as \":browser\", got {:?}", sp.name)));
            }
            if self.process[..i].iter().any(|o| o.name == sp.name) {
                return Err(bad(&f("name"), format!("{:?} is named twice", sp.name)));
            }
            for (field, v) in [("anon_mib", sp.anon_mib), ("file_mib", sp.file_mib), ("cpu_ms_per_s", sp.cpu_ms_per_s)] {
                if !(v >= 0.0 && v.is_finite()) {
                    return Err(bad(&f(field), format!("must be a non-negative number, got {v}")));
                }
                if field != "cpu_ms_per_s" && v > max_mib {
                    return Err(bad(&f(field), format!("at most {max_mib} MiB (64 GiB), got {v}")));
                }
            }
            if !(0.0..=1.0).contains(&sp.hot_share) {
                return Err(bad(&f("hot_share"), format!("must be within [0, 1], got {}", sp.hot_share)));
            }
            if sp.touches_per_s > 1_000_000 {
                return Err(bad(&f("touches_per_s"), format!("at most 1000000, got {}", sp.touches_per_s)));
            }
            if !(sp.populate_ms >= 0.0 && sp.populate_ms <= 600_000.0) {
                return Err(bad(&f("populate_ms"), format!("must be within [0, 600000] ms, got {}", sp.populate_ms)));
            }
            if sp.cpu_ms_per_s > 1000.0 {
                return Err(bad(&f("cpu_ms_per_s"), format!("at most 1000 (one core), got {}", sp.cpu_ms_per_s)));
            }
            if sp.source.trim().is_empty() {
                return Err(bad(&f("source"), "every process needs a source (a citation or \"estimate: <rationale>\")".into()));
            }
        }
        if self.java_heap.short_lived_share + self.java_heap.long_lived_share > 1.0 {
            return Err(bad("java_heap.short_lived_share + long_lived_share", "must not exceed 1".into()));
        }
        for (f, s) in [
            ("java_heap.source", &self.java_heap.source),
            ("native.source", &self.native.source),
            ("files.source", &self.files.source),
            ("launch.source", &self.launch.source),
            ("activity.source", &self.activity.source),
        ] {
            if s.trim().is_empty() {
                return Err(bad(f, "every section needs a source (a citation or \"estimate: <rationale>\")".into()));
            }
        }
        Ok(())
    }
}

/// Load and validate an app profile file.
pub fn load(path: &str) -> Result<AppProfile, InputError> {
    let text = input::read(path)?;
    let p: AppProfile = input::parse(path, &text)?;
    p.validate(path)?;
    Ok(p)
}

/// The app profile `name` of `data_dir` (`apps/NAME.toml`); an unknown name lists the known ones.
pub fn load_named(data_dir: &Path, name: &str) -> Result<AppProfile, InputError> {
    load(&input::named_file(&data_dir.join("apps"), "app", name, ", or synthetic:footprint=180m,objsize=512[,churn=0.01]")?)
}

/// Whether the profile's live Java heap is a measurement (its section's source says "measured"):
/// calibration leaves it as it is.
pub fn java_heap_measured(p: &AppProfile) -> bool {
    p.java_heap.source.trim_start().starts_with("measured")
}

/// Map an app profile onto the runtime's mutator workload (`name` names it in results; `seed`
/// drives its random streams).
pub fn workload_of(name: &str, p: &AppProfile, seed: u64) -> Workload {
    const MIB: f64 = (1u64 << 20) as f64;
    let j = &p.java_heap;
    let frame_ms = 1000.0 / mobmem_runtime::workload::DISPLAY_HZ as f64;
    let cpu_fg = (p.activity.frame_cpu_ms / frame_ms).min(0.95);
    Workload {
        name: name.into(),
        live_heap: (j.live_fg_mib * MIB) as u64,
        near_root_share: j.near_root_share,
        fanout: j.fanout,
        // Lifetime classes: short-lived = temporaries, long-lived = the structure, the rest medium.
        temp_share: j.short_lived_share,
        medium_share: (1.0 - j.short_lived_share - j.long_lived_share).max(0.0),
        alloc_rate_fg: (j.alloc_fg_mib_s * MIB) as u64,
        alloc_rate_bg: (j.alloc_bg_mib_s * MIB) as u64,
        cpu_fg,
        cpu_bg: (cpu_fg * p.activity.background_share).min(0.95),
        native_anon: (p.native.anon_mib * MIB) as u64,
        file_bytes: ((p.files.code_mib + p.files.resources_mib) * MIB) as u64,
        // A cold launch reads this share of the app's files; a hot launch its own share.
        launch_file_share: p.files.cold_launch_read_share,
        hot_launch_file_share: p.files.hot_launch_read_share,
        launch_other_share: j.launch_other_live_share,
        introspects_heap: j.introspects_heap_size,
        large_heap: j.large_heap,
        seed,
        ..Workload::default()
    }
}

/// The runtime workload of an app spec: `synthetic:…` (see [`Workload::synthetic`]) or the name
/// of a profile of `data_dir`, with `seed` for its random streams; and whether its live Java heap
/// is given rather than estimated (a synthetic app's specified heap, a profile's measured one),
/// which calibration leaves as it is.
pub fn workload(data_dir: &Path, spec: &str, seed: u64) -> Result<(Workload, bool), InputError> {
    if spec.starts_with("synthetic") {
        let mut w = Workload::synthetic(spec).map_err(|msg| InputError { file: "app".into(), line: 0, col: 0, msg })?;
        w.seed = seed;
        return Ok((w, true));
    }
    let p = load_named(data_dir, spec)?;
    Ok((workload_of(spec, &p, seed), java_heap_measured(&p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chrome_with(edit: impl Fn(&str) -> String) -> Result<AppProfile, InputError> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/mobmem/data/apps/chrome.toml");
        let text = edit(&std::fs::read_to_string(path).unwrap());
        let p: AppProfile = input::parse("chrome.toml", &text)?;
        p.validate("chrome.toml")?;
        Ok(p)
    }

    #[test]
    fn chrome_lists_its_bound_secondary_processes() {
        let p = chrome_with(|t| t.to_string()).unwrap();
        let names: Vec<&str> = p.process.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, [":privileged_process0", ":sandboxed_process0"]);
        assert!(p.process.iter().all(|s| s.bound));
    }

    #[test]
    fn a_bad_secondary_process_is_refused_with_its_field() {
        let cases: [(&str, &str, &str); 7] = [
            ("name = \":sandboxed_process0\"", "name = \"sandboxed\"", "process[1].name"),
            ("name = \":sandboxed_process0\"", "name = \":privileged_process0\"", "named twice"),
            ("anon_mib = 90.0", "anon_mib = -1.0", "process[1].anon_mib"),
            ("anon_mib = 90.0", "anon_mib = 99999999.0", "at most"),
            (
                "hot_share = 0.1\ntouches_per_s = 50\ncpu_ms_per_s = 0.3\npopulate_ms = 2500.0",
                "hot_share = 1.5\ntouches_per_s = 50\ncpu_ms_per_s = 0.3\npopulate_ms = 2500.0",
                "process[1].hot_share",
            ),
            ("populate_ms = 2500.0", "populate_ms = -5.0", "process[1].populate_ms"),
            ("populate_ms = 2500.0", "populate_ms = 1e9", "process[1].populate_ms"),
        ];
        for (from, to, says) in cases {
            let e = chrome_with(|t| {
                assert!(t.contains(from), "{from}");
                t.replacen(from, to, 1)
            })
            .unwrap_err();
            assert!(e.to_string().contains(says), "{to}: {e}");
        }
        let e = chrome_with(|t| t.replace("bound = true", "bound = 1")).unwrap_err();
        assert!(e.to_string().contains("chrome.toml"), "{e}");
    }
}
