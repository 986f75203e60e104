//! The kernel's shared state, like `include/linux/mmzone.h` and `mm_types.h`: the [`Kernel`]
//! struct (one memory node: frames, LRU lists, mappings, processes, swap, watermarks, kswapd's
//! state, counters, the event queue), the events its threads run, and the interfaces policies
//! implement over it ([`KillPolicy`], [`MadviseHint`]).
//!
//! Only types live here; every mechanism is a module of its own with `impl Kernel` blocks over
//! this state (`memory`, `page_alloc`, `vmscan`, `workingset`, `madvise`, `psi`, `lmkd`,
//! `oom_kill`, `series`), and `kernel` holds construction, the process/VMA API and the event loop.
//! No module below imports a mechanism, so the crate's modules form no import cycle.

use crate::config::KernelConfig;
use crate::lru::LruLists;
use crate::mm::{Mapping, Process, Vma};
use crate::page::{Frames, Pfn};
use crate::psi_types::Psi;
use crate::swap::SwapDevice;
use crate::task::Task;
use crate::vmstat::VmStat;
use mobmem_engine::{CpuSet, EventQueue, Nanos, ThreadId};
use serde::Serialize;
use std::collections::HashMap;

/// Thread ids of kernel threads; process threads start at `FIRST_USER_THREAD`.
pub const KSWAPD_THREAD: ThreadId = 0;
pub const LMKD_THREAD: ThreadId = 1;
pub const FIRST_USER_THREAD: ThreadId = 2;
/// Extra threads (`Kernel::new_thread`) are numbered from here.
pub const EXTRA_THREAD_BASE: ThreadId = 1 << 20;

#[derive(Debug)]
pub enum Event {
    /// One kswapd reclaim batch.
    Kswapd,
    /// Writeback of these frames (with their generations) completes.
    WritebackDone(Vec<(Pfn, u32)>),
    /// lmkd wakes (PSI trigger or poll timer).
    Lmkd,
    /// A killed process's memory is released.
    Reap(u32),
    /// Take a time-series sample.
    Sample,
    /// The cpufreq governor's timer: pick each cluster's frequency for the period starting now.
    /// Threads book their CPU time when they cross it, so the governor sees the period that
    /// ended (only scheduled for governors other than `performance`).
    CpufreqTick,
}

/// An error from a kernel operation on behalf of a caller.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum KernelError {
    #[error("no process with pid {0}")]
    NoProcess(u32),
    #[error("process {0} already exists")]
    ProcessExists(u32),
    #[error("process {pid} has no mapping named {vma:?}")]
    NoVma { pid: u32, vma: String },
    #[error("mapping {vma:?} of process {pid} already exists")]
    VmaExists { pid: u32, vma: String },
    #[error("pages [{first}, {end}) are beyond mapping {vma:?} of {npages} pages")]
    BeyondVma { vma: String, first: u64, end: u64, npages: u32 },
    #[error("file {name:?} is mapped as {pages} pages here but has {existing} pages")]
    FileSize { name: String, pages: u32, existing: u32 },
    #[error("{0}")]
    Invalid(String),
}

/// A process's memory in pages (see `Kernel::proc_usage`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcUsage {
    /// Resident anon pages mapped (RSS anon, `MM_ANONPAGES`): private ones plus the COW-shared
    /// pages this process still maps after fork.
    pub anon: u64,
    /// Mapped file pages.
    pub file: u64,
    /// Proportional set size: each page divided by its number of mappers.
    pub pss: f64,
    /// The anon part of `pss` (summed over every process it equals the resident anon pages).
    pub pss_anon: f64,
    /// Swapped anon pages mapped (`MM_SWAPENTS`), COW-shared ones included.
    pub swap: u64,
    /// Of `anon`, pages shared copy-on-write with other processes (not freed if this one dies).
    pub anon_shared: u64,
    /// Of `swap`, swapped pages shared copy-on-write with other processes.
    pub swap_shared: u64,
}

