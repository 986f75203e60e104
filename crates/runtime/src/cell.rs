//! Unit cells: the objects of one mutator *allocation unit* stored together (the simulation grain
//! `runtime.grain = "unit"`).
//!
//! The workload allocates long- and short-lived data in units: a small tree — a root whose
//! reference fields hold the unit's children, each child (after the first) referencing the
//! previous one — allocated in one go, held by one slot and dying together (see
//! [`crate::workload`]). Nothing outside a unit ever references anything but its root, and a
//! unit's references never change after it is built. The *object* grain stores each of these
//! objects as a general object (word, header and info arrays, an edge array); the *unit* grain
//! stores a unit as one [`UnitHdr`] plus one compact [`CellObj`] record per object: the
//! references inside the unit are implied by its shape, the allocation time, state and clock
//! are the unit's.
//!
//! Every object of a cell is still an object: it has an [`ObjId`] (its record's index, tagged
//! with [`CELL_BIT`]), its
//! own address, size, reference fields, mark, flags, space, card-chain link and depth, so
//! collectors, barriers and policies handle it exactly as they handle a general object — through
//! the accessors of [`crate::object::Objects`]. What the grain changes is host work only: a
//! unit's records sit together in memory, its edges need no storage. A run gives the same
//! results in both grains (`tests/grain.rs`, `mobmem bench grain`).
//!
//! What differs, by design: an object of a cell reports the unit's allocation time (`alloc_ns`
//! of its root; the object grain records each object's own, a few hundred ns later for the last
//! child) — no collector or shipped policy reads it. Units with more than [`MAX_OBJECTS`]
//! objects, or on a heap whose spaces exceed 4 GiB (addresses are 32-bit offsets here), are
//! allocated as general objects.

use crate::mirror::{ObjId, NULL};
use mobmem_engine::Nanos;

/// Tag bit of a cell object's id: `CELL_BIT | slot`, the index of its record in the arena.
pub const CELL_BIT: u32 = 1 << 31;
/// Objects per cell at most (root and seven children).
pub const MAX_OBJECTS: usize = 8;

/// Flag bits of cell objects only (general objects keep the copying thread's id in `Info`).
pub mod cflag {
    /// Copied at least once.
    pub const COPIED: u8 = 32;
    /// Copied last by a mutator (read barrier or compaction fault) rather than the GC thread.
    pub const BY_MUTATOR: u8 = 64;
}

#[inline(always)]
pub fn is_cell(o: ObjId) -> bool {
    o & CELL_BIT != 0 && o != NULL
}

#[inline(always)]
pub fn id(slot: u32) -> ObjId {
    CELL_BIT | slot
}

#[inline(always)]
pub fn slot_of(o: ObjId) -> usize {
    (o & !CELL_BIT) as usize
}

/// One object of a cell (24 bytes). A unit's objects are consecutive records, root first.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct CellObj {
    /// Byte offset inside its space's VMA.
    pub(crate) addr: u32,
    pub(crate) size: u32,
    /// Next object starting on the same card (see `crate::card_table`), `NULL` ends the chain.
    pub(crate) next_in_card: ObjId,
    /// The unit (index of its [`UnitHdr`]).
    pub(crate) unit: u32,
    pub(crate) depth: u16,
    pub(crate) nrefs: u8,
    pub(crate) mark: u8,
    pub(crate) flags: u8,
    pub(crate) space: u8,
    /// Index of the object in its unit (0 = the root).
    pub(crate) j: u8,
    /// Root only: children linked into the root (`root.field[c]` holds child `c` for
    /// `c < linked`).
    pub(crate) linked: u8,
}

const _: () = assert!(std::mem::size_of::<CellObj>() == 24);

/// What is common to the objects of a unit (32 bytes).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct UnitHdr {
    /// Index of the root's record in the arena.
    pub(crate) first: u32,
    /// Number of times the unit id was used.
    pub(crate) gen: u32,
    pub(crate) alloc_ns: Nanos,
    /// The allocated-bytes clock when the root was allocated.
    pub(crate) alloc_clock: u64,
    /// Objects allocated so far (the unit is built one object at a time).
    pub(crate) n: u8,
    /// Arena slots reserved.
    pub(crate) cap: u8,
    /// Objects not freed yet.
    pub(crate) live: u8,
    pub(crate) alloc_state: u8,
    /// Fresh: allocated outside any collection and not seen by one yet — its objects are on no
    /// card chain and not on the allocation stack (see `Heap::settle_fresh`).
    pub(crate) fresh: bool,
    _pad: [u8; 3],
}

