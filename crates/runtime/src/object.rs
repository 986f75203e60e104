//! Objects (`mirror::Object`, seen from outside).
//!
//! An object is an index (`ObjId`) into three arrays: its [`Word`] (mark byte, space, flags — 4
//! bytes, tested for every reference a collector visits), its [`Header`] (address inside its
//! space's VMA, size, reference fields: up to three inline, more in one flat edge array) and its
//! [`Info`] (allocation time in simulated ns and on the allocated-bytes clock, app state at
//! allocation, which thread last copied it, generation, depth at marking, the next object on
//! its card). The identity of an object is stable while it lives: a moving collector changes
//! `addr`, never the id, so references (ids) stay valid across moves. A freed id is recycled by a later allocation (`gen`
//! counts reuses).
//!
//! Nothing here allocates per object on the hot path: vectors grow amortised, freed ids and their
//! edge slots are reused, and the edge array is compacted when most of it is dead.
//!
//! Objects of allocation units may instead live in [`crate::cell`] storage (the unit grain): their
//! ids carry [`crate::cell::CELL_BIT`]. Code that may meet them reads and writes objects through
//! the accessors of [`Objects`] (`addr`, `size`, `flags`, `mark`, `get_ref`, …), which serve both
//! kinds; the raw arrays are for general objects only.

use crate::cell::{self, Cells};
pub use crate::mirror::{flag, AppState, ObjId, SpaceId, COPIED_NEVER, HEADER_BYTES, INLINE_REFS, NULL, OBJECT_ALIGN, REF_BYTES};
use mobmem_engine::Nanos;

/// Where an object is and what it references: read by allocation, copying and scanning (32
/// bytes: objects with at most [`INLINE_REFS`] references — most of them — are scanned from one
/// cache line; aligned to 32 so that no header straddles two lines — the allocator's default
/// alignment for a large vector is 16).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
pub struct Header {
    /// Byte offset inside its space's VMA.
    pub(crate) addr: u64,
    pub(crate) size: u32,
    /// First slot of its reference fields in the edge array (objects with > INLINE_REFS fields).
    pub(crate) ref_start: u32,
    pub(crate) nrefs: u16,
    /// Edge-array slots reserved for this id, reused when the id is recycled.
    pub(crate) ref_cap: u16,
    pub(crate) inline: [ObjId; INLINE_REFS],
}

const _: () = assert!(std::mem::size_of::<Header>() == 32 && std::mem::size_of::<Info>() == 32);

impl Header {
    #[inline(always)]
    pub fn uses_edges(&self) -> bool {
        self.nrefs as usize > INLINE_REFS
    }
}

/// The state a collector tests for every reference it visits — like ART's lock word: 4 bytes
/// per object in a dense array, so that the common "already marked" test costs little.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Word {
    /// Marked in the current collection iff `mark == Heap::mark_epoch` (a u8 epoch; the marks
    /// are cleared when the epoch wraps, see `Heap::next_epoch`).
    pub(crate) mark: u8,
    pub(crate) space: u8,
    pub(crate) flags: u8,
    pub(crate) _pad: u8,
}

/// What is known about an object besides its header: written once at allocation, read by
/// placement policies, reports and tests. (32 bytes, aligned like [`Header`].)
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
pub struct Info {
    pub(crate) alloc_ns: Nanos,
    /// The allocated-bytes clock at allocation.
    pub(crate) alloc_clock: u64,
    /// Thread id that copied the object last (`COPIED_NEVER` if never moved). The GC thread and
    /// mutator threads have distinct ids (see `Runtime::gc_thread`).
    pub(crate) copied_by: u32,
    /// Number of times the id was (re)used.
    pub(crate) gen: u32,
    /// Depth from the roots at which the current collection discovered the object.
    pub(crate) depth: u16,
    /// `AppState` at allocation.
    pub(crate) alloc_state: u8,
    /// The next object starting on the same 128-byte card (`NULL` ends the chain; see
    /// [`crate::card_table`]): the model's substitute for walking ART's live bitmap over a card.
    pub(crate) next_in_card: ObjId,
}

