//! Marvin's parameters and their settings table (`--set marvin.KEY=VALUE`, `mobmem keys
//! marvin`): the values of the Fleet paper's comparison as defaults, Marvin's released code's as
//! named alternatives.

use mobmem_engine::setting;
use mobmem_engine::settings::{Kind, Setting, Table};
use mobmem_engine::Nanos;
use serde::Serialize;

/// Marvin's parameters (`marvin.*` settings).
#[derive(Clone, Debug, Serialize)]
pub struct MarvinConfig {
    /// Objects of at least this many bytes get stubs (swap candidates).
    pub(crate) threshold: u32,
    /// An object is cold when it was not accessed during the last `cold_epochs` non-sticky
    /// collections nor since the last one.
    pub(crate) cold_epochs: u32,
    /// Reads make an object hot too (read and write bits); false: writes only.
    pub(crate) count_reads: bool,
    /// Period of the write task in the foreground and in the background.
    pub(crate) write_task_fg_ns: Nanos,
    pub(crate) write_task_bg_ns: Nanos,
    /// In the background, every `compact_every`-th write-task cycle is a compaction (stubs for
    /// new large objects, then cold objects' pages released).
    pub(crate) compact_every: u32,
    /// Read every released object back in a pause when the app returns to the foreground.
    pub(crate) swap_in_on_foreground: bool,
    /// Size of the swapped-in space and bound of the app's swap file.
    pub(crate) space_bytes: u64,
    pub(crate) swap_file_bytes: u64,
}

impl Default for MarvinConfig {
    fn default() -> Self {
        Self {
            threshold: 1024,
            cold_epochs: 3,
            count_reads: true,
            write_task_fg_ns: 5_000_000_000,
            write_task_bg_ns: 30_000_000_000,
            compact_every: 7,
            swap_in_on_foreground: true,
            space_bytes: crate::object_swap::DEFAULT_SPACE_BYTES,
            swap_file_bytes: crate::object_swap::DEFAULT_FILE_BYTES,
        }
    }
}

const MS: u64 = 1_000_000;
const MAX_DELAY_MS: u64 = 86_400_000;

/// Marvin's settings (`--set marvin.KEY=VALUE`).
pub static SETTINGS: Table<MarvinConfig> = Table { layer: "marvin", prefixes: &["marvin."], entries: ENTRIES };

static ENTRIES: &[Setting<MarvinConfig>] = &[
    Setting {
        key: "threshold",
        aliases: &[],
        kind: Kind::Size { min: 1, max: 1 << 30 },
        unit: "bytes",
        help: "objects of at least this size get stubs and may be swapped out",
        source: "Fleet paper's comparison: 1 KiB; Marvin's released code: 2 KiB (objectIsLarge); Fleet's port of Marvin: 64 B",
        get: |c| c.threshold.to_string(),
        set: |c, v| {
            c.threshold = v.int() as u32;
            Ok(())
        },
    },
    setting!(
        int "cold_epochs" => cold_epochs, [1, 64],
        "collections",
        "an object is cold when not accessed during the last N non-sticky collections nor since the last one",
        "Marvin's released code: 4-bit shift register below 2 and the current bit clear (3)"
    ),
    setting!(
        bool "count_reads" => count_reads,
        "",
        "reads make an object hot too (read and write bits); false: writes only, as the released code tests",
        "estimate: the design keeps read and write bits; Marvin's released code tests the write register only"
    ),
    Setting {
        key: "write_task_fg_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: MAX_DELAY_MS },
        unit: "ms",
        help: "period of the write task in the foreground (a non-sticky collection, then cold modified objects written)",
        source: "Marvin's released code: WRITE_TASK_FG_WAIT_TIME = 5 s",
        get: |c| (c.write_task_fg_ns / MS).to_string(),
        set: |c, v| {
            c.write_task_fg_ns = v.int() * MS;
            Ok(())
        },
    },
    Setting {
        key: "write_task_bg_ms",
        aliases: &[],
        kind: Kind::Int { min: 1, max: MAX_DELAY_MS },
        unit: "ms",
        help: "period of the write task in the background",
        source: "Marvin's released code: WRITE_TASK_BG_WAIT_TIME = 30 s",
        get: |c| (c.write_task_bg_ns / MS).to_string(),
        set: |c, v| {
            c.write_task_bg_ns = v.int() * MS;
            Ok(())
        },
    },
    setting!(
        int "compact_every" => compact_every, [1, 1000],
        "cycles",
        "in the background, every N-th write-task cycle is a compaction that creates stubs and releases cold objects' pages",
        "Marvin's released code: BG_MARK_SWEEPS_BEFORE_SEMI_SPACE = 6 (the 7th cycle compacts)"
    ),
    setting!(
        bool "swap_in_on_foreground" => swap_in_on_foreground,
        "",
        "read every swapped-out object back in a pause when the app returns to the foreground",
        "Marvin's released code: SWAP_IN_ON_FOREGROUND = true"
    ),
    Setting {
        key: "space_mib",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 65536 },
        unit: "MiB",
        help: "size of the swapped-in space (objects with stubs, page-granular); objects that do not fit keep no stub",
        source: "Marvin's released code reserves 512 MiB",
        get: |c| (c.space_bytes >> 20).to_string(),
        set: |c, v| {
            c.space_bytes = v.int() << 20;
            Ok(())
        },
    },
    Setting {
        key: "swap_file_mib",
        aliases: &[],
        kind: Kind::Int { min: 1, max: 65536 },
        unit: "MiB",
        help: "bound of the app's swap file; when full, further objects are not written (and stay in memory)",
        source: "estimate: Marvin's file has no bound of its own; 512 MiB, the swapped-in space's size",
        get: |c| (c.swap_file_bytes >> 20).to_string(),
        set: |c, v| {
            c.swap_file_bytes = v.int() << 20;
            Ok(())
        },
    },
];
