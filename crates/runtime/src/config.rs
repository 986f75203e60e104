//! Runtime configuration: the `dalvik.vm.heap*` properties of a device, the collectors, ART's
//! timing constants, and the cost model. Every setting has a name accepted by
//! [`RuntimeConfig::set`] (described in [`SETTINGS`]), so device profiles, calibration files and
//! command lines layer the same way as the kernel's settings.

use crate::costs::RuntimeCosts;
pub use mobmem_engine::setting;
use mobmem_engine::settings::SettingError;
use mobmem_engine::settings::{not_one_of, size_text, Kind, Setting, Table, MAX_COST_NS};
use mobmem_engine::Nanos;
use serde::Serialize;

/// The largest size any heap setting may take: 4 GiB. ART's heap references are 32-bit
/// (`HeapReference`), so every heap space is mapped below 4 GiB of address space; a larger heap
/// cannot exist on a phone, and the model would spend host memory on state for it.
pub const MAX_HEAP_BYTES: u64 = 4 << 30;

/// A collector: a handle into the collector catalogue ([`COLLECTORS`], then the collectors
/// registered at run time with `gc::registry::register`). It carries the heap-layout properties
/// the hot paths test, so reading them needs no lookup; everything else is in its
/// [`CollectorInfo`] ([`CollectorKind::info`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CollectorKind {
    id: u16,
    layout: u8,
}

/// A collector's entry in the catalogue: its name, the other names it is accepted under, one line
/// of help, and the heap layout it needs.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CollectorInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub help: &'static str,
    /// The heap's main space is a region space (else a free-list space).
    pub uses_regions: bool,
    /// Mutators keep half of the regions free for evacuation.
    pub copy_reserve: bool,
    /// Collections run concurrently with the mutators (a concurrent start threshold applies).
    pub concurrent: bool,
    /// It collects at all (false for the no-GC baseline: no collections, no transition GC).
    pub collects: bool,
}

impl CollectorInfo {
    const fn builtin(
        name: &'static str,
        aliases: &'static [&'static str],
        uses_regions: bool,
        copy_reserve: bool,
        concurrent: bool,
        help: &'static str,
    ) -> Self {
        Self { name, aliases, help, uses_regions, copy_reserve, concurrent, collects: true }
    }
}

/// The built-in collectors, in the order of their constructors in `gc::registry`.
pub const COLLECTORS: &[CollectorInfo] = &[
    CollectorInfo::builtin(
        "cc",
        &["concurrent-copying"],
        true,
        true,
        true,
        "concurrent copying (ART's default since Android 8): region space, read barrier, sticky and full collections",
    ),
    CollectorInfo::builtin(
        "cmc",
        &["mark-compact"],
        true,
        false,
        true,
        "concurrent mark-compact: sliding compaction, a mutator touching a page not yet compacted compacts it (as with userfaultfd); full collections only",
    ),
    CollectorInfo::builtin(
        "ms",
        &["cms", "mark-sweep", "gcms", "generational-cms"],
        false,
        false,
        true,
        "concurrent mark-sweep with sticky collections (ART's generational CMS)",
    ),
    CollectorInfo::builtin(
        "ms-otf",
        &["cms-otf", "mark-sweep-otf"],
        false,
        false,
        true,
        "mark-sweep with on-the-fly root scanning (roots at a per-thread checkpoint, no initial pause)",
    ),
    CollectorInfo::builtin("ss", &["semispace"], true, true, false, "stop-the-world semi-space copying: every allocated region evacuated"),
    CollectorInfo {
        collects: false,
        ..CollectorInfo::builtin("nogc", &["none"], true, false, false, "no collection: allocation beyond the heap is out of memory (the LBO baseline)")
    },
];

/// Collectors registered at run time (after the built-in ones).
static REGISTERED: std::sync::RwLock<Vec<&'static CollectorInfo>> = std::sync::RwLock::new(Vec::new());

const REGIONS: u8 = 1;
const COPY_RESERVE: u8 = 2;
const CONCURRENT: u8 = 4;
const COLLECTS: u8 = 8;

#[allow(non_upper_case_globals)]
impl CollectorKind {
    pub const ConcurrentCopying: Self = Self::builtin(0);
    pub const ConcurrentMarkCompact: Self = Self::builtin(1);
    /// Concurrent mark-sweep with sticky collections (generational CMS; ART's CMS collector type).
    pub const MarkSweep: Self = Self::builtin(2);
    /// The same with on-the-fly root scanning (roots at a per-thread checkpoint, no initial pause).
    pub const MarkSweepOtf: Self = Self::builtin(3);
    pub const SemiSpace: Self = Self::builtin(4);
    pub const NoGc: Self = Self::builtin(5);