/// The cells of one heap.
#[derive(Default, Clone)]
pub struct Cells {
    pub(crate) unit: Vec<UnitHdr>,
    pub(crate) obj: Vec<CellObj>,
    /// Free units by capacity. A unit keeps its arena range for life, so an object id (the
    /// record's index) always belongs to the same unit and the unit's generation tells apart its
    /// successive uses.
    free_units: [Vec<u32>; MAX_OBJECTS + 1],
    /// Live cell objects.
    pub(crate) count: u64,
}

impl Cells {
    /// Reserve a unit of up to `cap` objects (none allocated yet; its allocation time and clock
    /// are its root's).
    pub fn new_unit(&mut self, cap: usize, state: u8) -> u32 {
        debug_assert!((1..=MAX_OBJECTS).contains(&cap));
        let u = match self.free_units[cap].pop() {
            Some(u) => u,
            None => {
                let first = self.obj.len() as u32;
                assert!(first as usize + cap < (CELL_BIT - 1) as usize, "cell arena exhausted");
                self.obj.resize(self.obj.len() + cap, CellObj::default());
                self.unit.push(UnitHdr { first, cap: cap as u8, ..UnitHdr::default() });
                (self.unit.len() - 1) as u32
            }
        };
        let h = &mut self.unit[u as usize];
        *h = UnitHdr {
            first: h.first,
            gen: h.gen.wrapping_add(1),
            alloc_ns: 0,
            alloc_clock: 0,
            n: 0,
            cap: h.cap,
            live: 0,
            alloc_state: state,
            fresh: false,
            _pad: [0; 3],
        };
        u
    }

    /// Give back a unit none of whose objects could be allocated.
    pub fn abandon(&mut self, u: u32) {
        let h = &self.unit[u as usize];
        assert_eq!(h.n, 0, "abandoning a unit with objects");
        self.free_units[h.cap as usize].push(u);
    }

