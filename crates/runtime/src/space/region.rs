//! The region space (`gc/space/region_space.*`): the heap is cut into 256 KiB regions.
//!
//! Region states mirror ART's: free, allocated, large (the first region of an object bigger than
//! a region) and large-tail; "newly allocated" (allocated since the last collection's flip) is a
//! flag, as in ART. Each region also carries a free-form tag set (a bit set over names registered
//! in [`RegionSpace::tag_id`]) that policies use, and an allocation class (a policy-defined
//! segregation class; class 0 is the default). Allocation is bump-pointer inside a region;
//! mutators carve thread-local buffers (TLABs) from regions; collectors copy survivors into
//! per-class "evacuation" regions.
//!
//! Copy reserve (concurrent copying, semi-space): mutators may use at most half of the regions,
//! so that evacuation always finds room — as ART's `RegionSpace::AllocNewRegion` does for
//! non-evacuation allocations. Mark-compact has no copy reserve.

pub const REGION_SIZE: u64 = 256 * 1024;
pub const REGION_PAGES: u32 = (REGION_SIZE / 4096) as u32;
/// Region has no measured live bytes.
pub const LIVE_UNKNOWN: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RegionState {
    Free = 0,
    Allocated = 1,
    Large = 2,
    LargeTail = 3,
}

impl RegionState {
    pub fn name(self) -> &'static str {
        match self {
            Self::Free => "free",
            Self::Allocated => "allocated",
            Self::Large => "large",
            Self::LargeTail => "large-tail",
        }
    }
}

#[derive(Clone, Debug)]
pub struct RegionSpace {
    pub(crate) vma: u32,
    pub num_regions: u32,
    pub state: Vec<RegionState>,
    /// Allocated since the last flip (ART `is_newly_allocated_`).
    pub(crate) newly: Vec<bool>,
    /// In the from-space of the running collection (to be evacuated).
    pub(crate) in_from: Vec<bool>,
    /// Bytes used (bump top relative to the region start).
    pub(crate) top: Vec<u32>,
    /// Live bytes measured by the last collection that marked this region in place, or the bytes
    /// copied into it (`LIVE_UNKNOWN` if never measured).
    pub(crate) live: Vec<u32>,
    /// Bytes of objects allocated in the region and not freed.
    pub(crate) obj_bytes: Vec<u32>,
    /// Tag bit set.
    pub(crate) tags: Vec<u64>,
    /// Allocation class.
    pub class: Vec<u8>,
    /// Pages of the region possibly resident since it was last released.
    pub(crate) dirty: Vec<bool>,
    /// Whether mutators are limited to half of the regions.
    pub(crate) copy_reserve: bool,
    pub num_non_free: u32,
    tag_names: Vec<String>,
}

impl RegionSpace {
    /// The kernel VMA that backs this space.
    pub fn vma(&self) -> u32 {
        self.vma
    }

    pub fn new(vma: u32, num_regions: u32, copy_reserve: bool) -> Self {
        let n = num_regions as usize;
        Self {
            vma,
            num_regions,
            state: vec![RegionState::Free; n],
            newly: vec![false; n],
            in_from: vec![false; n],
            top: vec![0; n],
            live: vec![LIVE_UNKNOWN; n],
            obj_bytes: vec![0; n],
            tags: vec![0; n],
            class: vec![0; n],
            dirty: vec![false; n],
            copy_reserve,
            num_non_free: 0,
            tag_names: Vec::new(),
        }
    }

    /// The bit of a named tag (registered on first use; at most 64 tags).
    pub fn tag_id(&mut self, name: &str) -> u32 {
        if let Some(i) = self.find_tag(name) {
            return i;
        }
        assert!(self.tag_names.len() < 64, "too many region tags");
        self.tag_names.push(name.into());
        (self.tag_names.len() - 1) as u32
    }
    /// The id of a registered tag, if it is one.
    pub fn find_tag(&self, name: &str) -> Option<u32> {
        self.tag_names.iter().position(|n| n == name).map(|i| i as u32)
    }
    pub fn tag_names(&self, r: u32) -> Vec<&str> {
        (0..self.tag_names.len()).filter(|&i| self.tags[r as usize] >> i & 1 == 1).map(|i| self.tag_names[i].as_str()).collect()
    }
    /// The names of the registered tags (bit i = name i).
    pub fn tag_names_registered(&self) -> &[String] {
        &self.tag_names
    }
    pub fn has_tag(&self, r: u32, tag: u32) -> bool {
        self.tags[r as usize] >> tag & 1 == 1
    }

    #[inline]
    pub fn region_of(addr: u64) -> u32 {
        (addr / REGION_SIZE) as u32
    }
    #[inline]
    pub fn region_start(r: u32) -> u64 {
        r as u64 * REGION_SIZE
    }

    /// Count `size` more live bytes in region `r` (its first if it was never measured).
    #[inline]
    pub fn add_live(&mut self, r: usize, size: u32) {
        let l = &mut self.live[r];
        *l = if *l == LIVE_UNKNOWN { size } else { *l + size };
    }

    /// The page runs `(first page, pages)` of the whole regions in use of allocation class
    /// `class` (regions allocated since the last flip left out), adjacent regions merged: what a
    /// policy madvises for a class.
    pub fn class_page_runs(&self, class: u8) -> Vec<(u32, u32)> {
        let per = (REGION_SIZE / 4096) as u32;
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for r in 0..self.num_regions {
            let i = r as usize;
            if self.class[i] != class || self.state[i] != RegionState::Allocated || self.newly[i] {
                continue;
            }
            match runs.last_mut() {
                Some((first, n)) if *first + *n == r * per => *n += per,
                _ => runs.push((r * per, per)),
            }
        }
        runs
    }

