//! Heap sizing after a collection (ART `Heap::GrowForUtilization`), behind a replaceable trait.
//!
//! After a full (non-sticky) collection: `grow = clamp(live·(1/U − 1), min_free, max_free)`,
//! `target = live + grow·mult` and the next collection is sticky. After a sticky collection: keep
//! doing sticky collections while they are productive (their throughput, bytes freed per second of
//! collection, is at least the last full collection's, and the heap is within its target); shrink
//! the target to `live + max_free·mult` if that is below it. `mult` is the foreground heap growth
//! multiplier while the app is perceptible (foreground), 1.0 otherwise. The target is clamped to
//! the growth limit. For concurrent collectors the next concurrent start is
//! `target − clamp(bytes allocated during the last GC, 128 KiB, 512 KiB)` (never below the
//! current allocation). source: AOSP art/runtime/gc/heap.cc (GrowForUtilization,
//! kMinConcurrentRemainingBytes = 128 KiB, kMaxConcurrentRemainingBytes = 512 KiB).
//!
//! [`FixedHeap`] (`runtime.heap_sizing = fixed`) keeps the target at the limit: the heap's size is
//! an input, as LBO's time–space trade-off needs (the ISMM'24 study made ART's heap fixed for it).

use crate::config::HeapConfig;
use crate::gc::record::GcType;

pub const MIN_CONCURRENT_REMAINING: u64 = 128 << 10;
pub const MAX_CONCURRENT_REMAINING: u64 = 512 << 10;

