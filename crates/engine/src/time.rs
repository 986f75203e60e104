//! Simulated time: unsigned nanoseconds since the start of a run.

/// Nanoseconds of simulated time.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_SEC: Nanos = 1_000_000_000;

/// Convert seconds (as used in configuration files) to nanoseconds, saturating.
pub fn secs(s: f64) -> Nanos {
    if s <= 0.0 {
        0
    } else {
        (s * NS_PER_SEC as f64).min(u64::MAX as f64) as Nanos
    }
}