    /// Create the next object of unit `u`, allocated at `now` with the allocated-bytes clock at
    /// `clock` (the root's are the unit's).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn push_object(&mut self, u: u32, addr: u64, size: u32, space: u8, nrefs: u16, flags: u8, now: Nanos, clock: u64) -> ObjId {
        let h = &mut self.unit[u as usize];
        let j = h.n as u32;
        if j == 0 {
            h.alloc_ns = now;
            h.alloc_clock = clock;
        }
        debug_assert!(j < h.cap as u32 && addr <= u32::MAX as u64 && nrefs <= u8::MAX as u16);
        h.n += 1;
        h.live += 1;
        let i = (h.first + j) as usize;
        self.obj[i] =
            CellObj { addr: addr as u32, size, next_in_card: NULL, unit: u, depth: 0, nrefs: nrefs as u8, mark: 0, flags, space, j: j as u8, linked: 0 };
        self.count += 1;
        id(i as u32)
    }

    #[inline(always)]
    pub fn get(&self, o: ObjId) -> &CellObj {
        &self.obj[slot_of(o)]
    }

    #[inline(always)]
    pub fn get_mut(&mut self, o: ObjId) -> &mut CellObj {
        &mut self.obj[slot_of(o)]
    }

    #[inline(always)]
    pub fn hdr(&self, o: ObjId) -> &UnitHdr {
        &self.unit[self.obj[slot_of(o)].unit as usize]
    }

    /// Reference field `f` of cell object `o`: the root's fields hold the linked children, a
    /// child's field 0 its previous sibling (if it has fields); everything else is null.
    #[inline]
    pub fn get_ref(&self, o: ObjId, f: u32) -> ObjId {
        let i = slot_of(o);
        let c = &self.obj[i];
        let j = c.j as usize;
        if j == 0 {
            if f < c.linked as u32 {
                id((i + 1) as u32 + f)
            } else {
                NULL
            }
        } else if f == 0 && j >= 2 && c.nrefs > 0 && j <= self.obj[i - j].linked as usize {
            id((i - 1) as u32)
        } else {
            NULL
        }
    }

    /// A reference store into a cell object. Only the stores that build the unit are possible
    /// (child `c` into the root's field `c`, in order; a child's previous sibling into its field
    /// 0, which the root's store makes visible) — anything else would break the unit's shape.
    #[inline]
    pub fn set_ref(&mut self, o: ObjId, f: u32, v: ObjId) {
        let i = slot_of(o);
        let j = self.obj[i].j as usize;
        if j == 0 {
            let linked = self.obj[i].linked as u32;
            assert!(v == id(i as u32 + 1 + f) && f == linked, "cell object {o:#x}: store of {v:#x} into root field {f} is not the unit's next child");
            self.obj[i].linked += 1;
        } else {
            assert!(f == 0 && j >= 2 && v == id(i as u32 - 1), "cell object {o:#x}: store of {v:#x} into field {f} of object {j} breaks the unit's shape");
        }
    }

    /// Release every live object of unit `u` at once (a fresh unit that died); returns their
    /// count.
    pub fn free_unit(&mut self, u: u32) -> u32 {
        let h = self.unit[u as usize];
        let mut n = 0;
        for i in h.first..h.first + h.n as u32 {
            let c = &mut self.obj[i as usize];
            if c.flags & crate::mirror::flag::LIVE != 0 {
                c.flags = 0;
                n += 1;
            }
        }
        debug_assert_eq!(n, h.live as u32);
        self.count -= n as u64;
        self.unit[u as usize].live = 0;
        self.free_units[h.cap as usize].push(u);
        n
    }

    /// Release object `o` (the unit's slots are recycled when its last object goes).
    #[inline]
    pub fn free(&mut self, o: ObjId) {
        let i = slot_of(o);
        debug_assert!(self.obj[i].flags & crate::mirror::flag::LIVE != 0, "double free of cell object {o:#x}");
        self.obj[i].flags = 0;
        self.count -= 1;
        let u = self.obj[i].unit;
        let h = &mut self.unit[u as usize];
        h.live -= 1;
        if h.live == 0 {
            let cap = h.cap as usize;
            self.free_units[cap].push(u);
        }
    }

    /// Ids of the live objects of every unit, unit by unit.
    pub fn live_ids(&self) -> impl Iterator<Item = ObjId> + '_ {
        self.unit
            .iter()
            .filter(|h| h.live > 0)
            .flat_map(move |h| (h.first..h.first + h.n as u32).filter(move |&i| self.obj[i as usize].flags & crate::mirror::flag::LIVE != 0).map(id))
    }

    /// Units in use (for reports and host-memory accounting).
    pub fn units_in_use(&self) -> usize {
        self.unit.len() - self.free_units.iter().map(Vec::len).sum::<usize>()
    }

    /// Host bytes held by the cell arrays.
    pub fn host_bytes(&self) -> usize {
        self.unit.capacity() * std::mem::size_of::<UnitHdr>() + self.obj.capacity() * std::mem::size_of::<CellObj>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mirror::flag;

    #[test]
    fn ids_units_and_implied_references() {
        let mut c = Cells::default();
        let u = c.new_unit(4, 0);
        let r = c.push_object(u, 64, 40, 0, 3, flag::LIVE, 10, 100);
        let a = c.push_object(u, 104, 24, 0, 2, flag::LIVE, 20, 140);
        assert_eq!((c.get(a).unit, c.get(a).j), (u, 1));
        assert!(is_cell(r) && !is_cell(NULL) && !is_cell(5));
        assert_eq!(c.get_ref(r, 0), NULL, "nothing linked yet");
        c.set_ref(r, 0, a);
        let b = c.push_object(u, 128, 16, 0, 1, flag::LIVE, 30, 164);
        assert_eq!((c.unit[u as usize].alloc_ns, c.unit[u as usize].alloc_clock), (10, 100));
        c.set_ref(b, 0, a);
        assert_eq!(c.get_ref(b, 0), NULL, "b's field becomes visible with the root's store");
        c.set_ref(r, 1, b);
        assert_eq!((c.get_ref(r, 0), c.get_ref(r, 1), c.get_ref(r, 2)), (a, b, NULL));
        assert_eq!((c.get_ref(b, 0), c.get_ref(a, 0), c.get_ref(a, 1)), (a, NULL, NULL));
        assert_eq!(c.live_ids().collect::<Vec<_>>(), vec![r, a, b]);
        for o in [r, a, b] {
            c.free(o);
        }
        assert_eq!((c.count, c.units_in_use()), (0, 0));
        let u2 = c.new_unit(4, 0);
        assert_eq!((u2, c.unit[u2 as usize].gen, c.unit[u2 as usize].first), (u, 2, 0), "the unit and its slots are reused");
        let u3 = c.new_unit(2, 0);
        assert_ne!(c.unit[u3 as usize].first, 0, "a unit of another capacity gets its own slots");
    }

    #[test]
    #[should_panic(expected = "breaks the unit's shape")]
    fn stores_outside_the_shape_are_refused() {
        let mut c = Cells::default();
        let u = c.new_unit(3, 0);
        let r = c.push_object(u, 0, 16, 0, 2, flag::LIVE, 0, 0);
        let a = c.push_object(u, 16, 16, 0, 1, flag::LIVE, 0, 16);
        c.set_ref(a, 0, r);
    }
}
