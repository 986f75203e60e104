//! The basics of an object every layer shares (ART `mirror::Object` and `ObjPtr`): the reference
//! type ([`ObjId`], [`NULL`]), header and alignment sizes, the spaces an object can live in, the
//! app state at allocation, and the per-object flag bits. Storage of objects is in `object` (and
//! `cell` for allocation units); this module holds no state.

pub type ObjId = u32;
/// The null reference.
pub const NULL: ObjId = u32::MAX;

/// Object header (class pointer + lock word, compressed). source: ART `mirror::Object` is 8 bytes.
pub const HEADER_BYTES: u32 = 8;
/// Object alignment. source: ART `kObjectAlignment` = 8.
pub const OBJECT_ALIGN: u32 = 8;
/// Size of one reference field (compressed 32-bit heap references). source: ART `HeapReference`.
pub const REF_BYTES: u32 = 4;

/// Where an object lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum SpaceId {
    /// The region space (`RegionSpace`), or the main space of a mark-sweep heap.
    Main = 0,
    /// Non-moving space (classes and other pinned objects).
    NonMoving = 1,
    /// Large object space (objects ≥ 12 KiB).
    Los = 2,
    /// Zygote space: shared copy-on-write with the zygote, never collected by app GCs.
    Zygote = 3,
    /// Boot image space: shared, never collected.
    Boot = 4,
}

impl SpaceId {
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Main,
            1 => Self::NonMoving,
            2 => Self::Los,
            3 => Self::Zygote,
            _ => Self::Boot,
        }
    }
    pub fn immune(self) -> bool {
        matches!(self, Self::Zygote | Self::Boot)
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Main => "main",
            Self::NonMoving => "non-moving",
            Self::Los => "large-object",
            Self::Zygote => "zygote",
            Self::Boot => "boot-image",
        }
    }
}

/// The owning app's state (process importance) when an object was allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[repr(u8)]
pub enum AppState {
    Foreground = 0,
    Background = 1,
}

impl AppState {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "fg" | "foreground" => Some(Self::Foreground),
            "bg" | "background" => Some(Self::Background),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Foreground => "fg",
            Self::Background => "bg",
        }
    }
}

/// Per-object flag bits.
pub mod flag {
    /// The id holds an object (not freed).
    pub const LIVE: u8 = 1;
    /// Allocated since the last collection's flip (in the allocation stack).
    pub const YOUNG: u8 = 2;
    /// The object has a stub (object-granularity swap, see `crate::object_swap`): its heap
    /// bytes are the stub's, its contents are in the swapped-in space (or the swap file).
    pub const STUB: u8 = 4;
    /// Pinned: allocated in the non-moving space on purpose.
    pub const PINNED: u8 = 16;
}

/// Who copied an object last.
pub const COPIED_NEVER: u32 = 0;

/// Reference fields kept inside the header (objects with more use the edge array).
pub const INLINE_REFS: usize = 3;
