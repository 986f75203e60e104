//! Everything a session needs before it starts, loaded and validated: the scenario, its device,
//! the app profiles it names, the system processes, and the settings layered as
//! model defaults ← device profile ← scenario `[system]` ← the user's `--set` values.
//!
//! App profiles (the user-facing TOML schema of [`crate::app`]) are mapped here onto the
//! runtime's mutator-workload parameters; every mapping is one line with its reason.

use crate::app::{self, AppProfile};
use crate::device::{self, DeviceProfile};
use crate::input::{self, InputError};
use crate::scenario::{Known, Scenario};
use mobmem_engine::rng::hash3;
use mobmem_engine::setting;
use mobmem_engine::settings::{Kind, Setting, Table};
use mobmem_engine::Nanos;
use mobmem_runtime::workload::{AppProfile as Workload, SETTINGS as APP_SETTINGS};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub type Settings = Vec<(String, String)>;

/// The zygote's own memory and fork cost (`data/system.toml` `[zygote]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ZygoteSpec {
    pub(crate) native_anon_mib: f64,
    pub(crate) framework_code_mib: f64,
    pub(crate) fork_ms: f64,
    pub(crate) source: String,
}

/// A system process (`data/system.toml` `[[process]]`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SysProcSpec {
    pub(crate) name: String,
    pub(crate) adj: i32,
    /// The home app: adj 600 while another app is in the foreground, restarted if killed.
    #[serde(default)]
    pub(crate) home: bool,
    /// A preinstalled app's process kept cached without activities (an empty process: started
    /// at boot for a broadcast, a provider or a job): the ActivityManager gives it its adj and
    /// counts it against the empty-process limit; it is not restarted once killed.
    #[serde(default)]
    pub(crate) cached: bool,
    pub(crate) anon_mib: f64,
    pub(crate) file_mib: f64,
    /// Share of its pages that its background activity re-references.
    pub(crate) hot_share: f64,
    pub(crate) touches_per_s: u32,
    pub(crate) cpu_ms_per_s: f64,
    /// CPU work per app start done in this process (system_server: bindApplication and friends).
    pub(crate) bind_cpu_ms: f64,
    /// CPU work per activity resume (hot launch) done in this process.
    #[serde(default)]
    pub(crate) resume_cpu_ms: f64,
    /// Time over which its memory grows after it starts, ms (0: populated at once, as a
    /// process started at boot is before the session begins).
    #[serde(default)]
    pub(crate) populate_ms: f64,
    pub(crate) source: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SystemSpec {
    pub(crate) zygote: ZygoteSpec,
    pub(crate) process: Vec<SysProcSpec>,
}

/// One app of the scenario, ready to run: its workload parameters and launch costs.
#[derive(Clone, Debug, Serialize)]
pub struct AppSpec {
    /// The scenario's name for the app (a profile file stem or a `synthetic:` spec).
    pub(crate) name: String,
    pub(crate) package: String,
    pub(crate) workload: Workload,
    pub(crate) cold_cpu_ns: Nanos,
    pub(crate) hot_cpu_ns: Nanos,
    /// Graphics memory in the foreground (window buffers and the renderer's GPU cache:
    /// gralloc/dmabuf/kgsl, not reclaimable), pages.
    pub(crate) graphics_pages: u32,
    /// The part of it the app keeps when its UI is hidden (textures of its GPU resource cache,
    /// up to the device's background limit), pages.
    pub(crate) gpu_cache_kept_pages: u32,
    /// Share of the shared framework code a cold launch reads.
    pub(crate) framework_read_share: f64,
    pub(crate) estimate: bool,
    /// The live Java heap is a measurement (its profile section's source says "measured") or a
    /// synthetic app's specification, not an estimate: calibration leaves it as it is.
    pub(crate) java_heap_measured: bool,
    /// The app's secondary processes (started with its cold launch).
    pub(crate) secondary: Vec<SecondarySpec>,
}

