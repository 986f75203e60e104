//! App profiles: what an app needs from the device, as inputs to the simulation.
//!
//! A profile is a TOML file (`python/mobmem/data/apps/NAME.toml`). Popular-app profiles are
//! estimates, not measurements: each section must carry a `source` string saying where its values
//! come from ("estimate: …" with the rationale, or a citation). Synthetic apps
//! (`synthetic:footprint=180m,objsize=512`) are built from their spec, not from a file.

use crate::input::{self, InputError};
use serde::{Deserialize, Serialize};

/// The Java heap as the runtime's mutator model sees it (see design/runtime.md).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JavaHeap {
    /// Live heap while in the foreground, MiB.
    pub live_fg_mib: f64,
    /// Allocation rate in the foreground / background, MiB per second.
    pub alloc_fg_mib_s: f64,
    pub alloc_bg_mib_s: f64,
    /// Share of heap bytes within depth ≤ 2 of a root.
    pub near_root_share: f64,
    /// Reference fields per object (mean).
    pub fanout: f64,
    /// Share of allocated objects that die within the first MiB of allocation, and that are long-lived.
    pub short_lived_share: f64,
    pub long_lived_share: f64,
    /// Launch access set: share of near-root + foreground-young objects among the objects a hot
    /// launch touches, and the share of other live objects touched.
    pub launch_nro_fyo_share: f64,
    pub launch_other_live_share: f64,
    /// Whether the app sizes caches from the reported maximum heap (heap-size feedback).
    pub introspects_heap_size: bool,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Native {
    /// Native anonymous memory (malloc), MiB.
    pub anon_mib: f64,
    /// Graphics buffers (anon, touched every frame while visible), MiB.
    pub graphics_mib: f64,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Files {
    /// Executable code (oat/odex/.so), MiB; mapped exec.
    pub code_mib: f64,
    /// Resources and other data files, MiB.
    pub resources_mib: f64,
    /// Share of the file pages read during a cold launch.
    pub cold_launch_read_share: f64,
    /// Share of the file pages touched during a hot launch.
    pub hot_launch_read_share: f64,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    /// CPU work of a cold / hot launch on the reference big core, ms.
    pub cold_cpu_ms: f64,
    pub hot_cpu_ms: f64,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Activity {
    /// CPU work per frame in the foreground, ms (60 Hz frames).
    pub frame_cpu_ms: f64,
    /// Background activity as a fraction of foreground work.
    pub background_share: f64,
    pub source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AppProfile {
    pub name: String,
    pub package: String,
    /// True for profiles whose values are estimates (all popular-app profiles shipped so far).
    pub estimate: bool,
    pub java_heap: JavaHeap,
    pub native: Native,
    pub files: Files,
    pub launch: Launch,
    pub activity: Activity,
}

impl AppProfile {
    /// Share of the app's memory that is Java heap (one study: 7–26% for popular apps, 4% for a game).
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

/// A synthetic app: a heap of `footprint` bytes of `objsize`-byte objects, deleting and
/// re-creating `churn` of it per second (the studies' noise-free apps).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SyntheticSpec {
    pub footprint_bytes: u64,
    pub objsize: u64,
    pub churn_share_per_s: f64,
}

/// Parse `synthetic:footprint=180m,objsize=512[,churn=0.01]`.
pub fn parse_synthetic(spec: &str) -> Result<SyntheticSpec, String> {
    let body = spec.strip_prefix("synthetic:").ok_or_else(|| format!("{spec:?}: not a synthetic spec (synthetic:key=value,…)"))?;
    let mut s = SyntheticSpec { footprint_bytes: 0, objsize: 0, churn_share_per_s: 0.01 };
    for kv in body.split(',').filter(|x| !x.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{spec:?}: {kv:?} is not key=value"))?;
        match k {
            "footprint" => s.footprint_bytes = parse_size(v).ok_or_else(|| format!("{spec:?}: footprint {v:?} is not a size like 180m"))?,
            "objsize" => s.objsize = parse_size(v).ok_or_else(|| format!("{spec:?}: objsize {v:?} is not a size"))?,
            "churn" => {
                s.churn_share_per_s =
                    v.parse().ok().filter(|x: &f64| (0.0..=1.0).contains(x)).ok_or_else(|| format!("{spec:?}: churn {v:?} must be within [0, 1]"))?
            }
            _ => return Err(format!("{spec:?}: unknown key {k:?}; expected footprint, objsize, churn")),
        }
    }
    if s.footprint_bytes == 0 || s.objsize == 0 {
        return Err(format!("{spec:?}: footprint and objsize are required and must be positive"));
    }
    if s.objsize < 8 || s.objsize > s.footprint_bytes {
        return Err(format!("{spec:?}: objsize must be within [8 B, footprint]"));
    }
    Ok(s)
}

/// "180m", "512", "2k", "1g" → bytes.
pub fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mult) = match v.chars().last()? {
        'k' => (&v[..v.len() - 1], 1u64 << 10),
        'm' => (&v[..v.len() - 1], 1 << 20),
        'g' => (&v[..v.len() - 1], 1 << 30),
        _ => (&v[..], 1),
    };
    let n: f64 = num.parse().ok()?;
    (n > 0.0 && n.is_finite()).then_some((n * mult as f64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_specs() {
        let s = parse_synthetic("synthetic:footprint=180m,objsize=512").unwrap();
        assert_eq!(s.footprint_bytes, 180 << 20);
        assert_eq!(s.objsize, 512);
        assert!(parse_synthetic("synthetic:footprint=-1m,objsize=512").unwrap_err().contains("footprint"));
        assert!(parse_synthetic("synthetic:objsize=512").unwrap_err().contains("required"));
        assert!(parse_synthetic("synthetic:footprint=1m,size=5").unwrap_err().contains("unknown key"));
    }
}