    const fn layout(i: &CollectorInfo) -> u8 {
        (i.uses_regions as u8 * REGIONS) | (i.copy_reserve as u8 * COPY_RESERVE) | (i.concurrent as u8 * CONCURRENT) | (i.collects as u8 * COLLECTS)
    }
    const fn builtin(id: usize) -> Self {
        Self { id: id as u16, layout: Self::layout(&COLLECTORS[id]) }
    }
    /// Every collector, built-in ones first, in catalogue order.
    pub fn all() -> Vec<Self> {
        let n = COLLECTORS.len() + REGISTERED.read().unwrap().len();
        (0..n).map(|id| Self { id: id as u16, layout: Self::layout(Self::info_of(id)) }).collect()
    }
    fn info_of(id: usize) -> &'static CollectorInfo {
        match COLLECTORS.get(id) {
            Some(i) => i,
            None => REGISTERED.read().unwrap()[id - COLLECTORS.len()],
        }
    }
    /// The collectors' names, in catalogue order.
    pub fn names() -> Vec<&'static str> {
        Self::all().into_iter().map(|k| k.short()).collect()
    }
    /// A collector by name or alias.
    pub fn parse(s: &str) -> Option<Self> {
        Self::all().into_iter().find(|k| k.info().name == s || k.info().aliases.contains(&s))
    }
    /// A collector by name or alias, or the one message for an unknown name (with the known ones).
    pub fn named(s: &str) -> Result<Self, String> {
        Self::parse(s).ok_or_else(|| format!("unknown collector {s:?}; expected one of {}", Self::names().join(", ")))
    }
    pub fn info(self) -> &'static CollectorInfo {
        Self::info_of(self.id as usize)
    }
    pub fn short(self) -> &'static str {
        self.info().name
    }
    /// Position in the catalogue (the collector registry's index).
    pub fn id(self) -> usize {
        self.id as usize
    }
    /// Whether the heap's main space is a region space (else a free-list space).
    #[inline]
    pub fn uses_regions(self) -> bool {
        self.layout & REGIONS != 0
    }
    /// Whether mutators keep half of the regions free for evacuation.
    #[inline]
    pub fn copy_reserve(self) -> bool {
        self.layout & COPY_RESERVE != 0
    }
    #[inline]
    pub fn concurrent(self) -> bool {
        self.layout & CONCURRENT != 0
    }
    /// Whether it collects at all (the no-GC baseline does not).
    #[inline]
    pub fn collects(self) -> bool {
        self.layout & COLLECTS != 0
    }
    /// Add a collector to the catalogue; its name and aliases must be new. Only the collector
    /// registry calls this (with the constructor it keeps under the same id).
    pub(crate) fn register_info(info: CollectorInfo) -> Result<Self, String> {
        let mut reg = REGISTERED.write().unwrap();
        let taken = |n: &str| COLLECTORS.iter().chain(reg.iter().copied()).any(|c| c.name == n || c.aliases.contains(&n));
        if let Some(n) = std::iter::once(&info.name).chain(info.aliases).find(|n| taken(n)) {
            return Err(format!("collector name {n:?} is already taken"));
        }
        let id = COLLECTORS.len() + reg.len();
        let layout = Self::layout(&info);
        reg.push(Box::leak(Box::new(info)));
        Ok(Self { id: id as u16, layout })
    }
}

/// Results name a collector by its catalogue name.
impl Serialize for CollectorKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.short())
    }
}

/// The device's heap properties (`dalvik.vm.heap*`) and ART heap constants.
#[derive(Clone, Debug, Serialize)]
pub struct HeapConfig {
    /// dalvik.vm.heapstartsize: initial target footprint.
    pub start_size: u64,
    /// dalvik.vm.heapgrowthlimit: the heap limit of normal apps.
    pub growth_limit: u64,
    /// dalvik.vm.heapsize: the heap capacity (the limit of largeHeap apps).
    pub capacity: u64,
    /// dalvik.vm.heaptargetutilization.
    pub target_utilization: f64,
    /// dalvik.vm.heapminfree / heapmaxfree.
    pub min_free: u64,
    pub max_free: u64,
    /// ART `foreground_heap_growth_multiplier` (default 2.0 = kDefaultHeapGrowthMultiplier).
    pub foreground_multiplier: f64,
    /// The app declares largeHeap (capacity instead of growth limit).
    pub large_heap: bool,
    /// Non-moving space capacity. source: ART kNonMovingSpaceCapacity = 64 MiB.
    pub(crate) non_moving_capacity: u64,
    /// Boot image mapped by every app. estimate: 12 MiB of boot*.art for Android 10–14.
    pub boot_image_bytes: u64,
    /// Zygote space (objects preloaded by the zygote). estimate: 4 MiB.
    pub zygote_space_bytes: u64,
}

