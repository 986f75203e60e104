//! Object sizes: a size class, the measured Android mix of allocated bytes by object size, the
//! object-count probabilities the workload draws sizes from, and the mix tilted to the measured
//! mean size of objects that survive collections.

use serde::Serialize;

/// One size class: [lo, hi] bytes and its share of allocated bytes.
#[derive(Clone, Debug, Serialize)]
pub struct SizeClass {
    pub lo: u32,
    pub hi: u32,
    pub byte_share: f64,
}

/// The measured Android mix of bytes by object size (docs/runtime.md).
pub fn android_size_mix() -> Vec<SizeClass> {
    let c = |lo, hi, s| SizeClass { lo, hi, byte_share: s };
    vec![c(8, 16, 0.044), c(17, 32, 0.547), c(33, 64, 0.210), c(65, 128, 0.150), c(129, 256, 0.028), c(257, 512, 0.013), c(12 * 1024, 48 * 1024, 0.010)]
}

/// Objects at least this large are large objects (ART's `kMinLargeObjectThreshold`, 3 pages):
/// they are allocated in the large-object space and never moved.
const LARGE_OBJECT_BYTES: u32 = 12 * 1024;

impl SizeClass {
    /// Mean size of an object drawn from this class as the workload draws it: uniform in
    /// [lo, hi], at least 8 bytes, rounded up to the 8-byte object alignment.
    pub fn mean_bytes(&self) -> f64 {
        let (lo, hi) = (self.lo.min(self.hi), self.hi.max(self.lo));
        let sum: u64 = (lo..=hi).map(|s| ((s.max(8) + 7) & !7) as u64).sum();
        sum as f64 / (hi - lo + 1) as f64
    }
}

/// Object-count probabilities of the classes of `mix` (byte share over mean size, normalised).
pub(super) fn count_probs(mix: &[SizeClass]) -> Vec<f64> {
    let w: Vec<f64> = mix.iter().map(|c| c.byte_share / ((c.lo + c.hi) as f64 / 2.0).max(1.0)).collect();
    let tot: f64 = w.iter().sum();
    w.iter().map(|x| x / tot).collect()
}

pub(super) fn cdf_of(probs: &[f64]) -> Vec<f64> {
    let mut acc = 0.0;
    probs
        .iter()
        .map(|x| {
            acc += x;
            acc
        })
        .collect()
}

/// The size mix of objects that survive collections: the allocation mix's object-count
/// probabilities of small (movable) objects tilted by size, `p_i · m_i^θ`, with θ chosen so that
/// the mean size of a small survivor is `target` bytes; large objects keep their probability (the
/// measurement behind `target` counts objects a copying collector moves, which large objects
/// never are). Survivors are larger than the mean allocation: temporaries are mostly small
/// (boxed values, iterators, builders), long-lived data holds arrays, strings and maps. The
/// power tilt is the smallest change (in relative entropy over log-size) that reaches the mean;
/// the shape within the mix is an assumption, the mean is measured. `target` ≤ 0, or a mix with
/// fewer than two small classes, leaves the probabilities as they are. Returns count
/// probabilities (summing to 1).
pub fn survivor_count_probs(mix: &[SizeClass], target: f64) -> Vec<f64> {
    let base = count_probs(mix);
    let small: Vec<usize> = (0..mix.len()).filter(|&i| mix[i].lo < LARGE_OBJECT_BYTES).collect();
    if target <= 0.0 || small.len() < 2 {
        return base;
    }
    let m: Vec<f64> = mix.iter().map(SizeClass::mean_bytes).collect();
    let small_mass: f64 = small.iter().map(|&i| base[i]).sum();
    let tilted = |theta: f64| -> Vec<f64> {
        let w: Vec<f64> = small.iter().map(|&i| base[i] * (m[i] / m[small[0]]).powf(theta)).collect();
        let tot: f64 = w.iter().sum();
        w.iter().map(|x| x / tot).collect()
    };
    let mean = |w: &[f64]| -> f64 { small.iter().zip(w).map(|(&i, x)| x * m[i]).sum() };
    // The mean is increasing in θ: bisect over a range wide enough for any reachable target.
    let (mut lo, mut hi) = (-30.0f64, 30.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mean(&tilted(mid)) < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let w = tilted(0.5 * (lo + hi));
    let mut out = base;
    for (&i, x) in small.iter().zip(w) {
        out[i] = x * small_mass;
    }
    out
}

/// The mean size of an object that survives a collection in Android 8+ apps, in bytes: ART's
/// cumulative "bytes moved / objects moved" of the concurrent copying collector (SIGQUIT dumps),
/// median 52 B over 16 public dumps (quartiles 48 and 53.5 B; the AOSP documentation's Google
/// Maps example: 54 B for full and 52 B for sticky collections).
pub const SURVIVOR_OBJECT_BYTES: f64 = 52.0;
