//! The app settings table ([`SETTINGS`]): every key of an [`AppProfile`] with its type, unit,
//! range, help and source; setting a key (`AppProfile::set`, checked by the table).

use super::profile::AppProfile;
use super::size_mix::SizeClass;
use mobmem_engine::settings::{size_text, Kind, Setting, Table};
use mobmem_engine::Nanos;

/// Every app setting (`app.<key>` or the bare key in a profile): type, unit, range, help and source.
pub static SETTINGS: Table<AppProfile> = Table { layer: "app", prefixes: &["app."], entries: ENTRIES };

static ENTRIES: &[Setting<AppProfile>] = &[
    Setting {
        key: "name",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "the app's name in results",
        source: "",
        get: |c| c.name.clone(),
        set: |c, v| {
            c.name = v.text().into();
            Ok(())
        },
    },
    Setting {
        key: "live_heap",
        aliases: &["footprint"],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "live Java heap in the foreground (long-lived structure built at start)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.live_heap),
        set: |c, v| {
            c.live_heap = v.int();
            Ok(())
        },
    },
    Setting {
        key: "near_root_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of heap bytes within depth ≤ 2 of a root",
        source: "docs/runtime.md: ~10% of heap bytes",
        get: |c| c.near_root_share.to_string(),
        set: |c, v| {
            c.near_root_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "roots",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "",
        help: "root slots (at least 1)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.roots.to_string(),
        set: |c, v| {
            c.roots = (v.float() as u32).max(1);
            Ok(())
        },
    },
    Setting {
        key: "fanout",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "",
        help: "reference fields per object (mean, at most 64)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.fanout.to_string(),
        set: |c, v| {
            c.fanout = v.float().min(64.0);
            Ok(())
        },
    },
    Setting {
        key: "objsize",
        aliases: &[],
        kind: Kind::Size { min: 1, max: u32::MAX as u64 },
        unit: "bytes",
        help: "one object size for every object (replaces the Android size mix)",
        source: "docs/runtime.md: measured Android size mix by default",
        get: |c| if c.size_mix.len() == 1 { size_text(c.size_mix[0].lo as u64) } else { "android-mix".into() },
        set: |c, v| {
            let s = v.int() as u32;
            c.size_mix = vec![SizeClass { lo: s, hi: s, byte_share: 1.0 }];
            Ok(())
        },
    },
    Setting {
        key: "survivor_object_bytes",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1e6 },
        unit: "bytes",
        help: "mean size of objects that outlive their first GC (long-lived structure, medium and long units; 0 = the allocation mix)",
        source: "ART SIGQUIT dumps of Android 8+ apps: bytes moved / objects moved of concurrent copying, median 52 B over 16 public dumps (quartiles 48-53.5 B)",
        get: |c| c.survivor_object_bytes.to_string(),
        set: |c, v| {
            c.survivor_object_bytes = v.float();
            Ok(())
        },
    },
    Setting {
        key: "unit_objects",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "",
        help: "objects per allocation unit (mean; at least 1)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.unit_objects.to_string(),
        set: |c, v| {
            c.unit_objects = v.float().max(1.0);
            Ok(())
        },
    },
    Setting {
        key: "temp_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of allocated units that are temporary",
        source: "docs/runtime.md: 54–88% of objects die within the first MiB",
        get: |c| c.temp_share.to_string(),
        set: |c, v| {
            c.temp_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "medium_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of allocated units that are medium-lived (the rest are long-lived)",
        source: "docs/runtime.md: 5–16% long-lived",
        get: |c| c.medium_share.to_string(),
        set: |c, v| {
            c.medium_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "temp_life",
        aliases: &[],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "mean lifetime of temporary units, in bytes allocated",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.temp_life),
        set: |c, v| {
            c.temp_life = v.int().max(1);
            Ok(())
        },
    },
    Setting {
        key: "medium_life",
        aliases: &[],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "mean lifetime of medium-lived units, in bytes allocated",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.medium_life),
        set: |c, v| {
            c.medium_life = v.int().max(1);
            Ok(())
        },
    },
    Setting {
        key: "bg_temp_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of temporary units in the background",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.bg_temp_share.to_string(),
        set: |c, v| {
            c.bg_temp_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "alloc_rate_fg",
        aliases: &["rate"],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes/s",
        help: "allocation rate in the foreground",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.alloc_rate_fg),
        set: |c, v| {
            c.alloc_rate_fg = v.int();
            Ok(())
        },
    },
    Setting {
        key: "alloc_rate_bg",
        aliases: &[],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes/s",
        help: "allocation rate in the background",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.alloc_rate_bg),
        set: |c, v| {
            c.alloc_rate_bg = v.int();
            Ok(())
        },
    },
    Setting {
        key: "frame_ms",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "ms",
        help: "period of foreground units of work (a frame)",
        source: "the display's vsync period (DISPLAY_HZ)",
        get: |c| (c.frame_ns as f64 / 1e6).to_string(),
        set: |c, v| {
            c.frame_ns = (v.float() * 1e6) as Nanos;
            Ok(())
        },
    },
    Setting {
        key: "bg_period_ms",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "ms",
        help: "period of background units of work",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| (c.bg_period_ns as f64 / 1e6).to_string(),
        set: |c, v| {
            c.bg_period_ns = (v.float() * 1e6) as Nanos;
            Ok(())
        },
    },
    Setting {
        key: "cpu_fg",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "compute share of a foreground period besides memory work",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.cpu_fg.to_string(),
        set: |c, v| {
            c.cpu_fg = v.float();
            Ok(())
        },
    },
    Setting {
        key: "cpu_bg",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "compute share of a background period",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.cpu_bg.to_string(),
        set: |c, v| {
            c.cpu_bg = v.float();
            Ok(())
        },
    },
    Setting {
        key: "reads_fg",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "",
        help: "object reads per foreground unit of work",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.reads_fg.to_string(),
        set: |c, v| {
            c.reads_fg = v.float() as u32;
            Ok(())
        },
    },
    Setting {
        key: "reads_bg",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "",
        help: "object reads per background unit of work",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.reads_bg.to_string(),
        set: |c, v| {
            c.reads_bg = v.float() as u32;
            Ok(())
        },
    },
    Setting {
        key: "recent_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of reads to recently allocated objects",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.recent_share.to_string(),
        set: |c, v| {
            c.recent_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "hot_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of reads to the hot set",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.hot_share.to_string(),
        set: |c, v| {
            c.hot_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "hot_fraction",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "hot set as a share of the live heap",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.hot_fraction.to_string(),
        set: |c, v| {
            c.hot_fraction = v.float();
            Ok(())
        },
    },
    Setting {
        key: "pinned_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of the live heap that is pinned (JNI, non-moving)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.pinned_share.to_string(),
        set: |c, v| {
            c.pinned_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "native_anon",
        aliases: &[],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "native anonymous memory (malloc)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.native_anon),
        set: |c, v| {
            c.native_anon = v.int();
            Ok(())
        },
    },
    Setting {
        key: "native_touch_fg",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "pages",
        help: "native pages touched per foreground unit of work",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.native_touch_fg.to_string(),
        set: |c, v| {
            c.native_touch_fg = v.float() as u32;
            Ok(())
        },
    },
    Setting {
        key: "native_hot_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of the native heap that units of work touch (the rest is written once at start-up)",
        source: "estimate (docs/runtime.md): allocator arenas hold start-up data the app never reads again; no published measure of the share",
        get: |c| c.native_hot_share.to_string(),
        set: |c, v| {
            c.native_hot_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "ui_hidden_release_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of the native heap's used part the app frees when its UI is hidden (onTrimMemory(TRIM_MEMORY_UI_HIDDEN): caches trimmed); use in the foreground refills it",
        source: "estimate: image loaders trim their memory caches at UI_HIDDEN (bumptech/glide: trimToSize(maxSize / 2) at TRIM_MEMORY_UI_HIDDEN); how much of a native heap that is is not measured (a session's calibration knob sets it for every app)",
        get: |c| c.ui_hidden_release_share.to_string(),
        set: |c, v| {
            c.ui_hidden_release_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "file_bytes",
        aliases: &[],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "mapped files (code, resources)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.file_bytes),
        set: |c, v| {
            c.file_bytes = v.int();
            Ok(())
        },
    },
    Setting {
        key: "file_touch_fg",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: f64::MAX },
        unit: "pages",
        help: "file pages touched per foreground unit of work",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.file_touch_fg.to_string(),
        set: |c, v| {
            c.file_touch_fg = v.float() as u32;
            Ok(())
        },
    },
    Setting {
        key: "file_ws_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of the file pages the app keeps re-reading in use (its file-backed working set); touches follow a 1/rank popularity over it, the pages its launch reads first most often",
        source: "estimate: Launcher3 references at least 1.5 of its 2 MB of compiled code and 2 of its 5.7 MB APK in regular use (AOSP frameworks/base commit 402d78eb, 2018); a session's calibration knob file_working_set_share sets it for every app",
        get: |c| c.file_ws_share.to_string(),
        set: |c, v| {
            c.file_ws_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "launch_file_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of the file pages read at start-up (sets hot_launch_file_share too unless given after it)",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.launch_file_share.to_string(),
        set: |c, v| {
            c.launch_file_share = v.float();
            c.hot_launch_file_share = c.launch_file_share;
            Ok(())
        },
    },
    Setting {
        key: "hot_launch_file_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of the file pages a hot launch touches",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.hot_launch_file_share.to_string(),
        set: |c, v| {
            c.hot_launch_file_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "launch_read_run_pages",
        aliases: &[],
        kind: Kind::Float { min: 1.0, max: 1e6 },
        unit: "pages",
        help: "mean length of a contiguous run of the file pages a launch reads (runs are scattered over the file)",
        source: "AOSP system/iorap compiled launch traces of a Pixel 3 XL (2019): launch page-cache misses in many small scattered ranges, median 8-12 KiB; estimate of the mean",
        get: |c| c.launch_read_run_pages.to_string(),
        set: |c, v| {
            c.launch_read_run_pages = v.float();
            Ok(())
        },
    },
    Setting {
        key: "launch_near_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of near-root objects a hot launch touches",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| c.launch_near_share.to_string(),
        set: |c, v| {
            c.launch_near_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "launch_fyo_window",
        aliases: &[],
        kind: Kind::Size { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "allocation window before going to the background whose live units a hot launch touches",
        source: "estimate (docs/runtime.md, mutator workload model)",
        get: |c| size_text(c.launch_fyo_window),
        set: |c, v| {
            c.launch_fyo_window = v.int();
            Ok(())
        },
    },
    Setting {
        key: "launch_other_share",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of other live units a hot launch touches",
        source: "docs/runtime.md: near-root + foreground-young ≈ 2/3 of touched objects",
        get: |c| c.launch_other_share.to_string(),
        set: |c, v| {
            c.launch_other_share = v.float();
            Ok(())
        },
    },
    Setting {
        key: "introspects_heap",
        aliases: &[],
        kind: Kind::Bool,
        unit: "",
        help: "the app sizes caches from the reported maximum heap (heap-size feedback)",
        source: "e.g. Glide: 0.4 × memory class",
        get: |c| c.introspects_heap.to_string(),
        set: |c, v| {
            c.introspects_heap = v.bool();
            Ok(())
        },
    },
    Setting {
        key: "largeheap",
        aliases: &["large_heap"],
        kind: Kind::Bool,
        unit: "",
        help: "the app's manifest declares android:largeHeap (its heap limit is dalvik.vm.heapsize)",
        source: "the app's manifest",
        get: |c| c.large_heap.to_string(),
        set: |c, v| {
            c.large_heap = v.bool();
            Ok(())
        },
    },
    Setting {
        key: "seed",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "",
        help: "seed of the app's random streams",
        source: "",
        get: |c| c.seed.to_string(),
        set: |c, v| {
            c.seed = v.int();
            Ok(())
        },
    },
];

impl AppProfile {
    /// The app settings' keys (the table's, in order).
    pub fn keys() -> Vec<&'static str> {
        SETTINGS.keys()
    }

    /// Set one app setting (checked by the table), then the settings that depend on each other.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        SETTINGS.set(self, key, value).map_err(|e| format!("app {e}"))?;
        if self.temp_share + self.medium_share > 1.0 + 1e-9 {
            return Err(format!("app setting {key}: temp_share + medium_share exceeds 1"));
        }
        Ok(())
    }
}