impl Default for HeapConfig {
    /// A 4 GB phone's properties (AOSP frameworks/native build/phone-xhdpi-4096-dalvik-heap.mk: start 8m,
    /// growth limit 192m, heapsize 512m, U 0.7, min_free 4m, max_free 8m).
    fn default() -> Self {
        Self {
            start_size: 8 << 20,
            growth_limit: 192 << 20,
            capacity: 512 << 20,
            target_utilization: 0.7,
            min_free: 4 << 20,
            max_free: 8 << 20,
            foreground_multiplier: 2.0,
            large_heap: false,
            non_moving_capacity: 64 << 20,
            boot_image_bytes: 12 << 20,
            zygote_space_bytes: 4 << 20,
        }
    }
}

impl HeapConfig {
    /// The limit that applies to this app.
    pub fn limit(&self) -> u64 {
        if self.large_heap {
            self.capacity
        } else {
            self.growth_limit.min(self.capacity)
        }
    }
}

/// The simulation grain of the objects of allocation units (see [`crate::cell`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Grain {
    /// Every object a general object (the reference).
    Object,
    /// A unit's objects stored together in a unit cell (the default: same results, less host work).
    Unit,
}

impl Grain {
    pub const NAMES: &'static [&'static str] = &["object", "unit"];
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "object" => Some(Self::Object),
            "unit" => Some(Self::Unit),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Unit => "unit",
        }
    }
}

/// How the heap's size is decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum HeapSizing {
    /// ART's default: `GrowForUtilization` sizes the heap from the live size after each collection.
    Art,
    /// A fixed heap: its capacity is the growth limit from the start, collections trigger
    /// relative to it, no growth and no foreground multiplier (the time–space trade-off of LBO).
    Fixed,
}

impl HeapSizing {
    pub const NAMES: &'static [&'static str] = &["art", "fixed"];
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "art" => Some(Self::Art),
            "fixed" => Some(Self::Fixed),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Art => "art",
            Self::Fixed => "fixed",
        }
    }
}

/// Order in which live objects are traced (and therefore copied).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TraceOrder {
    /// ART's mark stack: last pushed, first scanned.
    DepthFirst,
    /// A FIFO queue (Fleet's grouping GC): depths are shortest distances from the roots.
    BreadthFirst,
}

impl TraceOrder {
    pub const NAMES: &'static [&'static str] = &["dfs", "bfs"];
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "dfs" | "depth-first" => Some(Self::DepthFirst),
            "bfs" | "breadth-first" => Some(Self::BreadthFirst),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::DepthFirst => "dfs",
            Self::BreadthFirst => "bfs",
        }
    }
}

/// Where a collection's work runs (the concurrency policies of Hussein's thesis).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum GcConcurrency {
    /// On the GC daemon thread, concurrently with the mutator except for the collector's pauses
    /// (ART's HeapTaskDaemon; the default).
    Bg,
    /// In the allocating mutator: the mutator that triggers a collection does all its work before
    /// it continues (modelled as the mutator waiting while the collection runs; no concurrency).
    Fg,
    /// On the daemon pinned to the CPU set's last (slowest) core, its frequency capped at
    /// `gc_pin_mhz` (0: no cap).
    Pin,
}

