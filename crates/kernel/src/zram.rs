//! The compressed size of a page stored in zram.
//!
//! A page's compressed size depends on its contents, which the model does not hold. It is drawn
//! from a per-page distribution instead: with probability `same_page_fraction` the page is
//! same-filled (zram stores 0 bytes); otherwise the size is log-normal around `4096 / ratio`,
//! rounded up to zsmalloc's 16-byte size classes, and stored uncompressed (4096 bytes) above the
//! huge-class threshold. The draw is a hash of (seed, page identity, swap-out count), so it is
//! deterministic and independent of which other pages exist.
//! Left out: per-algorithm speed differences beyond the configured costs; zsmalloc
//! fragmentation after frees (the pool shrinks as soon as its bytes fit in fewer pages).

use crate::config::ZramModel;
use mobmem_engine::rng::{hash3, unit};

/// zsmalloc size-class granularity on 4 KiB pages (ZS_SIZE_CLASS_DELTA).
pub const CLASS_DELTA: u32 = 16;
/// Smallest zsmalloc object (ZS_MIN_ALLOC_SIZE).
pub const MIN_ALLOC: u32 = 32;

/// Compressed size in bytes (0 = same-filled) of a page.
pub fn compressed_size(m: &ZramModel, seed: u64, page_key: u64, nonce: u64) -> u16 {
    let h = hash3(seed, page_key, nonce);
    if unit(h) < m.same_page_fraction {
        return 0;
    }
    // Box–Muller from two further hashes: a standard normal z.
    let u1 = unit(hash3(h, 1, 0)).max(1e-12);
    let u2 = unit(hash3(h, 2, 0));
    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    let mean = 4096.0 / m.ratio;
    // Log-normal with the configured mean: exp(σz − σ²/2) has mean 1.
    let s = mean * (m.sigma * z - m.sigma * m.sigma / 2.0).exp();
    let mut bytes = s.round().clamp(MIN_ALLOC as f64, 4096.0) as u32;
    bytes = bytes.div_ceil(CLASS_DELTA) * CLASS_DELTA;
    if bytes > m.huge_class_bytes {
        bytes = 4096;
    }
    bytes as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_ratio_close_to_configured() {
        let m = ZramModel { ratio: 2.8, sigma: 0.35, same_page_fraction: 0.0, huge_class_bytes: 3264 };
        let n = 20000;
        let total: u64 = (0..n).map(|i| compressed_size(&m, 7, i, 0) as u64).sum();
        let ratio = (n * 4096) as f64 / total as f64;
        // Class rounding and the huge-class cutoff move the mean a little; within 5%.
        assert!((ratio - 2.8).abs() / 2.8 < 0.05, "ratio {ratio}");
    }

    #[test]
    fn same_pages_fraction() {
        let m = ZramModel { ratio: 3.0, sigma: 0.3, same_page_fraction: 0.25, huge_class_bytes: 3264 };
        let zeros = (0..10000).filter(|&i| compressed_size(&m, 1, i, 0) == 0).count();
        assert!((2300..2700).contains(&zeros), "{zeros}");
    }
}
