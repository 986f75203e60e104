//! The collector registry: a collector kind → its implementation. The built-in collectors'
//! constructors are listed in the order of their catalogue entries ([`COLLECTORS`]); a collector
//! added from outside the crate (a policy, a test) is one [`register`] call with its catalogue
//! entry and its constructor, after which every name-taking setting accepts it.

use super::Collector;
use crate::config::{CollectorInfo, CollectorKind, COLLECTORS};
use std::sync::RwLock;

/// Builds a collector (one per runtime, and again at a collector transition).
pub type Ctor = fn() -> Box<dyn Collector>;

/// Constructors of [`COLLECTORS`], entry by entry, each under its catalogue name (checked at
/// compile time below, so an entry added to one list and not the other, or out of order, does not
/// build).
const BUILTIN: [(&str, Ctor); 6] = [
    ("cc", || Box::new(super::concurrent_copying::ConcurrentCopying)),
    ("cmc", || Box::new(super::mark_compact::MarkCompact::default())),
    ("ms", || Box::new(super::mark_sweep::MarkSweep)),
    ("ms-otf", || Box::new(super::mark_sweep_otf::MarkSweepOtf::default())),
    ("ss", || Box::new(super::semi_space::SemiSpace)),
    ("nogc", || Box::new(super::nogc::NoGc)),
];
const _: () = {
    assert!(BUILTIN.len() == COLLECTORS.len(), "one constructor per catalogue entry");
    let mut i = 0;
    while i < BUILTIN.len() {
        assert!(same(BUILTIN[i].0, COLLECTORS[i].name), "constructors in catalogue order, under the entry's name");
        i += 1;
    }
};

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

static REGISTERED: RwLock<Vec<Ctor>> = RwLock::new(Vec::new());

/// A new collector of `kind`.
pub fn create(kind: CollectorKind) -> Box<dyn Collector> {
    match BUILTIN.get(kind.id()) {
        Some((_, c)) => c(),
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
