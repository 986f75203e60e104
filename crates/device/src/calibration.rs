//! Calibration of the stock baseline: the few global knobs that scale the inputs nobody has
//! measured (how much memory the system processes and the apps' native heaps and code take, how
//! much of its code an app keeps re-reading, how much of its heap a hot launch touches), and the
//! calibration file of a device that sets them. A session's inputs apply them
//! (`session::inputs::apply_knobs`).
//!
//! Every knob is global: it applies to every app (or every system process) alike, never to one
//! scenario or app by name, and it has a physical meaning and a plausible range with its reason.
//! `mobmem calibrate --device NAME` fits the knobs to the device's stock facts (the fit set of
//! `data/fidelity.toml`) and writes `data/calibration/NAME.toml`; a session on that device reads
//! the file's `[knobs]` table (settings layered device ← calibration file ← scenario ← `--set`,
//! so `--set calibration.KNOB=VALUE` overrides a fitted value). A device without a calibration
//! file runs at every knob's default, which leaves the profiles' estimates as written.
//!
//! Left out: per-app knobs (no app's native memory, code size or launch access set is measured,
//! so none could be fitted without fitting to the facts themselves; where an app's Java share is
//! measured, its profile's split follows it as an input), the kernel's reserved memory (a device
//! setting of its own).

use crate::input::{self, InputError};
use mobmem_engine::settings::{Kind, Setting, Table};
use mobmem_runtime::workload::AppProfile as Workload;
use std::collections::BTreeMap;
use std::path::Path;
use toml::Spanned;

/// The knobs, at their defaults: every scale 1 (the profiles as written).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Knobs {
    /// Multiplies the anonymous and file-backed memory of every system process of
    /// `data/system.toml` (persistent services and preinstalled apps' cached processes).
    pub(crate) system_memory_scale: f64,
    /// Multiplies every app's native heap (malloc: decoded images, caches, native libraries' state).
    pub(crate) app_native_scale: f64,
    /// Multiplies the live Java heap of every app whose heap is an estimate (a measured heap, such
    /// as one read from a GC log, and a synthetic app's specified heap stay as they are).
    pub(crate) app_java_scale: f64,
    /// Multiplies every app's mapped code and resources (oat/vdex/.so, APK resources).
    pub(crate) app_code_scale: f64,
    /// The share of an app's code and resources it keeps re-reading while in use (its file-backed
    /// working set; the most used part first).
    pub(crate) file_working_set_share: f64,
    /// Multiplies every app's share of long-lived objects, besides near-root and recently
    /// allocated ones, that a hot launch reads.
    pub(crate) launch_heap_scale: f64,
    /// The share of its native heap's used part every app frees when its UI is hidden
    /// (`onTrimMemory(TRIM_MEMORY_UI_HIDDEN)`).
    pub(crate) ui_hidden_release_share: f64,
}

impl Default for Knobs {
    fn default() -> Self {
        Self {
            system_memory_scale: 1.0,
            app_native_scale: 1.0,
            app_java_scale: 1.0,
            app_code_scale: 1.0,
            file_working_set_share: 0.35,
            launch_heap_scale: 1.0,
            ui_hidden_release_share: 0.0,
        }
    }
}

/// The knobs as settings (`calibration.KNOB`): type, range, unit, help and the reason for the range.
pub static SETTINGS: Table<Knobs> = Table {
    layer: "calibration",
    prefixes: &["calibration."],
    entries: &[
        Setting {
            key: "system_memory_scale",
            aliases: &[],
            kind: Kind::Float { min: 0.5, max: 2.5 },
            unit: "×",
            help: "scale on the memory of every system process (system_server, SystemUI, services, preinstalled apps' cached processes)",
            source: "calibration knob; range: data/system.toml's sizes are estimates from the PSS ranges seen in `dumpsys meminfo` of Pixel-class phones, whose spread between builds and between an idle and a busy phone is about 2x each way",
            get: |c| c.system_memory_scale.to_string(),
            set: |c, v| {
                c.system_memory_scale = v.float();
                Ok(())
            },
        },
        Setting {
            key: "app_native_scale",
            aliases: &[],
            kind: Kind::Float { min: 0.3, max: 4.0 },
            unit: "×",
            help: "scale on every app's native heap (malloc: decoded images, media buffers, native libraries' state)",
            source: "calibration knob; range: no app profile's native heap is measured; the measured Java-heap shares of total PSS (7-26 %) admit native heaps from a third to four times the profiles' estimates",
            get: |c| c.app_native_scale.to_string(),
            set: |c, v| {
                c.app_native_scale = v.float();
                Ok(())
            },
        },
        Setting {
            key: "app_java_scale",
            aliases: &[],
            kind: Kind::Float { min: 0.5, max: 3.0 },
            unit: "×",
            help: "scale on the live Java heap of every app whose heap is an estimate (measured heaps and synthetic apps' specified heaps stay)",
            source: "calibration knob; range: the profiles' live heaps (14-60 MiB) are estimates; the one measured (Twitch, 30 MiB median live from its GC log) and ART's 256 MiB growth limit bound plausible heaps to about half to three times the estimates",
            get: |c| c.app_java_scale.to_string(),
            set: |c, v| {
                c.app_java_scale = v.float();
                Ok(())
            },
        },
        Setting {
            key: "app_code_scale",
            aliases: &[],
            kind: Kind::Float { min: 0.3, max: 3.0 },
            unit: "×",
            help: "scale on every app's mapped code and resources (oat/vdex/.so files, APK resources)",
            source: "calibration knob; range: the profiles' code sizes are estimates between the APK's compressed size and its installed size; a factor of about 3 each way covers both",
            get: |c| c.app_code_scale.to_string(),
            set: |c, v| {
                c.app_code_scale = v.float();
                Ok(())
            },
        },
        Setting {
            key: "file_working_set_share",
            aliases: &[],
            kind: Kind::Float { min: 0.05, max: 0.8 },
            unit: "",
            help: "share of an app's code and resources it keeps re-reading while in use (its file-backed working set), the part its launch reads first",
            source: "calibration knob; default and range: AOSP frameworks/base commit 402d78eb (2018) measured that Launcher3 references at least 1.5 of its 2 MB of compiled code and 2 of its 5.7 MB APK in regular use (35-75 %); apps with many features use less of theirs",
            get: |c| c.file_working_set_share.to_string(),
            set: |c, v| {
                c.file_working_set_share = v.float();
                Ok(())
            },
        },
        Setting {
            key: "ui_hidden_release_share",
            aliases: &[],
            kind: Kind::Float { min: 0.0, max: 0.6 },
            unit: "",
            help: "share of the used part of its native heap every app frees when its UI is hidden (onTrimMemory(TRIM_MEMORY_UI_HIDDEN): image and content caches trimmed)",
            source: "calibration knob; default 0 (no release, as before the knob); range: Android sends TRIM_MEMORY_UI_HIDDEN to every app leaving the foreground, and image loaders then halve their memory caches (bumptech/glide LruResourceCache/LruBitmapPool.trimMemory: trimToSize(maxSize / 2)); caches are at most part of a native heap",
            get: |c| c.ui_hidden_release_share.to_string(),
            set: |c, v| {
                c.ui_hidden_release_share = v.float();
                Ok(())
            },
        },
        Setting {
            key: "launch_heap_scale",
            aliases: &[],
            kind: Kind::Float { min: 0.1, max: 4.0 },
            unit: "×",
            help: "scale on every app's share of other long-lived objects (besides near-root and recently allocated ones) that a hot launch reads",
            source: "calibration knob; range: the profiles' shares (about a tenth of the long-lived structure) are estimates; near-root and foreground-young objects were measured at about two thirds of what a hot launch re-reads, which the other share sets",
            get: |c| c.launch_heap_scale.to_string(),
            set: |c, v| {
                c.launch_heap_scale = v.float();
                Ok(())
            },
        },
    ],
};

