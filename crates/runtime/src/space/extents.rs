//! A page-granular first-fit allocator of page extents (the page map of `RosAlloc` /
//! `FreeListSpace`): free extents kept sorted by address and coalesced on free.

use std::collections::BTreeMap;

/// Bytes per page of every space (the kernel model's page size).
pub const PAGE: u64 = mobmem_kernel::page::PAGE_SIZE;

#[derive(Clone, Debug)]
pub struct PageExtents {
    /// first page → length, of free extents.
    free: BTreeMap<u32, u32>,
    pub(crate) npages: u32,
    pub(crate) used_pages: u32,
    /// Highest page ever handed out + 1 (pages above were never touched).
    pub(crate) high_water: u32,
    /// Pages handed out since they were last released to the kernel (may be resident).
    dirty: Vec<bool>,
}

impl PageExtents {
    pub fn new(npages: u32) -> Self {
        let mut free = BTreeMap::new();
        if npages > 0 {
            free.insert(0, npages);
        }
        Self { free, npages, used_pages: 0, high_water: 0, dirty: vec![false; npages as usize] }
    }

    /// First fit: the lowest-addressed free extent of at least `n` pages.
    pub fn alloc(&mut self, n: u32) -> Option<u32> {
        let (&first, &len) = self.free.iter().find(|(_, &len)| len >= n)?;
        self.free.remove(&first);
        if len > n {
            self.free.insert(first + n, len - n);
        }
        self.used_pages += n;
        self.high_water = self.high_water.max(first + n);
        self.dirty[first as usize..(first + n) as usize].fill(true);
        Some(first)
    }

    pub fn free(&mut self, first: u32, n: u32) {
        debug_assert!(n > 0);
        self.used_pages -= n;
        let mut start = first;
        let mut len = n;
        if let Some((&pf, &pl)) = self.free.range(..first).next_back() {
            debug_assert!(pf + pl <= first, "double free of pages {first}+{n}");
            if pf + pl == first {
                self.free.remove(&pf);
                start = pf;
                len += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(first + n)) {
            self.free.remove(&(first + n));
            len += nl;
        }
        self.free.insert(start, len);
    }

    /// Free pages that may still be resident, as ranges; they are marked released.
    pub fn take_dirty_free(&mut self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let hw = self.high_water;
        for (&f, &l) in self.free.range(..hw) {
            let end = (f + l).min(hw);
            let mut p = f;
            while p < end {
                if self.dirty[p as usize] {
                    let s = p;
                    while p < end && self.dirty[p as usize] {
                        self.dirty[p as usize] = false;
                        p += 1;
                    }
                    out.push((s, p - s));
                } else {
                    p += 1;
                }
            }
        }
        out
    }

    /// Largest free extent (for fragmentation reports).
    pub fn largest_free(&self) -> u32 {
        self.free.values().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_coalesces_and_reports_dirty_free_pages() {
        let mut e = PageExtents::new(100);
        let a = e.alloc(10).unwrap();
        let b = e.alloc(20).unwrap();
        let c = e.alloc(5).unwrap();
        assert_eq!((a, b, c), (0, 10, 30));
        e.free(b, 20);
        assert_eq!(e.alloc(15), Some(10)); // first fit reuses the hole
        e.free(10, 15);
        e.free(a, 10);
        e.free(c, 5);
        assert_eq!(e.used_pages, 0);
        assert_eq!(e.largest_free(), 100);
        assert_eq!(e.take_dirty_free(), vec![(0, 35)]);
        assert!(e.take_dirty_free().is_empty(), "released pages are not reported twice");
    }
}
