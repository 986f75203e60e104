//! The compressed size of a page stored in zram.
//!
//! A page's compressed size depends on its contents, which the model does not hold. It is drawn
//! from a per-page distribution instead: with probability `same_page_fraction` the page is
//! same-filled (zram stores 0 bytes); otherwise the size is log-normal around `4096 / ratio`,
//! rounded up to zsmalloc's 16-byte size classes, and stored uncompressed (4096 bytes) above the
//! huge-class threshold. The draw is a hash of (seed, page identity, swap-out count), so it is
//! deterministic and independent of which other pages exist. The hot path reads a 4096-entry
//! quantile table of the distribution ([`SizeTable`]) instead of evaluating it.
//! The pool holds `compressed bytes × pool_overhead` (measured zsmalloc overhead).
//! Left out: per-algorithm speed differences beyond the configured costs; fragmentation that
//! builds up after frees (the pool shrinks as soon as its bytes fit in fewer pages).

use crate::config::ZramModel;
use mobmem_engine::rng::hash3;

/// zsmalloc size-class granularity on 4 KiB pages (ZS_SIZE_CLASS_DELTA).
pub const CLASS_DELTA: u32 = 16;
/// Smallest zsmalloc object (ZS_MIN_ALLOC_SIZE).
pub const MIN_ALLOC: u32 = 32;

/// The stored size for standard-normal deviate `z`: log-normal with mean 4096/ratio
/// (exp(σz − σ²/2) has mean 1), zsmalloc class rounding, huge pages stored whole.
fn size_at(m: &ZramModel, z: f64) -> u16 {
    let s = 4096.0 / m.ratio * (m.sigma * z - m.sigma * m.sigma / 2.0).exp();
    let mut bytes = s.round().clamp(MIN_ALLOC as f64, 4096.0) as u32;
    bytes = bytes.div_ceil(CLASS_DELTA) * CLASS_DELTA;
    if bytes > m.huge_class_bytes {
        bytes = 4096;
    }
    bytes as u16
}

/// The inverse CDF of the compressed-size distribution at 4096 equally spaced quantiles.
#[derive(Clone, Debug)]
pub struct SizeTable {
    same_threshold: u64,
    sizes: Vec<u16>,
}

const TABLE_BITS: u32 = 12;

impl SizeTable {
    pub fn new(m: &ZramModel) -> Self {
        let n = 1usize << TABLE_BITS;
        let sizes = (0..n).map(|i| size_at(m, inv_norm_cdf((i as f64 + 0.5) / n as f64))).collect();
        let same_threshold = (m.same_page_fraction.clamp(0.0, 1.0) * u64::MAX as f64) as u64;
        Self { same_threshold, sizes }
    }

    /// Compressed size (0 = same-filled) of a page.
    #[inline]
    pub fn draw(&self, seed: u64, page_key: u64, nonce: u64) -> u16 {
        let h = hash3(seed, page_key, nonce);
        if self.same_threshold > 0 && h < self.same_threshold {
            return 0;
        }
        let g = mobmem_engine::rng::mix64(h);
        self.sizes[(g >> (64 - TABLE_BITS)) as usize]
    }
}

/// Inverse of the standard normal CDF (Acklam's rational approximation, |error| < 1.2e-9).
fn inv_norm_cdf(p: f64) -> f64 {
    const A: [f64; 6] =
        [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.38357751867269e+02, -3.066479806614716e+01, 2.506628277459239e+00];
    const B: [f64; 5] = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01];
    const C: [f64; 6] =
        [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00];
    const D: [f64; 4] = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00];
    let pl = 0.02425;
    if p < pl {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else if p <= 1.0 - pl {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        let q = (-2.0 * (1.0 - p).ln()).sqrt();
        -(((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5]) / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mobmem_engine::rng::unit;

    /// An independent reference draw of the same law (Box–Muller per page), to check the table.
    fn reference_size(m: &ZramModel, seed: u64, page_key: u64, nonce: u64) -> u16 {
        let h = hash3(seed, page_key, nonce);
        if unit(h) < m.same_page_fraction {
            return 0;
        }
        let u1 = unit(hash3(h, 1, 0)).max(1e-12);
        let u2 = unit(hash3(h, 2, 0));
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        size_at(m, z)
    }

    #[test]
    fn table_matches_direct_draw_in_distribution() {
        let m = ZramModel { ratio: 2.8, sigma: 0.35, same_page_fraction: 0.1, huge_class_bytes: 3264, pool_overhead: 1.0 };
        let t = SizeTable::new(&m);
        let n = 40000u64;
        let mut a: Vec<u16> = (0..n).map(|i| t.draw(3, i, 0)).collect();
        let mut b: Vec<u16> = (0..n).map(|i| reference_size(&m, 3, i, 0)).collect();
        a.sort();
        b.sort();
        // Same quantiles within 2 size classes (different hash streams, same law).
        for q in [0.05, 0.25, 0.5, 0.75, 0.95] {
            let i = (q * n as f64) as usize;
            assert!((a[i] as i32 - b[i] as i32).abs() <= 32, "q{q}: {} vs {}", a[i], b[i]);
        }
    }

    #[test]
    fn mean_ratio_close_to_configured() {
        let m = ZramModel { ratio: 2.8, sigma: 0.35, same_page_fraction: 0.0, huge_class_bytes: 3264, pool_overhead: 1.0 };
        let t = SizeTable::new(&m);
        let n = 20000;
        let total: u64 = (0..n).map(|i| t.draw(7, i, 0) as u64).sum();
        let ratio = (n * 4096) as f64 / total as f64;
        // Class rounding and the huge-class cutoff move the mean a little; within 5%.
        assert!((ratio - 2.8).abs() / 2.8 < 0.05, "ratio {ratio}");
    }

    #[test]
    fn same_pages_fraction() {
        let m = ZramModel { ratio: 3.0, sigma: 0.3, same_page_fraction: 0.25, huge_class_bytes: 3264, pool_overhead: 1.0 };
        let t = SizeTable::new(&m);
        let zeros = (0..10000).filter(|&i| t.draw(1, i, 0) == 0).count();
        assert!((2300..2700).contains(&zeros), "{zeros}");
    }
}
