//! The app settings table ([`SETTINGS`]): every key of an [`AppProfile`] with its type, unit,
//! range, help and source; setting a key (`AppProfile::set`, checked by the table).

use super::profile::AppProfile;
use super::size_mix::{android_size_mix, SizeClass};
use mobmem_engine::setting;
use mobmem_engine::settings::{parse, size_text, Kind, Setting, Table, Value};

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
    setting!(
        size "live_heap" | "footprint" => live_heap, [0, u64::MAX],
        "bytes",
        "live Java heap in the foreground (long-lived structure built at start)",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "near_root_share" => near_root_share, [0.0, 1.0],
        "",
        "share of heap bytes within depth ≤ 2 of a root",
        "docs/runtime.md: ~10% of heap bytes"
    ),
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
        kind: Kind::Text,
        unit: "bytes",
        help: "one object size for every object (1 byte to 4g), or android-mix for the measured Android size mix",
        source: "docs/runtime.md: measured Android size mix by default",
        get: |c| if c.size_mix.len() == 1 { size_text(c.size_mix[0].lo as u64) } else { "android-mix".into() },
        set: |c, v| {
            if v.text() == "android-mix" {
                c.size_mix = android_size_mix();
                return Ok(());
            }
            let s = match parse(Kind::Size { min: 1, max: u32::MAX as u64 }, v.text())? {
                Value::Int(b) => b as u32,
                _ => unreachable!("a size parses to an integer"),
            };
            c.size_mix = vec![SizeClass { lo: s, hi: s, byte_share: 1.0 }];
            Ok(())
        },
    },
    setting!(
        float "survivor_object_bytes" => survivor_object_bytes, [0.0, 1e6],
        "bytes",
        "mean size of objects that outlive their first GC (long-lived structure, medium and long units; 0 = the allocation mix)",
        "ART SIGQUIT dumps of Android 8+ apps: bytes moved / objects moved of concurrent copying, median 52 B over 16 public dumps (quartiles 48-53.5 B)"
    ),
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
    setting!(
        float "temp_share" => temp_share, [0.0, 1.0],
        "",
        "share of allocated units that are temporary",
        "docs/runtime.md: 54–88% of objects die within the first MiB"
    ),
    setting!(
        float "medium_share" => medium_share, [0.0, 1.0],
        "",
        "share of allocated units that are medium-lived (the rest are long-lived)",
        "docs/runtime.md: 5–16% long-lived"
    ),
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
    setting!(
        float "bg_temp_share" => bg_temp_share, [0.0, 1.0],
        "",
        "share of temporary units in the background",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        size "alloc_rate_fg" | "rate" => alloc_rate_fg, [0, 1 << 30],
        "bytes/s",
        "allocation rate in the foreground",
        "estimate (docs/runtime.md, mutator workload model); at most 1 GiB/s: several times what GC-heavy benchmarks allocate on a phone core (hundreds of MB/s) (a larger value only made a unit of work run for hours)"
    ),
    setting!(
        size "alloc_rate_bg" => alloc_rate_bg, [0, 1 << 30],
        "bytes/s",
        "allocation rate in the background",
        "estimate (docs/runtime.md, mutator workload model); at most 1 GiB/s: several times what GC-heavy benchmarks allocate on a phone core (hundreds of MB/s) (a larger value only made a unit of work run for hours)"
    ),
    setting!(
        float "frame_ms" => frame_ns * 1e6, [1.0, 1000.0],
        "ms",
        "period of foreground units of work (a frame)",
        "the display's vsync period (DISPLAY_HZ); at least 1 ms (no display refreshes faster than 1 kHz; a period of 0 would never let simulated time pass) and at most 1 s (the slowest refresh a phone display runs, always-on at 1 Hz; a unit allocates its whole period's bytes at once, so an unbounded period made one unit of work run for hours)"
    ),
    setting!(
        float "bg_period_ms" => bg_period_ns * 1e6, [1.0, 1000.0],
        "ms",
        "period of background units of work",
        "estimate (docs/runtime.md, mutator workload model); at least 1 ms (a period of 0 would never let simulated time pass) and at most 1 s (a unit allocates its whole period's bytes at once, so an unbounded period made one unit of work run for hours)"
    ),
    setting!(
        float "cpu_fg" => cpu_fg, [0.0, 1.0],
        "",
        "compute share of a foreground period besides memory work",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "cpu_bg" => cpu_bg, [0.0, 1.0],
        "",
        "compute share of a background period",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "reads_fg" => reads_fg, [0.0, 1e6],
        "",
        "object reads per foreground unit of work",
        "estimate (docs/runtime.md, mutator workload model); at most a million: a phone core reading objects scattered over a heap misses the cache on most of them (~100 ns each), so not even a 100 ms unit reads more (a larger value only made a unit of work run for hours)"
    ),
    setting!(
        float "reads_bg" => reads_bg, [0.0, 1e6],
        "",
        "object reads per background unit of work",
        "estimate (docs/runtime.md, mutator workload model); at most a million: a phone core reading objects scattered over a heap misses the cache on most of them (~100 ns each), so not even a 100 ms unit reads more (a larger value only made a unit of work run for hours)"
    ),
    setting!(
        float "recent_share" => recent_share, [0.0, 1.0],
        "",
        "share of reads to recently allocated objects",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "hot_share" => hot_share, [0.0, 1.0],
        "",
        "share of reads to the hot set",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "hot_fraction" => hot_fraction, [0.0, 1.0],
        "",
        "hot set as a share of the live heap",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "pinned_share" => pinned_share, [0.0, 1.0],
        "",
        "share of the live heap that is pinned (JNI, non-moving)",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        size "native_anon" => native_anon, [0, u64::MAX],
        "bytes",
        "native anonymous memory (malloc)",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "native_touch_fg" => native_touch_fg, [0.0, 262144.0],
        "pages",
        "native pages touched per foreground unit of work",
        "estimate (docs/runtime.md, mutator workload model); at most 262,144 pages (1 GiB) per unit: more than a phone's memory bus moves in a frame (a larger value only made a unit of work run for hours)"
    ),
    setting!(
        float "native_hot_share" => native_hot_share, [0.0, 1.0],
        "",
        "share of the native heap that units of work touch (the rest is written once at start-up)",
        "estimate (docs/runtime.md): allocator arenas hold start-up data the app never reads again; no published measure of the share"
    ),
    setting!(
        float "ui_hidden_release_share" => ui_hidden_release_share, [0.0, 1.0],
        "",
        "share of the native heap's used part the app frees when its UI is hidden (onTrimMemory(TRIM_MEMORY_UI_HIDDEN): caches trimmed); use in the foreground refills it",
        "estimate: image loaders trim their memory caches at UI_HIDDEN (bumptech/glide: trimToSize(maxSize / 2) at TRIM_MEMORY_UI_HIDDEN); how much of a native heap that is is not measured (a session's calibration knob sets it for every app)"
    ),
    setting!(
        size "file_bytes" => file_bytes, [0, u64::MAX],
        "bytes",
        "mapped files (code, resources)",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "file_touch_fg" => file_touch_fg, [0.0, 262144.0],
        "pages",
        "file pages touched per foreground unit of work",
        "estimate (docs/runtime.md, mutator workload model); at most 262,144 pages (1 GiB) per unit: more than a phone's memory bus moves in a frame (a larger value only made a unit of work run for hours)"
    ),
    setting!(
        float "file_ws_share" => file_ws_share, [0.0, 1.0],
        "",
        "share of the file pages the app keeps re-reading in use (its file-backed working set); touches follow a 1/rank popularity over it, the pages its launch reads first most often",
        "estimate: Launcher3 references at least 1.5 of its 2 MB of compiled code and 2 of its 5.7 MB APK in regular use (AOSP frameworks/base commit 402d78eb, 2018); a session's calibration knob file_working_set_share sets it for every app"
    ),
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
    setting!(
        float "hot_launch_file_share" => hot_launch_file_share, [0.0, 1.0],
        "",
        "share of the file pages a hot launch touches",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "launch_read_run_pages" => launch_read_run_pages, [1.0, 1e6],
        "pages",
        "mean length of a contiguous run of the file pages a launch reads (runs are scattered over the file)",
        "AOSP system/iorap compiled launch traces of a Pixel 3 XL (2019): launch page-cache misses in many small scattered ranges, median 8-12 KiB; estimate of the mean"
    ),
    setting!(
        float "launch_near_share" => launch_near_share, [0.0, 1.0],
        "",
        "share of near-root objects a hot launch touches",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        size "launch_fyo_window" => launch_fyo_window, [0, u64::MAX],
        "bytes",
        "allocation window before going to the background whose live units a hot launch touches",
        "estimate (docs/runtime.md, mutator workload model)"
    ),
    setting!(
        float "launch_other_share" => launch_other_share, [0.0, 1.0],
        "",
        "share of other live units a hot launch touches",
        "docs/runtime.md: near-root + foreground-young ≈ 2/3 of touched objects"
    ),
    setting!(
        bool "introspects_heap" => introspects_heap,
        "",
        "the app sizes caches from the reported maximum heap (heap-size feedback)",
        "e.g. Glide: 0.4 × memory class"
    ),
    setting!(
        bool "largeheap" | "large_heap" => large_heap,
        "",
        "the app's manifest declares android:largeHeap (its heap limit is dalvik.vm.heapsize)",
        "the app's manifest"
    ),
    setting!(
        int "seed" => seed, [0, u64::MAX],
        "",
        "seed of the app's random streams",
        ""
    ),
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
