//! The large object space (`LargeObjectSpace`, `FreeListSpace` variant): objects of at least
//! `large_object_threshold` bytes (12 KiB, ART's `kMinLargeObjectThreshold` = 3 pages), each on
//! its own page-aligned pages; never moved; a freed object's pages are returned to the kernel at
//! once (ART unmaps / madvises them).

use super::extents::{PageExtents, PAGE};

#[derive(Clone, Debug)]
pub struct LargeObjectSpace {
    pub(crate) vma: u32,
    pub(crate) pages: PageExtents,
    pub(crate) bytes_allocated: u64,
    pub(crate) objects: u64,
}

impl LargeObjectSpace {
    /// The kernel VMA that backs this space.
    pub fn vma(&self) -> u32 {
        self.vma
    }

    pub fn new(vma: u32, npages: u32) -> Self {
        Self { vma, pages: PageExtents::new(npages), bytes_allocated: 0, objects: 0 }
    }
    pub fn pages_for(size: u32) -> u32 {
        (size as u64).div_ceil(PAGE) as u32
    }
    /// Returns the object's byte address inside the space.
    pub fn alloc(&mut self, size: u32) -> Option<u64> {
        let n = Self::pages_for(size);
        let first = self.pages.alloc(n)?;
        self.bytes_allocated += size as u64;
        self.objects += 1;
        Some(first as u64 * PAGE)
    }
    /// Free an object; returns its (first page, pages) for the madvise.
    pub fn free(&mut self, addr: u64, size: u32) -> (u32, u32) {
        let n = Self::pages_for(size);
        let first = (addr / PAGE) as u32;
        self.pages.free(first, n);
        self.bytes_allocated -= size as u64;
        self.objects -= 1;
        (first, n)
    }
}