    /// May a (non-evacuation) allocation take one more region?
    pub fn mutator_may_take(&self, n: u32) -> bool {
        if self.copy_reserve {
            (self.num_non_free + n) * 2 <= self.num_regions
        } else {
            self.num_non_free + n <= self.num_regions
        }
    }

    /// Take the lowest free region. `for_evac` ignores the copy reserve.
    pub fn alloc_region(&mut self, for_evac: bool, class: u8, tags: u64) -> Option<u32> {
        if !for_evac && !self.mutator_may_take(1) {
            return None;
        }
        let r = self.state.iter().position(|&s| s == RegionState::Free)? as u32;
        let i = r as usize;
        self.state[i] = RegionState::Allocated;
        self.newly[i] = !for_evac;
        self.in_from[i] = false;
        self.top[i] = 0;
        self.live[i] = LIVE_UNKNOWN;
        self.obj_bytes[i] = 0;
        self.class[i] = class;
        self.tags[i] = tags;
        self.dirty[i] = true;
        self.num_non_free += 1;
        Some(r)
    }

    /// Take `n` contiguous free regions for one large object.
    pub fn alloc_large(&mut self, n: u32, size: u32) -> Option<u32> {
        if !self.mutator_may_take(n) {
            return None;
        }
        let mut run = 0u32;
        for r in 0..self.num_regions {
            if self.state[r as usize] == RegionState::Free {
                run += 1;
                if run == n {
                    let first = r + 1 - n;
                    for q in first..=r {
                        let i = q as usize;
                        self.state[i] = if q == first { RegionState::Large } else { RegionState::LargeTail };
                        self.newly[i] = true;
                        self.top[i] = if q == r { (size as u64 - (n as u64 - 1) * REGION_SIZE) as u32 } else { REGION_SIZE as u32 };
                        self.live[i] = LIVE_UNKNOWN;
                        self.obj_bytes[i] = 0;
                        self.tags[i] = 0;
                        self.class[i] = 0;
                        self.dirty[i] = true;
                    }
                    self.obj_bytes[first as usize] = size;
                    self.num_non_free += n;
                    return Some(first);
                }
            } else {
                run = 0;
            }
        }
        None
    }

    /// Return a region to the free state (its pages are released by the caller).
    pub fn free_region(&mut self, r: u32) {
        let i = r as usize;
        debug_assert!(self.state[i] != RegionState::Free);
        self.state[i] = RegionState::Free;
        self.newly[i] = false;
        self.in_from[i] = false;
        self.top[i] = 0;
        self.live[i] = LIVE_UNKNOWN;
        self.obj_bytes[i] = 0;
        self.tags[i] = 0;
        self.class[i] = 0;
        self.num_non_free -= 1;
    }

    pub fn free_regions(&self) -> u32 {
        self.num_regions - self.num_non_free
    }

    /// Bytes in use: allocated regions' tops (including dead objects not yet reclaimed).
    pub fn bytes_in_regions(&self) -> u64 {
        self.top.iter().map(|&t| t as u64).sum()
    }

    /// ART's evacuation rule for a full collection (`RegionSpace::ShouldBeEvacuated`,
    /// `kEvacModeLivePercentNewlyAllocated`): newly allocated regions, and regions whose live
    /// bytes (measured by the last collection that marked them) are below 75% of their allocated
    /// bytes. Large regions never move. source: ART `kEvacuateLivePercentThreshold` = 75.
    pub fn should_evacuate_full(&self, r: u32, live_percent_threshold: u32) -> bool {
        let i = r as usize;
        if self.state[i] != RegionState::Allocated {
            return false;
        }
        if self.newly[i] {
            return true;
        }
        let live = self.live[i];
        live != LIVE_UNKNOWN && (live as u64) * 100 < live_percent_threshold as u64 * self.top[i] as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_reserve_limits_mutators_not_evacuation() {
        let mut r = RegionSpace::new(0, 8, true);
        let got: Vec<_> = (0..8).map(|_| r.alloc_region(false, 0, 0)).collect();
        assert_eq!(got.iter().filter(|g| g.is_some()).count(), 4);
        assert!(r.alloc_region(true, 0, 0).is_some(), "evacuation may use the reserve");
        let mut nr = RegionSpace::new(0, 8, false);
        assert_eq!((0..8).filter_map(|_| nr.alloc_region(false, 0, 0)).count(), 8);
    }

    #[test]
    fn large_regions_and_evacuation_rule() {
        let mut r = RegionSpace::new(0, 16, false);
        let first = r.alloc_large(3, (2 * REGION_SIZE + 100) as u32).unwrap();
        assert_eq!(r.state[first as usize], RegionState::Large);
        assert_eq!(r.state[first as usize + 2], RegionState::LargeTail);
        assert!(!r.should_evacuate_full(first, 75));
        let a = r.alloc_region(false, 0, 0).unwrap();
        assert!(r.should_evacuate_full(a, 75), "newly allocated regions are evacuated");
        r.newly[a as usize] = false;
        r.top[a as usize] = 1000;
        r.live[a as usize] = 800;
        assert!(!r.should_evacuate_full(a, 75));
        r.live[a as usize] = 700;
        assert!(r.should_evacuate_full(a, 75));
        let t = r.tag_id("cold");
        assert_eq!(r.tag_id("cold"), t);
        r.tags[a as usize] |= 1 << t;
        assert_eq!(r.tag_names(a), vec!["cold"]);
    }
}
