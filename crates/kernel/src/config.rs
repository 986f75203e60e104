//! Kernel configuration: every tunable the model reads, with its default and where the default
//! comes from. Settings are addressed as `kernel.<name>` (e.g. `--set kernel.swappiness=100`).
//!
//! Values marked "estimate" are not measured; they are reasoned guesses that a calibration can
//! replace. Everything else cites its source.

use serde::Serialize;

/// Kernel-version differences that change model behaviour, named after the kernel release that
/// introduced them. Chosen with `kernel.semantics = "4.19" | "5.10" | "6.1"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum KernelSemantics {
    /// Before 5.9: new anon pages start on active_anon; refault activation for file pages only,
    /// against active_file; scan balance from recent scanned/rotated ratios.
    V4_19,
    /// 5.9+: new anon pages start on inactive_anon; anon and file refaults both activate against
    /// the "workingset" size; scan balance from reclaim cost (`lru_note_cost`).
    V5_10,
    /// Like 5.10 for everything modelled here (MGLRU is off on Android 14 GKI by default).
    V6_1,
    /// 6.5+: reclaim cost weighs I/O by SWAP_CLUSTER_MAX and counts rotations on the inactive
    /// list too ('mm: vmscan: make rotations a secondary factor in balancing anon vs file').
    V6_6,
}

impl KernelSemantics {
    /// The canonical names (other kernel versions are accepted as the nearest one).
    pub const NAMES: &'static [&'static str] = &["4.19", "5.10", "6.1", "6.6"];
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim_matches('"') {
            "4.9" | "4.14" | "4.19" | "5.4" => Some(Self::V4_19),
            "5.10" | "5.15" => Some(Self::V5_10),
            "6.1" => Some(Self::V6_1),
            "6.6" | "6.12" | "6.18" | "6.x" => Some(Self::V6_6),
            _ => None,
        }
    }
    /// Commit 'mm: workingset: age nonresident information alongside anonymous pages' and
    /// 'mm: vmscan: ... lru_note_cost' landed in 5.9.
    pub fn is_59_plus(self) -> bool {
        !matches!(self, Self::V4_19)
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::V4_19 => "4.19",
            Self::V5_10 => "5.10",
            Self::V6_1 => "6.1",
            Self::V6_6 => "6.6",
        }
    }
}

/// How the LRU is aged and which page is evicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum LruMode {
    /// The kernel's two-list (active/inactive) LRU with reference bits and refault activation.
    Classic,
    /// One list, strict least-recently-touched eviction, no second chance, no refault
    /// activation, reclaim exactly on demand (no watermarks, no kswapd). For exact comparison
    /// with an independent cache simulator.
    Pure,
}

impl LruMode {
    pub const NAMES: &'static [&'static str] = &["classic", "pure"];
}

/// Where reclaim is triggered from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ReclaimScope {
    /// A whole machine: watermarks, kswapd, direct reclaim (a phone).
    Global,
    /// A memory cgroup with a hard limit (`memory.max` / `memory.limit_in_bytes`): charges above
    /// the limit are reclaimed synchronously by the charging task (try_to_free_mem_cgroup_pages),
    /// there is no kswapd, and the zram pool is not charged. This is what the real-kernel replayer
    /// exercises on the host.
    MemcgLimit,
}

/// Swap device kinds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum SwapKind {
    None,
    Zram,
    File,
}

impl SwapKind {
    /// Each kind and its setting name (`swap = "zram"`).
    const NAMES: [(SwapKind, &'static str); 3] = [(SwapKind::None, "none"), (SwapKind::Zram, "zram"), (SwapKind::File, "file")];
    pub fn parse(s: &str) -> Option<Self> {
        Self::NAMES.iter().find(|(_, n)| *n == s).map(|(k, _)| *k)
    }
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(k, _)| *k == self).map(|(_, n)| *n).expect("every swap kind has a name")
    }
}

