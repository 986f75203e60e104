//! The `kernel.*` settings: every tunable of [`KernelConfig`] with its type, unit, range, help
//! and the source of its default. A setting that names a component (eviction policy, kswapd
//! sizing, kill policy, governor) takes its names from that component's registry, so the table
//! and the registry cannot disagree.

use crate::config::*;
use mobmem_engine::component::Registry;
use mobmem_engine::setting;
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
    setting!(
        int "ram_mib" => ram_pages * 256, [1, MAX_MODEL_MIB],
        "MiB",
        "physical memory",
        "the device profile"
    ),
    setting!(
        int "reserved_mib" => reserved_pages * 256, [0, 1 << 40],
        "MiB",
        "memory the kernel holds that is not simulated page by page (text, slab, carve-outs)",
        "the device profile"
    ),
    setting!(
        int "memcg_limit_mib" => memcg_limit_pages * 256, [0, MAX_MODEL_MIB],
        "MiB",
        "memory-cgroup limit when scope = memcg",
        "the replayed trace"
    ),
    setting!(
        int "swappiness" => swappiness, [0, 200],
        "",
        "vm.swappiness: anon vs file reclaim balance",
        "Linux default 60; Android devices commonly 100"
    ),
    setting!(
        bool "balance_anon_file_reclaim" => balance_anon_file_reclaim,
        "",
        "CONFIG_BALANCE_ANON_FILE_RECLAIM: reclaim never scans file pages only because the inactive file list is large (no cache-trim mode), so anon is swapped alongside",
        "Linux default off; Qualcomm msm kernels (e.g. the Pixel 3's crosshatch_defconfig) enable it"
    ),
    setting!(
        bool "buddy" => buddy,
        "",
        "model physical memory as the buddy allocator: free blocks by order and migrate type over 2 MiB pageblocks, fallback stealing, direct compaction, order-2 kernel stacks and unmovable graphics buffers; a high-order allocation that compaction cannot serve invokes the OOM killer (Linux 4.9's rules). Off: single frames only",
        "Linux mm/page_alloc.c and mm/compaction.c (4.9)"
    ),
    setting!(
        int "min_free_kbytes" => min_free_kbytes, [0, MAX_MODEL_MIB * 1024],
        "KiB",
        "vm.min_free_kbytes; 0 = computed as the kernel does",
        "Linux mm/page_alloc.c (int_sqrt(lowmem_kb * 16), clamped)"
    ),
    setting!(
        int "watermark_scale_factor" => watermark_scale_factor, [1, 3000],
        "1/10000",
        "vm.watermark_scale_factor: gap between watermarks",
        "Linux default 10"
    ),
    setting!(
        int "extra_free_kbytes" => extra_free_kbytes, [0, u64::MAX],
        "KiB",
        "Android's vm.extra_free_kbytes, added to the low and high watermarks",
        "AOSP, 0 unless set"
    ),
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
    setting!(
        int "swap_mib" => swap_pages * 256, [0, MAX_MODEL_MIB],
        "MiB",
        "swap device size",
        "the device profile"
    ),
    setting!(
        float "zram.ratio" => zram.ratio, [1.0, 64.0],
        "",
        "mean lz4 compression ratio of pages that are not same-filled",
        "estimate: heap pages ≈ 2.5–3:1"
    ),
    setting!(
        float "zram.sigma" => zram.sigma, [0.0, 3.0],
        "",
        "spread (σ of log size) of per-page compressed sizes",
        "estimate"
    ),
    setting!(
        float "zram.same_page_fraction" => zram.same_page_fraction, [0.0, 1.0],
        "",
        "share of swapped anon pages that are same-filled (stored without data)",
        "estimate"
    ),
    setting!(
        float "zram.pool_overhead" => zram.pool_overhead, [1.0, 2.0],
        "",
        "zsmalloc pool pages per page of compressed bytes",
        "measured on this project's host: 1.035–1.084 (docs/validation.md)"
    ),
    setting!(
        int "page_cluster" => page_cluster, [0, u32::MAX as u64],
        "log2 pages",
        "vm.page-cluster: swap readahead of 2^n pages",
        "Android sets 0"
    ),
    setting!(
        int "read_ahead_kb" => read_ahead_kb, [0, u64::MAX],
        "KiB",
        "block-device read_ahead_kb for file faults",
        "Linux default 128"
    ),
    setting!(
        int "fault_around_bytes" => fault_around_bytes, [0, u64::MAX],
        "bytes",
        "cached file pages mapped around a read fault",
        "Linux default 65536"
    ),
    setting!(
        bool "fault_around_young" => fault_around_young,
        "",
        "whether fault-around maps pages young",
        "arm64 asks for old prefaulted PTEs (arch_wants_old_prefaulted_pte); x86 maps them young"
    ),
    setting!(
        int "cores" => cores, [1, 256],
        "",
        "CPU cores the tasks and kernel threads compete for",
        "the device profile"
    ),
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
    setting!(
        int "fae_fg_chances" => fae_fg_chances, [0, 16],
        "scans",
        "extra chances a foreground app's page gets before foreground-aware eviction reclaims it (0: none)",
        "Acclaim's older code: 3 extra chances for foreground pages"
    ),
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
    setting!(
        int "cpufreq.sampling_ms" => cpufreq.sampling_ms, [1, 10_000],
        "ms",
        "period at which the governor samples the load and picks each cluster's frequency",
        "estimate: an ondemand-like governor sampling load every 50 ms (interactive's timer_rate defaults to 20 ms)"
    ),
    setting!(
        int "cpufreq.up_threshold" => cpufreq.up_threshold, [1, 100],
        "%",
        "ondemand: load above which the cluster goes to its top frequency",
        "Linux cpufreq_ondemand.c DEF_FREQUENCY_UP_THRESHOLD 80"
    ),
    setting!(
        int "cpufreq.target_load" => cpufreq.target_load, [1, 100],
        "%",
        "interactive: load the governor aims for at the chosen frequency",
        "Android cpufreq_interactive.c DEFAULT_TARGET_LOAD 90"
    ),
    setting!(
        int "cpufreq.go_hispeed_load" => cpufreq.go_hispeed_load, [1, 100],
        "%",
        "interactive: load at which the cluster jumps to hispeed_freq (the top)",
        "Android cpufreq_interactive.c DEFAULT_GO_HISPEED_LOAD 99"
    ),
    setting!(
        int "cpufreq.min_sample_ms" => cpufreq.min_sample_ms, [0, 10_000],
        "ms",
        "interactive: time a frequency is held before the governor may lower it",
        "Android cpufreq_interactive.c DEFAULT_MIN_SAMPLE_TIME 80 ms"
    ),
    setting!(
        int "cpufreq.gc_cap_mhz" => cpufreq.gc_cap_mhz, [0, 10_000],
        "MHz",
        "gc-aware: frequency cap while a GC thread runs, an operating point of the device (0: the point closest to half of each cluster's top frequency)",
        "estimate (the thesis's GC-aware governor caps the GC core's frequency; its cap is not used here)"
    ),
    setting!(
        float "cpufreq.membound_app" => cpufreq.membound_app, [0.0, 1.0],
        "",
        "share of app threads' work that waits on memory and does not scale with the frequency",
        "estimate"
    ),
    setting!(
        float "cpufreq.membound_gc" => cpufreq.membound_gc, [0.0, 1.0],
        "",
        "share of GC threads' work (tracing, copying) that waits on memory and does not scale with the frequency",
        "estimate: tracing is memory-bound (high cycles per instruction; Hussein's thesis), the share is not measured here"
    ),
    setting!(
        float "cpufreq.membound_kswapd" => cpufreq.membound_kswapd, [0.0, 1.0],
        "",
        "share of kswapd's work that waits on memory and does not scale with the frequency",
        "estimate"
    ),
    setting!(
        float "cpufreq.membound_system" => cpufreq.membound_system, [0.0, 1.0],
        "",
        "share of system processes' work that waits on memory and does not scale with the frequency",
        "estimate"
    ),
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
    setting!(
        int "lwp_slot_ms" => lwp.slot_ns * 1_000_000, [1, 10_000],
        "ms",
        "LWP: sampling slot of the allocation window",
        "Acclaim (ATC '20): 10 ms"
    ),
    setting!(
        int "lwp_window_ms" => lwp.window_ns * 1_000_000, [1, 100_000],
        "ms",
        "LWP: length of the sliding window (a whole number of slots)",
        "Acclaim (ATC '20): 100 ms"
    ),
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
    setting!(
        int "lmkd.thrashing_limit" => lmkd_thrashing_limit, [0, u32::MAX as u64],
        "%",
        "lmkd thrashing limit (ro.lmk.thrashing_limit)",
        "AOSP default 100"
    ),
    setting!(
        int "lmkd.swap_free_low_pct" => lmkd_swap_free_low_pct, [0, u32::MAX as u64],
        "%",
        "free swap below this share counts as swap low (ro.lmk.swap_free_low_percentage)",
        "AOSP default 10"
    ),
    setting!(
        int "lmkd.psi_some_ms" => lmkd_psi_some_ms, [1, 1000],
        "ms",
        "PSI trigger: partial memory stall per 1 s window that wakes lmkd (ro.lmk.psi_partial_stall_ms)",
        "AOSP lmkd default 70 (Android 10: the low-level monitor, some 70 ms)"
    ),
    setting!(
        int "lmkd.psi_full_ms" => lmkd_psi_full_ms, [1, 1000],
        "ms",
        "PSI trigger: complete memory stall per 1 s window counted as critical (ro.lmk.psi_complete_stall_ms)",
        "AOSP lmkd default 700 (Android 11+)"
    ),
    setting!(
        int "seed" => seed, [0, u64::MAX],
        "",
        "seed of the run's random streams",
        ""
    ),
    setting!(
        int "cost.touch_ns" => costs.touch_ns, [0, MAX_COST_NS],
        "ns",
        "a mutator access to a resident, mapped page",
        "estimate: one cache-missing load"
    ),
    setting!(
        int "cost.minor_fault_ns" => costs.minor_fault_ns, [0, MAX_COST_NS],
        "ns",
        "an anonymous zero-fill fault, including page clearing",
        "estimate: ~1 µs on a phone big core"
    ),
    setting!(
        int "cost.file_minor_fault_ns" => costs.file_minor_fault_ns, [0, MAX_COST_NS],
        "ns",
        "a minor fault mapping an already cached file page",
        "estimate"
    ),
    setting!(
        int "cost.major_fault_overhead_ns" => costs.major_fault_overhead_ns, [0, MAX_COST_NS],
        "ns",
        "fault-path overhead of a major fault, excluding the device",
        "estimate"
    ),
    setting!(
        int "cost.zram_decompress_ns" => costs.zram_decompress_ns, [0, MAX_COST_NS],
        "ns",
        "lz4 decompression of one page",
        "estimate: typically 2–5 µs on a big core"
    ),
    setting!(
        int "cost.zram_compress_ns" => costs.zram_compress_ns, [0, MAX_COST_NS],
        "ns",
        "lz4 compression of one page",
        "estimate: typically 2–3× decompression"
    ),
    setting!(
        int "cost.flash_read_ns" => costs.flash_read_ns, [0, MAX_COST_NS],
        "ns",
        "random 4 KiB flash read latency",
        "estimate: typical UFS random 4 KiB read 60–100 µs"
    ),
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
    setting!(
        int "cost.scan_page_ns" => costs.scan_page_ns, [0, MAX_COST_NS],
        "ns",
        "scanning one page in shrink_*_list",
        "estimate"
    ),
    setting!(
        int "cost.reclaim_page_ns" => costs.reclaim_page_ns, [0, MAX_COST_NS],
        "ns",
        "reclaiming (unmapping, freeing) one page",
        "estimate"
    ),
    setting!(
        int "cost.cow_copy_ns" => costs.cow_copy_ns, [0, MAX_COST_NS],
        "ns",
        "copying one page at a copy-on-write break",
        "estimate: a cache-cold 4 KiB copy at ~8–10 GB/s"
    ),
    setting!(
        int "cost.compact_scan_ns" => costs.compact_scan_ns, [0, MAX_COST_NS],
        "ns",
        "compaction's migrate scanner looking at one frame (the free scanner: a quarter of it)",
        "estimate: a struct page read and a few tests"
    ),
    setting!(
        int "cost.compact_migrate_ns" => costs.compact_migrate_ns, [0, MAX_COST_NS],
        "ns",
        "migrating one page in compaction (isolate, unmap, copy, remap)",
        "estimate: a few µs on a phone big core"
    ),
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
