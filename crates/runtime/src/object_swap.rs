//! Object-granularity swap: the runtime moves an object's contents to its own swap file and
//! leaves a **stub** in the heap (docs/runtime.md, "Object-granularity swap and Marvin"; Marvin, ATC '20).
//!
//! What is modelled, as Marvin's released runtime does it:
//! - **Stubs.** A collection that copies an object may give it a stub instead: the object's
//!   contents move to the *swapped-in space* ([`SwappedSpace`]: objects packed, a page released
//!   only when no resident object is left on it) and only the stub — a 16-byte header and a copy
//!   of each outgoing reference (4 bytes each) — is copied into to-space. The object keeps its id:
//!   references, marking and copying see the stub (its `size` is the stub's while it has one;
//!   the object's own size is in its [`StubRec`]), so a collector traces through the stub without
//!   touching the object behind it.
//! - **Access bits.** For objects of at least `track_bytes` the runtime records the collection
//!   epoch of the last read and the last write (the read/write bits and shift registers Marvin
//!   keeps in the object header): `epoch` advances at every non-sticky collection, so "not written
//!   in the last N epochs" is Marvin's shift-register test.
//! - **The swap file** ([`SwapFile`]): one per app, bounded; an object is written whole (appended
//!   the first time, overwritten in place later), freed when the object dies, and compacted when
//!   a quarter of it is holes. A write that does not fit is refused (the object stays resident).
//! - **Reclaim**: a clean (written, unmodified since) object stops being resident, and the pages
//!   on which no resident object is left are released (`MADV_DONTNEED`): the object grain of the
//!   decision meets the page grain of memory; **swap-in**: a mutator access to a non-resident object reads it back whole
//!   from the file (a synchronous read on the accessing thread) into its pages.
//!
//! Which objects get stubs, when objects are written and reclaimed, and whether everything is
//! swapped in on returning to the foreground is policy ([`crate::hooks::ObjectSwapPolicy`]). Left
//! out: the reclamation table shared with the kernel (Marvin's prototype keeps it in the runtime
//! too), object types (the model has none: every object of the size may get a stub), the
//! write task's one-second budget per run.

use crate::cell;
use crate::mirror::ObjId;
use crate::space::PAGE;
use serde::Serialize;
use std::collections::HashMap;

/// Bytes of a stub's header: a pointer to its reclamation-table entry, flags, a reference count
/// and a forwarding word (Marvin's `marvin_stub.h`).
pub const STUB_HEADER_BYTES: u32 = 16;

/// Heap bytes of the stub of an object with `nrefs` reference fields (header + one 4-byte copy
/// of each reference, 8-byte aligned).
pub fn stub_bytes(nrefs: u16) -> u32 {
    (STUB_HEADER_BYTES + 4 * nrefs as u32 + 7) & !7
}

/// Default size of the swapped-in space: Marvin reserves 512 MiB for it.
pub const DEFAULT_SPACE_BYTES: u64 = 512 << 20;
/// Default bound of the app's swap file (an estimate: Marvin's file in the app's data directory
/// has no bound of its own; this one is a setting of the policy).
pub const DEFAULT_FILE_BYTES: u64 = 512 << 20;

/// Name of the swapped-in space's mapping.
pub const SWAPPED_SPACE_VMA: &str = "[anon:dalvik-swapped-in space]";

/// One object with a stub.
#[derive(Clone, Copy, Debug)]
pub struct StubRec {
    pub(crate) obj: ObjId,
    /// The object's own size (its heap `size` is the stub's meanwhile).
    pub size: u32,
    /// Where its contents are, in the swapped-in space's mapping.
    pub(crate) addr: u64,
    /// Its pages are in memory (not released after a write to the swap file).
    pub resident: bool,
    /// Modified since it was last written to the swap file (or never written).
    pub(crate) dirty: bool,
    /// Its extent in the swap file (offset), once written.
    pub(crate) file_off: Option<u64>,
}

/// The pages `[addr, addr + size)` spans: (first, count).
pub fn page_span(addr: u64, size: u32) -> (u32, u32) {
    let first = (addr / PAGE) as u32;
    (first, ((addr + size as u64 - 1) / PAGE) as u32 + 1 - first)
}

impl StubRec {
    /// Its pages in the swapped-in space: (first, count).
    pub fn pages(&self) -> (u32, u32) {
        page_span(self.addr, self.size)
    }
}

