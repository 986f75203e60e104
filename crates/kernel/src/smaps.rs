//! Per-mapping memory of a process (`/proc/PID/smaps`): for each of its VMAs, how many pages
//! are resident in its page tables and how many are in swap.
//!
//! Anonymous VMAs count their private pages (resident or swapped) and, separately, the pages
//! whose entry is still copy-on-write (shared with the process it was forked from or its other
//! children, resident or swapped: smaps would count them in Rss or Swap). File VMAs count the
//! page-cache pages this process has mapped (a page cached but not mapped here is not in its
//! RSS, as in smaps). Left out: PSS, dirty/clean split, THP.

use crate::mmzone::Kernel;
use serde::Serialize;

/// One VMA's memory, in pages.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VmaUsage {
    pub name: String,
    pub file: bool,
    /// Size of the VMA.
    pub pages: u64,
    /// Resident and mapped by this process (smaps `Rss`, private part for anon).
    pub rss_pages: u64,
    /// In swap (smaps `Swap`; anon only).
    pub swap_pages: u64,
    /// Anon pages whose entry is still copy-on-write (not copied yet; resident or swapped).
    pub(crate) cow_shared_pages: u64,
}

impl Kernel {
    /// The VMAs of a live process and their memory (empty for a process that has exited).
    pub fn smaps(&self, proc_idx: u32) -> Vec<VmaUsage> {
        let Some(p) = self.procs.get(proc_idx as usize).filter(|p| p.alive) else { return Vec::new() };
        p.vmas
            .iter()
            .filter(|&&v| self.vmas[v as usize].live)
            .map(|&v| {
                let vm = &self.vmas[v as usize];
                let u = VmaUsage { name: vm.name.clone(), file: vm.file, pages: vm.npages as u64, ..VmaUsage::default() };
                if vm.file {
                    VmaUsage { rss_pages: self.file_mapped_pages(v).0, ..u }
                } else {
                    // An anon VMA's mapping is its own: its counters are its pages.
                    let m = &self.mappings[vm.mapping as usize];
                    VmaUsage { rss_pages: m.nr_present, swap_pages: m.nr_swapped, cow_shared_pages: m.nr_cow, ..u }
                }
            })
            .collect()
    }
}
