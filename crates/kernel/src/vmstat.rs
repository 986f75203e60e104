//! Counters with the kernel's `/proc/vmstat` names, `/proc/meminfo`-like snapshots and
//! per-process memory (RSS, PSS, swap).

use serde::Serialize;

macro_rules! counters {
    ($($name:ident),* $(,)?) => {
        /// Event counters named as in `/proc/vmstat`. Monotonic. Model counters Linux does not
        /// have: `zram_same_pages_stored`, `madvise_*_pages`, `lmkd_kills`, `cow_fault` (private
        /// copies made at copy-on-write breaks, `wp_page_copy`), `cow_reuse` (writes by the last
        /// sharer of a COW page, which take the page over without a copy), `oom_kill_high_order`
        /// (OOM kills invoked by an allocation of order > 0, `kernel.buddy`).
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
    oom_kill_high_order,
    compact_stall,
    compact_fail,
    compact_success,
    compact_migrate_scanned,
    compact_free_scanned,
    compact_isolated,
    pgmigrate_success,
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
    pub(crate) MemTotal: u64,
    pub(crate) MemFree: u64,
    pub(crate) MemAvailable: u64,
    pub(crate) Cached: u64,
    pub(crate) SwapCached: u64,
    pub(crate) Active: u64,
    pub(crate) Inactive: u64,
    #[serde(rename = "Active(anon)")]
    pub(crate) ActiveAnon: u64,
    #[serde(rename = "Inactive(anon)")]
    pub(crate) InactiveAnon: u64,
    #[serde(rename = "Active(file)")]
    pub(crate) ActiveFile: u64,
    #[serde(rename = "Inactive(file)")]
    pub(crate) InactiveFile: u64,
    pub(crate) Unevictable: u64,
    pub(crate) SwapTotal: u64,
    pub(crate) SwapFree: u64,
    pub(crate) Dirty: u64,
    pub(crate) Writeback: u64,
    pub AnonPages: u64,
    pub(crate) Mapped: u64,
    /// Kernel memory the model does not simulate page by page (reserved frames).
    pub(crate) KernelReserved: u64,
    /// Kernel stacks and page tables allocated page by page (`kernel.buddy`; 0 otherwise).
    pub(crate) KernelStack: u64,
    pub(crate) PageTables: u64,
    /// RAM held by the zram pool (zsmalloc pages); not a meminfo field, reported by zram's mm_stat.
    pub ZramPool: u64,
    /// Bytes of original data stored in zram (mm_stat orig_data_size), in kB.
    pub(crate) ZramOrigData: u64,
    /// Compressed bytes stored in zram (mm_stat compr_data_size), in kB.
    pub(crate) ZramComprData: u64,
    /// Memory-cgroup charge (scope = memcg), in kB.
    pub(crate) MemcgUsage: u64,
}

/// Per-process memory and fault counters.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct ProcMem {
    pub(crate) pid: u32,
    pub(crate) name: String,
    pub(crate) oom_score_adj: i32,
    pub(crate) alive: bool,
    pub(crate) rss_anon_kb: u64,
    pub(crate) rss_file_kb: u64,
    pub(crate) pss_kb: f64,
    pub(crate) swap_kb: u64,
    pub(crate) minflt: u64,
    pub(crate) majflt: u64,
    pub(crate) swapin: u64,
    pub(crate) refault_anon: u64,
    pub(crate) refault_file: u64,
    pub(crate) allocstall: u64,
    pub(crate) memstall_ms: f64,
    pub(crate) cpu_ms: f64,
    pub(crate) cpu_wait_ms: f64,
}