/// The swapped-in space: where the contents of objects with stubs live, packed (bump allocation,
/// and exact-size reuse of freed slots — an estimate of an allocator Marvin's paper does not
/// describe). Per page it counts the objects on it that are live and those that are resident; a
/// page goes back to the kernel when either count drops to zero.
pub struct SwappedSpace {
    pub(crate) vma: u32,
    pub(crate) npages: u32,
    top: u64,
    holes: HashMap<u32, Vec<u64>>,
    live: Vec<u16>,
    resident: Vec<u16>,
    pub(crate) bytes: u64,
}

impl SwappedSpace {
    pub fn new(vma: u32, npages: u32) -> Self {
        Self { vma, npages, top: 0, holes: HashMap::new(), live: Vec::new(), resident: Vec::new(), bytes: 0 }
    }

    fn range(addr: u64, size: u32) -> std::ops::Range<usize> {
        let (first, n) = page_span(addr, size);
        first as usize..(first + n) as usize
    }

    /// Room for a resident object of `size` bytes.
    pub fn alloc(&mut self, size: u32) -> Option<u64> {
        let addr = match self.holes.get_mut(&size).and_then(|v| v.pop()) {
            Some(a) => a,
            None => {
                if self.top + size as u64 > self.npages as u64 * PAGE {
                    return None;
                }
                self.top += size as u64;
                self.top - size as u64
            }
        };
        let r = Self::range(addr, size);
        if r.end > self.live.len() {
            self.live.resize(r.end, 0);
            self.resident.resize(r.end, 0);
        }
        for p in r {
            self.live[p] += 1;
            self.resident[p] += 1;
        }
        self.bytes += size as u64;
        Some(addr)
    }

    /// Free an object's slot; `out` gets the pages left with no live object (to release).
    pub fn free(&mut self, addr: u64, size: u32, resident: bool, out: &mut Vec<u32>) {
        for p in Self::range(addr, size) {
            self.live[p] -= 1;
            if resident {
                self.resident[p] -= 1;
            }
            if self.live[p] == 0 || (resident && self.resident[p] == 0) {
                out.push(p as u32);
            }
        }
        self.holes.entry(size).or_default().push(addr);
        self.bytes -= size as u64;
    }

    /// An object stops being resident; `out` gets the pages left with no resident object.
    pub fn release(&mut self, addr: u64, size: u32, out: &mut Vec<u32>) {
        for p in Self::range(addr, size) {
            self.resident[p] -= 1;
            if self.resident[p] == 0 {
                out.push(p as u32);
            }
        }
    }

    /// An object is resident again (read back into its pages).
    pub fn restore(&mut self, addr: u64, size: u32) {
        for p in Self::range(addr, size) {
            self.resident[p] += 1;
        }
    }
}

/// The app's swap file: bytes appended, overwritten, freed and compacted. Conservation:
/// `written_new == live + freed` (bytes ever appended are either still an object's extent or
/// were freed when it died).
#[derive(Clone, Debug, Default, Serialize)]
pub struct SwapFile {
    pub capacity: u64,
    /// End of the file (live extents and holes).
    pub end: u64,
    /// Bytes of live objects' extents.
    pub live: u64,
    /// Bytes freed by dead objects (cumulative).
    pub freed: u64,
    /// Bytes appended for objects written the first time (cumulative).
    pub written_new: u64,
    /// Bytes overwritten in place (objects written again) and rewritten by compaction.
    pub(crate) rewritten: u64,
    pub(crate) compactions: u64,
}

impl SwapFile {
    fn append(&mut self, len: u64) -> Option<u64> {
        if self.end + len > self.capacity {
            return None;
        }
        let off = self.end;
        self.end += len;
        self.live += len;
        self.written_new += len;
        Some(off)
    }

    /// Whether holes exceed a quarter of the file (Marvin's compaction threshold, 25 %).
    fn compaction_due(&self) -> bool {
        self.end > 0 && (self.end - self.live) * 4 > self.end
    }
}

/// Counters of object swap.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ObjectSwapStats {
    pub stubs_created: u64,
    pub(crate) stub_bytes_saved: u64,
    /// Objects that could not get a stub because the swapped-in space was full.
    pub(crate) space_full: u64,
    pub(crate) stubs_freed: u64,
    pub objects_written: u64,
    pub(crate) bytes_written: u64,
    /// Writes refused because the swap file was full.
    pub writes_refused: u64,
    pub objects_reclaimed: u64,
    /// Bytes of the objects released (object grain) and the pages that freed (page grain: a page
    /// goes when no resident object is left on it).
    pub bytes_reclaimed: u64,
    pub pages_reclaimed: u64,
    pub objects_swapped_in: u64,
    pub(crate) bytes_swapped_in: u64,
    /// Swap-ins in a swap-in-everything pause (returning to the foreground).
    pub pause_swap_ins: u64,
    pub(crate) pauses: u64,
}