/// Object storage: three arrays indexed by object id — words (mark, space, flags: tested for
/// every reference visited), headers (address, size, fields: every allocation, copy and scan) and
/// infos (cold) — plus the flat edge array.
#[derive(Default, Clone)]
pub struct Objects {
    pub(crate) word: Vec<Word>,
    pub(crate) hdr: Vec<Header>,
    pub(crate) info: Vec<Info>,
    /// The flat edge array.
    pub(crate) refs: Vec<ObjId>,
    free_ids: Vec<ObjId>,
    /// Live general objects (ids in use).
    pub(crate) count: u64,
    /// Edge slots of freed objects not yet reused.
    pub(crate) dead_edges: u64,
    /// Objects of allocation units (the unit grain).
    pub(crate) cells: Cells,
    /// Thread ids reported as `copied_by` for cell objects: (GC thread, mutator).
    pub(crate) threads: (u32, u32),
}

impl Objects {
    /// Number of general object ids (live or free); cell objects are not counted.
    pub fn len(&self) -> usize {
        self.hdr.len()
    }
    pub fn is_empty(&self) -> bool {
        self.live_count() == 0
    }
    /// Live objects of both kinds.
    pub fn live_count(&self) -> u64 {
        self.count + self.cells.count
    }

    /// Every live object id: general objects by id, then cell objects unit by unit.
    pub fn live_ids(&self) -> impl Iterator<Item = ObjId> + '_ {
        (0..self.hdr.len() as ObjId).filter(move |&o| self.word[o as usize].flags & flag::LIVE != 0).chain(self.cells.live_ids())
    }

    #[inline]
    pub fn is_live(&self, o: ObjId) -> bool {
        if cell::is_cell(o) {
            cell::slot_of(o) < self.cells.obj.len() && self.cells.get(o).flags & flag::LIVE != 0
        } else {
            (o as usize) < self.word.len() && self.word[o as usize].flags & flag::LIVE != 0
        }
    }
    #[inline(always)]
    pub fn space(&self, o: ObjId) -> u8 {
        if cell::is_cell(o) {
            self.cells.get(o).space
        } else {
            self.word[o as usize].space
        }
    }
    #[inline]
    pub fn space_of(&self, o: ObjId) -> SpaceId {
        SpaceId::from_u8(self.space(o))
    }
    #[inline(always)]
    pub fn set_space(&mut self, o: ObjId, sp: SpaceId) {
        if cell::is_cell(o) {
            self.cells.get_mut(o).space = sp as u8;
        } else {
            self.word[o as usize].space = sp as u8;
        }
    }
    /// Mark, space and flags of `o`.
    #[inline(always)]
    pub fn w(&self, o: ObjId) -> Word {
        if cell::is_cell(o) {
            let c = self.cells.get(o);
            Word { mark: c.mark, space: c.space, flags: c.flags, _pad: 0 }
        } else {
            self.word[o as usize]
        }
    }
    #[inline(always)]
    pub fn mark(&self, o: ObjId) -> u8 {
        if cell::is_cell(o) {
            self.cells.get(o).mark
        } else {
            self.word[o as usize].mark
        }
    }
    #[inline(always)]
    pub fn set_mark(&mut self, o: ObjId, m: u8) {
        if cell::is_cell(o) {
            self.cells.get_mut(o).mark = m;
        } else {
            self.word[o as usize].mark = m;
        }
    }
    #[inline(always)]
    pub fn flags(&self, o: ObjId) -> u8 {
        if cell::is_cell(o) {
            self.cells.get(o).flags
        } else {
            self.word[o as usize].flags
        }
    }
    #[inline(always)]
    pub fn set_flags(&mut self, o: ObjId, f: u8) {
        if cell::is_cell(o) {
            self.cells.get_mut(o).flags = f;
        } else {
            self.word[o as usize].flags = f;
        }
    }
    #[inline(always)]
    pub fn addr(&self, o: ObjId) -> u64 {
        if cell::is_cell(o) {
            self.cells.get(o).addr as u64
        } else {
            self.hdr[o as usize].addr
        }
    }
    #[inline(always)]
    pub fn set_addr(&mut self, o: ObjId, a: u64) {
        if cell::is_cell(o) {
            debug_assert!(a <= u32::MAX as u64);
            self.cells.get_mut(o).addr = a as u32;
        } else {
            self.hdr[o as usize].addr = a;
        }
    }
    #[inline(always)]
    pub fn size(&self, o: ObjId) -> u32 {
        if cell::is_cell(o) {
            self.cells.get(o).size
        } else {
            self.hdr[o as usize].size
        }
    }
    /// Change an object's heap size (object-granularity swap: its stub's size while it has one).
    pub fn set_size(&mut self, o: ObjId, size: u32) {
        if cell::is_cell(o) {
            self.cells.get_mut(o).size = size;
        } else {
            self.hdr[o as usize].size = size;
        }
    }
    #[inline(always)]
    pub fn nrefs(&self, o: ObjId) -> u16 {
        if cell::is_cell(o) {
            self.cells.get(o).nrefs as u16
        } else {
            self.hdr[o as usize].nrefs
        }
    }
    #[inline]
    pub fn alloc_ns(&self, o: ObjId) -> Nanos {
        if cell::is_cell(o) {
            self.cells.hdr(o).alloc_ns
        } else {
            self.info[o as usize].alloc_ns
        }
    }
    /// The allocated-bytes clock when `o` was allocated (a unit's objects were allocated one
    /// after the other: the root's clock plus the sizes before it).
    #[inline]
    pub fn alloc_clock(&self, o: ObjId) -> u64 {
        if cell::is_cell(o) {
            let i = cell::slot_of(o);
            let f = i - self.cells.obj[i].j as usize;
            self.cells.hdr(o).alloc_clock + self.cells.obj[f..i].iter().map(|c| c.size as u64).sum::<u64>()
        } else {
            self.info[o as usize].alloc_clock
        }
    }
    #[inline]
    pub fn alloc_state(&self, o: ObjId) -> u8 {
        if cell::is_cell(o) {
            self.cells.hdr(o).alloc_state
        } else {
            self.info[o as usize].alloc_state
        }
    }
    /// How many times the id (a cell object: its unit) was used.
    #[inline]
    pub fn gen(&self, o: ObjId) -> u32 {
        if cell::is_cell(o) {
            self.cells.hdr(o).gen
        } else {
            self.info[o as usize].gen
        }
    }
    #[inline]
    pub fn depth(&self, o: ObjId) -> u16 {
        if cell::is_cell(o) {
            self.cells.get(o).depth
        } else {
            self.info[o as usize].depth
        }
    }
    #[inline(always)]
    pub fn set_depth(&mut self, o: ObjId, d: u16) {
        if cell::is_cell(o) {
            self.cells.get_mut(o).depth = d;
        } else {
            self.info[o as usize].depth = d;
        }
    }
    /// The thread that copied `o` last (`COPIED_NEVER` if never moved).
    pub fn copied_by(&self, o: ObjId) -> u32 {
        if cell::is_cell(o) {
            let f = self.cells.get(o).flags;
            if f & cell::cflag::COPIED == 0 {
                COPIED_NEVER
            } else if f & cell::cflag::BY_MUTATOR != 0 {
                self.threads.1
            } else {
                self.threads.0
            }
        } else {
            self.info[o as usize].copied_by
        }
    }
    #[inline]
    pub fn set_copied_by(&mut self, o: ObjId, thread: u32) {
        if cell::is_cell(o) {
            let by_mutator = thread != self.threads.0;
            let c = self.cells.get_mut(o);
            c.flags = (c.flags & !cell::cflag::BY_MUTATOR) | cell::cflag::COPIED | if by_mutator { cell::cflag::BY_MUTATOR } else { 0 };
        } else {
            self.info[o as usize].copied_by = thread;
        }
    }
    #[inline(always)]
    pub fn next_in_card(&self, o: ObjId) -> ObjId {
        if cell::is_cell(o) {
            self.cells.get(o).next_in_card
        } else {
            self.info[o as usize].next_in_card
        }
    }
    #[inline(always)]
    pub fn set_next_in_card(&mut self, o: ObjId, n: ObjId) {
        if cell::is_cell(o) {
            self.cells.get_mut(o).next_in_card = n;
        } else {
            self.info[o as usize].next_in_card = n;
        }
    }
    /// Call `f` with each reference field of `o`, in field order (null fields included).
    #[inline]
    pub fn for_each_ref(&self, o: ObjId, mut f: impl FnMut(ObjId)) {
        if cell::is_cell(o) {
            for i in 0..self.nrefs(o) as u32 {
                f(self.cells.get_ref(o, i));
            }
        } else {
            for &c in self.refs_of(o) {
                f(c);
            }
        }
    }
    /// Host cache hint for object `o`'s records (no effect on the simulation).
    #[inline(always)]
    pub fn prefetch(&self, o: ObjId) {
        if cell::is_cell(o) {
            if let Some(c) = self.cells.obj.get(cell::slot_of(o)) {
                prefetch(c);
            }
        } else if let (Some(w), Some(h)) = (self.word.get(o as usize), self.hdr.get(o as usize)) {
            prefetch(w);
            prefetch(h);
        }
    }
    /// Host cache hint for the unit header of cell object `o` (its record must be cached already
    /// to be cheap: see [`Self::prefetch`]).
    #[inline(always)]
    pub fn prefetch_unit(&self, o: ObjId) {
        if cell::is_cell(o) {
            if let Some(h) = self.cells.obj.get(cell::slot_of(o)).and_then(|c| self.cells.unit.get(c.unit as usize)) {
                prefetch(h);
            }
        }
    }
    /// The reference fields of a general object.
    #[inline]
    pub fn refs_of(&self, o: ObjId) -> &[ObjId] {
        let h = &self.hdr[o as usize];
        if h.uses_edges() {
            let s = h.ref_start as usize;
            &self.refs[s..s + h.nrefs as usize]
        } else {
            &h.inline[..h.nrefs as usize]
        }
    }
    #[inline]
    pub fn get_ref(&self, o: ObjId, field: u32) -> ObjId {
        if cell::is_cell(o) {
            return self.cells.get_ref(o, field);
        }
        let h = &self.hdr[o as usize];
        debug_assert!(field < h.nrefs as u32);
        if h.uses_edges() {
            self.refs[h.ref_start as usize + field as usize]
        } else {
            h.inline[field as usize]
        }
    }
    #[inline]
    pub fn set_ref(&mut self, o: ObjId, field: u32, v: ObjId) {
        if cell::is_cell(o) {
            return self.cells.set_ref(o, field, v);
        }
        let h = &mut self.hdr[o as usize];
        debug_assert!(field < h.nrefs as u32);
        if h.uses_edges() {
            let i = h.ref_start as usize + field as usize;
            self.refs[i] = v;
        } else {
            h.inline[field as usize] = v;
        }
    }

    fn vectors_consistent(&self) -> bool {
        let n = self.hdr.len();
        self.word.len() == n && self.info.len() == n
    }

    /// Create an object record (the caller has chosen its address).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn create(&mut self, addr: u64, size: u32, space: SpaceId, nrefs: u16, now: Nanos, clock: u64, state: AppState, fl: u8) -> ObjId {
        self.count += 1;
        if let Some(o) = self.free_ids.pop() {
            let i = o as usize;
            // Host cache hint: the ids popped next (no effect on the simulation).
            if let Some(&next) = self.free_ids.len().checked_sub(8).and_then(|j| self.free_ids.get(j)) {
                prefetch(&self.hdr[next as usize]);
                prefetch(&self.info[next as usize]);
            }
            // Every vector has one entry per id ever created (asserted in debug builds), so the
            // reuse path indexes without bounds checks: it is the allocation hot path.
            debug_assert!(self.vectors_consistent());
            assert!(i < self.hdr.len());
            unsafe {
                let info = self.info.get_unchecked_mut(i);
                let h = self.hdr.get_unchecked_mut(i);
                let cap = h.ref_cap;
                // The stale mark is an epoch at most the current one, and this id was unmarked in
                // it (or it would not have been freed): it never equals a current or future epoch.
                h.addr = addr;
                h.size = size;
                let w = self.word.get_unchecked_mut(i);
                w.space = space as u8;
                w.flags = fl | flag::LIVE;
                h.nrefs = nrefs;
                h.inline = [NULL; INLINE_REFS];
                if nrefs as usize > INLINE_REFS {
                    // The id's edge slots (counted dead while it was free) come back into use,
                    // or new ones are appended (the old ones stay dead until a compaction).
                    if nrefs <= cap {
                        self.dead_edges -= cap as u64;
                    } else {
                        h.ref_start = self.refs.len() as u32;
                        h.ref_cap = nrefs;
                        self.refs.resize(self.refs.len() + nrefs as usize, NULL);
                    }
                    let s = h.ref_start as usize;
                    self.refs[s..s + nrefs as usize].fill(NULL);
                }
                info.alloc_ns = now;
                info.alloc_clock = clock;
                info.alloc_state = state as u8;
                info.copied_by = COPIED_NEVER;
                info.gen += 1;
            }
            return o;
        }
        let o = self.hdr.len() as ObjId;
        assert!(o != NULL, "object id space exhausted");
        self.word.push(Word { mark: 0, space: space as u8, flags: fl | flag::LIVE, _pad: 0 });
        let cap = if nrefs as usize > INLINE_REFS { nrefs } else { 0 };
        let start = self.refs.len() as u32;
        self.hdr.push(Header { addr, size, ref_start: start, nrefs, ref_cap: cap, inline: [NULL; INLINE_REFS] });
        if nrefs as usize > INLINE_REFS {
            self.refs.resize(self.refs.len() + nrefs as usize, NULL);
        }
        self.info.push(Info { alloc_ns: now, alloc_clock: clock, copied_by: COPIED_NEVER, gen: 0, depth: 0, alloc_state: state as u8, next_in_card: NULL });
        o
    }

    /// Release an id (the space has already released the memory).
    #[inline]
    pub fn free(&mut self, o: ObjId) {
        if cell::is_cell(o) {
            return self.cells.free(o);
        }
        let i = o as usize;
        debug_assert!(self.word[i].flags & flag::LIVE != 0, "double free of object {o}");
        self.word[i].flags = 0;
        if self.hdr[i].uses_edges() {
            self.dead_edges += self.hdr[i].ref_cap as u64;
        }
        self.hdr[i].nrefs = 0;
        self.free_ids.push(o);
        self.count -= 1;
    }

    /// Rebuild the edge array without dead slots when it is mostly dead.
    pub fn maybe_compact_edges(&mut self) {
        // Freed ids reuse their edge slots; compact only when the array is mostly dead.
        let live = self.refs.len() as u64 - self.dead_edges;
        if self.dead_edges < 3 * live || self.refs.len() < 1 << 20 {
            return;
        }
        let mut out: Vec<ObjId> = Vec::with_capacity(live as usize);
        for i in 0..self.hdr.len() {
            let live = self.word[i].flags & flag::LIVE != 0;
            let h = &mut self.hdr[i];
            let s = h.ref_start as usize;
            let n = if live && h.uses_edges() { h.nrefs as usize } else { 0 };
            h.ref_start = out.len() as u32;
            h.ref_cap = n as u16;
            out.extend_from_slice(&self.refs[s..s + n]);
        }
        self.refs = out;
        self.dead_edges = 0;
    }
}

/// A hint to the host CPU's cache (no effect on the simulation).
#[inline(always)]
pub(crate) fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const T as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Round a requested size up to the object alignment, with room for the header and `nrefs`
/// reference fields.
#[inline]
pub fn object_size(requested: u32, nrefs: u16) -> u32 {
    let min = HEADER_BYTES + REF_BYTES * nrefs as u32;
    let s = requested.max(min).max(HEADER_BYTES);
    (s + OBJECT_ALIGN - 1) & !(OBJECT_ALIGN - 1)
}
