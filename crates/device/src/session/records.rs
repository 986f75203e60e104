//! What a session records as it runs, for the result to report: the event log ([`Event`]), the
//! phone's time series ([`Sample`]) and each app's totals ([`AppTotals`]).

use super::app::{FrameStats, Live};
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use serde::Serialize;

/// A row type of one of the result's tables: the struct, and its field names in order as the
/// table's columns ([`Columns::columns`]), so that the CSV files and the data frames take their
/// columns from the struct itself.
macro_rules! row {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* $fv:vis $f:ident : $t:ty),* $(,)? }) => {
        $(#[$m])*
        pub struct $name { $($(#[$fm])* $fv $f: $t),* }
        impl Columns for $name {
            fn columns() -> Vec<&'static str> {
                vec![$(stringify!($f).trim_start_matches("r#")),*]
            }
        }
    };
}

/// A table's columns, in order.
pub trait Columns {
    fn columns() -> Vec<&'static str>;
}

row! {
/// A line of the event log.
#[derive(Clone, Debug, Serialize)]
pub struct Event {
    pub(crate) t_s: f64,
    pub(crate) kind: &'static str,
    pub(crate) app: String,
    pub(crate) detail: String,
}
}

row! {
/// A janky frame: it took longer than the vsync period (on-time frames are only counted).
#[derive(Clone, Debug, Serialize)]
pub struct JankyFrame {
    /// The vsync the frame was due at.
    pub(crate) t_s: f64,
    pub(crate) app: String,
    pub(crate) dur_ms: f64,
}
}

row! {
/// An interval in which an app's main thread did none of its own work because of its collector
/// (a pause, a wait for a collection, a checkpoint): what minimum mutator utilisation is read from.
#[derive(Clone, Debug, Serialize)]
pub struct MutatorStopRecord {
    pub(crate) t_s: f64,
    pub(crate) app: String,
    pub(crate) dur_ms: f64,
    pub(crate) kind: &'static str,
}
}

row! {
/// One live app's memory at a sample of the per-app series (`session.app_sample_ms`): what
/// `/proc/PID/status` and `smaps_rollup` report.
#[derive(Clone, Debug, Serialize)]
pub struct AppSample {
    pub(crate) t_s: f64,
    pub(crate) app: String,
    pub(crate) pid: u32,
    /// Resident anon + mapped file pages (COW-shared pages in full), PSS, swapped-out pages.
    pub(crate) rss_mib: f64,
    pub(crate) pss_mib: f64,
    pub(crate) swap_mib: f64,
    /// RSS by `dumpsys meminfo` App Summary category ([`meminfo_category`]), MiB.
    pub(crate) java_heap_mib: f64,
    pub(crate) native_heap_mib: f64,
    pub(crate) code_mib: f64,
    pub(crate) graphics_mib: f64,
    pub(crate) stack_mib: f64,
    pub(crate) other_mib: f64,
    /// The Java heap's PSS (its pages divided among the processes that map them: the zygote's
    /// shared spaces count in part), the numerator of `dumpsys meminfo`'s Java-heap share.
    pub(crate) java_heap_pss_mib: f64,
}
}

/// The `dumpsys meminfo` App Summary categories, by [`meminfo_category`]'s index: the columns of
/// [`AppSample`] that split its RSS.
pub const MEMINFO_CATEGORIES: [&str; 6] = ["java_heap_mib", "native_heap_mib", "code_mib", "graphics_mib", "stack_mib", "other_mib"];

/// The `dumpsys meminfo` App Summary category of a mapping, by its name: the ART heap spaces and
/// boot image (`dalvik-… space`, `*.art`) are Java heap; malloc arenas are native heap; mapped
/// APKs, dex/oat, shared libraries and the framework's code are code; gralloc/EGL buffers are
/// graphics; thread stacks are stack; everything else (card table, other `dalvik-` metadata,
/// object-swap files) is other.
pub fn meminfo_category(name: &str, file: bool) -> usize {
    const JAVA: usize = 0;
    const NATIVE: usize = 1;
    const CODE: usize = 2;
    const GRAPHICS: usize = 3;
    const STACK: usize = 4;
    const OTHER: usize = 5;
    let n = name.to_ascii_lowercase();
    if (n.starts_with("dalvik-") && n.contains(" space")) || n.ends_with(".art") {
        JAVA
    } else if n.contains("malloc") || n.contains("native heap") || n.contains("scudo") {
        NATIVE
    } else if n.contains("graphics") || n.contains("gralloc") || n.contains("egl") || n.contains("dmabuf") {
        GRAPHICS
    } else if n.contains("stack") {
        STACK
    } else if file || n.ends_with(".apk") || n.ends_with(".so") || n.ends_with(".oat") || n.ends_with(".dex") || n.ends_with(".jar") || n.ends_with(".vdex") {
        CODE
    } else {
        OTHER
    }
}

row! {
/// A time-series sample of the phone.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub(crate) t_s: f64,
    pub(crate) free_mib: f64,
    pub(crate) anon_mib: f64,
    pub(crate) file_mib: f64,
    pub(crate) unevictable_mib: f64,
    pub(crate) swap_used_mib: f64,
    pub(crate) zram_pool_mib: f64,
    pub(crate) alive_apps: u32,
    pub(crate) cached_apps: u32,
    pub(crate) psi_some_avg10: f64,
    pub(crate) psi_full_avg10: f64,
    pub(crate) pgscan_kswapd: u64,
    pub(crate) pgscan_direct: u64,
    pub(crate) allocstall: u64,
    pub(crate) workingset_refault: u64,
}
}

impl Sample {
    pub fn take(k: &Kernel, now: Nanos, alive: u32, cached: u32) -> Self {
        use mobmem_kernel::page::lru;
        let mib = |pages: u64| pages as f64 / 256.0;
        let l = &k.lru.len;
        let v = &k.vmstat;
        Self {
            t_s: now as f64 / 1e9,
            free_mib: mib(k.frames.nr_free()),
            anon_mib: mib(l[lru::ACTIVE_ANON as usize] + l[lru::INACTIVE_ANON as usize]),
            file_mib: mib(l[lru::ACTIVE_FILE as usize] + l[lru::INACTIVE_FILE as usize]),
            unevictable_mib: mib(l[lru::UNEVICTABLE as usize]),
            swap_used_mib: mib(k.swap.nr_used()),
            zram_pool_mib: mib(k.zram_pool_pages),
            alive_apps: alive,
            cached_apps: cached,
            psi_some_avg10: k.psi.avg10[0],
            psi_full_avg10: k.psi.avg10[1],
            pgscan_kswapd: v.pgscan_kswapd,
            pgscan_direct: v.pgscan_direct,
            allocstall: v.allocstall,
            workingset_refault: v.workingset_refault_anon + v.workingset_refault_file,
        }
    }
}

/// An app's counters summed over its process incarnations.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AppTotals {
    pub(crate) incarnations: u32,
    pub(crate) frames: FrameStats,
    pub(crate) gc_count: u64,
    pub(crate) gc_sticky: u64,
    pub(crate) gc_full: u64,
    pub(crate) gc_pause_total_ms: f64,
    pub(crate) gc_pause_max_ms: f64,
    pub(crate) gc_cpu_ms: f64,
    pub(crate) gc_pages_touched: u64,
    pub(crate) gc_objects_touched: u64,
    /// Objects the collections marked and copied (evacuated or compacted), mutator copies included.
    pub(crate) gc_objects_marked: u64,
    pub(crate) gc_objects_copied: u64,
    pub(crate) gc_major_faults: u64,
    pub(crate) mutator_cpu_ms: f64,
    /// CPU energy of the app's main thread (kernel work on its behalf included) and of its GC
    /// thread, millijoules (0 on a device without a power model).
    pub(crate) mutator_energy_mj: f64,
    pub(crate) gc_energy_mj: f64,
    /// Java objects and bytes the app's workload allocated (the simulator's per-object work).
    pub(crate) objects_allocated: u64,
    pub(crate) bytes_allocated: u64,
    /// Java objects the app's workload read (the third kind of per-object work).
    pub(crate) objects_read: u64,
    pub(crate) trims: u64,
    pub(crate) transitions: u64,
    /// Object-granularity swap (a runtime policy such as Marvin; zeros without one).
    pub(crate) object_swap: mobmem_runtime::object_swap::ObjectSwapStats,
    pub(crate) refault_anon: u64,
    pub(crate) refault_file: u64,
    /// File refaults that activated their page (see `ProcStats::activate_file`).
    pub(crate) activate_file: u64,
    pub(crate) majflt: u64,
    pub(crate) swapin: u64,
    pub(crate) swapout: u64,
    pub(crate) java_ooms: u32,
    /// The Java heap's share of the app's PSS while it was in the foreground: the sum over the
    /// per-app memory samples taken then, and their number (`java_share_fg` = sum / n, in %).
    pub(crate) java_share_fg_sum: f64,
    pub(crate) java_share_fg_n: u32,
    pub(crate) alive_at_end: bool,
    /// The process's memory per mapping at the end of the session (`/proc/PID/smaps`; empty if
    /// the app was not alive then).
    pub(crate) memory_at_end: Vec<mobmem_kernel::smaps::VmaUsage>,
}

