//! Deterministic event queue.
//!
//! Events are ordered by simulated time and, for equal times, by the order in which they were
//! scheduled. Same schedule calls → same pop order, on any machine.

use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug)]
struct Entry<E> {
    at: Nanos,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// A min-queue of events keyed by (time, sequence).
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry<E>>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self { heap: BinaryHeap::new(), seq: 0 }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedule `event` at time `at`.
    pub fn push(&mut self, at: Nanos, event: E) {
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Reverse(Entry { at, seq, event }));
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    /// Remove and return the earliest event if it is due at or before `until`.
    pub fn pop_until(&mut self, until: Nanos) -> Option<(Nanos, E)> {
        if self.peek_time()? <= until {
            self.heap.pop().map(|Reverse(e)| (e.at, e.event))
        } else {
            None
        }
    }

    pub fn pop(&mut self) -> Option<(Nanos, E)> {
        self.heap.pop().map(|Reverse(e)| (e.at, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Drop every pending event matching `pred` (e.g. the timers of a killed process).
    pub fn retain(&mut self, mut keep: impl FnMut(&E) -> bool) {
        let old = std::mem::take(&mut self.heap);
        self.heap = old.into_iter().filter(|Reverse(e)| keep(&e.event)).collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pops_in_time_then_fifo_order(times in proptest::collection::vec(0u64..50, 0..200)) {
            let mut q = EventQueue::new();
            for (i, t) in times.iter().enumerate() { q.push(*t, i); }
            let mut last: Option<(u64, usize)> = None;
            while let Some((t, i)) = q.pop() {
                prop_assert_eq!(times[i], t);
                if let Some((lt, li)) = last {
                    prop_assert!(lt < t || (lt == t && li < i));
                }
                last = Some((t, i));
            }
        }
    }

    #[test]
    fn pop_until_respects_bound() {
        let mut q = EventQueue::new();
        q.push(10, 'a');
        q.push(5, 'b');
        assert_eq!(q.pop_until(4), None);
        assert_eq!(q.pop_until(5), Some((5, 'b')));
        assert_eq!(q.pop_until(9), None);
        assert_eq!(q.pop_until(10), Some((10, 'a')));
    }
}