impl GcConcurrency {
    pub const NAMES: &'static [&'static str] = &["bg", "fg", "pin"];
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "bg" => Some(Self::Bg),
            "fg" => Some(Self::Fg),
            "pin" => Some(Self::Pin),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RuntimeConfig {
    pub heap: HeapConfig,
    /// Collector while the app is in the foreground, and in the background.
    pub fg_collector: CollectorKind,
    pub bg_collector: CollectorKind,
    /// Generational (sticky) collections where the collector supports them.
    pub(crate) generational: bool,
    /// Delay of the collector transition after going to background. source: ART
    /// kCollectorTransitionWait = 5 s (Android ≤ 13).
    pub(crate) transition_delay_ns: Nanos,
    /// Whether going to background runs a compacting transition GC at all.
    pub transition_gc: bool,
    /// Heap trim after a GC. source: ART kHeapTrimWait = 5 s.
    pub(crate) trim_delay_ns: Nanos,
    /// Thread-local allocation buffer. source: ART kDefaultTLABSize = 32 KiB.
    pub tlab_size: u32,
    /// Objects at least this big go to the large object space. source: ART
    /// kMinLargeObjectThreshold = 3 pages.
    pub(crate) large_object_threshold: u32,
    /// Use the large object space (false: objects bigger than a region take large regions).
    pub(crate) use_los: bool,
    /// source: ART kEvacuateLivePercentThreshold = 75.
    pub(crate) evacuate_live_percent: u32,
    /// Release (DONTNEED) freed regions' pages at the end of each collection (ART's
    /// ClearFromSpace does); false defers to the heap trim.
    pub(crate) release_regions_at_gc: bool,
    /// The write barrier (card marking on reference stores). False is the LBO baselines' "NW"
    /// option: no barrier cost, no card marks — allowed only with collectors that never read the
    /// card table (semi-space, no-GC).
    pub(crate) write_barrier: bool,
    /// The LBO baselines' "NE" option: the collector zeroes the memory of freed regions itself and
    /// keeps their pages resident instead of returning them to the kernel (at a collection or a
    /// heap trim), so the next use of that memory takes no page fault.
    pub(crate) keep_free_pages: bool,
    pub(crate) trace_order: TraceOrder,
    pub(crate) gc_concurrency: GcConcurrency,
    /// With `gc_concurrency = pin`: the pinned core's frequency cap in MHz (0: none).
    pub(crate) gc_pin_mhz: u32,
    /// Map the card table (heap bytes / 128) as an anonymous VMA (`dalvik-card table`) whose pages
    /// the write barrier and card passes touch (see `card_table`); false keeps it out of the
    /// kernel model. Default true, as on a phone (the table is a real mapping of every app).
    pub card_table_in_memory: bool,
    /// Mutator slice (the granularity at which the GC thread and mutators interleave).
    pub(crate) slice_ns: Nanos,
    /// Simulation grain of allocation units (host work only: results are the same).
    pub grain: Grain,
    /// How the heap's size is decided (ART's sizing, or fixed at the growth limit).
    pub(crate) heap_sizing: HeapSizing,
    pub(crate) costs: RuntimeCosts,
    pub(crate) seed: u64,
    /// Settings of runtime policies (keys under a policy's prefix, e.g. `fleet.t_b_ms`), checked
    /// when set ([`crate::policies::apply_setting`]) and read by the policy when installed
    /// ([`crate::policies::settings_for`]).
    pub policy_settings: Vec<(String, String)>,
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        Self {
            heap: HeapConfig::default(),
            fg_collector: CollectorKind::ConcurrentCopying,
            bg_collector: CollectorKind::ConcurrentCopying,
            generational: true,
            transition_delay_ns: 5_000_000_000,
            transition_gc: true,
            trim_delay_ns: 5_000_000_000,
            tlab_size: 32 * 1024,
            large_object_threshold: 12 * 1024,
            use_los: true,
            evacuate_live_percent: 75,
            release_regions_at_gc: true,
            write_barrier: true,
            keep_free_pages: false,
            trace_order: TraceOrder::DepthFirst,
            gc_concurrency: GcConcurrency::Bg,
            gc_pin_mhz: 0,
            card_table_in_memory: true,
            slice_ns: 1_000_000,
            grain: Grain::Unit,
            heap_sizing: HeapSizing::Art,
            costs: RuntimeCosts::default(),
            seed: 1,
            policy_settings: Vec::new(),
        }
    }
}

pub use mobmem_engine::settings::parse_size;

/// Every runtime setting (`runtime.<key>`, `dalvik.vm.<key>` or the bare key): type, unit, range,
/// help and the source of its default.
pub static SETTINGS: Table<RuntimeConfig> = Table { layer: "runtime", prefixes: &["runtime.", "dalvik.vm."], entries: ENTRIES };

