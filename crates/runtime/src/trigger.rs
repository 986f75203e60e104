//! Who triggers an app's collections and trims. By default the runtime itself, as ART does:
//! heap sizing after each collection sets the target footprint, a concurrent collection starts
//! when allocation passes the concurrent start, a trim follows some time after each collection.
//! A delegate outside the runtime — the device layer's global GC service — can take those
//! triggers over (MMTk's delegated `gc_trigger` is the model): once [`Runtime::delegate_triggers`]
//! is on, the runtime starts no concurrent collection and schedules no trim of its own, and the
//! delegate acts only through the methods here. Allocation failures still collect, whoever
//! triggers.
//!
//! Left out: a delegate does not replace the heap sizing after a collection (the runtime's rule
//! still sets the target footprint then; the delegate overrides it on its next decision).

use crate::gc::{GcCause, GcType};
use crate::runtime::Runtime;
use mobmem_kernel::Kernel;

impl Runtime {
    /// Hand this app's collection and trim triggers to a delegate (`true`) or keep them (`false`).
    pub fn delegate_triggers(&mut self, delegated: bool) {
        self.external_triggers = delegated;
    }

    /// Whether a delegate triggers this app's collections and trims.
    pub fn triggers_delegated(&self) -> bool {
        self.external_triggers
    }

    /// The delegate's target footprint for the heap (at most the app's heap limit).
    pub fn set_target_footprint(&mut self, bytes: u64) {
        self.target_footprint = bytes.min(self.limit());
    }

    /// The delegate starts a collection of the kind the runtime would run next (`cause` names
    /// the delegate in the GC log and records).
    pub fn delegated_collection(&mut self, k: &mut Kernel, cause: &'static str) {
        let ty = self.next_gc_type;
        self.start_gc(k, GcCause::Policy(cause), ty);
    }

    /// The delegate compacts the heap (a full collection) and trims it when that collection ends.
    pub fn delegated_compaction(&mut self, k: &mut Kernel, cause: &'static str) {
        self.start_gc(k, GcCause::Policy(cause), GcType::Full);
        self.pending_trim = Some(self.mutator.now);
    }
}
