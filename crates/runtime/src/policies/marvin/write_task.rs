//! Marvin's write task: a timer that asks for a non-sticky collection every
//! `write_task_fg_ms` in the foreground and `write_task_bg_ms` in the background (each shifts
//! the access bits, and after it cold modified objects are written to the swap file); in the
//! background every `compact_every`-th cycle is a compaction instead (stubs for large objects,
//! then the pages of cold written objects released).
//!
//! Marvin's runtime ran partial collections of its mark-sweep collector here; the model's
//! copying collector has sticky and full collections only, so the write task's collection is a
//! full one (not evacuating), the compaction a full one that evacuates every region.

use super::config::MarvinConfig;
use crate::config::TraceOrder;
use crate::gc::{GcCause, GcType};
use crate::heap::Heap;
use crate::hooks::{PolicyAction, StateHook};
use crate::object::AppState;
use mobmem_engine::Nanos;

/// Cause of the write task's collections.
pub const WRITE_TASK_CAUSE: GcCause = GcCause::Policy("MarvinWriteTask");
/// Cause of the background compaction.
pub const COMPACTION_CAUSE: GcCause = GcCause::Policy("MarvinCompaction");

pub struct WriteTask {
    c: MarvinConfig,
    state: AppState,
    next: Option<Nanos>,
    cycles: u32,
}

impl WriteTask {
    pub fn new(c: MarvinConfig) -> Self {
        // Due at once: the first call only starts the timer (the app's start time).
        Self { c, state: AppState::Foreground, next: Some(0), cycles: 0 }
    }

    fn period(&self) -> Nanos {
        if self.state == AppState::Background {
            self.c.write_task_bg_ns
        } else {
            self.c.write_task_fg_ns
        }
    }
}

impl StateHook for WriteTask {
    fn on_state(&mut self, _heap: &Heap, state: AppState, now: Nanos) {
        self.state = state;
        self.cycles = 0;
        self.next = Some(now + self.period());
    }

    fn next_at(&self) -> Option<Nanos> {
        self.next
    }

    fn due(&mut self, _heap: &Heap, now: Nanos, out: &mut Vec<PolicyAction>) {
        let first = self.next == Some(0);
        self.next = Some(now + self.period());
        if first {
            return;
        }
        self.cycles += 1;
        let compact = self.state == AppState::Background && self.cycles.is_multiple_of(self.c.compact_every);
        let cause = if compact { COMPACTION_CAUSE } else { WRITE_TASK_CAUSE };
        out.push(PolicyAction::Collect { cause, gc_type: GcType::Full, order: TraceOrder::DepthFirst, evacuate_all: compact });
    }
}