static ENTRIES: &[Setting<RuntimeConfig>] = &[
    setting!(
        size "heapstartsize" => heap.start_size, [0, MAX_HEAP_BYTES],
        "bytes",
        "dalvik.vm.heapstartsize: initial target footprint",
        "the device profile (AOSP phone-xhdpi-4096-dalvik-heap.mk: 8m on a 4 GB phone)"
    ),
    setting!(
        size "heapgrowthlimit" => heap.growth_limit, [0, MAX_HEAP_BYTES],
        "bytes",
        "dalvik.vm.heapgrowthlimit: the heap limit of normal apps",
        "the device profile"
    ),
    setting!(
        size "heapsize" => heap.capacity, [0, MAX_HEAP_BYTES],
        "bytes",
        "dalvik.vm.heapsize: heap capacity (the limit of largeHeap apps)",
        "the device profile"
    ),
    setting!(
        float "heaptargetutilization" => heap.target_utilization, [0.05, 0.95],
        "",
        "dalvik.vm.heaptargetutilization: live / footprint after a GC",
        "the device profile"
    ),
    setting!(
        size "heapminfree" => heap.min_free, [0, MAX_HEAP_BYTES],
        "bytes",
        "dalvik.vm.heapminfree: least free space granted after a GC",
        "the device profile"
    ),
    setting!(
        size "heapmaxfree" => heap.max_free, [0, MAX_HEAP_BYTES],
        "bytes",
        "dalvik.vm.heapmaxfree: most free space granted after a GC",
        "the device profile"
    ),
    setting!(
        float "foreground_heap_growth_multiplier" => heap.foreground_multiplier, [1.0, 10.0],
        "",
        "extra free-space factor while in the foreground",
        "ART kDefaultHeapGrowthMultiplier = 2.0"
    ),
    setting!(
        bool "largeheap" => heap.large_heap,
        "",
        "the app declares largeHeap (its limit is heapsize)",
        "the app's manifest"
    ),
    Setting {
        key: "heap",
        aliases: &[],
        kind: Kind::Size { min: 1 << 20, max: MAX_HEAP_BYTES },
        unit: "bytes",
        help: "per-app heap size: sets the growth limit and capacity (fixed-heap experiments)",
        source: "",
        get: |c| size_text(c.heap.limit()),
        set: |c, v| {
            c.heap.growth_limit = v.int();
            c.heap.capacity = v.int();
            c.heap.start_size = c.heap.start_size.min(v.int());
            Ok(())
        },
    },
    setting!(
        size "non_moving_capacity" => heap.non_moving_capacity, [0, MAX_HEAP_BYTES],
        "bytes",
        "non-moving space capacity",
        "ART kNonMovingSpaceCapacity = 64 MiB"
    ),
    setting!(
        size "boot_image_size" => heap.boot_image_bytes, [0, u64::MAX],
        "bytes",
        "boot image mapped by every app",
        "estimate: 12 MiB of boot*.art for Android 10–14"
    ),
    setting!(
        size "zygote_space_size" => heap.zygote_space_bytes, [0, u64::MAX],
        "bytes",
        "zygote space (objects preloaded by the zygote)",
        "estimate: 4 MiB"
    ),
    Setting {
        key: "collector",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "collector in the foreground and the background (a catalogue name or alias)",
        source: "ART: concurrent copying since Android 8",
        get: |c| c.fg_collector.short().into(),
        set: |c, v| {
            let k = CollectorKind::named(v.text())?;
            c.fg_collector = k;
            c.bg_collector = k;
            Ok(())
        },
    },
    Setting {
        key: "fg_collector",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "collector while in the foreground",
        source: "ART: concurrent copying",
        get: |c| c.fg_collector.short().into(),
        set: |c, v| {
            let k = CollectorKind::named(v.text())?;
            c.fg_collector = k;
            Ok(())
        },
    },
    Setting {
        key: "bg_collector",
        aliases: &[],
        kind: Kind::Text,
        unit: "",
        help: "collector while in the background",
        source: "ART: concurrent copying",
        get: |c| c.bg_collector.short().into(),
        set: |c, v| {
            let k = CollectorKind::named(v.text())?;
            c.bg_collector = k;
            Ok(())
        },
    },
    setting!(
        bool "generational" => generational,
        "",
        "generational (sticky) collections where the collector supports them",
        "ART: generational CC since Android 10"
    ),
    Setting {
        key: "transition_delay_ms",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "ms",
        help: "delay of the collector transition after going to the background",
        source: "ART kCollectorTransitionWait = 5 s (Android ≤ 13)",
        get: |c| (c.transition_delay_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.transition_delay_ns = v.int().saturating_mul(1_000_000);
            Ok(())
        },
    },
    setting!(
        bool "transition_gc" => transition_gc,
        "",
        "whether going to the background runs a compacting transition GC",
        "ART"
    ),
    Setting {
        key: "trim_delay_ms",
        aliases: &[],
        kind: Kind::Int { min: 0, max: u64::MAX },
        unit: "ms",
        help: "delay of the heap trim after a GC",
        source: "ART kHeapTrimWait = 5 s",
        get: |c| (c.trim_delay_ns / 1_000_000).to_string(),
        set: |c, v| {
            c.trim_delay_ns = v.int().saturating_mul(1_000_000);
            Ok(())
        },
    },
    setting!(
        size "tlab_size" => tlab_size, [256, 1 << 18],
        "bytes",
        "thread-local allocation buffer",
        "ART kDefaultTLABSize = 32 KiB"
    ),
    Setting {
        key: "large_object_threshold",
        aliases: &[],
        kind: Kind::Size { min: 4096, max: u64::MAX },
        unit: "bytes",
        help: "objects at least this big go to the large object space",
        source: "ART kMinLargeObjectThreshold = 3 pages",
        get: |c| size_text(c.large_object_threshold as u64),
        set: |c, v| {
            c.large_object_threshold = v.int().min(u32::MAX as u64) as u32;
            Ok(())
        },
    },
    setting!(
        bool "use_los" => use_los,
        "",
        "use the large object space (false: large regions)",
        "ART"
    ),
    setting!(
        float "evacuate_live_percent" => evacuate_live_percent, [0.0, 100.0],
        "%",
        "regions live above this share are not evacuated",
        "ART kEvacuateLivePercentThreshold = 75"
    ),
    setting!(
        bool "release_regions_at_gc" => release_regions_at_gc,
        "",
        "release freed regions' pages at the end of each collection (else at the heap trim)",
        "ART ClearFromSpace"
    ),
    setting!(
        bool "write_barrier" => write_barrier,
        "",
        "card-marking write barrier on reference stores; false (LBO's NW baselines) only with ss or nogc",
        "ART WriteBarrier::ForFieldWrite; NW: the LBO methodology's no-write-barrier baseline option"
    ),
    setting!(
        bool "keep_free_pages" => keep_free_pages,
        "",
        "zero freed regions in the collector and keep their pages resident instead of returning them to the kernel (LBO's NE baselines)",
        "NE: the LBO methodology's no-page-release baseline option; zeroing at cost.init_per_kib_ns"
    ),
    Setting {
        key: "trace_order",
        aliases: &[],
        kind: Kind::Choice(TraceOrder::NAMES),
        unit: "",
        help: "order of tracing (and copying): ART's mark stack, or a FIFO queue (Fleet's grouping GC)",
        source: "ART: depth-first mark stack",
        get: |c| c.trace_order.name().into(),
        set: |c, v| {
            c.trace_order = TraceOrder::parse(v.text()).ok_or_else(|| not_one_of(TraceOrder::NAMES, v.text()))?;
            Ok(())
        },
    },
    Setting {
        key: "gc_concurrency",
        aliases: &[],
        kind: Kind::Choice(GcConcurrency::NAMES),
        unit: "",
        help: "where collections run: bg (the GC daemon, concurrently), fg (the allocating mutator does the whole collection before it continues), pin (the daemon pinned to the slowest core, at most gc_pin_mhz)",
        source: "ART: bg (HeapTaskDaemon); fg and pin are the concurrency policies of Hussein's thesis (Purdue 2017)",
        get: |c| c.gc_concurrency.name().into(),
        set: |c, v| {
            c.gc_concurrency = GcConcurrency::parse(v.text()).ok_or_else(|| not_one_of(GcConcurrency::NAMES, v.text()))?;
            Ok(())
        },
    },
    setting!(
        int "gc_pin_mhz" => gc_pin_mhz, [0, 10_000],
        "MHz",
        "with gc_concurrency = pin: frequency cap of the GC daemon's core, an operating point of that core's cluster (0: no cap)",
        "estimate (the thesis caps the pinned core's frequency; its value is not used here)"
    ),
    setting!(
        bool "card_table_in_memory" => card_table_in_memory,
        "",
        "map the card table as an anonymous VMA whose pages barriers and card passes touch",
        "ART maps the card table as the anonymous mapping `dalvik-card table`"
    ),
    setting!(
        int "slice_us" => slice_ns * 1000, [1, u64::MAX / 1000],
        "µs",
        "mutator slice: the granularity at which the GC thread and mutators interleave",
        "simulation parameter"
    ),
    Setting {
        key: "heap_sizing",
        aliases: &[],
        kind: Kind::Choice(HeapSizing::NAMES),
        unit: "",
        help: "art: GrowForUtilization sizes the heap from the live size (ART's default); fixed: the heap's capacity is the growth limit (heapgrowthlimit, or heapsize for largeHeap apps) from the start, collections trigger relative to it, no growth and no foreground multiplier (for measuring GC cost against heap size)",
        source: "ART Heap::GrowForUtilization; fixed heaps as the ISMM'24 LBO study made ART's heap size controllable",
        get: |c| c.heap_sizing.name().into(),
        set: |c, v| {
            c.heap_sizing = HeapSizing::parse(v.text()).ok_or_else(|| not_one_of(HeapSizing::NAMES, v.text()))?;
            Ok(())
        },
    },
    Setting {
        key: "grain",
        aliases: &[],
        kind: Kind::Choice(Grain::NAMES),
        unit: "",
        help: "simulation grain of allocation units (host work only: results are the same)",
        source: "simulation parameter",
        get: |c| c.grain.name().into(),
        set: |c, v| {
            c.grain = Grain::parse(v.text()).ok_or_else(|| not_one_of(Grain::NAMES, v.text()))?;
            Ok(())
        },
    },
    setting!(
        int "seed" => seed, [0, u64::MAX],
        "",
        "seed of the runtime's random streams",
        ""
    ),
    setting!(
        int "cost.scan_object_ns" => costs.scan_object_ns, [0, MAX_COST_NS],
        "ns",
        "scanning one object (read header and class, find reference fields)",
        "estimate: ~20 ns"
    ),
    setting!(
        int "cost.visit_ref_ns" => costs.visit_ref_ns, [0, MAX_COST_NS],
        "ns",
        "visiting one reference field (load, null/immune check, mark-bit test)",
        "estimate: 4 ns"
    ),
    setting!(
        int "cost.mark_object_ns" => costs.mark_object_ns, [0, MAX_COST_NS],
        "ns",
        "marking one object in place (mark bitmap set, mark-stack push)",
        "estimate: 8 ns"
    ),
    setting!(
        int "cost.copy_object_ns" => costs.copy_object_ns, [0, MAX_COST_NS],
        "ns",
        "fixed cost of copying one object (to-space allocation, forwarding CAS)",
        "estimate: 25 ns"
    ),
    setting!(
        int "cost.copy_per_kib_ns" => costs.copy_per_kib_ns, [0, MAX_COST_NS],
        "ns",
        "copying, per 1024 bytes (memcpy at ~4 GB/s on a phone big core)",
        "estimate: 250 ns/KiB"
    ),
    setting!(
        int "cost.region_ns" => costs.region_ns, [0, MAX_COST_NS],
        "ns",
        "processing one region at flip or reclaim (state, bitmap clearing)",
        "estimate: 300 ns"
    ),
    setting!(
        int "cost.card_ns" => costs.card_ns, [0, MAX_COST_NS],
        "ns",
        "processing one non-clean card (aging it, or finding the objects on it when scanning), and skipping 128 clean cards (word-at-a-time reads of the table)",
        "estimate: 15 ns"
    ),
    setting!(
        int "cost.sweep_object_ns" => costs.sweep_object_ns, [0, MAX_COST_NS],
        "ns",
        "freeing one dead object in a sweep (bitmap walk, free-list push)",
        "estimate: 10 ns"
    ),
    setting!(
        int "cost.forward_object_ns" => costs.forward_object_ns, [0, MAX_COST_NS],
        "ns",
        "computing a forwarding address in mark-compact (per live object)",
        "estimate: 10 ns"
    ),
    setting!(
        int "cost.root_ns" => costs.root_ns, [0, MAX_COST_NS],
        "ns",
        "visiting one root (stack slot, static field, JNI global)",
        "estimate: 10 ns"
    ),
    setting!(
        int "cost.suspend_ns" => costs.suspend_ns, [0, MAX_COST_NS],
        "ns",
        "suspending and resuming all mutator threads for a pause (checkpoint + flip)",
        "estimate: 80 µs (ART CC flip pauses are typically 0.1–1 ms on phones; this is the fixed part)"
    ),
    setting!(
        int "cost.checkpoint_ns" => costs.checkpoint_ns, [0, MAX_COST_NS],
        "ns",
        "running a checkpoint on one mutator thread (request, run at its next suspend check, pass the barrier), besides the checkpoint's own work",
        "estimate: 5 µs (a fraction of a global suspend-all)"
    ),
    setting!(
        int "cost.read_barrier_ns" => costs.read_barrier_ns, [0, MAX_COST_NS],
        "ns",
        "read barrier fast path, per reference load while a concurrent copy/compaction runs",
        "estimate: 2 ns (Baker gray-bit test)"
    ),
    setting!(
        int "cost.write_barrier_ns" => costs.write_barrier_ns, [0, MAX_COST_NS],
        "ns",
        "write barrier (card mark), per reference store, always",
        "estimate: 1 ns"
    ),
    setting!(
        int "cost.tlab_alloc_ns" => costs.tlab_alloc_ns, [0, MAX_COST_NS],
        "ns",
        "bump allocation inside a TLAB, per object (plus zeroing, below)",
        "estimate: 5 ns"
    ),
    setting!(
        int "cost.new_tlab_ns" => costs.new_tlab_ns, [0, MAX_COST_NS],
        "ns",
        "getting a new TLAB from the region space",
        "estimate: 150 ns"
    ),
    setting!(
        int "cost.new_region_ns" => costs.new_region_ns, [0, MAX_COST_NS],
        "ns",
        "getting a new region",
        "estimate: 400 ns"
    ),
    setting!(
        int "cost.freelist_alloc_ns" => costs.freelist_alloc_ns, [0, MAX_COST_NS],
        "ns",
        "free-list (RosAlloc-like) allocation, per object",
        "estimate: 40 ns"
    ),
    setting!(
        int "cost.los_alloc_ns" => costs.los_alloc_ns, [0, MAX_COST_NS],
        "ns",
        "large object allocation (page map / mmap), per object",
        "estimate: 3 µs"
    ),
    setting!(
        int "cost.los_free_ns" => costs.los_free_ns, [0, MAX_COST_NS],
        "ns",
        "freeing a large object (besides the madvise, which the kernel model charges)",
        "estimate: 1 µs"
    ),
    setting!(
        int "cost.init_per_kib_ns" => costs.init_per_kib_ns, [0, MAX_COST_NS],
        "ns",
        "zeroing/initialising a new object, per 1024 bytes",
        "estimate: 60 ns/KiB (~16 GB/s memset)"
    ),
    setting!(
        int "cost.object_swap_ns" => costs.object_swap_ns, [0, MAX_COST_NS],
        "ns",
        "copying one object's contents out to the per-app swap file / back (object swap), fixed part; the storage I/O is charged per page from the kernel model's flash costs",
        "estimate: 2 µs"
    ),
];

