//! The session-service contract: a service the session did not know of runs at the session's
//! hooks and reports under its name; every registered service is a name `system.services`
//! accepts and a session builds; `system.gc_service` is the same switch as naming it.

mod common;
use common::*;
use mobmem_device::session::app::Live;
use mobmem_device::session::run::run_booted;
use mobmem_device::session::services::{SessionService, SERVICES};
use mobmem_device::session::{inputs, Session};
use mobmem_engine::Nanos;
use mobmem_kernel::Kernel;
use serde_json::{json, Value};

/// A toy service: counts its calls and the most apps it saw alive at once.
#[derive(Default)]
struct Census {
    calls: u64,
    most_alive: usize,
}

impl SessionService for Census {
    fn run(&mut self, _k: &mut Kernel, apps: &mut [&mut Live], _now: Nanos) -> Nanos {
        self.calls += 1;
        self.most_alive = self.most_alive.max(apps.len());
        1_000
    }
    fn stats(&self) -> Value {
        json!({ "calls": self.calls, "most_alive": self.most_alive })
    }
}

fn boot(name: &str, set: &[(&str, &str)]) -> Session {
    let path = scenario_file(name, &two_passes(&APPS[..3]));
    let mut o = uncalibrated();
    o.extend(set.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    Session::boot(inputs::load(&path, &data(), &o, None).unwrap()).unwrap()
}

#[test]
fn a_service_of_its_own_runs_at_the_sessions_hooks_and_reports_under_its_name() {
    let mut s = boot("census", &[]);
    s.services.push(("census", Box::new(Census::default())));
    let v = run_booted(s, None, std::time::Instant::now()).unwrap();
    assert!(v["census"]["calls"].as_u64().unwrap() > 100, "{}", v["census"]);
    assert_eq!(v["census"]["most_alive"].as_u64(), Some(3), "the three apps stay cached on this phone");
    // Registered services that were off report null.
    for c in SERVICES.entries {
        assert_eq!(v[c.name], Value::Null, "{}", c.name);
    }
}

#[test]
fn every_registered_service_is_accepted_by_name_and_builds() {
    assert!(!SERVICES.entries.is_empty());
    for c in SERVICES.entries {
        let s = boot(c.name, &[("system.services", c.name)]);
        assert_eq!(s.services.iter().map(|(n, _)| *n).collect::<Vec<_>>(), vec![c.name]);
    }
    let by_switch = boot("switch", &[("system.gc_service", "true")]);
    assert_eq!(by_switch.inp.options.services, vec!["gc_service".to_string()]);
    let mut o = inputs::SessionOptions::default();
    inputs::SETTINGS.set(&mut o, "system.services", "gc_service,turbo").unwrap();
    let e = mobmem_device::session::services::check(&o.services).unwrap_err();
    assert_eq!(e, "setting system.services: unknown session service \"turbo\"; known: gc_service");
    let path = scenario_file("turbo", &two_passes(&APPS[..1]));
    let e = mobmem_device::session::run::check(&path, &data(), &vec![("system.services".into(), "turbo".into())], None).unwrap_err();
    assert!(e.contains("unknown session service \"turbo\""), "{e}");
    let e = inputs::SETTINGS.set(&mut o, "system.services", "gc_service, gc_service").unwrap_err().to_string();
    assert!(e.contains("named twice"), "{e}");
}
