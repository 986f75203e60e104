//! The host allocator of the simulator's large tables (not part of the model).
//!
//! The runtime keeps per-object tables (headers, info, mark words) in vectors that grow to
//! hundreds of MiB, and its headers are 32-byte aligned so that none straddles a cache line.
//! The standard allocator cannot `realloc` a block whose alignment exceeds malloc's 16 bytes in
//! place: it allocates anew and copies, so every doubling of a table copied it and faulted in
//! fresh pages (a quarter of a simulated GCBench's wall time). [`HostAlloc`] serves blocks of
//! [`MAPPED_MIN`] bytes or more with their own anonymous mappings instead and grows them with
//! `mremap`, which moves page-table entries, not bytes.
//!
//! Blocks of [`HUGE_MIN`] bytes or more (the few tables of a run that hold every object of a big
//! heap) also ask for transparent huge pages (`MADV_HUGEPAGE`; the host's THP mode is often
//! `madvise`): one fault maps 2 MiB instead of 4 KiB, and the table's random accesses miss the
//! TLB less. A block is filled from its start, so at most one huge page per block is partly
//! unused. Smaller blocks keep 4 KiB pages: asking every mapped block for huge pages cost +21 %
//! peak RSS in a session (many mid-sized tables, each with a partly used huge page at its tail).
//!
//! Smaller blocks, and blocks aligned beyond a page, go to the system allocator. Whether a block
//! is mapped depends only on its size and alignment, so `dealloc` and `realloc` know which
//! allocator a block came from. Other operating systems than Linux use the system allocator
//! for everything. Nothing here changes simulated results: it is host memory only.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes get their own mapping.
pub const MAPPED_MIN: usize = 2 << 20;
/// Mapped blocks of at least this many bytes ask for transparent huge pages.
pub const HUGE_MIN: usize = 64 << 20;
const PAGE: usize = 4096;

/// The process's global allocator in the simulator's binaries (`#[global_allocator]`).
pub struct HostAlloc;

#[inline]
fn mapped(size: usize, align: usize) -> bool {
    cfg!(target_os = "linux") && size >= MAPPED_MIN && align <= PAGE
}

#[inline]
fn map_len(size: usize) -> usize {
    size.div_ceil(PAGE) * PAGE
}

#[cfg(target_os = "linux")]
mod os {
    use super::{map_len, HUGE_MIN};

    /// Ask for huge pages on a large block (advice only: a host without THP ignores it, and a
    /// failure changes nothing but speed).
    unsafe fn advise(p: *mut libc::c_void, len: usize) {
        if len >= HUGE_MIN {
            libc::madvise(p, len, libc::MADV_HUGEPAGE);
        }
    }

    pub unsafe fn map(size: usize) -> *mut u8 {
        let len = map_len(size);
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if p == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        advise(p, len);
        p.cast()
    }

    pub unsafe fn unmap(p: *mut u8, size: usize) {
        libc::munmap(p.cast(), map_len(size));
    }

    pub unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let (old_len, new_len) = (map_len(old), map_len(new));
        if old_len == new_len {
            return p;
        }
        let q = libc::mremap(p.cast(), old_len, new_len, libc::MREMAP_MAYMOVE);
        if q == libc::MAP_FAILED {
            return std::ptr::null_mut();
        }
        if old_len < HUGE_MIN {
            advise(q, new_len);
        }
        q.cast()
    }
}

#[cfg(not(target_os = "linux"))]
mod os {
    pub unsafe fn map(_: usize) -> *mut u8 {
        unreachable!("mapped blocks are Linux-only")
    }
    pub unsafe fn unmap(_: *mut u8, _: usize) {
        unreachable!("mapped blocks are Linux-only")
    }
    pub unsafe fn remap(_: *mut u8, _: usize, _: usize) -> *mut u8 {
        unreachable!("mapped blocks are Linux-only")
    }
}

unsafe impl GlobalAlloc for HostAlloc {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if mapped(l.size(), l.align()) {
            os::map(l.size())
        } else {
            System.alloc(l)
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if mapped(l.size(), l.align()) {
            os::map(l.size()) // fresh anonymous pages are zero
        } else {
            System.alloc_zeroed(l)
        }
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if mapped(l.size(), l.align()) {
            os::unmap(p, l.size())
        } else {
            System.dealloc(p, l)
        }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        match (mapped(l.size(), l.align()), mapped(new_size, l.align())) {
            (true, true) => os::remap(p, l.size(), new_size),
            (false, false) => System.realloc(p, l, new_size),
            // Crossing the threshold: a new block of the other kind, then copy.
            _ => {
                let nl = Layout::from_size_align_unchecked(new_size, l.align());
                let q = self.alloc(nl);
                if !q.is_null() {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                    self.dealloc(p, l);
                }
                q
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(C, align(32))]
    #[derive(Clone, Copy)]
    struct Wide([u64; 4]);

    /// Grow a 32-byte-aligned vector through the threshold and far beyond it, then shrink it:
    /// contents and alignment survive every move.
    #[test]
    fn vectors_keep_contents_and_alignment_across_the_threshold() {
        unsafe {
            let a = HostAlloc;
            let l = Layout::new::<Wide>();
            let mut cap = 1usize;
            let mut p = a.alloc(Layout::from_size_align(cap * 32, l.align()).unwrap()) as *mut Wide;
            let mut n = 0usize;
            while cap * 32 < 4 * MAPPED_MIN {
                for i in n..cap {
                    p.add(i).write(Wide([i as u64; 4]));
                }
                n = cap;
                let old = Layout::from_size_align(cap * 32, l.align()).unwrap();
                cap *= 2;
                p = a.realloc(p.cast(), old, cap * 32) as *mut Wide;
                assert!(!p.is_null());
                assert_eq!(p as usize % 32, 0);
                for i in 0..n {
                    assert_eq!((*p.add(i)).0, [i as u64; 4]);
                }
            }
            let old = Layout::from_size_align(cap * 32, l.align()).unwrap();
            p = a.realloc(p.cast(), old, 64 * 32) as *mut Wide;
            for i in 0..64 {
                assert_eq!((*p.add(i)).0, [i as u64; 4]);
            }
            a.dealloc(p.cast(), Layout::from_size_align(64 * 32, l.align()).unwrap());
            let z = a.alloc_zeroed(Layout::from_size_align(MAPPED_MIN, 64).unwrap());
            assert!(std::slice::from_raw_parts(z, MAPPED_MIN).iter().all(|&b| b == 0));
            a.dealloc(z, Layout::from_size_align(MAPPED_MIN, 64).unwrap());
        }
    }
}
