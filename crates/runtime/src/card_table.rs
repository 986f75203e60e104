//! The card table (ART `gc/accounting/card_table.*`): one byte per 128-byte card
//! (`kCardSize`, `kCardShift` = 7) over the heap's address range, which the write barrier
//! dirties and collections age, scan and clear.
//!
//! **Address range.** The collected spaces are separate VMAs in the kernel model, each addressed
//! from 0; the card table lays them end to end — main space, non-moving space, large object
//! space — as ART's card table covers the heap's one contiguous reservation. Card `c` of space
//! `s` covers bytes `[(c − base[s])·128, +128)` of that space. Immune spaces (boot image, zygote)
//! have no cards (their mod-union tables are not modelled: immune objects never reference app
//! objects).
//!
//! **Values** (as ART): `CARD_CLEAN` 0, `CARD_DIRTY` 0x70 (`kCardDirty`), `CARD_AGED` 0x6F
//! (`kCardAged = kCardDirty − 1`). The write barrier sets the card of the object written (the
//! card holding the object's *start*, `CardTable::MarkCard(dst)`, not the field's card) to dirty
//! on every non-null reference store. At a collection's card processing (`Heap::ProcessCards`
//! with `AgeCardVisitor`) dirty cards become aged and everything else clean: an aged card is "dirty
//! before this collection started"; a dirty card after it is "written during this collection".
//! Sticky collections scan cards at least aged (old objects written since the previous
//! collection's card processing — the remembered set); the remark pause of mark-sweep scans
//! dirty cards only (incremental update); scans leave cards as they are (`Scan<false>`), so a card
//! dirtied during a collection is aged and scanned by the next one, and an aged card not written
//! again is cleaned by the next aging.
//!
//! **Finding the objects on a card.** ART walks the live/mark bitmap over the card's 128 bytes and
//! visits the objects that *start* there. The model keeps, per card, a chain of the objects that
//! start on it (the heap's `card_first` array and `Info::next_in_card`), maintained on
//! allocation, copy, compaction and free — see [`crate::heap::Heap::card_objects`]. So the GC
//! work of a sticky collection depends on card granularity and object placement: every object
//! sharing a card with a written object is scanned too.
//!
//! **Simulated memory.** With `card_table_in_memory` (off by default, see docs/runtime.md) the
//! table is an anonymous mapping
//! `dalvik-card table` of `heap bytes / 128` bytes in the kernel model, as in ART: the write
//! barrier write-touches the card's page (4096 cards = 512 KiB of heap per page) and every card
//! pass of a collection reads (aging: writes) the card-table pages over the spaces' used ranges,
//! so its pages fault in, count in RSS and can be swapped like any other anonymous memory. These
//! pages are not part of the GC working set (`gc_pages_touched` counts heap pages only).
//!
//! **Costs.** A card pass charges `card_ns` per 64 clean cards skipped (a cache line read a word
//! at a time, as `CardTable::Scan` and `ModifyCardsAtomic` do) and `card_ns` per non-clean card
//! processed (aged, cleaned or scanned), plus the scanning of the objects found (scan/visit
//! costs) and the kernel's costs of the card-table pages touched.
//!
//! A [`CardTable`] is a plain value: a policy may own a second instance (e.g. marking only the
//! cards of objects in tagged regions from its barrier hook) and turn its cards into extra roots
//! with [`CardTable::objects_on_cards`] — the role of ART's `ModUnionTable` / `RememberedSet`
//! (cards of one space remembered apart from the main table).

/// source: ART `CardTable::kCardShift` = 7.
pub const CARD_SHIFT: u32 = 7;
/// source: ART `CardTable::kCardSize` = 128 bytes.
pub const CARD_SIZE: u64 = 1 << CARD_SHIFT;
/// source: ART `kCardClean` = 0.
pub const CARD_CLEAN: u8 = 0;
/// source: ART `kCardDirty` = 0x70.
pub const CARD_DIRTY: u8 = 0x70;
/// source: ART `kCardAged` = `kCardDirty - 1`.
pub const CARD_AGED: u8 = CARD_DIRTY - 1;
/// Cards per 4 KiB page of the card table.
pub const CARDS_PER_PAGE: usize = 4096;
/// Cards per host cache line (the unit of the clean-card skip cost).
pub const CARDS_PER_LINE: u64 = 64;

#[derive(Clone, Debug)]
pub struct CardTable {
    cards: Vec<u8>,
    /// First card of each collected space (Main, NonMoving, Los) and the end of the table.
    base: [usize; 4],
    /// log2 of the card size: [`CARD_SHIFT`] for the heap's table; a policy's own table may
    /// use larger cards (Fleet's second card table: 1 KiB).
    shift: u32,
}

impl CardTable {
    /// A table of 128-byte cards over collected spaces of these sizes in bytes (Main, NonMoving,
    /// Los).
    pub fn new(space_bytes: [u64; 3]) -> Self {
        Self::with_shift(space_bytes, CARD_SHIFT)
    }

    /// A table of `1 << shift`-byte cards (`shift` ≥ [`CARD_SHIFT`]).
    pub fn with_shift(space_bytes: [u64; 3], shift: u32) -> Self {
        assert!(shift >= CARD_SHIFT, "cards smaller than the heap's");
        let mut base = [0usize; 4];
        for s in 0..3 {
            base[s + 1] = base[s] + space_bytes[s].div_ceil(1 << shift) as usize;
        }
        // Zeroed memory: untouched parts of a big table cost the host nothing.
        Self { cards: vec![CARD_CLEAN; base[3]], base, shift }
    }

