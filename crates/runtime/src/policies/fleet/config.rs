//! Fleet's parameters and their settings table (`--set fleet.KEY=VALUE`, `mobmem keys fleet`):
//! the paper's values as defaults, the released code's as documented alternatives.

use mobmem_engine::setting;
use mobmem_engine::settings::{Kind, Setting, Table};
use mobmem_engine::Nanos;
use serde::Serialize;

/// Fleet's parameters (`fleet.*` settings).
#[derive(Clone, Debug, Serialize)]
pub struct FleetConfig {
    /// Delay from going to the background to the grouping GC (T_B).
    pub(crate) t_b_ns: Nanos,
    /// How long background mode lasts after returning to the foreground (T_F).
    pub(crate) t_f_ns: Nanos,
    /// Near-root depth threshold D: objects within D levels of the roots are near-root objects.
    pub(crate) depth: u16,
    /// Count depth from 0 (objects the roots reference are at depth 0), as the released code does:
    /// `depth ≤ D` then covers D + 1 levels. False: the paper's D levels.
    pub(crate) depth_from_zero: bool,
    /// Mark the launch regions hot once, right after the grouping GC (the released code), instead
    /// of every `hot_period` while the app stays in the background.
    pub(crate) hot_once: bool,
    /// Period of the hot hint on launch regions while in the background.
    pub(crate) hot_period_ns: Nanos,
    /// Background-object GCs never fall back to a full collection: foreground objects stay live
    /// for the whole background period (the released code).
    pub(crate) keep_foreground: bool,
    /// Card size of the second card table, in bytes (a power of two, at least 128).
    pub(crate) card_bytes: u64,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            t_b_ns: 10_000_000_000,
            t_f_ns: 3_000_000_000,
            depth: 2,
            depth_from_zero: false,
            hot_once: false,
            hot_period_ns: 10_000_000_000,
            keep_foreground: false,
            card_bytes: 1024,
        }
    }
}

impl FleetConfig {
    /// The largest depth (as the tracer counts it: the roots' targets are at depth 1) of a
    /// near-root object.
    pub fn max_near_root_depth(&self) -> u16 {
        if self.depth_from_zero {
            self.depth.saturating_add(1)
        } else {
            self.depth
        }
    }
}

const MS: u64 = 1_000_000;
/// Delays above a day are refused (a typo, not an experiment).
const MAX_DELAY_MS: u64 = 86_400_000;

/// Fleet's settings (`--set fleet.KEY=VALUE`).
pub static SETTINGS: Table<FleetConfig> = Table { layer: "fleet", prefixes: &["fleet."], entries: ENTRIES };

static ENTRIES: &[Setting<FleetConfig>] = &[
    Setting {
        key: "t_b_ms",
        aliases: &["t_b"],
        kind: Kind::Int { min: 0, max: MAX_DELAY_MS },
        unit: "ms",
        help: "T_B: time in the background before the grouping GC",
        source: "Fleet paper and released code (WINDOW_SIZE_BACKGROUND_WS = 10 s)",
        get: |c| (c.t_b_ns / MS).to_string(),
        set: |c, v| {
            c.t_b_ns = v.int() * MS;
            Ok(())
        },
    },
    Setting {
        key: "t_f_ms",
        aliases: &["t_f"],
        kind: Kind::Int { min: 0, max: MAX_DELAY_MS },
        unit: "ms",
        help: "T_F: background mode lasts this long after returning to the foreground",
        source: "Fleet paper (3 s; the released code uses 5 s, WINDOW_SIZE_HOT_LAUNCH)",
        get: |c| (c.t_f_ns / MS).to_string(),
        set: |c, v| {
            c.t_f_ns = v.int() * MS;
            Ok(())
        },
    },
    setting!(
        int "depth" => depth, [0, 1000],
        "levels",
        "D: objects within D levels of the roots are near-root objects (launch regions)",
        "Fleet paper and released code (NEAR_TO_ROOT_THRESHOLD = 2)"
    ),
    setting!(
        bool "depth_from_zero" => depth_from_zero,
        "",
        "count depth from 0 at the roots' targets, inclusive (D + 1 levels), as the released code does",
        "released code: SetDepth(0) for root-referenced objects, GetDepth() <= 2"
    ),
    setting!(
        bool "hot_once" => hot_once,
        "",
        "mark launch regions hot once after the grouping GC (released code) instead of periodically",
        "released code: one madvise pass after the grouping GC"
    ),
    Setting {
        key: "hot_period_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: MAX_DELAY_MS },
        unit: "ms",
        help: "period of the hot hint on launch regions while the app stays in the background",
        source: "estimate: the paper marks launch regions hot periodically; no period found, T_B's 10 s used",
        get: |c| (c.hot_period_ns / MS).to_string(),
        set: |c, v| {
            c.hot_period_ns = v.int() * MS;
            Ok(())
        },
    },
    setting!(
        bool "keep_foreground" => keep_foreground,
        "",
        "background-object GCs never fall back to a full collection (foreground objects live for the whole background period, released code); false: a collection for a failed allocation is a full one",
        "Fleet paper (fallback to a full collection as an option); released code keeps foreground objects alive"
    ),
    Setting {
        key: "card_bytes",
        aliases: &[],
        kind: Kind::Size { min: 128, max: 1 << 20 },
        unit: "bytes",
        help: "card size of the second card table (writes into foreground objects), a power of two",
        source: "Fleet paper: 2^10-byte cards",
        get: |c| c.card_bytes.to_string(),
        set: |c, v| {
            let b = v.int();
            if !b.is_power_of_two() {
                return Err(format!("must be a power of two, got {b}"));
            }
            c.card_bytes = b;
            Ok(())
        },
    },
];