/// Per-unit costs in nanoseconds of simulated CPU or device time, on the reference (big) core.
#[derive(Clone, Debug, Serialize)]
pub struct CostModel {
    /// A mutator access to a resident, mapped page. estimate (one cache-missing load, ~20 ns).
    pub touch_ns: u64,
    /// Anonymous zero-fill or zero-page fault, including page clearing. estimate: ~1 µs on a
    /// phone big core (x86 hosts measure 0.25–0.5 µs for the fault path plus clear_page).
    pub minor_fault_ns: u64,
    /// Minor fault mapping an already cached file page. estimate.
    pub file_minor_fault_ns: u64,
    /// Fault-path overhead of a major fault, excluding the device (swapin_readahead, rmap). estimate.
    pub major_fault_overhead_ns: u64,
    /// zram decompression of one 4 KiB page (lz4), big core. source: kernel.md brief, 2–5 µs.
    pub zram_decompress_ns: u64,
    /// zram compression of one page. source: kernel.md brief, 2–3× decompression.
    pub zram_compress_ns: u64,
    /// Random 4 KiB read latency of the flash device (UFS 2.x). source: kernel.md brief, 60–100 µs UFS.
    pub flash_read_ns: u64,
    /// Sequential flash read bandwidth in bytes/s, for readahead beyond the first page.
    /// estimate: UFS 2.1 ≈ 800 MB/s sequential.
    pub flash_read_bw: u64,
    /// Flash write bandwidth in bytes/s (swap-out, writeback). estimate: UFS 2.1 ≈ 200 MB/s.
    pub flash_write_bw: u64,
    /// Scanning one page in shrink_*_list (isolation, page_referenced rmap walk). estimate.
    pub scan_page_ns: u64,
    /// Reclaiming (unmapping, freeing) one page in shrink_page_list. estimate.
    pub reclaim_page_ns: u64,
    /// Copying one 4 KiB page at a copy-on-write break (`copy_user_highpage` in `wp_page_copy`),
    /// on top of `minor_fault_ns` for the fault. estimate: a cache-cold 4 KiB copy at ~8–10 GB/s
    /// on a phone big core, ≈ 0.4–0.5 µs.
    pub cow_copy_ns: u64,
}

impl Default for CostModel {
    fn default() -> Self {
        Self {
            touch_ns: 20,
            minor_fault_ns: 1_000,
            file_minor_fault_ns: 500,
            major_fault_overhead_ns: 2_000,
            zram_decompress_ns: 3_000,
            zram_compress_ns: 7_500,
            flash_read_ns: 80_000,
            flash_read_bw: 800_000_000,
            flash_write_bw: 200_000_000,
            scan_page_ns: 150,
            reclaim_page_ns: 500,
            cow_copy_ns: 500,
        }
    }
}

/// Compressed-size model of pages swapped to zram.
#[derive(Clone, Debug, Serialize)]
pub struct ZramModel {
    /// Mean compression ratio (original / compressed) of pages that are not same-filled.
    /// source: kernel.md brief, heap pages ≈ 2.5–3:1 with lz4.
    pub ratio: f64,
    /// Spread (σ of log size) of the per-page compressed size. estimate.
    pub sigma: f64,
    /// Fraction of written anon pages that are same-filled (zram stores no data for them).
    /// estimate; traces that write known content set it to 0.
    pub same_page_fraction: f64,
    /// Size above which zsmalloc stores a page uncompressed (huge class). source: zsmalloc
    /// huge_class_size on 4 KiB pages ≈ 3264 bytes.
    pub huge_class_bytes: u32,
    /// zsmalloc pool pages per page of compressed bytes (partly filled zspages, metadata).
    /// source: measured on this project's host with lz4, mem_used_total / compr_data_size =
    /// 1.035–1.084 over the validation traces (docs/validation.md); 1.05 is their middle.
    pub pool_overhead: f64,
}

impl Default for ZramModel {
    fn default() -> Self {
        Self { ratio: 2.8, sigma: 0.35, same_page_fraction: 0.0, huge_class_bytes: 3264, pool_overhead: 1.05 }
    }
}

