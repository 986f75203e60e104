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