/// A secondary process of an app: its process spec (named `PACKAGE:suffix`) and whether the
/// app's main process binds it (see [`crate::app::SecondaryProcess`]).
#[derive(Clone, Debug, Serialize)]
pub struct SecondarySpec {
    pub(crate) proc: SysProcSpec,
    pub(crate) bound: bool,
}

/// Session knobs (`session.*` settings).
#[derive(Clone, Debug, Serialize)]
pub struct SessionOptions {
    /// Interleaving quantum: every process runs up to the end of a slice before the next.
    pub(crate) slice_ns: Nanos,
    /// Time-series sampling interval.
    pub(crate) sample_ns: Nanos,
    /// Interval of the per-app memory series (RSS, PSS, swap of every live app); 0 turns it off.
    pub(crate) app_sample_ns: Nanos,
    /// The vsync period: a frame is due every period and is janky when it takes longer.
    pub(crate) frame_budget_ns: Nanos,
    pub(crate) cached_app_compaction: bool,
    pub(crate) freezer: bool,
    /// Cached apps keep running background units of work (off: a cached app is idle).
    pub(crate) cached_app_work: bool,
    /// The ActivityManager computes its memory factor and sends the trim levels from it.
    pub(crate) trim_levels: bool,
    /// Apps start the secondary processes their profiles list.
    pub(crate) secondary_processes: bool,
    /// The ActivityManager moves processes to the device's cpusets by scheduling group.
    pub(crate) cpusets: bool,
    pub(crate) policies: Vec<String>,
    pub(crate) collector: String,
    pub(crate) lmkd: String,
    /// Multiplies every `use` and `wait` duration (a quick preview of a long scenario; the
    /// result records it — such a run is not the scenario's experiment).
    pub(crate) time_scale: f64,
    /// The device profile, instead of the scenario's (empty: the scenario's `device`).
    pub(crate) device: String,
    /// A global GC service decides every app's collections, growth and trims.
    /// Session services that are on (names in `services::SERVICES`), in order.
    pub services: Vec<String>,
    pub(crate) gc_service_period_ns: Nanos,
    pub(crate) gc_service_plenty_mib: u64,
    pub(crate) gc_service_scarce_mib: u64,
    /// ActivityManager's process limit instead of the device's (0: the device's).
    pub(crate) max_cached_processes: u32,
    /// Memory a memtester process holds locked from boot (MiB; 0: none): a smaller phone made
    /// from a larger one, as Acclaim made its 2.5 GB setting from the 3 GB P9.
    pub(crate) memtester_mib: u64,
    /// Threads an app process starts in its cold launch (a kernel stack each, with the buddy
    /// allocator).
    pub(crate) app_threads: u32,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            slice_ns: 20_000_000,
            sample_ns: 1_000_000_000,
            app_sample_ns: 5_000_000_000,
            frame_budget_ns: mobmem_runtime::workload::VSYNC_NS,
            cached_app_compaction: false,
            freezer: false,
            cached_app_work: true,
            trim_levels: true,
            secondary_processes: true,
            cpusets: true,
            policies: Vec::new(),
            collector: mobmem_runtime::RuntimeConfig::default().fg_collector.short().into(),
            lmkd: String::new(),
            time_scale: 1.0,
            device: String::new(),
            services: Vec::new(),
            gc_service_period_ns: 100_000_000,
            gc_service_plenty_mib: 1024,
            gc_service_scarce_mib: 512,
            max_cached_processes: 0,
            memtester_mib: 0,
            app_threads: 60,
        }
    }
}

/// The session- and system-level `--set` keys (everything else goes to the kernel or runtime).
pub static SETTINGS: Table<SessionOptions> = Table { layer: "session", prefixes: &[], entries: SESSION_ENTRIES };