/// All kernel settings.
#[derive(Clone, Debug, Serialize)]
pub struct KernelConfig {
    pub semantics: KernelSemantics,
    pub lru: LruMode,
    pub scope: ReclaimScope,
    /// Physical memory in 4 KiB frames.
    pub ram_pages: u64,
    /// Frames the kernel itself holds (text, slab, page tables, GPU carve-outs) that the model
    /// does not simulate page by page. Devices set it; traces default to 0.
    pub reserved_pages: u64,
    /// Memory-cgroup limit in pages when `scope = MemcgLimit`.
    pub memcg_limit_pages: u64,
    /// vm.swappiness. source: Linux default 60; Android devices commonly 100.
    pub swappiness: u32,
    /// vm.min_free_kbytes; 0 = computed as the kernel does (int_sqrt(lowmem_kb * 16), clamped).
    pub min_free_kbytes: u64,
    /// vm.watermark_scale_factor in 1/10000 of memory. source: Linux default 10.
    pub watermark_scale_factor: u64,
    /// Android's vm.extra_free_kbytes (added to low and high). source: AOSP, 0 unless set.
    pub extra_free_kbytes: u64,
    pub swap: SwapKind,
    pub swap_pages: u64,
    pub zram: ZramModel,
    /// vm.page-cluster: swap readahead of 2^n pages. source: Android sets 0.
    pub page_cluster: u32,
    /// Block-device read_ahead_kb used for file faults (mmap read-around). source: Linux default 128.
    pub read_ahead_kb: u64,
    /// fault_around_bytes: cached file pages mapped around a read fault. source: Linux default 65536.
    pub fault_around_bytes: u64,
    /// Whether fault-around maps pages young. source: arm64 (phones) asks for old prefaulted PTEs
    /// (`arch_wants_old_prefaulted_pte`); x86 maps them young.
    pub fault_around_young: bool,
    pub costs: CostModel,
    /// Number of CPU cores the kernel threads and tasks compete for.
    pub cores: usize,
    /// lmkd mode: "psi", "minfree" or "off" (a registry key, see `lmkd`).
    pub lmkd: String,
    /// Time between two time-series samples. 0 = no time series.
    pub sample_interval_ns: u64,
    /// Delay between an lmkd kill and the release of the victim's memory (process reaping).
    /// estimate: tens of milliseconds for a large app.
    pub reap_delay_ns: u64,
    /// lmkd thrashing limit in percent (ro.lmk.thrashing_limit). source: AOSP default 100.
    pub lmkd_thrashing_limit: u32,
    /// Free swap below this percentage counts as "swap low". source: AOSP ro.lmk.swap_free_low_percentage = 10.
    pub lmkd_swap_free_low_pct: u32,
    /// PSI thresholds lmkd registers per 1 s window. source: AOSP lmkd defaults 70 ms / 700 ms.
    pub lmkd_psi_some_ms: u64,
    pub lmkd_psi_full_ms: u64,
    /// Legacy minfree table: (oom_score_adj, MiB). source: kernel.md / AOSP lowmemorykiller for
    /// a modern 64-bit phone.
    pub minfree: Vec<(i32, u64)>,
    /// Seed of the run.
    pub seed: u64,
}

impl Default for KernelConfig {
    fn default() -> Self {
        Self {
            semantics: KernelSemantics::V5_10,
            lru: LruMode::Classic,
            scope: ReclaimScope::Global,
            ram_pages: 4 << 18, // 4 GiB
            reserved_pages: 0,
            memcg_limit_pages: 0,
            swappiness: 60,
            min_free_kbytes: 0,
            watermark_scale_factor: 10,
            extra_free_kbytes: 0,
            swap: SwapKind::None,
            swap_pages: 0,
            zram: ZramModel::default(),
            page_cluster: 0,
            read_ahead_kb: 128,
            fault_around_bytes: 65536,
            fault_around_young: false,
            costs: CostModel::default(),
            cores: 8,
            lmkd: "psi".into(),
            sample_interval_ns: 100_000_000,
            reap_delay_ns: 20_000_000,
            lmkd_thrashing_limit: 100,
            lmkd_swap_free_low_pct: 10,
            lmkd_psi_some_ms: 70,
            lmkd_psi_full_ms: 700,
            minfree: vec![(0, 72), (100, 90), (200, 108), (250, 126), (900, 216), (950, 315)],
            seed: 1,
        }
    }
}