impl RuntimeConfig {
    /// The keys `set` accepts (without prefix), in table order.
    pub fn keys() -> Vec<&'static str> {
        SETTINGS.keys()
    }

    /// Apply one setting. Keys may carry a `runtime.` or `dalvik.vm.` prefix. (A policy's own
    /// settings go through [`crate::policies::apply_setting`].)
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingError> {
        SETTINGS.set(self, key, value)
    }

    pub fn validate(&self) -> Result<(), String> {
        let h = &self.heap;
        if h.min_free > h.max_free {
            return Err(format!("heapminfree ({}) exceeds heapmaxfree ({})", h.min_free, h.max_free));
        }
        if h.limit() < (1 << 20) {
            return Err("the heap limit must be at least 1m".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("8m"), Some(8 << 20));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
    }
    #[test]
    fn settings_apply_and_reject() {
        let mut c = RuntimeConfig::default();
        c.set("dalvik.vm.heapgrowthlimit", "256m").unwrap();
        assert_eq!(c.heap.growth_limit, 256 << 20);
        c.set("runtime.collector", "cmc").unwrap();
        assert_eq!(c.fg_collector, CollectorKind::ConcurrentMarkCompact);
        c.set("cost.scan_object_ns", "33").unwrap();
        assert_eq!(c.costs.scan_object_ns, 33);
        assert!(c.set("collector", "g1").is_err());
        c.set("collector", "ms-otf").unwrap();
        assert_eq!((c.fg_collector, c.fg_collector.short()), (CollectorKind::MarkSweepOtf, "ms-otf"));
        assert!(!c.fg_collector.uses_regions() && c.fg_collector.concurrent());
        assert_eq!(CollectorKind::parse("gcms"), Some(CollectorKind::MarkSweep));
        c.set("card_table_in_memory", "false").unwrap();
        assert!(!c.card_table_in_memory);
        assert!(c.set("bogus", "1").is_err());
        assert!(c.set("heaptargetutilization", "2").is_err());
    }
}