impl ProcUsage {
    pub fn add(&mut self, o: &ProcUsage) {
        self.anon += o.anon;
        self.file += o.file;
        self.pss += o.pss;
        self.pss_anon += o.pss_anon;
        self.swap += o.swap;
        self.anon_shared += o.anon_shared;
        self.swap_shared += o.swap_shared;
    }
}

/// Work that runs beside a long synchronous operation of one driver: the session runs an app's
/// launch as one call, and installs the device's other processes as a co-runner so that they
/// run, slice by slice, as the launch's clock passes each slice boundary, instead of all after
/// it. Without it the launch took memory and kswapd's progress up to its end before any other
/// process ran, and those then allocated in the past against a kernel from the future, with
/// kswapd unable to help them.
pub trait CoRunner {
    /// Run everything up to `until` (a thread's clock); returns the next time it wants to run.
    fn run_until(&mut self, k: &mut Kernel, until: Nanos) -> Nanos;
    /// Give back what it holds when it is taken out.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

pub struct Kernel {
    pub cfg: KernelConfig,
    pub frames: Frames,
    pub lru: LruLists,
    pub mappings: Vec<Mapping>,
    pub(crate) files: HashMap<String, u32>,
    pub vmas: Vec<Vma>,
    pub procs: Vec<Process>,
    pub(crate) pid_index: HashMap<u32, u32>,
    pub swap: SwapDevice,
    pub(crate) wmark: Watermarks,
    pub vmstat: VmStat,
    /// Moves whenever something but a non-faulting touch may change a mapped page's accessed or
    /// dirty state or its mapping: the sum of `pgfault`, `pgrefill`, `pgscan_kswapd`,
    /// `pgscan_direct`, `madvise_cold_pages` and `madvise_pageout_pages`, kept as one counter so
    /// the runtime's touch caches read one word (see [`Kernel::touch_gen`]).
    pub(crate) touch_gen: u64,
    /// workingset: `lruvec->nonresident_age` (`inactive_age` before 5.9).
    pub(crate) nonresident_age: u64,
    /// File refaults seen by the last reclaim cycle (`target_lruvec->refaults`), for
    /// may_deactivate / inactive_list_is_low.
    pub(crate) snapshot_refaults_file: u64,
    pub(crate) balance: ScanBalance,
    pub kswapd: KswapdState,
    pub psi: Psi,
    pub cpus: CpuSet,
    pub(crate) queue: EventQueue<Event>,
    /// Time of the last processed event.
    pub now: Nanos,
    pub(crate) killer: Option<Box<dyn KillPolicy>>,
    /// Work run beside a long synchronous operation of one driver (see `CoRunner`), and the
    /// time it next wants to run (`Nanos::MAX` if none).
    pub(crate) co_runner: Option<Box<dyn CoRunner>>,
    pub(crate) co_next: Nanos,
    /// A reclaim policy on vmscan's reference and rotation decisions (`kernel.eviction`).
    pub(crate) eviction: Option<Box<dyn EvictionPolicy>>,
    /// A policy sizing kswapd's work (`kernel.kswapd_sizing`).
    pub kswapd_sizing: Option<Box<dyn KswapdSizing>>,
    /// The foreground app's process (the activity manager tells the kernel), `u32::MAX` if none.
    pub(crate) foreground: u32,
    pub(crate) lmkd_scheduled: bool,
    pub kills: Vec<KillRecord>,
    pub(crate) hints: HintRegistry,
    /// zsmalloc pool pages taken from RAM.
    pub zram_pool_pages: u64,
    /// Pool frames (so they can be returned).
    pub(crate) zram_pool_frames: Vec<Pfn>,
    /// Memory-cgroup charge in pages (scope = memcg).
    pub memcg_charged: u64,
    /// Frames the kernel allocated for itself from the buddy allocator (kernel stacks and page
    /// tables).
    pub nr_kernel_pages: u64,
    /// Of those, page-table pages.
    pub nr_pagetable_pages: u64,
    /// The free lists as each batch of kernel stacks found them (buddy allocator only).
    pub fragmentation: Fragmentation,
    /// Global allocation counter giving each allocated frame a unique generation.
    pub(crate) alloc_gen: u32,
    pub series: Series,
    /// Writeback started by the current reclaim call, completed by one event.
    pub(crate) pending_writeback: Vec<(Pfn, u32)>,
    /// When the flash device finishes the writes queued so far.
    /// When the flash finishes the file reads queued so far (page-cache reads: read-around and
    /// readahead). Reads are served one after another; writeback and swap reads are not in this
    /// queue (an estimate: UFS overlaps commands, the model does not).
    pub(crate) flash_read_busy_until: Nanos,
    pub(crate) flash_busy_until: Nanos,
    /// Completion times of the queued `WritebackDone` events (for reclaim throttling).
    pub(crate) writeback_due: Vec<Nanos>,
    /// The last direct reclaim stopped because of writeback congestion.
    pub(crate) reclaim_congested: bool,
    /// Quantile table of zram compressed sizes.
    pub(crate) zram_sizes: crate::zram::SizeTable,
    pub(crate) next_extra_thread: ThreadId,
}

// ------------------------------------------------------------------ page_alloc: fragmentation

/// How fragmented free memory was when new threads needed their order-2 stacks: the extremes
/// over every batch (`Kernel::alloc_kernel_stacks`), from the free lists of that moment
/// (`/proc/buddyinfo` and `pagetypeinfo` read at each thread start). Empty without the buddy
/// allocator.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Fragmentation {
    /// Batches of stacks allocated (one per app cold launch).
    pub stack_batches: u64,
    /// Lowest free memory seen, pages.
    pub min_free_pages: u64,
    /// Fewest free blocks of order ≥ 2 seen.
    pub min_blocks_order2: u64,
    /// Lowest share of free memory in blocks of order ≥ 2.
    pub min_share_in_order2: f64,
    /// Most pageblocks not of the movable type seen, and the number of pageblocks.
    pub max_unmovable_pageblocks: u64,
    pub pageblocks: u64,
    /// Most page-table pages seen.
    pub max_pagetable_pages: u64,
}

