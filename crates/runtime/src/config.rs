//! Runtime configuration: the `dalvik.vm.heap*` properties of a device, the collectors, ART's
//! timing constants, and the cost model. Every setting has a name accepted by
//! [`RuntimeConfig::set`] (`RuntimeConfig::KEYS`), so device profiles, calibration files and
//! command lines layer the same way as the kernel's settings.

use crate::costs::RuntimeCosts;
use mobmem_engine::Nanos;
use serde::Serialize;

/// Collector names (the registry in [`crate::gc`] maps them to implementations).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CollectorKind {
    NoGc,
    SemiSpace,
    ConcurrentCopying,
    ConcurrentMarkCompact,
    /// Concurrent mark-sweep with sticky collections (generational CMS; ART's CMS collector type).
    MarkSweep,
    /// The same with on-the-fly root scanning (roots at a per-thread checkpoint, no initial pause).
    MarkSweepOtf,
}

/// A collector's entry in the catalogue: its name, the other names it is accepted under, and
/// one line of help.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct CollectorInfo {
    #[serde(skip)]
    pub kind: CollectorKind,
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub help: &'static str,
}

/// Every collector: the one list the command lines, scenario files and settings use.
pub const COLLECTORS: &[CollectorInfo] = &[
    CollectorKind::info_const(
        CollectorKind::ConcurrentCopying,
        "cc",
        &["concurrent-copying"],
        "concurrent copying (ART's default since Android 8): region space, read barrier, sticky and full collections",
    ),
    CollectorKind::info_const(
        CollectorKind::ConcurrentMarkCompact,
        "cmc",
        &["mark-compact"],
        "concurrent mark-compact: sliding compaction, a mutator touching a page not yet compacted compacts it (as with userfaultfd); full collections only",
    ),
    CollectorKind::info_const(
        CollectorKind::MarkSweep,
        "ms",
        &["cms", "mark-sweep", "gcms", "generational-cms"],
        "concurrent mark-sweep with sticky collections (ART's generational CMS)",
    ),
    CollectorKind::info_const(
        CollectorKind::MarkSweepOtf,
        "ms-otf",
        &["cms-otf", "mark-sweep-otf"],
        "mark-sweep with on-the-fly root scanning (roots at a per-thread checkpoint, no initial pause)",
    ),
    CollectorKind::info_const(CollectorKind::SemiSpace, "ss", &["semispace"], "stop-the-world semi-space copying: every allocated region evacuated"),
    CollectorKind::info_const(CollectorKind::NoGc, "nogc", &["none"], "no collection: allocation beyond the heap is out of memory (the LBO baseline)"),
];

impl CollectorKind {
    const fn info_const(kind: CollectorKind, name: &'static str, aliases: &'static [&'static str], help: &'static str) -> CollectorInfo {
        CollectorInfo { kind, name, aliases, help }
    }
    /// The collectors' names, in catalogue order.
    pub fn names() -> Vec<&'static str> {
        COLLECTORS.iter().map(|c| c.name).collect()
    }
    /// A collector by name or alias.
    pub fn parse(s: &str) -> Option<Self> {
        COLLECTORS.iter().find(|c| c.name == s || c.aliases.contains(&s)).map(|c| c.kind)
    }
    pub fn info(self) -> &'static CollectorInfo {
        COLLECTORS.iter().find(|c| c.kind == self).expect("every collector kind has a catalogue entry")
    }
    pub fn short(self) -> &'static str {
        self.info().name
    }
    /// Whether the heap's main space is a region space (else a free-list space).
    pub fn uses_regions(self) -> bool {
        !matches!(self, Self::MarkSweep | Self::MarkSweepOtf)
    }
    /// Whether mutators keep half of the regions free for evacuation.
    pub fn copy_reserve(self) -> bool {
        matches!(self, Self::ConcurrentCopying | Self::SemiSpace)
    }
    pub fn concurrent(self) -> bool {
        matches!(self, Self::ConcurrentCopying | Self::ConcurrentMarkCompact | Self::MarkSweep | Self::MarkSweepOtf)
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
