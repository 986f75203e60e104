//! Kernel configuration: every tunable the model reads, with its default and where the default
//! comes from. Settings are addressed as `kernel.<name>` (e.g. `--set kernel.swappiness=100`);
//! their table (types, ranges, help, sources) is [`crate::settings`].
//!
//! Values marked "estimate" are not measured; they are reasoned guesses that a calibration can
//! replace. Everything else cites its source.

pub use mobmem_engine::settings::SettingError;
use serde::Serialize;

/// The largest RAM, swap or cgroup limit the model accepts, in MiB (64 GiB: more than any phone).
/// The model keeps state for every page frame and swap slot (tens of bytes each), so a larger
/// memory would exhaust the host before the simulation starts.
pub const MAX_MODEL_MIB: u64 = 64 << 10;

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
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "classic" | "2list" => Some(Self::Classic),
            "pure" => Some(Self::Pure),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Classic => "classic",
            Self::Pure => "pure",
        }
    }
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

impl ReclaimScope {
    pub const NAMES: &'static [&'static str] = &["global", "memcg"];
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "global" => Some(Self::Global),
            "memcg" => Some(Self::MemcgLimit),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Global => "global",
            Self::MemcgLimit => "memcg",
        }
    }
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
    /// The setting names alone, for listings.
    pub const NAMES_LIST: &'static [&'static str] = &["none", "zram", "file"];
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
    pub(crate) file_minor_fault_ns: u64,
    /// Fault-path overhead of a major fault, excluding the device (swapin_readahead, rmap). estimate.
    pub(crate) major_fault_overhead_ns: u64,
    /// zram decompression of one 4 KiB page (lz4), big core. estimate: typically 2–5 µs.
    pub(crate) zram_decompress_ns: u64,
    /// zram compression of one page. estimate: typically 2–3× decompression.
    pub(crate) zram_compress_ns: u64,
    /// Random 4 KiB read latency of the flash device (UFS 2.x). estimate: typical UFS random 4 KiB read 60–100 µs.
    pub flash_read_ns: u64,
    /// Sequential flash read bandwidth in bytes/s, for readahead beyond the first page.
    /// estimate: UFS 2.1 ≈ 800 MB/s sequential.
    pub flash_read_bw: u64,
    /// Flash write bandwidth in bytes/s (swap-out, writeback). estimate: UFS 2.1 ≈ 200 MB/s.
    pub flash_write_bw: u64,
    /// Scanning one page in shrink_*_list (isolation, page_referenced rmap walk). estimate.
    pub(crate) scan_page_ns: u64,
    /// Reclaiming (unmapping, freeing) one page in shrink_page_list. estimate.
    pub(crate) reclaim_page_ns: u64,
    /// Copying one 4 KiB page at a copy-on-write break (`copy_user_highpage` in `wp_page_copy`),
    /// on top of `minor_fault_ns` for the fault. estimate: a cache-cold 4 KiB copy at ~8–10 GB/s
    /// on a phone big core, ≈ 0.4–0.5 µs.
    pub cow_copy_ns: u64,
    /// Compaction's scan of one frame by the migrate scanner (the free scanner's is a quarter).
    /// estimate: a struct page read and a few tests, like reclaim's isolation.
    pub compact_scan_ns: u64,
    /// Migrating one page in compaction: isolation, unmap (rmap walk, TLB flush), a 4 KiB copy
    /// and remap. estimate: a few µs on a phone big core (the copy alone ≈ 0.5 µs, see
    /// `cow_copy_ns`).
    pub compact_migrate_ns: u64,
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
            compact_scan_ns: 20,
            compact_migrate_ns: 4_000,
        }
    }
}

