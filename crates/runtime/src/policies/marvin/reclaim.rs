//! Marvin's swap decisions, on the runtime's object-granularity swap
//! ([`crate::object_swap`]):
//! - **stubs**: a compaction (the collector transition after going to the background, or the
//!   write task's compaction) gives a stub to every object of at least `threshold` bytes it
//!   copies;
//! - **write**: after each of Marvin's collections (and the transition), cold objects with stubs
//!   modified since their last write are written to the swap file ("ahead-of-time swap");
//! - **reclaim**: after a compaction in the background, the pages of every cold written object
//!   are released;
//! - **swap-in**: a mutator access reads a released object back (the runtime does it); on
//!   returning to the foreground every released object is read back first
//!   (`swap_in_on_foreground`).
//!
//! Cold: not written — and, with `count_reads`, not read — during the last `cold_epochs`
//! non-sticky collections nor since the last one (Marvin's shift registers of access bits).

use super::config::MarvinConfig;
use super::write_task::{COMPACTION_CAUSE, WRITE_TASK_CAUSE};
use crate::gc::{GcCause, GcRecord};
use crate::heap::Heap;
use crate::hooks::{ObjectSwapPolicy, SurvivorInfo};
use crate::object::{flag, AppState, ObjId};

pub struct Reclaim {
    pub(crate) c: MarvinConfig,
}

fn is_compaction(cause: &str) -> bool {
    cause == COMPACTION_CAUSE.name() || cause == GcCause::CollectorTransition.name()
}

impl Reclaim {
    fn cold(&self, heap: &Heap, o: ObjId) -> bool {
        let (read_age, write_age) = heap.oswap.age(o);
        write_age > self.c.cold_epochs && (!self.c.count_reads || read_age > self.c.cold_epochs)
    }
}

impl ObjectSwapPolicy for Reclaim {
    fn stub_on_copy(&mut self, heap: &Heap, info: &SurvivorInfo) -> bool {
        (info.cause == COMPACTION_CAUSE || info.cause == GcCause::CollectorTransition)
            && info.size >= self.c.threshold
            && heap.objs.flags(info.obj) & flag::PINNED == 0
    }

    fn after_gc(&mut self, heap: &Heap, rec: &GcRecord, state: AppState, write: &mut Vec<ObjId>, reclaim: &mut Vec<ObjId>) {
        let compaction = is_compaction(rec.cause);
        if !compaction && rec.cause != WRITE_TASK_CAUSE.name() {
            return;
        }
        let release = compaction && state == AppState::Background;
        for o in heap.oswap.stub_ids() {
            if !self.cold(heap, o) {
                continue;
            }
            let r = heap.oswap.get(o).unwrap();
            if r.resident && r.dirty {
                write.push(o);
            }
            if release && r.resident {
                reclaim.push(o);
            }
        }
    }

    fn swap_in_on_foreground(&self) -> bool {
        self.c.swap_in_on_foreground
    }
}