static SESSION_ENTRIES: &[Setting<SessionOptions>] = &[
    setting!(
        float "session.slice_ms" => slice_ns * 1e6, [1e-6, 60_000.0],
        "ms",
        "interleaving quantum: every process runs up to the end of a slice before the next",
        "simulation parameter"
    ),
    setting!(
        float "session.sample_ms" => sample_ns * 1e6, [1e-6, 60_000.0],
        "ms",
        "time-series sampling interval",
        "simulation parameter"
    ),
    Setting {
        key: "session.app_sample_ms",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 3_600_000.0 },
        unit: "ms",
        help:
            "interval of the per-app memory series (RSS, PSS, swap per live app; 0 = off); it walks each app's page tables, so a fine interval costs host time",
        source: "simulation parameter",
        get: |c| (c.app_sample_ns as f64 / 1e6).to_string(),
        set: |c, v| {
            c.app_sample_ns = (v.float() * 1e6) as Nanos;
            Ok(())
        },
    },
    Setting {
        key: "session.device",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "device profile to run the scenario on instead of the scenario's own (see data/devices)",
        source: "the scenario's device",
        get: |c| c.device.clone(),
        set: |c, v| {
            c.device = v.text().to_string();
            Ok(())
        },
    },
    setting!(
        float "session.time_scale" => time_scale, [1e-6, 100.0],
        "",
        "multiplies every use and wait duration (a quick preview; the result records it)",
        "simulation parameter"
    ),
    Setting {
        key: "system.collector",
        aliases: &["collector"],
        kind: Kind::Text,
        unit: "",
        help: "the apps' collector (a catalogue name or alias; results use its name)",
        source: "the scenario's [system] table",
        get: |c| c.collector.clone(),
        set: |c, v| {
            let k = mobmem_runtime::CollectorKind::named(v.text())?;
            c.collector = k.short().to_string();
            Ok(())
        },
    },
    Setting {
        key: "system.lmkd",
        aliases: &["kernel.lmkd"],
        kind: Kind::Component(&mobmem_kernel::lmkd::KILLERS),
        unit: "",
        help: "the user-space low-memory killer's kill policy",
        source: "the scenario's [system] table",
        get: |c| c.lmkd.clone(),
        set: |c, v| {
            c.lmkd = mobmem_kernel::lmkd::KILLERS.get(v.text())?.name.into();
            Ok(())
        },
    },
    setting!(
        bool "system.cached_app_compaction" => cached_app_compaction,
        "",
        "ActivityManager compacts cached apps (process_madvise PAGEOUT)",
        "the scenario's [system] table"
    ),
    setting!(
        bool "system.freezer" => freezer,
        "",
        "the cached-apps freezer (frozen apps do no background work)",
        "the scenario's [system] table"
    ),
    setting!(
        bool "system.cached_app_work" => cached_app_work,
        "",
        "cached apps (oom_score_adj >= 900) keep a small background activity (reads, allocation at the background rates) as the previous app does; off: a cached app is idle, its runtime only finishes pending collections",
        "estimate: on the phone cached apps run the occasional broadcast, job or service; source.android.com (Cached apps freezer): processes are typically not expected to do any work when cached; the scenario's [system] table"
    ),
    setting!(
        bool "system.trim_levels" => trim_levels,
        "",
        "the ActivityManager computes its memory factor (from PSI where the device's Android reads it, otherwise from the number of cached processes) and sends apps the trim levels it implies: TRIM_MEMORY_BACKGROUND, MODERATE and COMPLETE to the previous app, cached apps and empty processes in the order of its process list, RUNNING_* to the app on screen; apps then clear their caches, and from COMPLETE up release their GPU cache. Off: apps get only TRIM_MEMORY_UI_HIDDEN when hidden",
        "AOSP ActivityManagerService/OomAdjuster updateLowMemStateLocked and LowMemDetector (Android 10); the count-based factor since Android 4.x (ActivityManagerService.updateOomAdjLocked); on by default, as on every phone"
    ),
    setting!(
        bool "system.secondary_processes" => secondary_processes,
        "",
        "apps start the secondary processes their profiles list (renderers, players, push services) with their cold launch; a bound one counts against the ActivityManager's limit on cached processes while its app is cached, so fewer apps stay cached; off: every app is one process",
        "AOSP OomAdjuster (Android 10): a process bound by a client with activities is PROCESS_STATE_CACHED_ACTIVITY_CLIENT when cached and is counted with the cached activities (cachedProcessLimit); the processes per app: each app profile's [[process]] sources"
    ),
    setting!(
        bool "system.cpusets" => cpusets,
        "",
        "the ActivityManager moves every app and system process to the cpuset of its scheduling group as the device's init defines them: the app on screen to top-app, persistent and visible processes to foreground, cached, previous and service processes to background (on most phones a few little cores); off, or on a device profile without cpusets: every thread may run on every core",
        "AOSP OomAdjuster.applyOomAdjLocked → ProcessList.setProcessGroup (Android 10); the device profile's [device.cpusets]"
    ),
    setting!(
        int "system.max_cached_processes" => max_cached_processes, [0, 1024],
        "processes",
        "ActivityManager's process limit (CUR_MAX_CACHED_PROCESSES; half of it for empty processes, the rest for cached apps); 0: the device profile's",
        "AOSP ActivityManagerConstants: max_cached_processes, settable with `device_config put activity_manager max_cached_processes N` (Android 10+)"
    ),
    setting!(
        int "system.memtester_mib" => memtester_mib, [0, 1 << 20],
        "MiB",
        "memory a memtester process holds locked (mlock) from boot: the phone with that much less memory for everything else; 0: none",
        "Acclaim (ATC '20) made its 2.5 GB setting from the 3 GB Huawei P9 by running memtester on 0.5 GB; memtester locks the memory it tests"
    ),
    setting!(
        int "system.app_threads" => app_threads, [1, 10_000],
        "threads",
        "threads each app process starts during its cold launch (main, binder, RenderThread, the runtime's daemons and JIT, library thread pools); with kernel.buddy each needs a 16 KiB kernel stack, an order-2 block",
        "estimate: about 15 framework and runtime threads in every ART app process plus the libraries' thread pools; apps with several libraries run tens to hundreds (C. Zhang, 'Reduce, Reuse & Recycle your thread pools', 2021)"
    ),
    Setting {
        key: "system.services",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "session services that run beside the apps, comma-separated (known: gc_service); empty: none",
        source: "the system's configuration",
        get: |c| c.services.join(","),
        set: |c, v| {
            // Registered names are checked with the run's inputs (`services::check`).
            let mut names: Vec<String> = Vec::new();
            for n in v.text().split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if names.iter().any(|x| x == n) {
                    return Err(format!("{n:?} is named twice"));
                }
                names.push(n.to_string());
            }
            c.services = names;
            Ok(())
        },
    },
    Setting {
        key: "system.gc_service",
        aliases: &[],
        kind: Kind::Bool,
        unit: "",
        help: "the gc_service session service: a global GC service decides for every app when to collect (the app with the most recoverable garbage first), how far its heap grows (from its allocation rate, state, age and the phone's free memory) and when to compact and trim sparse background heaps (when memory is scarce), instead of each runtime",
        source: "the GC service of Hussein's thesis (Purdue 2017; 'GC as a service', VEE 2017)",
        get: |c| c.services.iter().any(|s| s == "gc_service").to_string(),
        set: |c, v| {
            c.services.retain(|s| s != "gc_service");
            if v.bool() {
                c.services.push("gc_service".into());
            }
            Ok(())
        },
    },
    setting!(
        int "system.gc_service_period_ms" => gc_service_period_ns * 1_000_000, [1, 60_000],
        "ms",
        "how often the GC service reads the apps' heaps and decides",
        "estimate"
    ),
    setting!(
        int "system.gc_service_plenty_mib" => gc_service_plenty_mib, [0, 1 << 20],
        "MiB",
        "available memory (free + half the page cache) above which the GC service delays collections (doubles heap growth)",
        "estimate"
    ),
    setting!(
        int "system.gc_service_scarce_mib" => gc_service_scarce_mib, [0, 1 << 20],
        "MiB",
        "available memory below which the GC service halves heap growth and compacts and trims sparse background heaps (above lmkd's highest minfree level so that it acts first)",
        "estimate"
    ),
    Setting {
        key: "system.policies",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "runtime policies, comma-separated (catalogue names)",
        source: "the scenario's [system] table",
        get: |c| c.policies.join(","),
        set: |c, v| {
            c.policies = v.text().split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
            Ok(())
        },
    },
];