// ------------------------------------------------------------------ page_alloc: zone watermarks

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
pub struct Watermarks {
    pub min_free_kbytes: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

pub fn int_sqrt(x: u64) -> u64 {
    if x == 0 {
        return 0;
    }
    let mut r = (x as f64).sqrt() as u64;
    while r * r > x {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= x {
        r += 1;
    }
    r
}

impl Watermarks {
    pub fn compute(cfg: &KernelConfig, managed: u64) -> Self {
        let min_free_kbytes = if cfg.min_free_kbytes > 0 { cfg.min_free_kbytes } else { int_sqrt(managed * 4 * 16).clamp(128, 262_144) };
        let min = min_free_kbytes / 4;
        let tmp = (min / 4).max(managed * cfg.watermark_scale_factor / 10_000);
        let extra = cfg.extra_free_kbytes / 4;
        Self { min_free_kbytes, min, low: min + tmp + extra, high: min + 2 * tmp + extra }
    }
}

/// Which watermark free memory is below (lmkd's `get_lowest_watermark`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum WmarkLevel {
    BelowMin,
    BelowLow,
    BelowHigh,
    AboveHigh,
}

// ------------------------------------------------------------------ vmscan: kswapd and scan balance

pub const DEF_PRIORITY: i32 = 12;

/// Reclaim-cost bookkeeping for scan balance.
#[derive(Clone, Debug, Default)]
pub struct ScanBalance {
    /// ≥ 5.9: `lruvec->anon_cost`, `lruvec->file_cost`.
    pub(crate) anon_cost: u64,
    pub(crate) file_cost: u64,
    /// < 5.9: `reclaim_stat.recent_scanned/rotated[anon, file]`.
    pub(crate) recent_scanned: [u64; 2],
    pub(crate) recent_rotated: [u64; 2],
}

/// kswapd's progress through `balance_pgdat`.
#[derive(Clone, Debug, Default)]
pub struct KswapdState {
    pub(crate) awake: bool,
    /// Consecutive runs that reclaimed nothing (`pgdat->kswapd_failures`).
    pub(crate) failures: u32,
    pub(crate) priority: i32,
    pub(crate) in_pass: bool,
    pub(crate) nr: [u64; 4],
    pub(crate) targets: [u64; 4],
    pub(crate) proportional: bool,
    pub(crate) pass_scanned: u64,
    pub(crate) pass_reclaimed: u64,
    pub(crate) run_reclaimed: u64,
    pub(crate) target: u64,
    pub(crate) may_deactivate: [bool; 2],
    pub cpu_ns: Nanos,
    pub(crate) wakeups: u64,
}

impl KswapdState {
    pub fn start_run(&mut self) {
        self.priority = DEF_PRIORITY;
        self.in_pass = false;
        self.run_reclaimed = 0;
        self.wakeups += 1;
    }
}

// ------------------------------------------------------------------ series: the sampled timeline

/// The most samples a timeline keeps (2^18: 73 hours at one sample a second). A run whose
/// simulated time runs far beyond its script (an absurd cost setting) would otherwise fill the
/// host's memory with samples: at the cap, every other sample is dropped and the interval doubles.
pub const SERIES_CAP: usize = 1 << 18;

/// Keep the samples at even positions (the first, third, …): the timeline at twice the interval.
pub fn keep_even<T>(v: &mut Vec<T>) {
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        i % 2 == 1
    });
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    pub time_ms: Vec<f64>,
    pub free_kb: Vec<u64>,
    pub(crate) active_anon_kb: Vec<u64>,
    pub(crate) inactive_anon_kb: Vec<u64>,
    pub(crate) active_file_kb: Vec<u64>,
    pub(crate) inactive_file_kb: Vec<u64>,
    pub(crate) zram_pool_kb: Vec<u64>,
    pub(crate) swap_used_kb: Vec<u64>,
    pub(crate) psi_some_total_us: Vec<u64>,
    pub(crate) psi_full_total_us: Vec<u64>,
    pub(crate) pgscan_kswapd: Vec<u64>,
    pub(crate) pgscan_direct: Vec<u64>,
    pub(crate) workingset_refault_anon: Vec<u64>,
    pub(crate) workingset_refault_file: Vec<u64>,
    pub procs_alive: Vec<u64>,
}

