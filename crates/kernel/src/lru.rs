//! The LRU lists: the kernel's five `lruvec` lists (inactive/active × anon/file, unevictable).
//!
//! Order is the kernel's: `head` is the most recently added end, reclaim takes from the `tail`
//! (the oldest), as `lru_to_page(&list)` takes `list->prev`; `add_tail` puts a page where reclaim
//! looks next (`rotate_reclaimable_page`).
//!
//! The representation is not the kernel's `list_head`. Each list is a queue of entries (frame,
//! stamp), oldest first, and a frame's current entry is the one whose stamp equals the frame's
//! `lru_gen`. Taking a frame off its list only bumps its `lru_gen` (its entry goes stale where
//! it is); reading the tail drops stale entries from the front; a list whose stale entries
//! outnumber its live ones (plus a slack) is compacted in order. So no operation touches another
//! frame's state: an unlink in a doubly-linked list writes both neighbours, two dependent random
//! accesses per page that made list maintenance a tenth of a session's host time under heavy
//! reclaim. The order of the live entries is exactly the order of a linked list under the same
//! operations (the property test below checks it against a reference model). All operations are
//! O(1) amortised; a list's queue grows to at most about twice its length plus the slack.
//!
//! A frame's `lru_gen` is a 32-bit counter bumped twice per add/remove cycle: an entry could be
//! mistaken for current only if its frame went through 2^31 cycles while the entry stayed queued,
//! and compaction drops stale entries long before that.

use std::collections::VecDeque;

use crate::page::{lru, Frames, Pfn, NO_PFN};

/// A queued entry: the frame and its `lru_gen` when it was added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    pfn: Pfn,
    stamp: u32,
}

/// Stale entries a list may hold beyond its live ones before it is compacted (small in unit
/// tests so that they compact often).
const STALE_SLACK: usize = if cfg!(test) { 2 } else { 64 };

#[derive(Clone, Debug)]
pub struct LruLists {
    /// Per list, entries oldest (tail) first; live and stale entries interleaved.
    q: [VecDeque<Entry>; lru::NR_LRU],
    pub len: [u64; lru::NR_LRU],
}

impl Default for LruLists {
    fn default() -> Self {
        Self { q: Default::default(), len: [0; lru::NR_LRU] }
    }
}

impl LruLists {
    /// Stamp an isolated frame for list `l` and return its new entry.
    #[inline]
    fn enlist(f: &mut Frames, l: u8, p: Pfn) -> Entry {
        let i = p as usize;
        debug_assert!(f.lru[i] == u8::MAX, "adding a frame that is not isolated");
        debug_assert!((l as usize) < lru::NR_LRU);
        f.lru[i] = l;
        let stamp = f.lru_gen[i].wrapping_add(1);
        f.lru_gen[i] = stamp;
        Entry { pfn: p, stamp }
    }

    #[inline]
    fn is_current(f: &Frames, e: Entry) -> bool {
        f.lru_gen[e.pfn as usize] == e.stamp
    }

    /// Add an isolated frame at the head (young end) of list `l`.
    #[inline]
    pub fn add_head(&mut self, f: &mut Frames, l: u8, p: Pfn) {
        let e = Self::enlist(f, l, p);
        self.q[l as usize].push_back(e);
        self.len[l as usize] += 1;
    }

    /// Add an isolated frame at the tail (reclaimed next) of list `l`.
    #[inline]
    pub fn add_tail(&mut self, f: &mut Frames, l: u8, p: Pfn) {
        let e = Self::enlist(f, l, p);
        self.q[l as usize].push_front(e);
        self.len[l as usize] += 1;
    }

    /// Take a frame off its list (isolate it).
    #[inline]
    pub fn remove(&mut self, f: &mut Frames, p: Pfn) {
        let i = p as usize;
        let li = f.lru[i] as usize;
        debug_assert!(li < lru::NR_LRU, "removing a frame that is on no list");
        f.lru[i] = u8::MAX;
        f.lru_gen[i] = f.lru_gen[i].wrapping_add(1);
        self.len[li] -= 1;
        let q = &mut self.q[li];
        if q.len() > 2 * self.len[li] as usize + STALE_SLACK {
            q.retain(|&e| Self::is_current(f, e));
            debug_assert_eq!(q.len() as u64, self.len[li]);
        }
    }