pub struct Inputs {
    pub scenario: Scenario,
    pub(crate) scenario_file: String,
    pub(crate) device_name: String,
    pub(crate) device: DeviceProfile,
    pub(crate) system: SystemSpec,
    pub(crate) apps: Vec<AppSpec>,
    pub(crate) kernel: Settings,
    pub(crate) runtime: Settings,
    /// The calibration knobs as given (the device's calibration file, then `--set`), and their values.
    pub(crate) calibration: Settings,
    pub(crate) knobs: crate::calibration::Knobs,
    pub options: SessionOptions,
    pub(crate) seed: u64,
    /// The user's overrides, stored with the results.
    pub(crate) overrides: Settings,
}

/// Of `graphics_pages`, what an app keeps when hidden: its window's three full-screen 32-bit
/// buffers go (the window manager destroys a stopped activity's surface), its renderer's GPU
/// resource cache is purged down to the device's background limit (HWUI's UI_HIDDEN trim).
fn gpu_cache_kept_pages(graphics_pages: u32, hw: &crate::device::Hardware) -> u32 {
    let [w, h] = hw.display_px;
    let window_pages = (3 * 4 * w as u64 * h as u64).div_ceil(4096) as u32;
    let cache = graphics_pages.saturating_sub(window_pages);
    cache.min((hw.gpu_cache_background_mib * 256.0) as u32)
}

