//! The `kernel.*` settings: every tunable of [`KernelConfig`] with its type, unit, range, help
//! and the source of its default. A setting that names a component (eviction policy, kswapd
//! sizing, kill policy, governor) takes its names from that component's registry, so the table
//! and the registry cannot disagree.

use crate::config::*;
use mobmem_engine::component::Registry;
use mobmem_engine::settings::{not_one_of, Kind, Setting, Table, MAX_COST_NS};

/// A registered component's name (the registry's message for an unknown one).
fn component<B>(r: &Registry<B>, v: &str) -> Result<String, String> {
    r.get(v).map(|c| c.name.to_string())
}

fn positive(x: f64) -> Result<f64, String> {
    if x > 0.0 {
        Ok(x)
    } else {
        Err(format!("must be greater than 0, got {x}"))
    }
}

/// Every `kernel.<key>` setting: type, unit, range, help and the source of its default.
pub static SETTINGS: Table<KernelConfig> = Table { layer: "kernel", prefixes: &["kernel."], entries: ENTRIES };

static ENTRIES: &[Setting<KernelConfig>] = &[
    Setting {
        key: "semantics",
        aliases: &[],
        kind: Kind::Choice(KernelSemantics::NAMES),
        unit: "",
        help: "kernel-version behaviour (other versions map to the nearest)",
        source: "Android GKI releases",
        get: |c| c.semantics.name().into(),
        set: |c, v| {
            c.semantics = KernelSemantics::parse(v.text()).ok_or_else(|| not_one_of(KernelSemantics::NAMES, v.text()))?;
            Ok(())
        },
    },
    Setting {
        key: "lru",
        aliases: &[],
        kind: Kind::Choice(LruMode::NAMES),
        unit: "",
        help: "LRU aging and eviction: the kernel's two lists, or strict LRU for cache-simulator comparison",
        source: "Linux mm/vmscan.c",
        get: |c| c.lru.name().into(),
        set: |c, v| {
            c.lru = LruMode::parse(v.text()).ok_or_else(|| not_one_of(LruMode::NAMES, v.text()))?;
            Ok(())
        },
    },
    Setting {
        key: "scope",
        aliases: &[],
        kind: Kind::Choice(ReclaimScope::NAMES),
        unit: "",
        help: "reclaim of a whole machine, or of a memory cgroup with a hard limit",
        source: "Linux memcg",
        get: |c| c.scope.name().into(),
        set: |c, v| {
            c.scope = ReclaimScope::parse(v.text()).ok_or_else(|| not_one_of(ReclaimScope::NAMES, v.text()))?;
            Ok(())
        },
    },
    Setting {
        key: "ram_mib",
        aliases: &[],
        kind: Kind::Int { min: 1, max: MAX_MODEL_MIB },
        unit: "MiB",
        help: "physical memory",
        source: "the device profile",
        get: |c| (c.ram_pages / 256).to_string(),
        set: |c, v| {
            c.ram_pages = v.int() * 256;
            Ok(())
        },
    },
    Setting {
        key: "reserved_mib",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 1 << 40 },
        unit: "MiB",
        help: "memory the kernel holds that is not simulated page by page (text, slab, carve-outs)",
        source: "the device profile",
        get: |c| (c.reserved_pages / 256).to_string(),
        set: |c, v| {
            c.reserved_pages = v.int() * 256;
            Ok(())
        },
    },
    Setting {
        key: "memcg_limit_mib",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_MODEL_MIB },
        unit: "MiB",
        help: "memory-cgroup limit when scope = memcg",
        source: "the replayed trace",
        get: |c| (c.memcg_limit_pages / 256).to_string(),
        set: |c, v| {
            c.memcg_limit_pages = v.int() * 256;
            Ok(())
        },
    },
    Setting {
        key: "swappiness",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 200 },
        unit: "",
        help: "vm.swappiness: anon vs file reclaim balance",
        source: "Linux default 60; Android devices commonly 100",
        get: |c| c.swappiness.to_string(),
        set: |c, v| {
            c.swappiness = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "balance_anon_file_reclaim",
        aliases: &[],
        kind: Kind::Bool,
        unit: "",
        help: "CONFIG_BALANCE_ANON_FILE_RECLAIM: reclaim never scans file pages only because the inactive file list is large (no cache-trim mode), so anon is swapped alongside",
        source: "Linux default off; Qualcomm msm kernels (e.g. the Pixel 3's crosshatch_defconfig) enable it",
        get: |c| c.balance_anon_file_reclaim.to_string(),
        set: |c, v| {
            c.balance_anon_file_reclaim = v.bool();
            Ok(())
        },
    },
    Setting {
        key: "min_free_kbytes",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_MODEL_MIB * 1024 },
        unit: "KiB",
        help: "vm.min_free_kbytes; 0 = computed as the kernel does",
        source: "Linux mm/page_alloc.c (int_sqrt(lowmem_kb * 16), clamped)",
        get: |c| c.min_free_kbytes.to_string(),
        set: |c, v| {
            c.min_free_kbytes = v.int();
            Ok(())
        },
    },
    Setting {
        key: "watermark_scale_factor",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 3000 },
        unit: "1/10000",
        help: "vm.watermark_scale_factor: gap between watermarks",
        source: "Linux default 10",
        get: |c| c.watermark_scale_factor.to_string(),
        set: |c, v| {
            c.watermark_scale_factor = v.int();
            Ok(())
        },
    },
    Setting {
        key: "extra_free_kbytes",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "KiB",
        help: "Android's vm.extra_free_kbytes, added to the low and high watermarks",
        source: "AOSP, 0 unless set",
        get: |c| c.extra_free_kbytes.to_string(),
        set: |c, v| {
            c.extra_free_kbytes = v.int();
            Ok(())
        },
    },
    Setting {
        key: "swap",
        aliases: &[],
        kind: Kind::Choice(SwapKind::NAMES_LIST),
        unit: "",
        help: "swap device",
        source: "the device profile",
        get: |c| c.swap.name().into(),
        set: |c, v| {
            c.swap = SwapKind::parse(v.text()).ok_or_else(|| not_one_of(SwapKind::NAMES_LIST, v.text()))?;
            Ok(())
        },
    },
    Setting {
        key: "swap_mib",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_MODEL_MIB },
        unit: "MiB",
        help: "swap device size",
        source: "the device profile",
        get: |c| (c.swap_pages / 256).to_string(),
        set: |c, v| {
            c.swap_pages = v.int() * 256;
            Ok(())
        },
    },
    Setting {
        key: "zram.ratio",
        aliases: &[],
        kind: Kind::Float { min: 1.0, max: 64.0 },
        unit: "",
        help: "mean lz4 compression ratio of pages that are not same-filled",
        source: "estimate: heap pages ≈ 2.5–3:1",
        get: |c| c.zram.ratio.to_string(),
        set: |c, v| {
            c.zram.ratio = v.float();
            Ok(())
        },
    },
    Setting {
        key: "zram.sigma",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 3.0 },
        unit: "",
        help: "spread (σ of log size) of per-page compressed sizes",
        source: "estimate",
        get: |c| c.zram.sigma.to_string(),
        set: |c, v| {
            c.zram.sigma = v.float();
            Ok(())
        },
    },
    Setting {
        key: "zram.same_page_fraction",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of swapped anon pages that are same-filled (stored without data)",
        source: "estimate",
        get: |c| c.zram.same_page_fraction.to_string(),
        set: |c, v| {
            c.zram.same_page_fraction = v.float();
            Ok(())
        },
    },
    Setting {
        key: "zram.pool_overhead",
        aliases: &[],
        kind: Kind::Float { min: 1.0, max: 2.0 },
        unit: "",
        help: "zsmalloc pool pages per page of compressed bytes",
        source: "measured on this project's host: 1.035–1.084 (docs/validation.md)",
        get: |c| c.zram.pool_overhead.to_string(),
        set: |c, v| {
            c.zram.pool_overhead = v.float();
            Ok(())
        },
    },
    Setting {
        key: "page_cluster",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u32::MAX as u64 },
        unit: "log2 pages",
        help: "vm.page-cluster: swap readahead of 2^n pages",
        source: "Android sets 0",
        get: |c| c.page_cluster.to_string(),
        set: |c, v| {
            c.page_cluster = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "read_ahead_kb",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "KiB",
        help: "block-device read_ahead_kb for file faults",
        source: "Linux default 128",
        get: |c| c.read_ahead_kb.to_string(),
        set: |c, v| {
            c.read_ahead_kb = v.int();
            Ok(())
        },
    },
    Setting {
        key: "fault_around_bytes",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "bytes",
        help: "cached file pages mapped around a read fault",
        source: "Linux default 65536",
        get: |c| c.fault_around_bytes.to_string(),
        set: |c, v| {
            c.fault_around_bytes = v.int();
            Ok(())
        },
    },
    Setting {
        key: "fault_around_young",
        aliases: &[],
        kind: Kind::Bool,
        unit: "",
        help: "whether fault-around maps pages young",
        source: "arm64 asks for old prefaulted PTEs (arch_wants_old_prefaulted_pte); x86 maps them young",
        get: |c| c.fault_around_young.to_string(),
        set: |c, v| {
            c.fault_around_young = v.bool();
            Ok(())
        },
    },
    Setting {
        key: "cores",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 256 },
        unit: "",
        help: "CPU cores the tasks and kernel threads compete for",
        source: "the device profile",
        get: |c| c.cores.to_string(),
        set: |c, v| {
            c.cores = v.int() as usize;
            Ok(())
        },
    },
    Setting {
        key: "lmkd",
        aliases: &[],
        kind: Kind::Component(&crate::lmkd::KILLERS),
        unit: "",
        help: "the user-space low-memory killer's kill policy",
        source: "AOSP lmkd: PSI monitors since Android 10 (minfree levels on devices that set ro.lmk.use_minfree_levels), PSI rules since Android 11; the device profile",
        get: |c| c.lmkd.clone(),
        set: |c, v| {
            c.lmkd = component(&crate::lmkd::KILLERS, v.text())?;
            Ok(())
        },
    },
    Setting {
        key: "eviction",
        aliases: &[],
        kind: Kind::Component(&crate::policies::EVICTION),
        unit: "",
        help: "eviction policy on vmscan's page decisions: stock, or fae (Acclaim's foreground-aware eviction: referenced pages of background apps are reclaimed instead of kept, their executable file pages not rotated)",
        source: "Acclaim (ATC '20), section 4",
        get: |c| c.eviction.clone(),
        set: |c, v| {
            c.eviction = component(&crate::policies::EVICTION, v.text())?;
            Ok(())
        },
    },
    Setting {
        key: "fae_exempt",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "apps (comma-separated names) foreground-aware eviction leaves to the stock rules, e.g. a music player",
        source: "Acclaim (ATC '20): an exemption list for apps that work in the background",
        get: |c| c.fae_exempt.join(","),
        set: |c, v| {
            let names: Vec<String> = v.text().split(',').map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
            c.fae_exempt = names;
            Ok(())
        },
    },
    Setting {
        key: "fae_fg_chances",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 16 },
        unit: "scans",
        help: "extra chances a foreground app's page gets before foreground-aware eviction reclaims it (0: none)",
        source: "Acclaim's older code: 3 extra chances for foreground pages",
        get: |c| c.fae_fg_chances.to_string(),
        set: |c, v| {
            c.fae_fg_chances = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "kswapd_sizing",
        aliases: &[],
        kind: Kind::Component(&crate::policies::KSWAPD_SIZING),
        unit: "",
        help: "how much kswapd reclaims: stock (up to the high watermark), lwp (Acclaim's lightweight prediction: stop level and reclaim size from the predicted allocation demand) or lwp-code (its released code: the reclaim target scaled by the demand trend)",
        source: "Acclaim (ATC '20), section 5",
        get: |c| c.kswapd_sizing.clone(),
        set: |c, v| {
            c.kswapd_sizing = component(&crate::policies::KSWAPD_SIZING, v.text())?;
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.governor",
        aliases: &[],
        kind: Kind::Component(&crate::cpufreq::GOVERNORS),
        unit: "",
        help: "cpufreq governor of every cluster: performance (top frequency; no change to timing), powersave, ondemand, interactive (Android's up to kernel 4.9), schedutil, gc-aware (ondemand with a frequency cap on GC threads)",
        source: "Linux drivers/cpufreq, Android common kernel cpufreq_interactive.c; performance keeps results as without frequency scaling",
        get: |c| c.cpufreq.governor.clone(),
        set: |c, v| {
            c.cpufreq.governor = component(&crate::cpufreq::GOVERNORS, v.text())?;
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.sampling_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 10_000 },
        unit: "ms",
        help: "period at which the governor samples the load and picks each cluster's frequency",
        source: "estimate: an ondemand-like governor sampling load every 50 ms (interactive's timer_rate defaults to 20 ms)",
        get: |c| c.cpufreq.sampling_ms.to_string(),
        set: |c, v| {
            c.cpufreq.sampling_ms = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.up_threshold",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 100 },
        unit: "%",
        help: "ondemand: load above which the cluster goes to its top frequency",
        source: "Linux cpufreq_ondemand.c DEF_FREQUENCY_UP_THRESHOLD 80",
        get: |c| c.cpufreq.up_threshold.to_string(),
        set: |c, v| {
            c.cpufreq.up_threshold = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.target_load",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 100 },
        unit: "%",
        help: "interactive: load the governor aims for at the chosen frequency",
        source: "Android cpufreq_interactive.c DEFAULT_TARGET_LOAD 90",
        get: |c| c.cpufreq.target_load.to_string(),
        set: |c, v| {
            c.cpufreq.target_load = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.go_hispeed_load",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 100 },
        unit: "%",
        help: "interactive: load at which the cluster jumps to hispeed_freq (the top)",
        source: "Android cpufreq_interactive.c DEFAULT_GO_HISPEED_LOAD 99",
        get: |c| c.cpufreq.go_hispeed_load.to_string(),
        set: |c, v| {
            c.cpufreq.go_hispeed_load = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.min_sample_ms",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 10_000 },
        unit: "ms",
        help: "interactive: time a frequency is held before the governor may lower it",
        source: "Android cpufreq_interactive.c DEFAULT_MIN_SAMPLE_TIME 80 ms",
        get: |c| c.cpufreq.min_sample_ms.to_string(),
        set: |c, v| {
            c.cpufreq.min_sample_ms = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.gc_cap_mhz",
        aliases: &[],
        kind: Kind::Int { min: 0, max: 10_000 },
        unit: "MHz",
        help: "gc-aware: frequency cap while a GC thread runs, an operating point of the device (0: the point closest to half of each cluster's top frequency)",
        source: "estimate (the thesis's GC-aware governor caps the GC core's frequency; its cap is not used here)",
        get: |c| c.cpufreq.gc_cap_mhz.to_string(),
        set: |c, v| {
            c.cpufreq.gc_cap_mhz = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.membound_app",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of app threads' work that waits on memory and does not scale with the frequency",
        source: "estimate",
        get: |c| c.cpufreq.membound_app.to_string(),
        set: |c, v| {
            c.cpufreq.membound_app = v.float();
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.membound_gc",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of GC threads' work (tracing, copying) that waits on memory and does not scale with the frequency",
        source: "estimate: tracing is memory-bound (high cycles per instruction; Hussein's thesis), the share is not measured here",
        get: |c| c.cpufreq.membound_gc.to_string(),
        set: |c, v| {
            c.cpufreq.membound_gc = v.float();
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.membound_kswapd",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of kswapd's work that waits on memory and does not scale with the frequency",
        source: "estimate",
        get: |c| c.cpufreq.membound_kswapd.to_string(),
        set: |c, v| {
            c.cpufreq.membound_kswapd = v.float();
            Ok(())
        },
    },
    Setting {
        key: "cpufreq.membound_system",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1.0 },
        unit: "",
        help: "share of system processes' work that waits on memory and does not scale with the frequency",
        source: "estimate",
        get: |c| c.cpufreq.membound_system.to_string(),
        set: |c, v| {
            c.cpufreq.membound_system = v.float();
            Ok(())
        },
    },
    Setting {
        key: "lwp_p1",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1000.0 },
        unit: "",
        help: "LWP: reclaim size = P1 x predicted demand when the demand trend is at least T1 (must be > 0)",
        source: "Acclaim (ATC '20): P1 = 4",
        get: |c| c.lwp.p1.to_string(),
        set: |c, v| {
            c.lwp.p1 = positive(v.float())?;
            Ok(())
        },
    },
    Setting {
        key: "lwp_p2",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1000.0 },
        unit: "",
        help: "LWP: reclaim size = P2 x predicted demand when the trend is below T1 (must be > 0)",
        source: "Acclaim (ATC '20): P2 = 2",
        get: |c| c.lwp.p2.to_string(),
        set: |c, v| {
            c.lwp.p2 = positive(v.float())?;
            Ok(())
        },
    },
    Setting {
        key: "lwp_t1",
        aliases: &[],
        kind: Kind::Float { min: 0.0, max: 1000.0 },
        unit: "",
        help: "LWP: trend (this window's demand / the last window's) from which the larger reclaim size P1 applies (must be > 0)",
        source: "Acclaim (ATC '20): T1 = 2",
        get: |c| c.lwp.t1.to_string(),
        set: |c, v| {
            c.lwp.t1 = positive(v.float())?;
            Ok(())
        },
    },
    Setting {
        key: "lwp_slot_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 10_000 },
        unit: "ms",
        help: "LWP: sampling slot of the allocation window",
        source: "Acclaim (ATC '20): 10 ms",
        get: |c| (c.lwp.slot_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.lwp.slot_ns = v.int() * 1_000_000;
            Ok(())
        },
    },
    Setting {
        key: "lwp_window_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 100_000 },
        unit: "ms",
        help: "LWP: length of the sliding window (a whole number of slots)",
        source: "Acclaim (ATC '20): 100 ms",
        get: |c| (c.lwp.window_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.lwp.window_ns = v.int() * 1_000_000;
            Ok(())
        },
    },
    Setting {
        key: "sample_interval_ms",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "ms",
        help: "time between two time-series samples; 0 = none",
        source: "",
        get: |c| (c.sample_interval_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.sample_interval_ns = v.int().saturating_mul(1_000_000);
            Ok(())
        },
    },
    Setting {
        key: "reap_delay_ms",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "ms",
        help: "delay between an lmkd kill and the release of the victim's memory",
        source: "estimate: tens of ms for a large app",
        get: |c| (c.reap_delay_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.reap_delay_ns = v.int().saturating_mul(1_000_000);
            Ok(())
        },
    },
    Setting {
        key: "lmkd.thrashing_limit",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u32::MAX as u64 },
        unit: "%",
        help: "lmkd thrashing limit (ro.lmk.thrashing_limit)",
        source: "AOSP default 100",
        get: |c| c.lmkd_thrashing_limit.to_string(),
        set: |c, v| {
            c.lmkd_thrashing_limit = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "lmkd.swap_free_low_pct",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u32::MAX as u64 },
        unit: "%",
        help: "free swap below this share counts as swap low (ro.lmk.swap_free_low_percentage)",
        source: "AOSP default 10",
        get: |c| c.lmkd_swap_free_low_pct.to_string(),
        set: |c, v| {
            c.lmkd_swap_free_low_pct = v.int() as u32;
            Ok(())
        },
    },
    Setting {
        key: "lmkd.psi_some_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 1000 },
        unit: "ms",
        help: "PSI trigger: partial memory stall per 1 s window that wakes lmkd (ro.lmk.psi_partial_stall_ms)",
        source: "AOSP lmkd default 70 (Android 10: the low-level monitor, some 70 ms)",
        get: |c| c.lmkd_psi_some_ms.to_string(),
        set: |c, v| {
            c.lmkd_psi_some_ms = v.int();
            Ok(())
        },
    },
    Setting {
        key: "lmkd.psi_full_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 1000 },
        unit: "ms",
        help: "PSI trigger: complete memory stall per 1 s window counted as critical (ro.lmk.psi_complete_stall_ms)",
        source: "AOSP lmkd default 700 (Android 11+)",
        get: |c| c.lmkd_psi_full_ms.to_string(),
        set: |c, v| {
            c.lmkd_psi_full_ms = v.int();
            Ok(())
        },
    },
    Setting {
        key: "seed",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "",
        help: "seed of the run's random streams",
        source: "",
        get: |c| c.seed.to_string(),
        set: |c, v| {
            c.seed = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.touch_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "a mutator access to a resident, mapped page",
        source: "estimate: one cache-missing load",
        get: |c| c.costs.touch_ns.to_string(),
        set: |c, v| {
            c.costs.touch_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.minor_fault_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "an anonymous zero-fill fault, including page clearing",
        source: "estimate: ~1 µs on a phone big core",
        get: |c| c.costs.minor_fault_ns.to_string(),
        set: |c, v| {
            c.costs.minor_fault_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.file_minor_fault_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "a minor fault mapping an already cached file page",
        source: "estimate",
        get: |c| c.costs.file_minor_fault_ns.to_string(),
        set: |c, v| {
            c.costs.file_minor_fault_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.major_fault_overhead_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "fault-path overhead of a major fault, excluding the device",
        source: "estimate",
        get: |c| c.costs.major_fault_overhead_ns.to_string(),
        set: |c, v| {
            c.costs.major_fault_overhead_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.zram_decompress_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "lz4 decompression of one page",
        source: "estimate: typically 2–5 µs on a big core",
        get: |c| c.costs.zram_decompress_ns.to_string(),
        set: |c, v| {
            c.costs.zram_decompress_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.zram_compress_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "lz4 compression of one page",
        source: "estimate: typically 2–3× decompression",
        get: |c| c.costs.zram_compress_ns.to_string(),
        set: |c, v| {
            c.costs.zram_compress_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.flash_read_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "random 4 KiB flash read latency",
        source: "estimate: typical UFS random 4 KiB read 60–100 µs",
        get: |c| c.costs.flash_read_ns.to_string(),
        set: |c, v| {
            c.costs.flash_read_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.flash_read_bw",
        aliases: &[],
        kind: Kind::Int { min: 1 << 20, max: 1 << 40 }, // 1 MiB/s (slower than any phone storage) to 1 TiB/s
        unit: "B/s",
        help: "sequential flash read bandwidth (bytes/s), for readahead",
        source: "estimate: UFS 2.1 ≈ 800 MB/s",
        get: |c| c.costs.flash_read_bw.to_string(),
        set: |c, v| {
            c.costs.flash_read_bw = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.flash_write_bw",
        aliases: &[],
        kind: Kind::Int { min: 1 << 20, max: 1 << 40 }, // 1 MiB/s (slower than any phone storage) to 1 TiB/s
        unit: "B/s",
        help: "flash write bandwidth (bytes/s): swap-out, writeback",
        source: "estimate: UFS 2.1 ≈ 200 MB/s",
        get: |c| c.costs.flash_write_bw.to_string(),
        set: |c, v| {
            c.costs.flash_write_bw = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.scan_page_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "scanning one page in shrink_*_list",
        source: "estimate",
        get: |c| c.costs.scan_page_ns.to_string(),
        set: |c, v| {
            c.costs.scan_page_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.reclaim_page_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "reclaiming (unmapping, freeing) one page",
        source: "estimate",
        get: |c| c.costs.reclaim_page_ns.to_string(),
        set: |c, v| {
            c.costs.reclaim_page_ns = v.int();
            Ok(())
        },
    },
    Setting {
        key: "cost.cow_copy_ns",
        aliases: &[],
        kind: Kind::Int { min: 0, max: MAX_COST_NS },
        unit: "ns",
        help: "copying one page at a copy-on-write break",
        source: "estimate: a cache-cold 4 KiB copy at ~8–10 GB/s",
        get: |c| c.costs.cow_copy_ns.to_string(),
        set: |c, v| {
            c.costs.cow_copy_ns = v.int();
            Ok(())
        },
    },
];

impl KernelConfig {
    /// The keys `set` accepts (without the `kernel.` prefix), in table order.
    pub fn keys() -> Vec<&'static str> {
        SETTINGS.keys()
    }

    /// Apply one `key=value` setting. `key` may carry the `kernel.` prefix.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingError> {
        SETTINGS.set(self, key, value)
    }
}
