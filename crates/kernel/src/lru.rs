//! The LRU lists: intrusive doubly-linked lists threaded through the frame table.
//!
//! `head` is the most recently added end; reclaim takes from the `tail` (the oldest), as the
//! kernel's `lru_to_page(&list)` takes `list->prev`. All operations are O(1) and allocate nothing.

use crate::page::{lru, Frames, Pfn, NO_PFN};

#[derive(Clone, Debug)]
pub struct LruLists {
    pub(crate) head: [Pfn; lru::NR_LRU],
    pub(crate) tail: [Pfn; lru::NR_LRU],
    pub len: [u64; lru::NR_LRU],
}

impl Default for LruLists {
    fn default() -> Self {
        Self { head: [NO_PFN; lru::NR_LRU], tail: [NO_PFN; lru::NR_LRU], len: [0; lru::NR_LRU] }
    }
}

impl LruLists {
    /// Add an isolated frame at the head (young end) of list `l`.
    #[inline]
    pub fn add_head(&mut self, f: &mut Frames, l: u8, p: Pfn) {
        let i = p as usize;
        debug_assert!(f.lru[i] == u8::MAX, "adding a frame that is not isolated");
        let li = l as usize;
        f.lru[i] = l;
        f.links[i][0] = NO_PFN;
        f.links[i][1] = self.head[li];
        if self.head[li] != NO_PFN {
            f.links[self.head[li] as usize][0] = p;
        } else {
            self.tail[li] = p;
        }
        self.head[li] = p;
        self.len[li] += 1;
    }

    /// Add an isolated frame at the tail (reclaimed next) of list `l`.
    #[inline]
    pub fn add_tail(&mut self, f: &mut Frames, l: u8, p: Pfn) {
        let i = p as usize;
        debug_assert!(f.lru[i] == u8::MAX);
        let li = l as usize;
        f.lru[i] = l;
        f.links[i][1] = NO_PFN;
        f.links[i][0] = self.tail[li];
        if self.tail[li] != NO_PFN {
            f.links[self.tail[li] as usize][1] = p;
        } else {
            self.head[li] = p;
        }
        self.tail[li] = p;
        self.len[li] += 1;
    }

    /// Take a frame off its list (isolate it).
    #[inline]
    pub fn remove(&mut self, f: &mut Frames, p: Pfn) {
        let i = p as usize;
        let li = f.lru[i] as usize;
        debug_assert!(li < lru::NR_LRU, "removing a frame that is on no list");
        let [pr, nx] = f.links[i];
        if pr != NO_PFN {
            f.links[pr as usize][1] = nx;
        } else {
            self.head[li] = nx;
        }
        if nx != NO_PFN {
            f.links[nx as usize][0] = pr;
        } else {
            self.tail[li] = pr;
        }
        f.links[i][0] = NO_PFN;
        f.links[i][1] = NO_PFN;
        f.lru[i] = u8::MAX;
        self.len[li] -= 1;
    }

    /// Move a listed frame to the head of list `l` (possibly another list).
    #[inline]
    pub fn move_head(&mut self, f: &mut Frames, l: u8, p: Pfn) {
        if f.lru[p as usize] == l && self.head[l as usize] == p {
            return;
        }
        self.remove(f, p);
        self.add_head(f, l, p);
    }

    #[inline]
    pub fn tail_of(&self, l: u8) -> Pfn {
        self.tail[l as usize]
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
        let mut v = Vec::new();
        let mut p = self.head[l as usize];
        while p != NO_PFN {
            v.push(p);
            p = f.links[p as usize][1];
        }
        v
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
        /// The intrusive lists behave exactly like a reference model of five deques, and every
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
                    if let Some(&t) = want.last() { prop_assert_eq!(l.tail[li as usize], t); }
                }
                prop_assert_eq!(l.total() + f.nr_free(), 64);
            }
        }
    }
}
