//! The session services that exist: system-wide components that run beside the apps and act on
//! all of them, switched on by `system.services` (or by a system name that sets it). The model has
//! one, the global GC service; another is a module implementing [`SessionService`] (the contract,
//! in `service.rs`) plus one entry in [`SERVICES`].

use super::gc_service::{GcService, ServiceConfig};
use super::inputs::SessionOptions;
pub use super::service::SessionService;
use mobmem_engine::component::{Component, Registry};
use mobmem_engine::Nanos;

/// A service's constructor: the session's options and the boot time.
pub type Build = fn(&SessionOptions, Nanos) -> Box<dyn SessionService>;

/// A running service, under its registered name.
pub type Running = (&'static str, Box<dyn SessionService>);

/// Every session service.
pub static SERVICES: Registry<Build> = Registry {
    kind: "session service",
    entries: &[Component {
        name: "gc_service",
        help: "a global GC service decides for every app when to collect, how far its heap grows and when to compact and trim sparse background heaps, instead of each runtime (Hussein's thesis, Purdue 2017; 'GC as a service', VEE 2017)",
        build: |o, now| {
            let cfg = ServiceConfig { period_ns: o.gc_service_period_ns, plenty_mib: o.gc_service_plenty_mib, scarce_mib: o.gc_service_scarce_mib };
            Box::new(GcService::new(cfg, now))
        },
    }],
};

/// The registered service `name`, or the setting's error (the setting only splits the list,
/// since the settings sit below the services that need them).
fn lookup(name: &str) -> Result<&'static Component<Build>, String> {
    SERVICES.get(name).map_err(|e| format!("setting system.services: {e}"))
}

/// Build the services `names` lists, in that order.
pub fn build(names: &[String], o: &SessionOptions, now: Nanos) -> Result<Vec<Running>, String> {
    names.iter().map(|n| lookup(n).map(|c| (c.name, (c.build)(o, now)))).collect()
}

/// Check that every name in `names` is a registered service.
pub fn check(names: &[String]) -> Result<(), String> {
    names.iter().try_for_each(|n| lookup(n).map(|_| ()))
}