impl Series {
    pub fn len(&self) -> usize {
        self.time_ms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.time_ms.is_empty()
    }

    /// Drop every other sample (see [`SERIES_CAP`]).
    pub fn halve(&mut self) {
        keep_even(&mut self.time_ms);
        for v in [
            &mut self.free_kb,
            &mut self.active_anon_kb,
            &mut self.inactive_anon_kb,
            &mut self.active_file_kb,
            &mut self.inactive_file_kb,
            &mut self.zram_pool_kb,
            &mut self.swap_used_kb,
            &mut self.psi_some_total_us,
            &mut self.psi_full_total_us,
            &mut self.pgscan_kswapd,
            &mut self.pgscan_direct,
            &mut self.workingset_refault_anon,
            &mut self.workingset_refault_file,
            &mut self.procs_alive,
        ] {
            keep_even(v);
        }
    }
}

// ------------------------------------------------------------------ lmkd: kill records and policies

/// A recorded kill.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KillRecord {
    pub time_ns: u64,
    pub(crate) pid: u32,
    #[serde(skip)]
    pub proc_idx: u32,
    pub name: String,
    pub oom_score_adj: i32,
    pub min_score_adj: i32,
    pub reason: String,
    pub killer: String,
    /// Resident memory the kill frees: private anon + mapped file (pages shared copy-on-write
    /// with other processes excluded).
    pub rss_kb: u64,
    /// Swap the kill frees (private swapped pages).
    pub swap_kb: u64,
    /// Resident anon the victim shared copy-on-write with other processes (not freed).
    pub shared_kb: u64,
    /// The swap device's slots in use and the free memory when the kill was decided (what tells
    /// a kill with swap full from one with swap to spare).
    pub swap_used_kb: u64,
    pub free_kb: u64,
    pub(crate) reaped_ns: Option<u64>,
}

