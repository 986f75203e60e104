//! Policies built on the runtime's hooks: a module each, plus one entry in [`POLICIES`], the
//! registry `system.policies` names are looked up in.

pub mod segregate;

use crate::heap::Heap;
use crate::hooks::Hooks;
use crate::sizing::GrowForUtilization;

/// Installs a policy's hooks (and may register placement classes on the heap).
pub type InstallFn = fn(&mut Hooks, &mut Heap);

/// The policy registry: name, description, installer. A new policy = a module + one entry.
pub const POLICIES: &[(&str, &str, InstallFn)] = &[
    ("segregate-by-state", "test policy: survivors and new objects go to regions tagged by the app state at allocation (fg/bg)", segregate::install),
    ("grow-for-utilization", "ART's GrowForUtilization heap sizing (the default)", |h, _| {
        h.sizing = Box::new(GrowForUtilization);
    }),
];

/// Install the named policy.
pub fn install(name: &str, hooks: &mut Hooks, heap: &mut Heap) -> Result<(), String> {
    let (_, _, f) = POLICIES.iter().find(|(n, _, _)| *n == name).ok_or_else(|| {
        let names: Vec<_> = POLICIES.iter().map(|(n, _, _)| *n).collect();
        format!("unknown runtime policy {name:?}; known: {}", names.join(", "))
    })?;
    f(hooks, heap);
    hooks.installed.push(name.into());
    Ok(())
}
