//! Objects in struct-of-arrays storage (`mirror::Object`, seen from outside).
//!
//! An object is an index (`ObjId`) into parallel vectors: its address (a byte offset inside its
//! space's VMA), size, space, reference fields (a slice of one flat edge array), allocation time
//! (simulated ns and the allocated-bytes clock), the app state at allocation, and GC metadata
//! (mark epoch, depth at marking, which thread last copied it). The identity of an object is
//! stable while it lives: a moving collector changes `addr`, never the id, so references (ids)
//! stay valid across moves. A freed id is recycled by a later allocation (`gen` counts reuses).
//!
//! Nothing here allocates per object on the hot path: vectors grow amortised, freed ids and their
//! edge slots are reused, and the edge array is compacted when half of it is dead.

use mobmem_engine::Nanos;

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
    /// Contents swapped out (object-granularity swap); a stub keeps its references.
    pub const SWAPPED: u8 = 4;
    /// Recorded in the dirty-object list (write barrier) since the last flip.
    pub const DIRTY: u8 = 8;
    /// Pinned: allocated in the non-moving space on purpose.
    pub const PINNED: u8 = 16;
}

/// Who copied an object last.
pub const COPIED_NEVER: u32 = 0;

/// Struct-of-arrays object storage.
#[derive(Default, Clone)]
pub struct Objects {
    pub addr: Vec<u64>,
    pub size: Vec<u32>,
    pub space: Vec<u8>,
    pub flags: Vec<u8>,
    pub ref_start: Vec<u32>,
    pub nrefs: Vec<u16>,
    /// Edge slots reserved for this id (≥ nrefs), reused when the id is recycled.
    pub ref_cap: Vec<u16>,
    /// The flat edge array.
    pub refs: Vec<ObjId>,
    pub alloc_ns: Vec<Nanos>,
    /// The allocated-bytes clock at allocation.
    pub alloc_clock: Vec<u64>,
    pub alloc_state: Vec<u8>,
    /// Mark epoch: marked in collection `e` iff `mark[o] == e`.
    pub mark: Vec<u32>,
    /// Depth from the roots at which the current collection discovered the object.
    pub depth: Vec<u16>,
    /// Thread id that copied the object last (`COPIED_NEVER` if never moved). The GC thread and
    /// mutator threads have distinct ids (see `Runtime::gc_thread`).
    pub copied_by: Vec<u32>,
    /// Number of times the id was (re)used.
    pub gen: Vec<u32>,
    free_ids: Vec<ObjId>,
    /// Live objects (ids in use).
    pub count: u64,
    /// Edge slots of freed objects not yet reused.
    pub dead_edges: u64,
}

impl Objects {
    pub fn len(&self) -> usize {
        self.addr.len()
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    #[inline]
    pub fn is_live(&self, o: ObjId) -> bool {
        (o as usize) < self.flags.len() && self.flags[o as usize] & flag::LIVE != 0
    }
    #[inline]
    pub fn space_of(&self, o: ObjId) -> SpaceId {
        SpaceId::from_u8(self.space[o as usize])
    }
    #[inline]
    pub fn refs_of(&self, o: ObjId) -> &[ObjId] {
        let s = self.ref_start[o as usize] as usize;
        &self.refs[s..s + self.nrefs[o as usize] as usize]
    }
    #[inline]
    pub fn get_ref(&self, o: ObjId, field: u32) -> ObjId {
        debug_assert!(field < self.nrefs[o as usize] as u32);
        self.refs[self.ref_start[o as usize] as usize + field as usize]
    }
    #[inline]
    pub fn set_ref(&mut self, o: ObjId, field: u32, v: ObjId) {
        debug_assert!(field < self.nrefs[o as usize] as u32);
        let i = self.ref_start[o as usize] as usize + field as usize;
        self.refs[i] = v;
    }

    /// Create an object record (the caller has chosen its address).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn create(&mut self, addr: u64, size: u32, space: SpaceId, nrefs: u16, now: Nanos, clock: u64, state: AppState, fl: u8) -> ObjId {
        self.count += 1;
        if let Some(o) = self.free_ids.pop() {
            let i = o as usize;
            self.addr[i] = addr;
            self.size[i] = size;
            self.space[i] = space as u8;
            self.flags[i] = fl | flag::LIVE;
            if nrefs <= self.ref_cap[i] {
                self.dead_edges -= nrefs as u64;
            } else {
                self.ref_start[i] = self.refs.len() as u32;
                self.ref_cap[i] = nrefs;
                self.refs.resize(self.refs.len() + nrefs as usize, NULL);
            }
            self.nrefs[i] = nrefs;
            let s = self.ref_start[i] as usize;
            self.refs[s..s + nrefs as usize].fill(NULL);
            self.alloc_ns[i] = now;
            self.alloc_clock[i] = clock;
            self.alloc_state[i] = state as u8;
            self.mark[i] = 0;
            self.depth[i] = 0;
            self.copied_by[i] = COPIED_NEVER;
            self.gen[i] += 1;
            return o;
        }
        let o = self.addr.len() as ObjId;
        assert!(o != NULL, "object id space exhausted");
        self.addr.push(addr);
        self.size.push(size);
        self.space.push(space as u8);
        self.flags.push(fl | flag::LIVE);
        self.ref_start.push(self.refs.len() as u32);
        self.nrefs.push(nrefs);
        self.ref_cap.push(nrefs);
        self.refs.resize(self.refs.len() + nrefs as usize, NULL);
        self.alloc_ns.push(now);
        self.alloc_clock.push(clock);
        self.alloc_state.push(state as u8);
        self.mark.push(0);
        self.depth.push(0);
        self.copied_by.push(COPIED_NEVER);
        self.gen.push(0);
        o
    }

    /// Release an id (the space has already released the memory).
    #[inline]
    pub fn free(&mut self, o: ObjId) {
        let i = o as usize;
        debug_assert!(self.flags[i] & flag::LIVE != 0, "double free of object {o}");
        self.flags[i] = 0;
        self.dead_edges += self.ref_cap[i] as u64;
        self.nrefs[i] = 0;
        self.free_ids.push(o);
        self.count -= 1;
    }

    /// Rebuild the edge array without dead slots when at least half of it is dead.
    pub fn maybe_compact_edges(&mut self) {
        if self.dead_edges * 2 < self.refs.len() as u64 || self.refs.len() < 1 << 16 {
            return;
        }
        let mut out: Vec<ObjId> = Vec::with_capacity(self.refs.len() - self.dead_edges as usize);
        for i in 0..self.addr.len() {
            let s = self.ref_start[i] as usize;
            let n = if self.flags[i] & flag::LIVE != 0 { self.nrefs[i] as usize } else { 0 };
            self.ref_start[i] = out.len() as u32;
            out.extend_from_slice(&self.refs[s..s + n]);
            self.ref_cap[i] = n as u16;
        }
        self.refs = out;
        self.dead_edges = 0;
    }
}

/// Round a requested size up to the object alignment, with room for the header and `nrefs`
/// reference fields.
#[inline]
pub fn object_size(requested: u32, nrefs: u16) -> u32 {
    let min = HEADER_BYTES + REF_BYTES * nrefs as u32;
    let s = requested.max(min).max(HEADER_BYTES);
    (s + OBJECT_ALIGN - 1) & !(OBJECT_ALIGN - 1)
}