    /// Bytes per card.
    pub fn card_size(&self) -> u64 {
        1 << self.shift
    }

    /// The bytes of each collected space this table covers (its geometry).
    pub fn space_bytes(&self) -> [u64; 3] {
        let b = self.base;
        let c = self.card_size();
        [(b[1] - b[0]) as u64 * c, (b[2] - b[1]) as u64 * c, (b[3] - b[2]) as u64 * c]
    }

    pub fn len(&self) -> usize {
        self.cards.len()
    }
    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    /// The card of byte `addr` of collected space `sp` (0..3).
    #[inline(always)]
    pub fn index(&self, sp: usize, addr: u64) -> usize {
        self.base[sp] + (addr >> self.shift) as usize
    }

    /// The cards of collected space `sp`: `[first, end)`.
    pub fn space_range(&self, sp: usize) -> (usize, usize) {
        (self.base[sp], self.base[sp + 1])
    }

    /// Which collected space card `c` belongs to, and the byte address its range starts at.
    pub fn card_addr(&self, c: usize) -> (usize, u64) {
        let sp = if c < self.base[1] {
            0
        } else if c < self.base[2] {
            1
        } else {
            2
        };
        (sp, ((c - self.base[sp]) as u64) << self.shift)
    }

    #[inline(always)]
    pub fn get(&self, c: usize) -> u8 {
        self.cards[c]
    }
    #[inline(always)]
    pub fn set(&mut self, c: usize, v: u8) {
        self.cards[c] = v;
    }
    /// `CardTable::MarkCard`.
    #[inline(always)]
    pub fn mark(&mut self, c: usize) {
        self.cards[c] = CARD_DIRTY;
    }

    pub fn clear_range(&mut self, lo: usize, hi: usize) {
        self.cards[lo..hi].fill(CARD_CLEAN);
    }

    /// `ModifyCardsAtomic(AgeCardVisitor)` over `[lo, hi)`: dirty → aged, anything else → clean,
    /// a word at a time. Returns the non-clean cards processed.
    pub fn age_range(&mut self, lo: usize, hi: usize) -> u64 {
        let mut n = 0u64;
        let s = &mut self.cards[lo..hi];
        let mut chunks = s.chunks_exact_mut(8);
        for w in &mut chunks {
            if u64::from_ne_bytes((&*w).try_into().unwrap()) == 0 {
                continue;
            }
            for b in w.iter_mut() {
                if *b != CARD_CLEAN {
                    n += 1;
                    *b = if *b == CARD_DIRTY { CARD_AGED } else { CARD_CLEAN };
                }
            }
        }
        for b in chunks.into_remainder() {
            if *b != CARD_CLEAN {
                n += 1;
                *b = if *b == CARD_DIRTY { CARD_AGED } else { CARD_CLEAN };
            }
        }
        n
    }

    /// The first card in `[from, hi)` whose value is at least `min_age`, skipping clean words.
    #[inline]
    pub fn next_card(&self, mut from: usize, hi: usize, min_age: u8) -> Option<usize> {
        while from < hi {
            if from.is_multiple_of(8) && from + 8 <= hi {
                let w = u64::from_ne_bytes(self.cards[from..from + 8].try_into().unwrap());
                if w == 0 {
                    from += 8;
                    continue;
                }
            }
            if self.cards[from] >= min_age {
                return Some(from);
            }
            from += 1;
        }
        None
    }

    /// Cards in `[lo, hi)` whose value is at least `min_age`.
    pub fn count_at_least(&self, lo: usize, hi: usize, min_age: u8) -> u64 {
        self.cards[lo..hi].iter().filter(|&&b| b >= min_age).count() as u64
    }

    /// Age every card (see [`CardTable::age_range`]); for a policy's own table at a collection.
    pub fn age_all(&mut self) -> u64 {
        let n = self.cards.len();
        self.age_range(0, n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn geometry_and_aging() {
        let mut t = CardTable::new([1 << 20, 64 << 10, 1 << 20]);
        assert_eq!(t.len(), (1 << 13) + (1 << 9) + (1 << 13));
        assert_eq!(t.index(0, 127), 0);
        assert_eq!(t.index(0, 128), 1);
        assert_eq!(t.index(1, 0), 1 << 13);
        assert_eq!(t.card_addr(t.index(2, 4096)), (2, 4096));
        t.mark(5);
        t.mark(300);
        t.set(301, CARD_AGED);
        assert_eq!(t.next_card(0, t.len(), CARD_AGED), Some(5));
        assert_eq!(t.next_card(6, t.len(), CARD_DIRTY), Some(300));
        assert_eq!(t.next_card(301, t.len(), CARD_DIRTY), None);
        assert_eq!(t.age_all(), 3);
        assert_eq!((t.get(5), t.get(300), t.get(301)), (CARD_AGED, CARD_AGED, CARD_CLEAN));
        assert_eq!(t.count_at_least(0, t.len(), CARD_AGED), 2);
        assert_eq!(t.age_all(), 2);
        assert_eq!(t.count_at_least(0, t.len(), CARD_AGED), 0);
    }
}