impl ObjectSwapStats {
    /// Add another process incarnation's counters.
    pub fn add(&mut self, o: &ObjectSwapStats) {
        let pairs = [
            (&mut self.stubs_created, o.stubs_created),
            (&mut self.stub_bytes_saved, o.stub_bytes_saved),
            (&mut self.space_full, o.space_full),
            (&mut self.stubs_freed, o.stubs_freed),
            (&mut self.objects_written, o.objects_written),
            (&mut self.bytes_written, o.bytes_written),
            (&mut self.writes_refused, o.writes_refused),
            (&mut self.objects_reclaimed, o.objects_reclaimed),
            (&mut self.bytes_reclaimed, o.bytes_reclaimed),
            (&mut self.pages_reclaimed, o.pages_reclaimed),
            (&mut self.objects_swapped_in, o.objects_swapped_in),
            (&mut self.bytes_swapped_in, o.bytes_swapped_in),
            (&mut self.pause_swap_ins, o.pause_swap_ins),
            (&mut self.pauses, o.pauses),
        ];
        for (a, b) in pairs {
            *a += b;
        }
    }
}

/// The object-swap state of one heap: stubs, the swapped-in space, the swap file, access epochs.
pub struct ObjectSwap {
    /// Objects at least this large have their accesses recorded (0: off).
    pub(crate) track_bytes: u32,
    /// Access epoch: advanced at each non-sticky collection while tracking.
    pub(crate) epoch: u32,
    /// Last read and last write epoch (+1; 0 = never) of general objects, by id.
    access_gen: Vec<(u32, u32)>,
    /// The same for objects of unit cells, by slot.
    access_cell: Vec<(u32, u32)>,
    /// The swapped-in space, mapped at the first stub.
    pub(crate) space: Option<SwappedSpace>,
    /// Pages to release (reused buffer).
    pub(crate) scratch: Vec<u32>,
    pub(crate) space_pages: u32,
    pub file: SwapFile,
    recs: Vec<StubRec>,
    free_recs: Vec<u32>,
    index: HashMap<ObjId, u32>,
    pub stats: ObjectSwapStats,
}

impl Default for ObjectSwap {
    fn default() -> Self {
        Self {
            track_bytes: 0,
            epoch: 0,
            access_gen: Vec::new(),
            access_cell: Vec::new(),
            space: None,
            scratch: Vec::new(),
            space_pages: DEFAULT_SPACE_BYTES.div_ceil(PAGE) as u32,
            file: SwapFile { capacity: DEFAULT_FILE_BYTES, ..SwapFile::default() },
            recs: Vec::new(),
            free_recs: Vec::new(),
            index: HashMap::new(),
            stats: ObjectSwapStats::default(),
        }
    }
}

impl ObjectSwap {
    /// Which access table holds `o` (cell objects by slot, general ones by id) and where.
    #[inline]
    fn table_of(o: ObjId) -> (bool, usize) {
        if cell::is_cell(o) {
            (true, cell::slot_of(o))
        } else {
            (false, o as usize)
        }
    }

    #[inline]
    fn slot(&mut self, o: ObjId) -> &mut (u32, u32) {
        let (is_cell, i) = Self::table_of(o);
        let v = if is_cell { &mut self.access_cell } else { &mut self.access_gen };
        if i >= v.len() {
            v.resize((i + 1).next_power_of_two(), (0, 0));
        }
        &mut v[i]
    }

    /// A new object: it starts read and written in the current epoch (recycled ids forget their
    /// previous object's accesses).
    #[inline]
    pub fn note_alloc(&mut self, o: ObjId) {
        let e = self.epoch + 1;
        *self.slot(o) = (e, e);
    }

    /// A mutator read (`write` false) or write of `o`.
    #[inline]
    pub fn note_access(&mut self, o: ObjId, write: bool) {
        let e = self.epoch + 1;
        let s = self.slot(o);
        if write {
            s.1 = e;
        } else {
            s.0 = e;
        }
    }

    /// Epochs since `o` was last read and last written (`u32::MAX`: never, as far as recorded).
    pub fn age(&self, o: ObjId) -> (u32, u32) {
        let (is_cell, i) = Self::table_of(o);
        let v = if is_cell { &self.access_cell } else { &self.access_gen };
        let (r, w) = v.get(i).copied().unwrap_or((0, 0));
        let age = |x: u32| if x == 0 { u32::MAX } else { self.epoch + 1 - x };
        (age(r), age(w))
    }