fn app_spec(name: &str, p: &AppProfile, seed: u64, hw: &crate::device::Hardware) -> AppSpec {
    let graphics_pages = (p.native.graphics_mib * 256.0) as u32;
    AppSpec {
        name: name.into(),
        package: p.package.clone(),
        workload: app::workload_of(name, p, seed),
        cold_cpu_ns: (p.launch.cold_cpu_ms * 1e6) as Nanos,
        hot_cpu_ns: (p.launch.hot_cpu_ms * 1e6) as Nanos,
        graphics_pages,
        gpu_cache_kept_pages: gpu_cache_kept_pages(graphics_pages, hw),
        framework_read_share: 0.3,
        estimate: p.estimate,
        java_heap_measured: app::java_heap_measured(p),
        secondary: p
            .process
            .iter()
            .map(|sp| SecondarySpec {
                proc: SysProcSpec {
                    name: format!("{}{}", p.package, sp.name),
                    adj: crate::activity_manager::CACHED_APP_MAX_ADJ,
                    home: false,
                    cached: true,
                    anon_mib: sp.anon_mib,
                    file_mib: sp.file_mib,
                    hot_share: sp.hot_share,
                    touches_per_s: sp.touches_per_s,
                    cpu_ms_per_s: sp.cpu_ms_per_s,
                    bind_cpu_ms: 0.0,
                    resume_cpu_ms: 0.0,
                    populate_ms: sp.populate_ms,
                    source: sp.source.clone(),
                },
                bound: sp.bound,
            })
            .collect(),
    }
}

/// A synthetic app: the runtime's synthetic heap plus launch costs of a trivial app.
fn synthetic_spec(name: &str, seed: u64) -> Result<AppSpec, String> {
    let mut w = Workload::synthetic(name)?;
    w.seed = seed;
    Ok(AppSpec {
        name: name.into(),
        package: "synthetic".into(),
        workload: w,
        // estimate: a one-activity app with no dependency graph to initialise.
        cold_cpu_ns: 200_000_000,
        hot_cpu_ns: 30_000_000,
        // estimate: one full-screen window's triple-buffered surface (1080x2160x4 B x 3 ≈ 27 MiB)
        // is shared with SurfaceFlinger; count half of it against the app.
        graphics_pages: 16 * 256,
        // no GPU cache beyond the window: nothing kept when hidden
        gpu_cache_kept_pages: 0,
        framework_read_share: 0.3,
        estimate: true,
        java_heap_measured: true,
        secondary: Vec::new(),
    })
}

