//! A free-list space in the manner of ART's `RosAllocSpace`: size-class brackets, runs of one or
//! more pages holding slots of one bracket, a page map for runs. Used for the non-moving space
//! and for the main space of the mark-sweep (Dalvik CMS) heap. Objects never move; a freed slot
//! is reused by a later allocation of the same bracket (LIFO), so the space fragments: a run is
//! returned to the page map only when all its slots are free, and its pages go back to the kernel
//! only at a heap trim.
//!
//! Brackets: 16-byte steps up to 512 B, then 1, 2, 4, 8 KiB and 12 KiB (source: RosAlloc's
//! brackets are 8/16-byte steps up to 128/512 B then 1 KiB and 2 KiB; simplified). Run sizes:
//! 1 page for brackets ≤ 512 B, otherwise enough pages for 8 slots (estimate).

use super::extents::{PageExtents, PAGE};

pub const NUM_BRACKETS: usize = 32 + 5;

#[inline]
pub fn bracket_of(size: u32) -> usize {
    if size <= 512 {
        (size.max(1).div_ceil(16) - 1) as usize
    } else if size <= 1024 {
        32
    } else if size <= 2048 {
        33
    } else if size <= 4096 {
        34
    } else if size <= 8192 {
        35
    } else {
        36
    }
}

#[inline]
pub fn bracket_size(b: usize) -> u32 {
    match b {
        0..=31 => (b as u32 + 1) * 16,
        32 => 1024,
        33 => 2048,
        34 => 4096,
        35 => 8192,
        _ => 12288,
    }
}

fn run_pages(b: usize) -> u32 {
    if b < 32 {
        1
    } else {
        ((bracket_size(b) as u64 * 8).div_ceil(PAGE)) as u32
    }
}

#[derive(Clone, Debug)]
struct Run {
    first_page: u32,
    npages: u32,
    bracket: u8,
    nslots: u32,
    bump: u32,
    live: u32,
    free: Vec<u32>,
    in_avail: bool,
    active: bool,
}

#[derive(Clone, Debug)]
pub struct FreeListSpace {
    pub(crate) vma: u32,
    pub(crate) pages: PageExtents,
    runs: Vec<Run>,
    free_run_ids: Vec<u32>,
    /// run id of each page (u32::MAX = none).
    run_of_page: Vec<u32>,
    avail: Vec<Vec<u32>>,
    /// Bytes of live slots (slot sizes, i.e. including internal fragmentation).
    pub(crate) slot_bytes: u64,
    /// Bytes of the objects in them.
    pub bytes_allocated: u64,
    pub(crate) objects: u64,
    /// Pages of runs freed since the last trim (their pages may still be resident).
    pub(crate) freed_since_trim: Vec<(u32, u32)>,
}

impl FreeListSpace {
    /// The kernel VMA that backs this space.
    pub fn vma(&self) -> u32 {
        self.vma
    }

