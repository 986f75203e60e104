//! Counters with the kernel's `/proc/vmstat` names, `/proc/meminfo`-like snapshots and
//! per-process memory (RSS, PSS, swap).

use serde::Serialize;

macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// Event counters named as in `/proc/vmstat`. Monotonic. Model counters Linux does not
        /// have: `zram_same_pages_stored`, `madvise_*_pages`, `lmkd_kills`, `cow_fault` (private
        /// copies made at copy-on-write breaks, `wp_page_copy`), `cow_reuse` (writes by the last
        /// sharer of a COW page, which take the page over without a copy).
        #[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
        pub struct VmStat { $(pub $name: u64,)* }
        impl VmStat {
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];
            /// (name, value) pairs in a fixed order.
            pub fn items(&self) -> Vec<(&'static str, u64)> { vec![$((stringify!($name), self.$name)),*] }
            /// Every counter is ≥ its value in `earlier`.
            pub fn monotonic_since(&self, earlier: &VmStat) -> bool { true $(&& self.$name >= earlier.$name)* }
        }
    };
}

counters!(
    pgfault,
    pgmajfault,
    pgalloc_normal,
    pgfree,
    pgpgin,
    pgpgout,
    pswpin,
    pswpout,
    pgactivate,
    pgdeactivate,
    pgrefill,
    pgrotated,
    pgscan_kswapd,
    pgscan_direct,
    pgsteal_kswapd,
    pgsteal_direct,
    pgscan_anon,
    pgscan_file,
    pgsteal_anon,
    pgsteal_file,
    allocstall,
    pageoutrun,
    nr_vmscan_write,
    workingset_refault_anon,
    workingset_refault_file,
    workingset_activate,
    workingset_activate_anon,
    workingset_activate_file,
    workingset_restore,
    workingset_restore_anon,
    workingset_restore_file,
    workingset_nodereclaim,
    oom_kill,
    zram_same_pages_stored,
    madvise_pageout_pages,
    madvise_cold_pages,
    lmkd_kills,
    cow_fault,
    cow_reuse,
);

/// A `/proc/meminfo`-like snapshot (values in kB, like the kernel prints them).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
#[allow(non_snake_case)]
pub struct MemInfo {
    pub MemTotal: u64,
    pub MemFree: u64,
    pub MemAvailable: u64,
    pub Cached: u64,
    pub SwapCached: u64,
    pub Active: u64,
    pub Inactive: u64,
    #[serde(rename = "Active(anon)")]
    pub ActiveAnon: u64,
    #[serde(rename = "Inactive(anon)")]
    pub InactiveAnon: u64,
    #[serde(rename = "Active(file)")]
    pub ActiveFile: u64,
    #[serde(rename = "Inactive(file)")]
    pub InactiveFile: u64,
    pub Unevictable: u64,
    pub SwapTotal: u64,
    pub SwapFree: u64,
    pub Dirty: u64,
    pub Writeback: u64,
    pub AnonPages: u64,
    pub Mapped: u64,
    /// Kernel memory the model does not simulate page by page (reserved frames).
    pub KernelReserved: u64,
    /// RAM held by the zram pool (zsmalloc pages); not a meminfo field, reported by zram's mm_stat.
    pub ZramPool: u64,
    /// Bytes of original data stored in zram (mm_stat orig_data_size), in kB.
    pub ZramOrigData: u64,
    /// Compressed bytes stored in zram (mm_stat compr_data_size), in kB.
    pub ZramComprData: u64,
    /// Memory-cgroup charge (scope = memcg), in kB.
    pub MemcgUsage: u64,
}

/// Per-process memory and fault counters.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProcMem {
    pub pid: u32,
    pub name: String,
    pub oom_score_adj: i32,
    pub alive: bool,
    pub rss_anon_kb: u64,
    pub rss_file_kb: u64,
    pub pss_kb: f64,
    pub swap_kb: u64,
    pub minflt: u64,
    pub majflt: u64,
    pub swapin: u64,
    pub refault_anon: u64,
    pub refault_file: u64,
    pub allocstall: u64,
    pub memstall_ms: f64,
    pub cpu_ms: f64,
    pub cpu_wait_ms: f64,
}