/// A policy that removes processes under memory pressure.
pub trait KillPolicy: Send {
    fn name(&self) -> &'static str;
    /// The first timer wake-up, for policies that poll from boot.
    fn first_poll(&self) -> Option<Nanos> {
        None
    }
    /// Woken by PSI triggers.
    fn psi_triggered(&self) -> bool {
        false
    }
    /// Run at `now`; returns the next timer wake-up it wants.
    fn run(&mut self, k: &mut Kernel, now: Nanos) -> Option<Nanos>;
    fn on_reaped(&mut self, _k: &Kernel, _proc_idx: u32) {}
}

// ------------------------------------------------------------------ vmscan: reclaim policies

/// Who a page belongs to, for reclaim policies that treat apps differently: the process whose
/// allocation brought it in (`Frames::owner`), classified by the activity manager's view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageOwner {
    ForegroundApp,
    /// Another app (its process index).
    BackgroundApp(u32),
    /// System processes, exempt apps, pages of no process.
    Other,
}

/// A policy on vmscan's per-page decisions (stock rules when none is installed).
pub trait EvictionPolicy: Send {
    fn name(&self) -> &'static str;
    /// A referenced page found on an inactive list, which the stock rules keep (`activate`: by
    /// moving it to the active list): false reclaims it now instead.
    fn keep_referenced(&mut self, _owner: PageOwner, _pfn: Pfn, _gen: u32, _activate: bool) -> bool {
        true
    }
    /// A page the stock rules would reclaim: true keeps it on the inactive list once more.
    fn extra_chance(&mut self, _owner: PageOwner, _pfn: Pfn, _gen: u32) -> bool {
        false
    }
    /// A referenced executable file page on the active list: whether it rotates back to the
    /// head of the active list (stock) or is deactivated like any other.
    fn rotate_exec(&self, _owner: PageOwner) -> bool {
        true
    }
}

/// A policy sizing kswapd's work (stock: reclaim until free pages exceed the high watermark).
pub trait KswapdSizing: Send {
    fn name(&self) -> &'static str;
    /// A page was allocated at `now`.
    fn on_alloc(&mut self, now: Nanos);
    /// At the start of each kswapd pass: (free pages above which kswapd stops, pages to reclaim
    /// in this pass).
    fn levels(&mut self, wmark: &Watermarks, now: Nanos) -> (u64, u64);
}

// ------------------------------------------------------------------ madvise: custom hints

/// A custom madvise hint applied to pages [first, first+count) of a VMA.
pub trait MadviseHint: Send {
    fn apply(&self, k: &mut Kernel, t: &mut Task, vma: u32, first: u32, count: u32);
}

/// Named custom hints.
pub struct HintRegistry {
    hints: Vec<(String, Box<dyn MadviseHint>)>,
}

impl HintRegistry {
    pub fn empty() -> Self {
        Self { hints: Vec::new() }
    }
    pub fn register(&mut self, name: &str, h: Box<dyn MadviseHint>) {
        self.hints.retain(|(n, _)| n != name);
        self.hints.push((name.into(), h));
    }
    pub fn names(&self) -> Vec<String> {
        self.hints.iter().map(|(n, _)| n.clone()).collect()
    }
    pub(crate) fn take(&mut self, name: &str) -> Option<(String, Box<dyn MadviseHint>)> {
        let i = self.hints.iter().position(|(n, _)| n == name)?;
        Some(self.hints.swap_remove(i))
    }
}