    /// The swapped-in space's mapping (`u32::MAX` before the first stub).
    pub fn vma(&self) -> u32 {
        self.space.as_ref().map_or(u32::MAX, |s| s.vma)
    }

    /// The objects with stubs.
    pub fn stubs(&self) -> impl Iterator<Item = &StubRec> + '_ {
        self.index.values().map(|&i| &self.recs[i as usize])
    }

    /// Objects with stubs, in a deterministic order (by id).
    pub fn stub_ids(&self) -> Vec<ObjId> {
        let mut v: Vec<ObjId> = self.index.keys().copied().collect();
        v.sort_unstable();
        v
    }

    pub fn len(&self) -> usize {
        self.index.len()
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn get(&self, o: ObjId) -> Option<&StubRec> {
        self.index.get(&o).map(|&i| &self.recs[i as usize])
    }

    pub fn get_mut(&mut self, o: ObjId) -> Option<&mut StubRec> {
        let i = *self.index.get(&o)?;
        Some(&mut self.recs[i as usize])
    }

    /// Record a new stub for `o` whose contents are at `addr` (resident, dirty).
    pub fn insert(&mut self, o: ObjId, size: u32, addr: u64) {
        let rec = StubRec { obj: o, size, addr, resident: true, dirty: true, file_off: None };
        let i = match self.free_recs.pop() {
            Some(i) => {
                self.recs[i as usize] = rec;
                i
            }
            None => {
                self.recs.push(rec);
                (self.recs.len() - 1) as u32
            }
        };
        let old = self.index.insert(o, i);
        debug_assert!(old.is_none(), "object {o} already has a stub");
    }

    /// `o` died: forget its stub, free its file extent. Returns its record (for its pages).
    pub fn remove(&mut self, o: ObjId) -> Option<StubRec> {
        let i = self.index.remove(&o)?;
        self.free_recs.push(i);
        let rec = self.recs[i as usize];
        if rec.file_off.is_some() {
            self.file.live -= rec.size as u64;
            self.file.freed += rec.size as u64;
        }
        self.stats.stubs_freed += 1;
        Some(rec)
    }

    /// Write `o` to the swap file (appended the first time, in place after): returns the bytes
    /// of I/O, or `None` if the file has no room (refused; the object stays dirty).
    pub fn write(&mut self, o: ObjId) -> Option<u64> {
        let i = *self.index.get(&o)? as usize;
        let size = self.recs[i].size as u64;
        if self.recs[i].file_off.is_none() {
            match self.file.append(size) {
                Some(off) => self.recs[i].file_off = Some(off),
                None => {
                    self.stats.writes_refused += 1;
                    return None;
                }
            }
        } else {
            self.file.rewritten += size;
        }
        self.recs[i].dirty = false;
        self.stats.objects_written += 1;
        self.stats.bytes_written += size;
        Some(size)
    }

    /// Compact the file if a quarter of it is holes: live extents move to the front in file
    /// order. Returns the bytes rewritten (read and written again), 0 if not due.
    pub fn compact_if_due(&mut self) -> u64 {
        if !self.file.compaction_due() {
            return 0;
        }
        let mut ext: Vec<(u64, usize)> = self.index.values().filter_map(|&i| self.recs[i as usize].file_off.map(|off| (off, i as usize))).collect();
        ext.sort_unstable();
        let mut pos = 0u64;
        for (_, i) in ext {
            self.recs[i].file_off = Some(pos);
            pos += self.recs[i].size as u64;
        }
        debug_assert_eq!(pos, self.file.live);
        self.file.end = pos;
        self.file.rewritten += pos;
        self.file.compactions += 1;
        pos
    }

    /// Debug check: the file's byte conservation and the index.
    pub fn check(&self) -> Result<(), String> {
        let live: u64 = self.stubs().filter(|r| r.file_off.is_some()).map(|r| r.size as u64).sum();
        if live != self.file.live {
            return Err(format!("swap file: {} live bytes recorded, extents hold {live}", self.file.live));
        }
        if self.file.written_new != self.file.live + self.file.freed {
            return Err(format!("swap file: {} bytes appended but {} live + {} freed", self.file.written_new, self.file.live, self.file.freed));
        }
        if self.file.end > self.file.capacity || self.file.live > self.file.end {
            return Err(format!("swap file: end {} beyond capacity {} or below live {}", self.file.end, self.file.capacity, self.file.live));
        }
        Ok(())
    }
}
