//! Runtime configuration: the `dalvik.vm.heap*` properties of a device, the collectors, ART's
//! timing constants, and the cost model. Every setting has a name accepted by
//! [`RuntimeConfig::set`] (`RuntimeConfig::KEYS`), so device profiles, calibration files and
//! command lines layer the same way as the kernel's settings.

use crate::costs::RuntimeCosts;
use mobmem_engine::Nanos;
use serde::Serialize;

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
    pub non_moving_capacity: u64,
    /// Boot image mapped by every app. estimate: 12 MiB of boot*.art for Android 10–14.
    pub boot_image_bytes: u64,
    /// Zygote space (objects preloaded by the zygote). estimate: 4 MiB.
    pub zygote_space_bytes: u64,
}

impl Default for HeapConfig {
    /// A 4 GB phone's properties (runtime.md: start 8m, growth limit 192m, heapsize 512m,
    /// U 0.7, min_free 4m, max_free 8m).
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
    pub fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Unit => "unit",
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

#[derive(Clone, Debug, Serialize)]
pub struct RuntimeConfig {
    pub heap: HeapConfig,
    /// Collector while the app is in the foreground, and in the background.
    pub fg_collector: CollectorKind,
    pub bg_collector: CollectorKind,
    /// Generational (sticky) collections where the collector supports them.
    pub generational: bool,
    /// Delay of the collector transition after going to background. source: ART
    /// kCollectorTransitionWait = 5 s (Android ≤ 13).
    pub transition_delay_ns: Nanos,
    /// Whether going to background runs a compacting transition GC at all.
    pub transition_gc: bool,
    /// Heap trim after a GC. source: ART kHeapTrimWait = 5 s.
    pub trim_delay_ns: Nanos,
    /// Thread-local allocation buffer. source: ART kDefaultTLABSize = 32 KiB.
    pub tlab_size: u32,
    /// Objects at least this big go to the large object space. source: ART
    /// kMinLargeObjectThreshold = 3 pages.
    pub large_object_threshold: u32,
    /// Use the large object space (false: objects bigger than a region take large regions).
    pub use_los: bool,
    /// source: ART kEvacuateLivePercentThreshold = 75.
    pub evacuate_live_percent: u32,
    /// Release (DONTNEED) freed regions' pages at the end of each collection (ART's
    /// ClearFromSpace does); false defers to the heap trim.
    pub release_regions_at_gc: bool,
    pub trace_order: TraceOrder,
    /// Map the card table (heap bytes / 128) as an anonymous VMA (`dalvik-card table`) whose pages
    /// the write barrier and card passes touch (see `card_table`); false keeps it out of the
    /// kernel model. Default false: the device session results (lmkd's kills in
    /// `crates/device/tests/session.rs`) were tuned without it; see docs/runtime.md.
    pub card_table_in_memory: bool,
    /// Mutator slice (the granularity at which the GC thread and mutators interleave).
    pub slice_ns: Nanos,
    /// Simulation grain of allocation units (host work only: results are the same).
    pub grain: Grain,
    pub costs: RuntimeCosts,
    pub seed: u64,
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
            trace_order: TraceOrder::DepthFirst,
            card_table_in_memory: false,
            slice_ns: 1_000_000,
            grain: Grain::Unit,
            costs: RuntimeCosts::default(),
            seed: 1,
        }
    }
}

/// Parse a size: bytes, or with a k/m/g suffix (as dalvik.vm properties are written).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').unwrap_or(&s);
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    if v.is_nan() || v < 0.0 || !v.is_finite() {
        return None;
    }
    Some((v * mult as f64) as u64)
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("setting {key}: {msg}")]
pub struct SettingError {
    pub key: String,
    pub msg: String,
}