/// The calibration file of `device` in `data_dir` (`calibration/DEVICE.toml`), if there is one.
pub fn file(data_dir: &Path, device: &str) -> Option<std::path::PathBuf> {
    let p = data_dir.join("calibration").join(format!("{device}.toml"));
    p.is_file().then_some(p)
}

/// What sessions read of a calibration file: its knobs (the rest is the fit's record).
#[derive(serde::Deserialize)]
struct CalibrationFile {
    knobs: BTreeMap<Spanned<String>, Spanned<toml::Value>>,
}

/// The `[knobs]` table of the calibration file of `device`, as `calibration.KNOB` settings
/// (none without a file). A key that is not a knob, or a value out of its range, is an error
/// naming the file, line and key.
pub fn load(data_dir: &Path, device: &str) -> Result<Vec<(String, String)>, InputError> {
    let Some(path) = file(data_dir, device) else { return Ok(Vec::new()) };
    let name = path.to_string_lossy().into_owned();
    let text = input::read(&name)?;
    let doc: CalibrationFile = input::parse(&name, &text)?;
    let mut out = Vec::new();
    let mut scratch = Knobs::default();
    for (k, v) in &doc.knobs {
        let key = format!("calibration.{}", k.get_ref());
        let value = input::value_text(v.get_ref());
        SETTINGS.set(&mut scratch, &key, &value).map_err(|e| input::at(&name, &text, k.span(), format!("knobs.{}: {}", k.get_ref(), e.msg)))?;
        out.push((key, value));
    }
    Ok(out)
}

/// Apply the app knobs to one app's workload (a session's app or a standalone run's):
/// `java_heap_measured` keeps a measured or specified live heap as it is.
pub fn apply_to_app(k: &Knobs, w: &mut Workload, java_heap_measured: bool) {
    w.native_anon = (w.native_anon as f64 * k.app_native_scale) as u64;
    if !java_heap_measured {
        w.live_heap = (w.live_heap as f64 * k.app_java_scale) as u64;
    }
    w.file_bytes = (w.file_bytes as f64 * k.app_code_scale) as u64;
    w.file_ws_share = k.file_working_set_share;
    w.launch_other_share = (w.launch_other_share * k.launch_heap_scale).min(1.0);
    w.ui_hidden_release_share = k.ui_hidden_release_share;
}

/// The knobs from `calibration.*` settings, in order (the last value of a key wins).
pub fn knobs(settings: &[(String, String)]) -> Result<Knobs, String> {
    let mut k = Knobs::default();
    for (key, v) in settings.iter().filter(|(k, _)| k.starts_with("calibration.")) {
        SETTINGS.set(&mut k, key, v).map_err(|e| e.to_string())?;
    }
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_parse_and_check_their_ranges() {
        let k = knobs(&[("calibration.app_native_scale".into(), "2".into()), ("calibration.app_native_scale".into(), "1.5".into())]).unwrap();
        assert_eq!(k.app_native_scale, 1.5);
        assert_eq!(k.system_memory_scale, 1.0);
        let e = knobs(&[("calibration.app_native_scale".into(), "9".into())]).unwrap_err();
        assert!(e.contains("app_native_scale"), "{e}");
        assert!(knobs(&[("calibration.nope".into(), "1".into())]).is_err());
    }
}