/// Compressed-size model of pages swapped to zram.
#[derive(Clone, Debug, Serialize)]
pub struct ZramModel {
    /// Mean compression ratio (original / compressed) of pages that are not same-filled.
    /// estimate: heap pages ≈ 2.5–3:1 with lz4.
    pub(crate) ratio: f64,
    /// Spread (σ of log size) of the per-page compressed size. estimate.
    pub(crate) sigma: f64,
    /// Fraction of written anon pages that are same-filled (zram stores no data for them).
    /// estimate; traces that write known content set it to 0.
    pub(crate) same_page_fraction: f64,
    /// Size above which zsmalloc stores a page uncompressed (huge class). source: zsmalloc
    /// huge_class_size on 4 KiB pages ≈ 3264 bytes.
    pub(crate) huge_class_bytes: u32,
    /// zsmalloc pool pages per page of compressed bytes (partly filled zspages, metadata).
    /// source: measured on this project's host with lz4, mem_used_total / compr_data_size =
    /// 1.035–1.084 over the validation traces (docs/validation.md); 1.05 is their middle.
    pub(crate) pool_overhead: f64,
}

impl Default for ZramModel {
    fn default() -> Self {
        Self { ratio: 2.8, sigma: 0.35, same_page_fraction: 0.0, huge_class_bytes: 3264, pool_overhead: 1.05 }
    }
}

/// Parameters of Acclaim's lightweight prediction-based reclaim (`lwp`).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LwpConfig {
    pub(crate) p1: f64,
    pub(crate) p2: f64,
    pub(crate) t1: f64,
    pub(crate) slot_ns: u64,
    pub(crate) window_ns: u64,
}

impl Default for LwpConfig {
    fn default() -> Self {
        Self { p1: 4.0, p2: 2.0, t1: 2.0, slot_ns: 10_000_000, window_ns: 100_000_000 }
    }
}

/// cpufreq: the governor and its tunables, and how memory-bound each kind of work is (see
/// `mobmem_engine::cpufreq` and [`crate::cpufreq`]).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Cpufreq {
    pub governor: String,
    pub(crate) sampling_ms: u64,
    pub(crate) up_threshold: u32,
    pub(crate) target_load: u32,
    pub(crate) go_hispeed_load: u32,
    pub(crate) min_sample_ms: u64,
    pub(crate) gc_cap_mhz: u32,
    pub(crate) membound_app: f64,
    pub(crate) membound_gc: f64,
    pub(crate) membound_kswapd: f64,
    pub(crate) membound_system: f64,
}

impl Default for Cpufreq {
    fn default() -> Self {
        Self {
            governor: "performance".into(),
            sampling_ms: 50,
            up_threshold: 80,
            target_load: 90,
            go_hispeed_load: 99,
            min_sample_ms: 80,
            gc_cap_mhz: 0,
            membound_app: 0.2,
            membound_gc: 0.5,
            membound_kswapd: 0.4,
            membound_system: 0.2,
        }
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
    /// `CONFIG_BALANCE_ANON_FILE_RECLAIM` (Qualcomm/Android kernels): no cache-trim mode, so anon
    /// is scanned even while the inactive file list is large.
    pub balance_anon_file_reclaim: bool,
    /// Physical memory as the buddy allocator: free lists by order and migrate type over
    /// pageblocks, fallback stealing, direct compaction and order-2 kernel stacks (`buddy`,
    /// `compaction`). Off: every allocation is one frame from a free stack.
    pub buddy: bool,
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
    /// lmkd mode: "psi", "psi-minfree", "minfree" or "off" (a registry key, see `lmkd`).
    pub lmkd: String,
    /// Eviction policy on vmscan's page decisions: "stock" or "fae" (see `fae`).
    pub eviction: String,
    /// Apps (process names) foreground-aware eviction leaves to the stock rules.
    pub fae_exempt: Vec<String>,
    /// Extra chances foreground pages get before they are reclaimed under FAE (0: none).
    pub fae_fg_chances: u32,
    /// kswapd sizing policy: "stock", "lwp" or "lwp-code" (see `lwp`).
    pub kswapd_sizing: String,
    pub lwp: LwpConfig,
    pub cpufreq: Cpufreq,
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
    /// Legacy minfree table: (oom_score_adj, MiB). source: AOSP lowmemorykiller for a modern
    /// 64-bit phone.
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
            balance_anon_file_reclaim: false,
            buddy: false,
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
            eviction: "stock".into(),
            fae_exempt: Vec::new(),
            fae_fg_chances: 0,
            kswapd_sizing: "stock".into(),
            lwp: LwpConfig::default(),
            cpufreq: Cpufreq::default(),
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
