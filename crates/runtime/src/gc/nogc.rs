//! NoGC (Epsilon-like): allocates, never collects; out of memory when the heap is exhausted. The
//! LBO baseline: it has no GC cost at all, only the mutator's.

use super::{Collector, Cx, GcType, PhaseId};
use mobmem_engine::Nanos;

pub struct NoGc;

impl Collector for NoGc {
    fn name(&self, _: GcType) -> &'static str {
        "no-op"
    }
    fn supports_sticky(&self) -> bool {
        false
    }
    fn reads_cards(&self) -> bool {
        false
    }
    fn plan(&self, _: GcType) -> Vec<PhaseId> {
        Vec::new()
    }
    fn run_phase(&mut self, _: PhaseId, _: &mut Cx, _: Nanos) -> bool {
        true
    }
}