impl AppTotals {
    pub fn absorb(&mut self, l: &Live, k: &Kernel) {
        self.incarnations += 1;
        self.frames.add(&l.frames);
        let rt = &l.rt;
        for r in &rt.records {
            self.gc_count += 1;
            match r.gc_type {
                "sticky" => self.gc_sticky += 1,
                _ => self.gc_full += 1,
            }
            self.gc_pause_total_ms += r.pause_total_ns as f64 / 1e6;
            self.gc_pause_max_ms = self.gc_pause_max_ms.max(r.pause_max_ns as f64 / 1e6);
            self.gc_pages_touched += r.gc_pages_touched;
            self.gc_objects_touched += r.gc_objects_touched;
            self.gc_objects_marked += r.objects_marked;
            self.gc_objects_copied += r.objects_copied;
        }
        self.gc_cpu_ms += rt.gc_cpu_ns() as f64 / 1e6;
        let g = &rt.gc_task.bd;
        self.gc_major_faults += g.major_faults_zram + g.major_faults_flash_swap + g.major_faults_file;
        self.mutator_cpu_ms += rt.mutator_cpu_ns() as f64 / 1e6;
        self.mutator_energy_mj += k.cpus.thread(rt.mutator.thread).energy_pj as f64 / 1e9;
        self.gc_energy_mj += k.cpus.thread(rt.gc_task.thread).energy_pj as f64 / 1e9;
        self.objects_allocated += l.w.stats.objects_allocated;
        self.bytes_allocated += l.w.stats.bytes_allocated;
        self.objects_read += l.w.stats.reads;
        self.trims += rt.stats.trims;
        self.transitions += rt.stats.transitions;
        self.object_swap.add(rt.heap.object_swap_stats());
        let st = &k.procs[l.proc_idx as usize].stats;
        self.refault_anon += st.refault_anon;
        self.refault_file += st.refault_file;
        self.activate_file += st.activate_file;
        self.majflt += st.majflt;
        self.swapin += st.swapin;
        self.swapout += st.swapout;
    }
}