#[derive(Clone, Copy, Debug)]
pub struct SizingInput {
    pub(crate) gc_type: GcType,
    /// Bytes allocated after the collection.
    pub bytes_allocated: u64,
    pub(crate) bytes_allocated_before: u64,
    pub(crate) freed_bytes: u64,
    pub(crate) target_footprint: u64,
    pub(crate) limit: u64,
    pub(crate) foreground: bool,
    pub(crate) concurrent: bool,
    pub(crate) supports_sticky: bool,
    /// Bytes freed per second by this collection and by the last full one (0 = none yet).
    pub(crate) throughput: f64,
    pub(crate) last_full_throughput: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizingDecision {
    pub target_footprint: u64,
    pub concurrent_start_bytes: u64,
    pub next_gc_type: GcType,
}

pub trait HeapSizingPolicy: Send {
    fn after_gc(&mut self, heap: &HeapConfig, s: &SizingInput) -> SizingDecision;
}

pub struct GrowForUtilization;

/// The next collection's kind (ART): sticky after a full collection; after a sticky one, sticky
/// again while sticky collections are productive (at least the last full collection's
/// throughput, and the heap within its target).
fn next_gc_type(s: &SizingInput) -> GcType {
    if s.gc_type == GcType::Full {
        return if s.supports_sticky { GcType::Sticky } else { GcType::Full };
    }
    let productive = s.last_full_throughput > 0.0 && s.throughput >= s.last_full_throughput && s.bytes_allocated <= s.target_footprint;
    if productive {
        GcType::Sticky
    } else {
        GcType::Full
    }
}

/// The concurrent start for a `target` (`target − clamp(bytes allocated during the collection,
/// 128 KiB, 512 KiB)`, never below the live bytes), or never for a non-concurrent collector.
fn concurrent_start(s: &SizingInput, target: u64) -> u64 {
    if !s.concurrent {
        return u64::MAX;
    }
    let live = s.bytes_allocated;
    let during = (live + s.freed_bytes).saturating_sub(s.bytes_allocated_before);
    let remaining = during.clamp(MIN_CONCURRENT_REMAINING, MAX_CONCURRENT_REMAINING).min(target);
    (target - remaining).max(live)
}

impl HeapSizingPolicy for GrowForUtilization {
    fn after_gc(&mut self, h: &HeapConfig, s: &SizingInput) -> SizingDecision {
        let mult = if s.foreground { h.foreground_multiplier } else { 1.0 };
        let live = s.bytes_allocated;
        let target = if s.gc_type == GcType::Full {
            let delta = (live as f64 * (1.0 / h.target_utilization - 1.0)) as u64;
            let grow = delta.clamp(h.min_free, h.max_free);
            live + (grow as f64 * mult) as u64
        } else {
            let adjusted_max_free = (h.max_free as f64 * mult) as u64;
            if live + adjusted_max_free < s.target_footprint {
                live + adjusted_max_free
            } else {
                live.max(s.target_footprint)
            }
        };
        let target = target.min(s.limit);
        SizingDecision { target_footprint: target, concurrent_start_bytes: concurrent_start(s, target), next_gc_type: next_gc_type(s) }
    }
}

/// A fixed heap (`runtime.heap_sizing = fixed`): the target is the limit whatever the live size,
/// so a collection runs when allocation reaches the capacity (a concurrent collector starts its
/// collection as ART would, just below it); the kind of the next collection follows ART's rule.
pub struct FixedHeap;

impl HeapSizingPolicy for FixedHeap {
    fn after_gc(&mut self, _h: &HeapConfig, s: &SizingInput) -> SizingDecision {
        SizingDecision { target_footprint: s.limit, concurrent_start_bytes: concurrent_start(s, s.limit), next_gc_type: next_gc_type(s) }
    }
}

/// The concurrent start threshold before any GC: `target − clamp(target/4, 128 KiB, 512 KiB)`.
pub fn initial_concurrent_start(target: u64) -> u64 {
    target - (target / 4).clamp(MIN_CONCURRENT_REMAINING, MAX_CONCURRENT_REMAINING).min(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    fn input(gc_type: GcType, live: u64, fg: bool) -> SizingInput {
        SizingInput {
            gc_type,
            bytes_allocated: live,
            bytes_allocated_before: live + (4 << 20),
            freed_bytes: 4 << 20,
            target_footprint: 32 << 20,
            limit: 192 << 20,
            foreground: fg,
            concurrent: true,
            supports_sticky: true,
            throughput: 1e9,
            last_full_throughput: 5e8,
        }
    }
    #[test]
    fn full_gc_grows_by_utilization_with_clamps_and_multiplier() {
        let h = HeapConfig::default(); // U 0.7, min 4m, max 8m, mult 2
        let d = GrowForUtilization.after_gc(&h, &input(GcType::Full, 10 << 20, false));
        // 10m * (1/0.7 - 1) = 4.29m within [4m, 8m]
        let grow = ((10u64 << 20) as f64 * (1.0 / 0.7 - 1.0)) as u64;
        assert_eq!(d.target_footprint, (10 << 20) + grow);
        assert_eq!(d.next_gc_type, GcType::Sticky);
        let d = GrowForUtilization.after_gc(&h, &input(GcType::Full, 100 << 20, true));
        assert_eq!(d.target_footprint, (100 << 20) + (16 << 20)); // max_free 8m × 2
        let d = GrowForUtilization.after_gc(&h, &input(GcType::Full, 1 << 20, false));
        assert_eq!(d.target_footprint, (1 << 20) + (4 << 20)); // min_free
        assert!(d.concurrent_start_bytes < d.target_footprint);
        assert!(d.target_footprint - d.concurrent_start_bytes <= MAX_CONCURRENT_REMAINING);
    }
    #[test]
    fn sticky_keeps_sticky_while_productive_and_shrinks() {
        let h = HeapConfig::default();
        let d = GrowForUtilization.after_gc(&h, &input(GcType::Sticky, 10 << 20, false));
        assert_eq!(d.next_gc_type, GcType::Sticky);
        assert_eq!(d.target_footprint, (10 << 20) + (8 << 20)); // shrunk from 32m
        let mut i = input(GcType::Sticky, 10 << 20, false);
        i.throughput = 1e8;
        assert_eq!(GrowForUtilization.after_gc(&h, &i).next_gc_type, GcType::Full);
    }
    #[test]
    fn limit_clamps() {
        let h = HeapConfig::default();
        let mut i = input(GcType::Full, 190 << 20, true);
        i.limit = 192 << 20;
        assert_eq!(GrowForUtilization.after_gc(&h, &i).target_footprint, 192 << 20);
    }
}
