//! The collector registry: a collector kind → its implementation.

use super::Collector;
use crate::config::CollectorKind;

/// The collector registry.
pub fn create(kind: CollectorKind) -> Box<dyn Collector> {
    match kind {
        CollectorKind::NoGc => Box::new(super::nogc::NoGc),
        CollectorKind::SemiSpace => Box::new(super::semi_space::SemiSpace),
        CollectorKind::ConcurrentCopying => Box::new(super::concurrent_copying::ConcurrentCopying),
        CollectorKind::ConcurrentMarkCompact => Box::new(super::mark_compact::MarkCompact::default()),
        CollectorKind::MarkSweep => Box::new(super::mark_sweep::MarkSweep),
        CollectorKind::MarkSweepOtf => Box::new(super::mark_sweep_otf::MarkSweepOtf),
    }
}
