//! The collector registry: a collector kind → its implementation. The built-in collectors'
//! constructors are listed in the order of their catalogue entries ([`COLLECTORS`]); a collector
//! added from outside the crate (a policy, a test) is one [`register`] call with its catalogue
//! entry and its constructor, after which every name-taking setting accepts it.

use super::Collector;
use crate::config::{CollectorInfo, CollectorKind, COLLECTORS};
use std::sync::RwLock;

/// Builds a collector (one per runtime, and again at a collector transition).
pub type Ctor = fn() -> Box<dyn Collector>;

/// Constructors of [`COLLECTORS`], entry by entry.
const BUILTIN: [Ctor; 6] = [
    || Box::new(super::concurrent_copying::ConcurrentCopying),
    || Box::new(super::mark_compact::MarkCompact::default()),
    || Box::new(super::mark_sweep::MarkSweep),
    || Box::new(super::mark_sweep_otf::MarkSweepOtf::default()),
    || Box::new(super::semi_space::SemiSpace),
    || Box::new(super::nogc::NoGc),
];
const _: () = assert!(BUILTIN.len() == COLLECTORS.len(), "one constructor per catalogue entry");

static REGISTERED: RwLock<Vec<Ctor>> = RwLock::new(Vec::new());

/// A new collector of `kind`.
pub fn create(kind: CollectorKind) -> Box<dyn Collector> {
    match BUILTIN.get(kind.id()) {
        Some(c) => c(),
        None => REGISTERED.read().unwrap()[kind.id() - BUILTIN.len()](),
    }
}

/// Register a collector: its catalogue entry and its constructor. Returns its kind; an error if
/// its name or an alias is taken.
pub fn register(info: CollectorInfo, ctor: Ctor) -> Result<CollectorKind, String> {
    let mut ctors = REGISTERED.write().unwrap();
    let kind = CollectorKind::register_info(info)?;
    debug_assert_eq!(kind.id(), BUILTIN.len() + ctors.len());
    ctors.push(ctor);
    Ok(kind)
}