impl RuntimeConfig {
    pub const KEYS: &'static [&'static str] = &[
        "heapstartsize",
        "heapgrowthlimit",
        "heapsize",
        "heaptargetutilization",
        "heapminfree",
        "heapmaxfree",
        "foreground_heap_growth_multiplier",
        "largeheap",
        "heap",
        "non_moving_capacity",
        "boot_image_size",
        "zygote_space_size",
        "collector",
        "fg_collector",
        "bg_collector",
        "generational",
        "transition_delay_ms",
        "transition_gc",
        "trim_delay_ms",
        "tlab_size",
        "large_object_threshold",
        "use_los",
        "evacuate_live_percent",
        "release_regions_at_gc",
        "trace_order",
        "card_table_in_memory",
        "slice_us",
        "grain",
        "seed",
        "cost.<name>",
    ];

    /// Apply one setting. Keys may carry a `runtime.` or `dalvik.vm.` prefix.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SettingError> {
        let k = key.strip_prefix("runtime.").unwrap_or(key);
        let k = k.strip_prefix("dalvik.vm.").unwrap_or(k);
        let bad = |msg: String| SettingError { key: key.into(), msg };
        let size = || parse_size(value).ok_or_else(|| bad(format!("expected a size like 512k, 8m or 1g, got {value:?}")));
        let float = |lo: f64, hi: f64| -> Result<f64, SettingError> {
            let x: f64 = value.trim().parse().map_err(|_| bad(format!("expected a number, got {value:?}")))?;
            if !(lo..=hi).contains(&x) {
                return Err(bad(format!("must be within [{lo}, {hi}], got {x}")));
            }
            Ok(x)
        };
        let int = || -> Result<u64, SettingError> { value.trim().parse::<u64>().map_err(|_| bad(format!("expected a non-negative integer, got {value:?}"))) };
        let boolean = || -> Result<bool, SettingError> {
            match value.trim() {
                "true" | "1" | "yes" => Ok(true),
                "false" | "0" | "no" => Ok(false),
                _ => Err(bad(format!("expected true or false, got {value:?}"))),
            }
        };
        let collector = || {
            CollectorKind::parse(value.trim()).ok_or_else(|| bad(format!("unknown collector {value:?}; expected one of {}", CollectorKind::names().join(", "))))
        };
        let h = &mut self.heap;
        match k {
            "heapstartsize" => h.start_size = size()?,
            "heapgrowthlimit" => h.growth_limit = size()?,
            "heapsize" => h.capacity = size()?,
            "heaptargetutilization" => h.target_utilization = float(0.05, 0.95)?,
            "heapminfree" => h.min_free = size()?,
            "heapmaxfree" => h.max_free = size()?,
            "foreground_heap_growth_multiplier" => h.foreground_multiplier = float(1.0, 10.0)?,
            "largeheap" => h.large_heap = boolean()?,
            // Per-app heap-size override (ISMM'24 framework): growth limit and capacity.
            "heap" => {
                let s = size()?;
                if s < 1 << 20 {
                    return Err(bad("heap must be at least 1m".into()));
                }
                h.growth_limit = s;
                h.capacity = s;
                h.start_size = h.start_size.min(s);
            }
            "non_moving_capacity" => h.non_moving_capacity = size()?,
            "boot_image_size" => h.boot_image_bytes = size()?,
            "zygote_space_size" => h.zygote_space_bytes = size()?,
            "collector" => {
                let c = collector()?;
                self.fg_collector = c;
                self.bg_collector = c;
            }
            "fg_collector" => self.fg_collector = collector()?,
            "bg_collector" => self.bg_collector = collector()?,
            "generational" => self.generational = boolean()?,
            "transition_delay_ms" => self.transition_delay_ns = int()? * 1_000_000,
            "transition_gc" => self.transition_gc = boolean()?,
            "trim_delay_ms" => self.trim_delay_ns = int()? * 1_000_000,
            "tlab_size" => {
                let s = size()?;
                if !(256..=(1 << 18)).contains(&s) {
                    return Err(bad("must be within [256, 256k]".into()));
                }
                self.tlab_size = s as u32
            }
            "large_object_threshold" => {
                let s = size()?;
                if s < 4096 {
                    return Err(bad("must be at least 4k".into()));
                }
                self.large_object_threshold = s.min(u32::MAX as u64) as u32
            }
            "use_los" => self.use_los = boolean()?,
            "evacuate_live_percent" => self.evacuate_live_percent = float(0.0, 100.0)? as u32,
            "release_regions_at_gc" => self.release_regions_at_gc = boolean()?,
            "card_table_in_memory" => self.card_table_in_memory = boolean()?,
            "trace_order" => {
                self.trace_order = match value.trim() {
                    "dfs" | "depth-first" => TraceOrder::DepthFirst,
                    "bfs" | "breadth-first" => TraceOrder::BreadthFirst,
                    _ => return Err(bad(format!("expected dfs or bfs, got {value:?}"))),
                }
            }
            "slice_us" => {
                let v = int()?;
                if v == 0 {
                    return Err(bad("must be positive".into()));
                }
                self.slice_ns = v * 1000
            }
            "grain" => {
                self.grain = match value.trim() {
                    "object" => Grain::Object,
                    "unit" => Grain::Unit,
                    _ => return Err(bad(format!("expected object or unit, got {value:?}"))),
                }
            }
            "seed" => self.seed = int()?,
            _ if k.starts_with("cost.") => {
                let v = int()?;
                let slot = self.costs.slot(&k[5..]).ok_or_else(|| bad(format!("unknown cost; known: {}", RuntimeCosts::KEYS.join(", "))))?;
                *slot = v;
            }
            _ => return Err(bad(format!("unknown runtime setting; known: {}", Self::KEYS.join(", ")))),
        }
        Ok(())
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
        c.set("card_table_in_memory", "true").unwrap();
        assert!(c.card_table_in_memory);
        assert!(c.set("bogus", "1").is_err());
        assert!(c.set("heaptargetutilization", "2").is_err());
    }
}