    /// Move a listed frame to the head of list `l` (possibly another list).
    #[inline]
    pub fn move_head(&mut self, f: &mut Frames, l: u8, p: Pfn) {
        let i = p as usize;
        if f.lru[i] == l && self.q[l as usize].back() == Some(&Entry { pfn: p, stamp: f.lru_gen[i] }) {
            return;
        }
        self.remove(f, p);
        self.add_head(f, l, p);
    }

    /// The frame at the tail of list `l` (the next one reclaim takes), or `NO_PFN`; drops the
    /// stale entries in front of it.
    #[inline]
    pub fn tail_of(&mut self, f: &Frames, l: u8) -> Pfn {
        let q = &mut self.q[l as usize];
        while let Some(&e) = q.front() {
            if Self::is_current(f, e) {
                return e.pfn;
            }
            q.pop_front();
        }
        NO_PFN
    }

    pub fn total(&self) -> u64 {
        self.len.iter().sum()
    }

    pub fn anon(&self) -> u64 {
        self.len[lru::INACTIVE_ANON as usize] + self.len[lru::ACTIVE_ANON as usize]
    }

    pub fn file(&self) -> u64 {
        self.len[lru::INACTIVE_FILE as usize] + self.len[lru::ACTIVE_FILE as usize]
    }

    /// Walk list `l` from head to tail, returning the frames (for invariant checks only).
    pub fn collect(&self, f: &Frames, l: u8) -> Vec<Pfn> {
        self.q[l as usize].iter().rev().filter(|&&e| Self::is_current(f, e)).map(|e| e.pfn).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        AddHead(u8),
        AddTail(u8),
        Remove(usize),
        Move(usize, u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..5).prop_map(Op::AddHead),
            (0u8..5).prop_map(Op::AddTail),
            (0usize..64).prop_map(Op::Remove),
            ((0usize..64), (0u8..5)).prop_map(|(a, b)| Op::Move(a, b)),
        ]
    }

    proptest! {
        /// The lists behave exactly like a reference model of five deques, and every
        /// listed frame is on exactly one list.
        #[test]
        fn lists_match_reference_model(ops in proptest::collection::vec(op(), 0..300)) {
            let mut f = Frames::new(64);
            let mut l = LruLists::default();
            let mut model: Vec<std::collections::VecDeque<Pfn>> = vec![Default::default(); 5];
            let mut listed: Vec<Pfn> = Vec::new();
            for o in ops {
                match o {
                    Op::AddHead(li) => if let Some(p) = f.take() { l.add_head(&mut f, li, p); model[li as usize].push_front(p); listed.push(p); },
                    Op::AddTail(li) => if let Some(p) = f.take() { l.add_tail(&mut f, li, p); model[li as usize].push_back(p); listed.push(p); },
                    Op::Remove(k) => if !listed.is_empty() {
                        let p = listed.swap_remove(k % listed.len());
                        let li = f.lru[p as usize] as usize;
                        l.remove(&mut f, p);
                        model[li].retain(|&x| x != p);
                        f.put(p);
                    },
                    Op::Move(k, li) => if !listed.is_empty() {
                        let p = listed[k % listed.len()];
                        let old = f.lru[p as usize] as usize;
                        l.move_head(&mut f, li, p);
                        model[old].retain(|&x| x != p);
                        model[li as usize].push_front(p);
                    },
                }
                for li in 0..5u8 {
                    let got = l.collect(&f, li);
                    let want: Vec<Pfn> = model[li as usize].iter().copied().collect();
                    prop_assert_eq!(&got, &want);
                    prop_assert_eq!(l.len[li as usize], want.len() as u64);
                    prop_assert_eq!(l.tail_of(&f, li), want.last().copied().unwrap_or(NO_PFN));
                }
                prop_assert_eq!(l.total() + f.nr_free(), 64);
            }
        }
    }
}