/// An error in a `key=value` setting.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("setting {key}: {msg}")]
pub struct SettingError {
    pub key: String,
    pub msg: String,
}

fn num<T: std::str::FromStr>(key: &str, v: &str) -> Result<T, SettingError> {
    v.trim().parse::<T>().map_err(|_| SettingError { key: key.into(), msg: format!("expected a non-negative number, got {v:?}") })
}

fn float(key: &str, v: &str, lo: f64, hi: f64) -> Result<f64, SettingError> {
    let x: f64 = v.trim().parse().map_err(|_| SettingError { key: key.into(), msg: format!("expected a number, got {v:?}") })?;
    if !(lo..=hi).contains(&x) || x.is_nan() {
        return Err(SettingError { key: key.into(), msg: format!("must be within [{lo}, {hi}], got {x}") });
    }
    Ok(x)
}

impl KernelConfig {
    /// The names `set` accepts (without the `kernel.` prefix), for help texts and errors.
    pub const KEYS: &'static [&'static str] = &[
        "semantics",
        "lru",
        "scope",
        "ram_mib",
        "reserved_mib",
        "memcg_limit_mib",
        "swappiness",
        "min_free_kbytes",
        "watermark_scale_factor",
        "extra_free_kbytes",
        "swap",
        "swap_mib",
        "zram.ratio",
        "zram.sigma",
        "zram.same_page_fraction",
        "zram.pool_overhead",
        "page_cluster",
        "read_ahead_kb",
        "fault_around_bytes",
        "fault_around_young",
        "cores",
        "lmkd",
        "sample_interval_ms",
        "reap_delay_ms",
        "lmkd.thrashing_limit",
        "lmkd.swap_free_low_pct",
        "seed",
        "cost.touch_ns",
        "cost.minor_fault_ns",
        "cost.file_minor_fault_ns",
        "cost.major_fault_overhead_ns",
        "cost.zram_decompress_ns",
        "cost.zram_compress_ns",
        "cost.flash_read_ns",
        "cost.flash_read_bw",
        "cost.flash_write_bw",
        "cost.scan_page_ns",
        "cost.reclaim_page_ns",
        "cost.cow_copy_ns",
    ];

    /// Apply one `key=value` setting. `key` may carry the `kernel.` prefix.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingError> {
        let k = key.strip_prefix("kernel.").unwrap_or(key);
        let bad = |msg: String| SettingError { key: key.into(), msg };
        match k {
            "semantics" => {
                self.semantics = KernelSemantics::parse(value)
                    .ok_or_else(|| bad(format!("unknown kernel semantics {value:?}; expected one of {}", KernelSemantics::NAMES.join(", "))))?
            }
            "lru" => {
                self.lru = match value {
                    "classic" | "2list" => LruMode::Classic,
                    "pure" => LruMode::Pure,
                    _ => return Err(bad(format!("expected one of {}, got {value:?}", LruMode::NAMES.join(", ")))),
                }
            }
            "scope" => {
                self.scope = match value {
                    "global" => ReclaimScope::Global,
                    "memcg" => ReclaimScope::MemcgLimit,
                    _ => return Err(bad(format!("expected global or memcg, got {value:?}"))),
                }
            }
            "ram_mib" => {
                let m: u64 = num(key, value)?;
                if m == 0 {
                    return Err(bad("must be positive".into()));
                }
                self.ram_pages = m * 256
            }
            "reserved_mib" => self.reserved_pages = num::<u64>(key, value)? * 256,
            "memcg_limit_mib" => self.memcg_limit_pages = num::<u64>(key, value)? * 256,
            "swappiness" => {
                let s: u32 = num(key, value)?;
                if s > 200 {
                    return Err(bad(format!("must be within [0, 200], got {s}")));
                }
                self.swappiness = s
            }
            "min_free_kbytes" => self.min_free_kbytes = num(key, value)?,
            "watermark_scale_factor" => {
                let w: u64 = num(key, value)?;
                if !(1..=3000).contains(&w) {
                    return Err(bad(format!("must be within [1, 3000], got {w}")));
                }
                self.watermark_scale_factor = w
            }
            "extra_free_kbytes" => self.extra_free_kbytes = num(key, value)?,
            "swap" => self.swap = SwapKind::parse(value).ok_or_else(|| bad(format!("expected none, zram or file, got {value:?}")))?,
            "swap_mib" => self.swap_pages = num::<u64>(key, value)? * 256,
            "zram.ratio" => self.zram.ratio = float(key, value, 1.0, 64.0)?,
            "zram.sigma" => self.zram.sigma = float(key, value, 0.0, 3.0)?,
            "zram.same_page_fraction" => self.zram.same_page_fraction = float(key, value, 0.0, 1.0)?,
            "zram.pool_overhead" => self.zram.pool_overhead = float(key, value, 1.0, 2.0)?,
            "page_cluster" => self.page_cluster = num(key, value)?,
            "read_ahead_kb" => self.read_ahead_kb = num(key, value)?,
            "fault_around_bytes" => self.fault_around_bytes = num(key, value)?,
            "fault_around_young" => {
                self.fault_around_young = match value {
                    "true" | "1" => true,
                    "false" | "0" => false,
                    _ => return Err(bad(format!("expected true or false, got {value:?}"))),
                }
            }
            "cores" => {
                let c: usize = num(key, value)?;
                if c == 0 || c > 256 {
                    return Err(bad(format!("must be within [1, 256], got {c}")));
                }
                self.cores = c
            }
            "lmkd" => {
                // The name is checked against the kill-policy registry when the kernel is built.
                self.lmkd = value.into()
            }
            "sample_interval_ms" => self.sample_interval_ns = num::<u64>(key, value)? * 1_000_000,
            "reap_delay_ms" => self.reap_delay_ns = num::<u64>(key, value)? * 1_000_000,
            "lmkd.thrashing_limit" => self.lmkd_thrashing_limit = num(key, value)?,
            "lmkd.swap_free_low_pct" => self.lmkd_swap_free_low_pct = num(key, value)?,
            "seed" => self.seed = num(key, value)?,
            _ if k.starts_with("cost.") => {
                let v: u64 = num(key, value)?;
                let c = &mut self.costs;
                let slot = match &k[5..] {
                    "touch_ns" => &mut c.touch_ns,
                    "minor_fault_ns" => &mut c.minor_fault_ns,
                    "file_minor_fault_ns" => &mut c.file_minor_fault_ns,
                    "major_fault_overhead_ns" => &mut c.major_fault_overhead_ns,
                    "zram_decompress_ns" => &mut c.zram_decompress_ns,
                    "zram_compress_ns" => &mut c.zram_compress_ns,
                    "flash_read_ns" => &mut c.flash_read_ns,
                    "flash_read_bw" => &mut c.flash_read_bw,
                    "flash_write_bw" => &mut c.flash_write_bw,
                    "scan_page_ns" => &mut c.scan_page_ns,
                    "reclaim_page_ns" => &mut c.reclaim_page_ns,
                    "cow_copy_ns" => &mut c.cow_copy_ns,
                    _ => return Err(bad("unknown cost".into())),
                };
                if (k.ends_with("_bw")) && v == 0 {
                    return Err(bad("bandwidth must be positive".into()));
                }
                *slot = v;
            }
            _ => return Err(bad(format!("unknown setting; known: {}", Self::KEYS.join(", ")))),
        }
        Ok(())
    }
}