    pub fn new(vma: u32, npages: u32) -> Self {
        Self {
            vma,
            pages: PageExtents::new(npages),
            runs: Vec::new(),
            free_run_ids: Vec::new(),
            run_of_page: vec![u32::MAX; npages as usize],
            avail: vec![Vec::new(); NUM_BRACKETS],
            slot_bytes: 0,
            bytes_allocated: 0,
            objects: 0,
            freed_since_trim: Vec::new(),
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        self.pages.npages as u64 * PAGE
    }

    /// Allocate a slot for an object of `size` bytes; returns its address and whether a new run
    /// had to be carved (a slower path). None = no pages left.
    pub fn alloc(&mut self, size: u32) -> Option<(u64, bool)> {
        let b = bracket_of(size);
        let ss = bracket_size(b);
        let mut new_run = false;
        loop {
            let r = match self.avail[b].last() {
                Some(&r) => r,
                None => {
                    let r = self.new_run(b)?;
                    new_run = true;
                    r
                }
            };
            let run = &mut self.runs[r as usize];
            let slot = if let Some(s) = run.free.pop() {
                Some(s)
            } else if run.bump < run.nslots {
                run.bump += 1;
                Some(run.bump - 1)
            } else {
                None
            };
            match slot {
                Some(s) => {
                    run.live += 1;
                    self.slot_bytes += ss as u64;
                    self.bytes_allocated += size as u64;
                    self.objects += 1;
                    let addr = run.first_page as u64 * PAGE + s as u64 * ss as u64;
                    return Some((addr, new_run));
                }
                None => {
                    run.in_avail = false;
                    self.avail[b].pop();
                }
            }
        }
    }

    fn new_run(&mut self, b: usize) -> Option<u32> {
        let n = run_pages(b);
        let first = self.pages.alloc(n)?;
        let ss = bracket_size(b);
        let run = Run {
            first_page: first,
            npages: n,
            bracket: b as u8,
            nslots: ((n as u64 * PAGE) / ss as u64) as u32,
            bump: 0,
            live: 0,
            free: Vec::new(),
            in_avail: true,
            active: true,
        };
        let id = if let Some(id) = self.free_run_ids.pop() {
            let mut run = run;
            std::mem::swap(&mut run.free, &mut self.runs[id as usize].free);
            run.free.clear();
            self.runs[id as usize] = run;
            id
        } else {
            self.runs.push(run);
            (self.runs.len() - 1) as u32
        };
        for p in first..first + n {
            self.run_of_page[p as usize] = id;
        }
        self.avail[b].push(id);
        Some(id)
    }

    /// Free the slot of an object at `addr` of `size` bytes. Returns a run's page extent when the
    /// run became empty and went back to the page map.
    pub fn free(&mut self, addr: u64, size: u32) -> Option<(u32, u32)> {
        let page = (addr / PAGE) as usize;
        let r = self.run_of_page[page];
        debug_assert!(r != u32::MAX, "free of an address outside any run");
        let run = &mut self.runs[r as usize];
        let ss = bracket_size(run.bracket as usize);
        let slot = ((addr - run.first_page as u64 * PAGE) / ss as u64) as u32;
        run.live -= 1;
        self.slot_bytes -= ss as u64;
        self.bytes_allocated -= size as u64;
        self.objects -= 1;
        if run.live == 0 {
            let (first, n, b) = (run.first_page, run.npages, run.bracket as usize);
            run.active = false;
            run.free.clear();
            if run.in_avail {
                run.in_avail = false;
                if let Some(i) = self.avail[b].iter().rposition(|&x| x == r) {
                    self.avail[b].remove(i);
                }
            }
            for p in first..first + n {
                self.run_of_page[p as usize] = u32::MAX;
            }
            self.free_run_ids.push(r);
            self.pages.free(first, n);
            self.freed_since_trim.push((first, n));
            return Some((first, n));
        }
        run.free.push(slot);
        if !run.in_avail {
            run.in_avail = true;
            self.avail[run.bracket as usize].push(r);
        }
        None
    }

    /// Bytes in runs (pages held) minus bytes of live objects: the space's fragmentation.
    pub fn fragmentation_bytes(&self) -> u64 {
        (self.pages.used_pages as u64 * PAGE).saturating_sub(self.bytes_allocated)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_cover_sizes() {
        for s in [1u32, 16, 17, 512, 513, 1024, 2048, 4096, 8192, 12288] {
            assert!(bracket_size(bracket_of(s)) >= s, "{s}");
        }
        assert_eq!(bracket_size(bracket_of(24)), 32);
    }

    #[test]
    fn slots_are_reused_and_empty_runs_return_their_pages() {
        let mut f = FreeListSpace::new(0, 64);
        let a: Vec<u64> = (0..300).map(|_| f.alloc(48).unwrap().0).collect();
        let pages = f.pages.used_pages;
        assert!(pages >= 3);
        let mut uniq = a.clone();
        uniq.sort_unstable();
        uniq.dedup();
        assert_eq!(uniq.len(), a.len(), "no slot handed out twice");
        // Free every other object: fragmentation, no run becomes empty.
        for &x in a.iter().step_by(2) {
            assert!(f.free(x, 48).is_none());
        }
        assert_eq!(f.pages.used_pages, pages);
        assert!(f.fragmentation_bytes() > f.bytes_allocated);
        let b = f.alloc(40).unwrap().0; // same bracket (48): a freed slot comes back
        assert!(a.contains(&b));
        f.free(b, 40);
        for &x in a.iter().skip(1).step_by(2) {
            f.free(x, 48);
        }
        assert_eq!((f.pages.used_pages, f.objects, f.bytes_allocated), (0, 0, 0));
    }
}
