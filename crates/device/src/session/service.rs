//! What a session service is (the contract; which ones exist is `services.rs`): a system-wide
//! component that runs beside the apps and acts on all of them.
//!
//! The session calls a service at three points: when an app's runtime starts
//! ([`SessionService::takes_gc_triggers`]: the runtime then leaves its collection triggers and
//! trimming to the service, `mobmem_runtime::trigger`), after a slice of simulated time when it is
//! [`SessionService::due`] ([`SessionService::run`] with the live apps; the CPU time it returns is charged to
//! system_server), and in the run's summary ([`SessionService::stats`], under the service's name;
//! `null` for a registered service that was off).
//!
//! Left out: services run in the order `system.services` names them and do not see each other;
//! two services that both take the runtimes' GC triggers are not told apart.

use super::app::Live;
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;

/// A system-wide service of the session.
pub trait SessionService {
    /// Whether apps' runtimes delegate their collection triggers and trimming to this service.
    fn takes_gc_triggers(&self) -> bool {
        false
    }

    /// Whether the service has work at `now` (the session gathers the live apps only then).
    fn due(&self, _now: Nanos) -> bool {
        true
    }

    /// Run the service at `now`, when it is due, with the live apps; returns the CPU time it used.
    fn run(&mut self, k: &mut Kernel, apps: &mut [&mut Live], now: Nanos) -> Nanos;

    /// What the service did, for the summary.
    fn stats(&self) -> serde_json::Value;
}
