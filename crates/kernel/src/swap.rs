//! Swap devices: slots, the swap cache, and the two backends phones use.
//!
//! - **zram**: a compressed RAM block device. Each stored page gets a compressed size from
//!   [`crate::zram::SizeTable`]; same-filled pages store no data (zram's same-page
//!   detection). Stored bytes live in zsmalloc pool pages that are taken from RAM (see
//!   `Kernel::zram_pool_grow`). Reads and writes cost CPU (decompress/compress) on the faulting or
//!   reclaiming thread.
//! - **file**: a swap file on flash. No RAM cost; reads pay the device latency, writes go out
//!   asynchronously at the device's write bandwidth.
//!
//! A slot keeps the shadow entry of the evicted page (the kernel stores anon shadows in the swap
//! cache's xarray) and, while the page is also in memory, the frame holding it (swap cache).
//! Slots are handed out lowest-first, like `scan_swap_map_slots` on an empty device.
//! Left out: swap clusters and their per-CPU allocation, discard, multiple devices/priorities.

use crate::config::SwapKind;
use crate::page::{Pfn, NO_PFN};

#[derive(Clone, Debug)]
pub struct SwapDevice {
    pub(crate) kind: SwapKind,
    pub(crate) nr_slots: u32,
    free: Vec<u32>,
    /// Compressed bytes stored per slot (zram), u16::MAX = slot unused.
    pub(crate) size: Vec<u16>,
    /// Shadow entry (raw `Pte`) left at eviction.
    pub(crate) shadow: Vec<u64>,
    /// Frame holding the page while it is also in memory (swap cache), or NO_PFN.
    pub(crate) cache: Vec<Pfn>,
    /// zram accounting (mm_stat): original bytes, compressed bytes (class-rounded), same pages.
    pub(crate) orig_bytes: u64,
    pub(crate) compr_bytes: u64,
    pub(crate) same_pages: u64,
}

pub const SLOT_FREE: u16 = u16::MAX;

impl SwapDevice {
    pub fn new(kind: SwapKind, pages: u64) -> Self {
        let n = if kind == SwapKind::None { 0 } else { pages.min(u32::MAX as u64 - 1) as u32 };
        Self {
            kind,
            nr_slots: n,
            free: (0..n).rev().collect(),
            size: vec![SLOT_FREE; n as usize],
            shadow: vec![0; n as usize],
            cache: vec![NO_PFN; n as usize],
            orig_bytes: 0,
            compr_bytes: 0,
            same_pages: 0,
        }
    }

    pub fn enabled(&self) -> bool {
        self.nr_slots > 0
    }

    pub fn nr_free(&self) -> u64 {
        self.free.len() as u64
    }

    pub fn nr_used(&self) -> u64 {
        self.nr_slots as u64 - self.free.len() as u64
    }

    /// Allocate a slot for a page of `bytes` compressed size (0 = same-filled).
    pub fn alloc(&mut self, bytes: u16) -> Option<u32> {
        let s = self.free.pop()?;
        let i = s as usize;
        debug_assert_eq!(self.size[i], SLOT_FREE);
        self.size[i] = bytes;
        self.shadow[i] = 0;
        self.cache[i] = NO_PFN;
        if self.kind == SwapKind::Zram {
            self.orig_bytes += 4096;
            if bytes == 0 {
                self.same_pages += 1;
            } else {
                self.compr_bytes += bytes as u64;
            }
        }
        Some(s)
    }

    /// Release a slot (page swapped in for write, process exit, DONTNEED).
    pub fn free(&mut self, s: u32) {
        let i = s as usize;
        debug_assert_ne!(self.size[i], SLOT_FREE, "double free of swap slot {s}");
        let bytes = self.size[i];
        if self.kind == SwapKind::Zram {
            self.orig_bytes -= 4096;
            if bytes == 0 {
                self.same_pages -= 1;
            } else {
                self.compr_bytes -= bytes as u64;
            }
        }
        self.size[i] = SLOT_FREE;
        self.shadow[i] = 0;
        self.cache[i] = NO_PFN;
        self.free.push(s);
    }

    #[inline]
    pub fn in_use(&self, s: u32) -> bool {
        self.size[s as usize] != SLOT_FREE
    }
}