#[cfg(test)]
mod tests {
    use super::meminfo_category;

    #[test]
    fn mappings_fall_into_dumpsys_meminfo_categories() {
        let cases = [
            ("dalvik-main space", false, 0),
            ("dalvik-large object space", false, 0),
            ("boot.art", true, 0),
            ("[anon:libc_malloc]", false, 1),
            ("[anon:libc_malloc] (zygote)", false, 1),
            ("base.apk", true, 2),
            ("framework", true, 2),
            ("[anon:graphics]", false, 3),
            ("[stack]", false, 4),
            ("dalvik-card table", false, 5),
        ];
        for (name, file, want) in cases {
            assert_eq!(meminfo_category(name, file), want, "{name}");
        }
    }
}

row! {
    /// One collection of the `gcs` table (its phases are rows of `gc_phases`).
    #[derive(Clone, Debug, Serialize)]
    pub struct GcRow {
        pub(crate) t_s: f64,
        pub(crate) app: String,
        pub(crate) collector: &'static str,
        pub(crate) r#type: &'static str,
        pub(crate) cause: &'static str,
        pub(crate) state: &'static str,
        pub(crate) duration_ms: f64,
        pub(crate) pause_ms: f64,
        pub(crate) gc_cpu_ms: f64,
        pub(crate) freed_bytes: u64,
        pub(crate) objects_touched: u64,
        pub(crate) pages_touched: u64,
        /// Major faults of the GC thread (zram, flash swap and file).
        pub(crate) major_faults: u64,
    }
}

row! {
    /// One phase of a collection: `gc` is the collection's row in `gcs`.
    #[derive(Clone, Debug, Serialize)]
    pub struct GcPhaseRow {
        pub(crate) gc: usize,
        pub(crate) app: String,
        pub(crate) name: &'static str,
        pub(crate) kind: mobmem_runtime::gc::record::PhaseKind,
        pub(crate) t_s: f64,
        pub(crate) duration_ms: f64,
        pub(crate) gc_cpu_ms: f64,
    }
}

/// Every table of the result with its columns, in the order of the row structs' fields.
pub fn table_columns() -> Vec<(&'static str, Vec<&'static str>)> {
    vec![
        ("timeline", Sample::columns()),
        ("events", Event::columns()),
        ("gcs", GcRow::columns()),
        ("gc_phases", GcPhaseRow::columns()),
        ("janky_frames", JankyFrame::columns()),
        ("app_memory", AppSample::columns()),
        ("mutator_stops", MutatorStopRecord::columns()),
    ]
}