/// Load a scenario and everything it names from `data` (the package's data directory).
/// `overrides` are the user's `--set` values; `seed` replaces the scenario's seed.
pub fn load(scenario_path: &str, data: &Path, overrides: &Settings, seed: Option<u64>) -> Result<Inputs, InputError> {
    let plain = |file: &str, msg: String| InputError { file: file.into(), line: 0, col: 0, msg };
    let devices = input::stems(&data.join("devices"));
    let app_names = input::stems(&data.join("apps"));
    let text = input::read(scenario_path)?;
    let mut scenario: Scenario = input::parse(scenario_path, &text)?;
    scenario.validate(scenario_path, &text, &Known { devices: &devices, apps: &app_names })?;
    let mut device_name = scenario.device.get_ref().clone();
    if let Some((_, d)) = overrides.iter().rev().find(|(k, _)| k == "session.device") {
        if !devices.iter().any(|x| x == d) {
            return Err(plain("--set", format!("session.device: unknown device {d:?}; known: {}", devices.join(", "))));
        }
        device_name = d.clone();
    }
    let dev_path: PathBuf = data.join("devices").join(format!("{device_name}.toml"));
    let device = device::load(&dev_path.to_string_lossy())?;
    let sys_path = data.join("system.toml");
    let sys_file = sys_path.to_string_lossy().into_owned();
    let mut system: SystemSpec = input::parse(&sys_file, &input::read(&sys_file)?)?;
    let seed = seed.unwrap_or(scenario.seed);

    // Apps, each with its own workload seed.
    let mut apps = Vec::new();
    for (i, a) in scenario.apps.iter().enumerate() {
        let n = a.name.get_ref();
        let s = hash3(seed, i as u64, 0x4150_5053);
        let spec = if n.starts_with("synthetic:") {
            synthetic_spec(n, s).map_err(|e| input::at(scenario_path, &text, a.name.span(), format!("apps.name: {e}")))?
        } else {
            let path = data.join("apps").join(format!("{n}.toml"));
            let p = app::load(&path.to_string_lossy())?;
            app_spec(n, &p, s, &device.device)
        };
        apps.push(spec);
    }

    // Settings: device ← calibration files (the runtime's costs; the device's knobs) ← scenario
    // [system] ← user.
    let mut kernel: Settings = device.kernel_settings();
    let mut runtime: Settings = device.runtime_settings();
    runtime.extend(crate::standalone::calibration(data)?);
    let mut calibration: Settings = crate::calibration::load(data, &device_name)?;
    let sys = &scenario.system;
    // Each [system.kernel] entry is checked here, where its place in the file is known (the
    // combined settings are applied later, when a bad value could only be blamed on --set).
    let mut scratch = mobmem_kernel::KernelConfig::default();
    for (k, v) in &sys.kernel {
        let (key, value) = (format!("kernel.{}", k.get_ref()), input::value_text(v.get_ref()));
        scratch.set(&key, &value).map_err(|e| input::at(scenario_path, &text, v.span(), format!("system.kernel.{}: {e}", k.get_ref())))?;
        kernel.push((key, value));
    }
    let mut rscratch = mobmem_runtime::RuntimeConfig::default();
    for (k, v) in &sys.runtime {
        let (key, value) = (k.get_ref().clone(), input::value_text(v.get_ref()));
        rscratch.set(&key, &value).map_err(|e| input::at(scenario_path, &text, v.span(), format!("system.runtime.{}: {e}", k.get_ref())))?;
        runtime.push((key, value));
    }
    let mut options = SessionOptions {
        cached_app_compaction: sys.cached_app_compaction,
        freezer: sys.freezer,
        cached_app_work: sys.cached_app_work,
        policies: sys.policies.iter().map(|p| p.get_ref().clone()).collect(),
        // the scenario's collector was checked when the file was read; results use its canonical name
        collector: mobmem_runtime::CollectorKind::parse(sys.collector.get_ref()).map_or_else(|| sys.collector.get_ref().clone(), |c| c.short().to_string()),
        lmkd: sys.lmkd.as_ref().map(|l| l.get_ref().clone()).unwrap_or_default(),
        ..SessionOptions::default()
    };
    let mut app_overrides: Vec<(String, String)> = Vec::new();
    for (k, v) in overrides {
        if SETTINGS.find(k).is_some() {
            SETTINGS.set(&mut options, k, v).map_err(|e| plain("--set", e.to_string()))?;
        } else if k.starts_with("kernel.") {
            kernel.push((k.clone(), v.clone()));
        } else if k.starts_with("calibration.") {
            crate::calibration::SETTINGS.set(&mut crate::calibration::Knobs::default(), k, v).map_err(|e| plain("--set", e.to_string()))?;
            calibration.push((k.clone(), v.clone()));
        } else if APP_SETTINGS.prefixes.iter().any(|p| k.starts_with(p)) {
            // Every app of the session, over its profile and the calibration (checked here, once).
            if matches!(APP_SETTINGS.find(k).map(|s| s.key), Some("name" | "seed")) {
                return Err(plain("--set", format!("{k} is each app's own (its profile's name, the session's seed); it cannot be set for all apps")));
            }
            Workload::default().set(k, v).map_err(|e| plain("--set", e))?;
            app_overrides.push((k.clone(), v.clone()));
        } else if k.starts_with("session.") || k.starts_with("system.") {
            return Err(plain("--set", format!("unknown setting {k:?}; session/system keys: {}", SETTINGS.keys().join(", "))));
        } else {
            runtime.push((k.clone(), v.clone()));
        }
    }
    if !options.lmkd.is_empty() {
        kernel.push(("kernel.lmkd".into(), options.lmkd.clone()));
    }
    // Apps exempt from foreground-aware eviction must be apps of the scenario.
    if let Some((_, v)) = kernel.iter().rev().find(|(k, _)| k == "kernel.fae_exempt") {
        for n in v.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !apps.iter().any(|a| a.name == n) {
                let names: Vec<&str> = apps.iter().map(|a| a.name.as_str()).collect();
                return Err(plain("kernel.fae_exempt", format!("no app {n:?} in this scenario; its apps: {}", names.join(", "))));
            }
        }
    }
    kernel.push(("kernel.seed".into(), seed.to_string()));
    runtime.push(("collector".into(), options.collector.clone()));
    let knobs = crate::calibration::knobs(&calibration).map_err(|e| plain("calibration", e))?;
    apply_knobs(&knobs, &mut system, &mut apps);
    for a in &mut apps {
        for (k, v) in &app_overrides {
            a.workload.set(k, v).map_err(|e| plain("--set", format!("{}: {e}", a.name)))?;
        }
    }
    Ok(Inputs {
        scenario,
        scenario_file: scenario_path.into(),
        device_name,
        device,
        system,
        apps,
        kernel,
        runtime,
        calibration,
        knobs,
        options,
        seed,
        overrides: overrides.clone(),
    })
}

/// Apply the calibration knobs to the system processes and the apps of a session: every app and
/// every system process alike (no knob depends on a name).
pub fn apply_knobs(k: &crate::calibration::Knobs, system: &mut SystemSpec, apps: &mut [AppSpec]) {
    for p in &mut system.process {
        p.anon_mib *= k.system_memory_scale;
        p.file_mib *= k.system_memory_scale;
    }
    for a in apps {
        crate::calibration::apply_to_app(k, &mut a.workload, a.java_heap_measured);
        // A secondary process's memory is the app's own native-side memory and code.
        for sp in &mut a.secondary {
            sp.proc.anon_mib *= k.app_native_scale;
            sp.proc.file_mib *= k.app_code_scale;
        }
    }
}
