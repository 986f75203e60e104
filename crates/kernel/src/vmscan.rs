//! Page reclaim (`mm/vmscan.c`): scan balance, the active/inactive list scanners, kswapd, direct
//! reclaim and memory-cgroup limit reclaim.
//!
//! - `get_scan_count`: no free swap → file only; priority 0 → equal; "file is tiny" (global
//!   reclaim, file + free ≤ high watermark) → anon only; enough inactive file and no recent file
//!   refaults (cache trim mode) → file only; otherwise a fraction by swappiness and either
//!   reclaim cost (≥ 5.9, `lru_note_cost`) or recent scanned/rotated ratios (< 5.9). Each list is
//!   scanned `(size >> priority) * fraction / denominator`.
//! - `shrink_lruvec`: rounds of up to SWAP_CLUSTER_MAX pages per list until the targets are
//!   scanned or enough was reclaimed; then ages active_anon if inactive_anon is low.
//! - `shrink_active_list`: young pages are deactivated (given PG_workingset) except referenced
//!   executable file pages, which rotate back; `inactive_is_low` uses the int_sqrt(10·GiB) ratio.
//! - `shrink_page_list` with `page_check_references`: a referenced page is activated if it was
//!   already PG_referenced, is shared, or is an executable file page, else kept once (before 5.9
//!   referenced anon pages were activated at once); otherwise
//!   reclaim: anon → swap out (zram: compress now; flash: asynchronous writeback, freed on a later
//!   pass after rotation to the tail), clean file → drop with a shadow entry, dirty file →
//!   writeback.
//! - kswapd runs as a kernel thread in batches (one shrink round per event), competing for cores,
//!   from priority 12 down until free > high (`balance_pgdat`); it gives up after 16 runs that
//!   reclaim nothing until direct reclaim makes progress.
//!
//! - Once the reclaim target is met, the smaller LRU type stops and the larger is scanned in
//!   proportion to its original target (`shrink_lruvec`'s proportional adjustment).
//!
//! Direct reclaim that makes no progress while pages are under writeback sleeps until a writeback
//! batch completes or 100 ms pass (page_alloc.rs, `should_reclaim_retry`'s congestion_wait).
//! Left out: MGLRU, throttling inside shrink_node (`reclaim_throttle` of kswapd and of isolated pages), slab shrinkers, the dirty-page
//! policy that lets only kswapd write file pages, lumpy/compaction-driven reclaim.

use crate::config::{KernelSemantics, ReclaimScope, SwapKind};
use crate::mm::Pte;
use crate::mmzone::{Event, Kernel, KSWAPD_THREAD};
pub use crate::mmzone::{KswapdState, ScanBalance, DEF_PRIORITY};
use crate::page::{lru, pg, Pfn, NO_PFN, NO_SLOT};
use crate::page_alloc::MAX_RECLAIM_RETRIES;
use crate::task::Task;
use mobmem_engine::Nanos;

pub const SWAP_CLUSTER_MAX: u64 = 32;
/// `struct scan_control`.
#[derive(Clone, Debug)]
pub struct ScanControl {
    pub(crate) nr_to_reclaim: u64,
    pub(crate) priority: i32,
    pub(crate) nr_scanned: u64,
    pub(crate) nr_reclaimed: u64,
    pub(crate) kswapd: bool,
    pub(crate) memcg: bool,
    /// MADV_PAGEOUT-style reclaim: ignore references, no list balancing.
    pub(crate) ignore_references: bool,
    pub(crate) may_deactivate: [bool; 2],
    /// CPU time the reclaimer spent.
    pub(crate) cost_ns: Nanos,
    pub(crate) now: Nanos,
    /// Frames whose writeback was started in this call, and when the device finishes them.
    pub(crate) wb_started: u64,
    pub(crate) wb_done_at: Nanos,
    /// Pages found still under writeback (kept) in the current priority round.
    pub(crate) nr_writeback: u64,
    /// A direct reclaimer found the node congested with writeback and stopped to be throttled.
    pub(crate) congested: bool,
}

impl ScanControl {
    pub fn new(nr_to_reclaim: u64, kswapd: bool, memcg: bool, now: Nanos) -> Self {
        Self {
            nr_to_reclaim,
            priority: DEF_PRIORITY,
            nr_scanned: 0,
            nr_reclaimed: 0,
            kswapd,
            memcg,
            ignore_references: false,
            may_deactivate: [true, true],
            cost_ns: 0,
            now,
            wb_started: 0,
            wb_done_at: 0,
            nr_writeback: 0,
            congested: false,
        }
    }
}

/// The end of a `shrink_lruvec` round. Before the target is met, or once the scan was made
/// proportional, scanning goes on. When the target is first met, the smaller LRU type (anon or
/// file, by what is left to scan) stops and the larger one is cut to the share of its original
/// target that the smaller one had left, so both are scanned in the proportion get_scan_count
/// asked for. Returns false to stop.
fn proportional_adjust(sc: &ScanControl, nr: &mut [u64; 4], targets: &[u64; 4], proportional: &mut bool) -> bool {
    if sc.nr_reclaimed < sc.nr_to_reclaim || *proportional {
        return true;
    }
    let nr_anon = nr[0] + nr[1];
    let nr_file = nr[2] + nr[3];
    // "It's just vindictive to attack the larger once the smaller has gone to zero."
    if nr_anon == 0 || nr_file == 0 {
        return false;
    }
    let (stop, other, percentage) =
        if nr_file > nr_anon { (0usize, 2usize, nr_anon * 100 / (targets[0] + targets[1] + 1)) } else { (2, 0, nr_file * 100 / (targets[2] + targets[3] + 1)) };
    nr[stop] = 0;
    nr[stop + 1] = 0;
    for l in [other, other + 1] {
        let scanned = targets[l] - nr[l];
        let n = targets[l] * (100 - percentage) / 100;
        nr[l] = n - n.min(scanned);
    }
    *proportional = true;
    true
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum PageRef {
    Activate,
    Keep,
    ReclaimClean,
    Reclaim,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Freed,
    Activate,
    Keep,
}

/// The scan balance chosen by get_scan_count.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ScanBalanceKind {
    Equal,
    Fract,
    Anon,
    File,
}

impl Kernel {
    /// `inactive_is_low`: inactive * int_sqrt(10 * GiB) < active.
    pub fn inactive_is_low(&self, file: bool) -> bool {
        let inactive = self.lru.len[lru::list(file, false) as usize];
        let active = self.lru.len[lru::list(file, true) as usize];
        let gb = (inactive + active) >> 18;
        let ratio = if gb > 0 { crate::page_alloc::int_sqrt(10 * gb) } else { 1 };
        inactive * ratio < active
    }

    /// `lru_note_cost` (≥ 5.9): reclaim cost of a list type, decayed when it exceeds a quarter of
    /// the LRU. 5.9–6.4 add pages of I/O plus rotations; 6.5+ weigh I/O by SWAP_CLUSTER_MAX.
    pub(crate) fn lru_note_cost(&mut self, file: bool, nr_io: u64, nr_rotated: u64) {
        let cost = if self.cfg.semantics == KernelSemantics::V6_6 { nr_io * SWAP_CLUSTER_MAX + nr_rotated } else { nr_io + nr_rotated };
        if cost == 0 {
            return;
        }
        let b = &mut self.balance;
        if file {
            b.file_cost += cost;
        } else {
            b.anon_cost += cost;
        }
        let lrusize = self.lru.anon() + self.lru.file();
        if b.file_cost + b.anon_cost > lrusize / 4 {
            b.file_cost /= 2;
            b.anon_cost /= 2;
        }
    }

    fn can_reclaim_anon(&self) -> bool {
        self.swap.enabled() && self.swap.nr_free() > 0
    }

    /// `get_scan_count`: how many pages to scan on each of the four evictable lists.
    pub fn get_scan_count(&mut self, sc: &ScanControl) -> ([u64; 4], ScanBalanceKind) {
        let sw = self.cfg.swappiness as u64;
        let size = |k: &Kernel, l: u8| k.lru.len[l as usize];
        // No swap, or a memcg with swappiness 0: file only (two separate checks in Linux).
        let kind = if !self.can_reclaim_anon() || (sc.memcg && sw == 0) {
            ScanBalanceKind::File
        } else if sc.priority == 0 && sw > 0 {
            ScanBalanceKind::Equal
        } else if !sc.memcg && self.lru.file() + self.nr_free() <= self.wmark.high && !self.inactive_is_low(false) && (self.lru.anon() >> sc.priority) > 0 {
            // file_is_tiny: the file LRU would be gone within a few reclaim cycles.
            ScanBalanceKind::Anon
        } else if !self.cfg.balance_anon_file_reclaim && self.cache_trim_mode(sc) {
            ScanBalanceKind::File
        } else {
            ScanBalanceKind::Fract
        };
        let (ap, fp) = match self.cfg.semantics {
            KernelSemantics::V4_19 => {
                let anon = self.lru.anon();
                let file = self.lru.file();
                let b = &mut self.balance;
                if b.recent_scanned[0] > anon / 4 {
                    b.recent_scanned[0] /= 2;
                    b.recent_rotated[0] /= 2;
                }
                if b.recent_scanned[1] > file / 4 {
                    b.recent_scanned[1] /= 2;
                    b.recent_rotated[1] /= 2;
                }
                let ap = sw * (b.recent_scanned[0] + 1) / (b.recent_rotated[0] + 1);
                let fp = (200 - sw) * (b.recent_scanned[1] + 1) / (b.recent_rotated[1] + 1);
                (ap, fp)
            }
            _ => {
                let b = &self.balance;
                let total = b.anon_cost + b.file_cost;
                let a = total + b.anon_cost;
                let f = total + b.file_cost;
                let t = a + f;
                (sw * (t + 1) / (a + 1), (200 - sw) * (t + 1) / (f + 1))
            }
        };
        let denominator = ap + fp + 1;
        let mut nr = [0u64; 4];
        for l in 0..4u8 {
            let file = lru::is_file(l);
            let scan = size(self, l) >> sc.priority;
            nr[l as usize] = match kind {
                ScanBalanceKind::Equal => scan,
                ScanBalanceKind::Fract => scan * if file { fp } else { ap } / denominator,
                ScanBalanceKind::File => {
                    if file {
                        scan
                    } else {
                        0
                    }
                }
                ScanBalanceKind::Anon => {
                    if file {
                        0
                    } else {
                        scan
                    }
                }
            };
        }
        (nr, kind)
    }

    /// Cache trim mode: plenty of inactive file and no file refaults since the last cycle
    /// (5.9+: `!(may_deactivate & DEACTIVATE_FILE)`; 4.19: inactive file not low).
    fn cache_trim_mode(&self, sc: &ScanControl) -> bool {
        let inactive_file = self.lru.len[lru::INACTIVE_FILE as usize];
        (inactive_file >> sc.priority) > 0 && !sc.may_deactivate[1]
    }

    /// `may_deactivate`: anon when inactive anon is low; file when inactive file is low or file
    /// pages refaulted since the last reclaim cycle.
    fn compute_may_deactivate(&self) -> [bool; 2] {
        let refaulted = self.vmstat.workingset_refault_file != self.snapshot_refaults_file;
        [self.inactive_is_low(false), refaulted || self.inactive_is_low(true)]
    }

    /// One `shrink_node` pass (`shrink_lruvec`) at `sc.priority`.
    pub(crate) fn shrink_node(&mut self, sc: &mut ScanControl) {
        sc.may_deactivate = self.compute_may_deactivate();
        let (mut nr, _) = self.get_scan_count(sc);
        let targets = nr;
        // Global direct reclaim at DEF_PRIORITY scans its whole targets (proportional_reclaim).
        let mut proportional = !sc.kswapd && !sc.memcg && sc.priority == DEF_PRIORITY;
        while nr[0] > 0 || nr[2] > 0 || nr[3] > 0 {
            self.shrink_round(sc, &mut nr);
            if !proportional_adjust(sc, &mut nr, &targets, &mut proportional) {
                break;
            }
        }
        self.age_active_anon(sc);
    }

    /// One round of shrink_lruvec: up to SWAP_CLUSTER_MAX pages from each list with work left.
    fn shrink_round(&mut self, sc: &mut ScanControl, nr: &mut [u64; 4]) {
        for l in 0..4u8 {
            let n = nr[l as usize].min(SWAP_CLUSTER_MAX);
            if n == 0 {
                continue;
            }
            nr[l as usize] -= n;
            if lru::is_active(l) {
                if sc.may_deactivate[lru::is_file(l) as usize] {
                    self.shrink_active_list(sc, l, n);
                }
            } else {
                self.shrink_inactive_list(sc, l, n);
            }
        }
    }

    /// Even when anon was not scanned, keep the anon active/inactive balance.
    fn age_active_anon(&mut self, sc: &mut ScanControl) {
        if self.swap.enabled() && self.inactive_is_low(false) {
            self.shrink_active_list(sc, lru::ACTIVE_ANON, SWAP_CLUSTER_MAX);
        }
    }

    /// Isolate up to `n` pages from the tail of list `l` into `buf`.
    fn isolate(&mut self, l: u8, n: u64, buf: &mut [Pfn; SWAP_CLUSTER_MAX as usize]) -> usize {
        let mut k = 0;
        while (k as u64) < n {
            let p = self.lru.tail_of(&self.frames, l);
            if p == NO_PFN {
                break;
            }
            self.lru.remove(&mut self.frames, p);
            buf[k] = p;
            k += 1;
        }
        k
    }

    /// `shrink_active_list`.
    pub(crate) fn shrink_active_list(&mut self, sc: &mut ScanControl, l: u8, n: u64) {
        let file = lru::is_file(l);
        let mut buf = [NO_PFN; SWAP_CLUSTER_MAX as usize];
        let taken = self.isolate(l, n, &mut buf);
        self.vmstat.pgrefill += taken as u64;
        self.touch_gen += taken as u64;
        let mut rotated = 0u64;
        let mut deactivated = 0u64;
        let set_ws = self.cfg.semantics != KernelSemantics::V4_19;
        for &p in &buf[..taken] {
            let i = p as usize;
            let f = self.frames.flags[i];
            self.frames.flags[i] = f & !pg::YOUNG;
            self.cool(p);
            if f & pg::YOUNG != 0
                && file
                && f & pg::EXEC != 0
                && self.frames.mapcount[i] > 0
                && self.eviction.as_ref().is_none_or(|e| e.rotate_exec(self.page_owner(p)))
            {
                self.lru.add_head(&mut self.frames, l, p);
                rotated += 1;
                continue;
            }
            if set_ws {
                self.frames.flags[i] |= pg::WORKINGSET;
            }
            self.lru.add_head(&mut self.frames, lru::list(file, false), p);
            deactivated += 1;
        }
        self.vmstat.pgdeactivate += deactivated;
        sc.cost_ns += taken as u64 * self.cfg.costs.scan_page_ns;
        match self.cfg.semantics {
            KernelSemantics::V4_19 => {
                self.balance.recent_scanned[file as usize] += taken as u64;
                self.balance.recent_rotated[file as usize] += rotated;
            }
            _ => {
                self.lru_note_cost(file, 0, rotated);
                self.workingset_age_activation(rotated);
            }
        }
    }

    /// `shrink_inactive_list` + `shrink_page_list`.
    pub(crate) fn shrink_inactive_list(&mut self, sc: &mut ScanControl, l: u8, n: u64) -> u64 {
        let file = lru::is_file(l);
        let mut buf = [NO_PFN; SWAP_CLUSTER_MAX as usize];
        let taken = self.isolate(l, n, &mut buf);
        let taken_u = taken as u64;
        if sc.kswapd {
            self.vmstat.pgscan_kswapd += taken_u;
        } else {
            self.vmstat.pgscan_direct += taken_u;
        }
        self.touch_gen += taken_u;
        if file {
            self.vmstat.pgscan_file += taken_u;
        } else {
            self.vmstat.pgscan_anon += taken_u;
        }
        sc.nr_scanned += taken_u;
        let mut reclaimed = 0u64;
        let mut activated = 0u64;
        let pageout_before = self.vmstat.nr_vmscan_write;
        for &p in &buf[..taken] {
            match self.shrink_page(sc, p) {
                Outcome::Freed => reclaimed += 1,
                Outcome::Activate => {
                    let f = lru::is_file(self.page_list_type(p));
                    self.lru.add_head(&mut self.frames, lru::list(f, true), p);
                    activated += 1;
                }
                Outcome::Keep => {
                    let f = self.page_list_type(p);
                    self.lru.add_head(&mut self.frames, f, p);
                }
            }
        }
        self.vmstat.pgactivate += activated;
        let nr_pageout = self.vmstat.nr_vmscan_write - pageout_before;
        match self.cfg.semantics {
            KernelSemantics::V4_19 => {
                self.balance.recent_scanned[file as usize] += taken_u;
                self.balance.recent_rotated[file as usize] += activated;
            }
            _ => {
                // 6.5+ also count what the inactive scan failed to reclaim as rotations.
                let rotated = if self.cfg.semantics == KernelSemantics::V6_6 { taken_u - reclaimed } else { 0 };
                self.lru_note_cost(file, nr_pageout, rotated);
                self.workingset_age_activation(activated);
            }
        }
        if sc.kswapd {
            self.vmstat.pgsteal_kswapd += reclaimed;
        } else {
            self.vmstat.pgsteal_direct += reclaimed;
        }
        if file {
            self.vmstat.pgsteal_file += reclaimed;
        } else {
            self.vmstat.pgsteal_anon += reclaimed;
        }
        sc.nr_reclaimed += reclaimed;
        let c = &self.cfg.costs;
        sc.cost_ns += taken_u * c.scan_page_ns + reclaimed * c.reclaim_page_ns;
        reclaimed
    }

    /// The inactive list a page belongs on (anon or file).
    #[inline]
    fn page_list_type(&self, p: Pfn) -> u8 {
        if self.frames.flags[p as usize] & pg::SWAPBACKED != 0 {
            lru::INACTIVE_ANON
        } else {
            lru::INACTIVE_FILE
        }
    }

    /// The owner class of page `p` for reclaim policies (see `mmzone::PageOwner`).
    #[inline]
    pub fn page_owner(&self, p: crate::page::Pfn) -> crate::mmzone::PageOwner {
        use crate::mmzone::PageOwner;
        let o = self.frames.owner[p as usize];
        match self.procs.get(o as usize) {
            Some(pr) if pr.app && !pr.fae_exempt => {
                if o == self.foreground {
                    PageOwner::ForegroundApp
                } else {
                    PageOwner::BackgroundApp(o)
                }
            }
            _ => PageOwner::Other,
        }
    }

    /// An installed eviction policy's say on the stock decision for page `p`.
    fn policy_references(&mut self, p: Pfn, r: PageRef) -> PageRef {
        let owner = self.page_owner(p);
        let gen = self.frames.gen[p as usize];
        let Some(pol) = self.eviction.as_mut() else { return r };
        match r {
            PageRef::Activate | PageRef::Keep => {
                if pol.keep_referenced(owner, p, gen, r == PageRef::Activate) {
                    r
                } else {
                    PageRef::Reclaim
                }
            }
            _ => {
                if pol.extra_chance(owner, p, gen) {
                    PageRef::Keep
                } else {
                    r
                }
            }
        }
    }

    /// `page_check_references`.
    fn page_check_references(&mut self, p: Pfn) -> PageRef {
        let i = p as usize;
        let f = self.frames.flags[i];
        let young = f & pg::YOUNG != 0;
        let referenced_page = f & pg::REFERENCED != 0;
        self.frames.flags[i] = f & !(pg::YOUNG | pg::REFERENCED);
        self.cool(p);
        if young {
            // Before 5.9 a referenced anon page was activated at once; 'mm/vmscan: protect the
            // workingset on anonymous LRU' (5.9) made anon pages, like file pages, need a
            // second look (the instantiating fault leaves a reference on every new page).
            if f & pg::SWAPBACKED != 0 && !self.cfg.semantics.is_59_plus() {
                return PageRef::Activate;
            }
            self.frames.flags[i] |= pg::REFERENCED;
            // `referenced_ptes > 1` is approximated by "young and mapped more than once": the
            // model keeps one aggregated young bit per page.
            if referenced_page || self.frames.mapcount[i] > 1 {
                return PageRef::Activate;
            }
            if f & pg::EXEC != 0 && self.frames.mapcount[i] > 0 {
                return PageRef::Activate;
            }
            return PageRef::Keep;
        }
        if referenced_page && f & pg::SWAPBACKED == 0 {
            return PageRef::ReclaimClean;
        }
        PageRef::Reclaim
    }

    /// `shrink_page_list` for one isolated page.
    fn shrink_page(&mut self, sc: &mut ScanControl, p: Pfn) -> Outcome {
        let i = p as usize;
        let f = self.frames.flags[i];
        if f & pg::WRITEBACK != 0 {
            // Still being written: mark for rotation on completion and keep.
            self.frames.flags[i] |= pg::RECLAIM;
            sc.nr_writeback += 1;
            return Outcome::Keep;
        }
        let mut r = if sc.ignore_references { PageRef::Reclaim } else { self.page_check_references(p) };
        if self.eviction.is_some() && !sc.ignore_references {
            r = self.policy_references(p, r);
        }
        match r {
            PageRef::Activate => return Outcome::Activate,
            PageRef::Keep => return Outcome::Keep,
            PageRef::ReclaimClean if f & pg::DIRTY != 0 => return Outcome::Keep,
            _ => {}
        }
        if f & pg::SWAPBACKED != 0 {
            self.reclaim_anon(sc, p)
        } else {
            self.reclaim_file(sc, p)
        }
    }

    fn reclaim_anon(&mut self, sc: &mut ScanControl, p: Pfn) -> Outcome {
        let i = p as usize;
        let mut slot = self.frames.swap_slot[i];
        if slot == NO_SLOT {
            if !self.swap.enabled() {
                return Outcome::Activate;
            }
            // add_to_swap + pageout.
            let bytes = match self.swap.kind {
                SwapKind::Zram => {
                    let key = ((self.frames.mapping[i] as u64) << 32) | self.frames.index[i] as u64;
                    self.zram_sizes.draw(self.cfg.seed, key, self.vmstat.pswpout)
                }
                _ => 4096,
            };
            let Some(s) = self.swap.alloc(bytes) else { return Outcome::Activate };
            if self.swap.kind == SwapKind::Zram && !self.zram_pool_grow() {
                self.swap.free(s);
                return Outcome::Activate;
            }
            slot = s;
            self.vmstat.pswpout += 1;
            let owner = self.mappings[self.frames.mapping[i] as usize].owner;
            if let Some(pr) = self.procs.get_mut(owner as usize) {
                pr.stats.swapout += 1;
            }
            self.vmstat.pgpgout += 4;
            self.vmstat.nr_vmscan_write += 1;
            self.frames.flags[i] &= !pg::DIRTY;
            self.cool(p);
            self.frames.swap_slot[i] = slot;
            self.swap.cache[slot as usize] = p;
            // Unmap now: the PTE becomes a swap entry while the page sits in the swap cache.
            self.unmap_anon(p, slot);
            match self.swap.kind {
                SwapKind::Zram => {
                    sc.cost_ns += if bytes == 0 { self.cfg.costs.minor_fault_ns / 4 } else { self.cfg.costs.zram_compress_ns };
                    if bytes == 0 {
                        self.vmstat.zram_same_pages_stored += 1;
                    }
                }
                // Pure-LRU mode evicts synchronously whatever the device.
                _ if self.pure_lru() => {}
                _ => {
                    self.start_writeback(sc, p);
                    return Outcome::Keep;
                }
            }
        } else {
            self.unmap_anon(p, slot);
        }
        // The page is clean and its contents are in the slot: drop it from the swap cache.
        let shadow = if self.cfg.semantics.is_59_plus() { self.workingset_eviction(p) } else { Pte::NONE };
        self.swap.shadow[slot as usize] = shadow.0;
        self.swap.cache[slot as usize] = NO_PFN;
        self.frames.swap_slot[i] = NO_SLOT;
        self.free_page(p);
        Outcome::Freed
    }

    /// try_to_unmap for an anon page: its PTE becomes the swap entry (if it was mapped).
    fn unmap_anon(&mut self, p: Pfn, slot: u32) {
        let i = p as usize;
        let m = self.frames.mapping[i] as usize;
        let idx = self.frames.index[i] as usize;
        let e = self.mappings[m].pages[idx];
        if e.is_present() && e.pfn() == p {
            self.mappings[m].pages[idx] = Pte::swap(slot);
            self.mappings[m].nr_present -= 1;
            self.mappings[m].nr_swapped += 1;
        }
    }

    fn reclaim_file(&mut self, sc: &mut ScanControl, p: Pfn) -> Outcome {
        let i = p as usize;
        if self.frames.flags[i] & pg::DIRTY != 0 {
            self.frames.flags[i] &= !pg::DIRTY;
            self.vmstat.nr_vmscan_write += 1;
            self.vmstat.pgpgout += 4;
            self.start_writeback(sc, p);
            return Outcome::Keep;
        }
        let m = self.frames.mapping[i] as usize;
        let idx = self.frames.index[i] as usize;
        let shadow = self.workingset_eviction(p);
        self.mappings[m].pages[idx] = shadow;
        self.mappings[m].nr_present -= 1;
        // Every mapping of the page goes with the frame's generation.
        self.frames.mapcount[i] = 0;
        self.free_page(p);
        Outcome::Freed
    }

    /// Queue a page for writeback on the flash device; completion rotates it to the tail.
    fn start_writeback(&mut self, sc: &mut ScanControl, p: Pfn) {
        let i = p as usize;
        let per_page = 4096 * 1_000_000_000 / self.cfg.costs.flash_write_bw;
        let start = self.flash_busy_until.max(sc.now);
        let done = start + per_page;
        self.flash_busy_until = done;
        self.frames.flags[i] |= pg::WRITEBACK | pg::RECLAIM;
        self.frames.io_done[i] = done;
        sc.wb_started += 1;
        sc.wb_done_at = sc.wb_done_at.max(done);
        self.pending_writeback.push((p, self.frames.gen[i]));
    }

    /// Schedule completion of the writeback started during a reclaim call.
    pub(crate) fn flush_writeback(&mut self, sc: &ScanControl) {
        if !self.pending_writeback.is_empty() {
            let v = std::mem::take(&mut self.pending_writeback);
            self.queue.push(sc.wb_done_at, Event::WritebackDone(v));
            self.writeback_due.push(sc.wb_done_at);
        }
    }

    /// A queued writeback batch completes at `at`.
    pub(crate) fn writeback_done_event(&mut self, at: Nanos, pages: &[(Pfn, u32)]) {
        if let Some(i) = self.writeback_due.iter().position(|&x| x == at) {
            self.writeback_due.swap_remove(i);
        }
        self.writeback_done(pages);
    }

    /// Writeback completed: clear the flag and rotate reclaim-marked pages to the inactive tail
    /// (`rotate_reclaimable_page`).
    pub(crate) fn writeback_done(&mut self, pages: &[(Pfn, u32)]) {
        for &(p, g) in pages {
            let i = p as usize;
            if self.frames.gen[i] != g || self.frames.flags[i] & pg::WRITEBACK == 0 {
                continue;
            }
            let f = self.frames.flags[i];
            self.frames.flags[i] = f & !(pg::WRITEBACK | pg::RECLAIM);
            let l = self.frames.lru[i];
            if f & pg::RECLAIM != 0 && (l == lru::INACTIVE_ANON || l == lru::INACTIVE_FILE) {
                self.lru.remove(&mut self.frames, p);
                self.lru.add_tail(&mut self.frames, l, p);
                self.vmstat.pgrotated += 1;
            }
        }
    }

    // ------------------------------------------------------------------ reclaim entry points

    /// Direct reclaim (`try_to_free_pages`) by the allocating task.
    pub fn try_to_free_pages(&mut self, t: &mut Task) -> u64 {
        self.vmstat.allocstall += 1;
        t.bd.allocstalls += 1;
        self.procs[t.proc_idx as usize].stats.allocstall += 1;
        let mut sc = ScanControl::new(SWAP_CLUSTER_MAX, false, false, t.now);
        self.do_try_to_free_pages(&mut sc);
        if sc.nr_reclaimed > 0 {
            self.kswapd.failures = 0;
        }
        self.reclaim_congested = sc.congested;
        self.charge_reclaim(t, &sc);
        sc.nr_reclaimed
    }

    /// Memory-cgroup limit reclaim (`try_to_free_mem_cgroup_pages`) by the charging task.
    pub fn try_to_free_mem_cgroup_pages(&mut self, t: &mut Task, nr_pages: u64) -> u64 {
        let mut sc = ScanControl::new(nr_pages.max(SWAP_CLUSTER_MAX), false, true, t.now);
        self.do_try_to_free_pages(&mut sc);
        self.charge_reclaim(t, &sc);
        sc.nr_reclaimed
    }

    fn do_try_to_free_pages(&mut self, sc: &mut ScanControl) {
        loop {
            sc.nr_scanned = 0;
            sc.nr_writeback = 0;
            let wb_before = sc.wb_started;
            self.shrink_node(sc);
            // Pages this round could not free because of I/O: already under writeback, or
            // written out now (a flash swap-out frees the page only when the write completes).
            let io_bound = sc.nr_writeback + (sc.wb_started - wb_before);
            if sc.nr_reclaimed >= sc.nr_to_reclaim || sc.priority == 0 {
                break;
            }
            // Writeback congestion: when at least half of what this round scanned is waiting for
            // writeback, a direct reclaimer stops scanning and is throttled until writeback
            // completes (4.x: PGDAT_WRITEBACK + wait_iff_congested; 5.16+: reclaim_throttle) rather
            // than rescanning the same pages at every priority. The half is the model's test
            // (estimate); Linux's conditions differ by version.
            if !sc.kswapd && !sc.memcg && sc.nr_scanned > 0 && 2 * io_bound >= sc.nr_scanned {
                sc.congested = true;
                break;
            }
            sc.priority -= 1;
        }
        self.snapshot_refaults_file = self.vmstat.workingset_refault_file;
        self.flush_writeback(sc);
    }

    /// Charge reclaim work to the task that did it: CPU time that PSI counts as a memory stall.
    fn charge_reclaim(&mut self, t: &mut Task, sc: &ScanControl) {
        let start = t.now;
        t.kernel_cpu(sc.cost_ns);
        t.bd.reclaim_stall_ns += sc.cost_ns;
        self.psi_memstall(t, start, sc.cost_ns);
    }

    /// One kswapd event: one shrink round of `balance_pgdat`, booked on a core.
    pub(crate) fn kswapd_run(&mut self, now: Nanos) {
        if !self.kswapd.awake {
            return;
        }
        if !self.kswapd.in_pass {
            let (stop, target) = match self.kswapd_sizing.as_mut() {
                Some(s) => s.levels(&self.wmark, now),
                None => (self.wmark.high, self.wmark.high.max(SWAP_CLUSTER_MAX)),
            };
            if self.nr_free() > stop || self.kswapd.priority < 1 {
                // Balanced (or out of priorities): this balance_pgdat run ends. Only a run that
                // went through every priority without reclaiming counts as a failure.
                self.vmstat.pageoutrun += 1;
                if self.kswapd.priority < 1 && self.kswapd.run_reclaimed == 0 {
                    self.kswapd.failures += 1;
                }
                self.snapshot_refaults_file = self.vmstat.workingset_refault_file;
                if self.nr_free() > stop || self.kswapd.failures >= MAX_RECLAIM_RETRIES {
                    self.kswapd.awake = false;
                    return;
                }
                // Not balanced: kswapd does not sleep, it runs balance_pgdat again.
                self.kswapd.start_run();
            }
            let ks = &mut self.kswapd;
            ks.in_pass = true;
            ks.pass_scanned = 0;
            ks.pass_reclaimed = 0;
            ks.target = target.max(SWAP_CLUSTER_MAX);
            let md = self.compute_may_deactivate();
            self.kswapd.may_deactivate = md;
            let mut sc = ScanControl::new(self.kswapd.target, true, false, now);
            sc.priority = self.kswapd.priority;
            sc.may_deactivate = md;
            let (nr, _) = self.get_scan_count(&sc);
            self.kswapd.nr = nr;
            self.kswapd.targets = nr;
            self.kswapd.proportional = false;
        }
        let mut sc = ScanControl::new(self.kswapd.target, true, false, now);
        sc.priority = self.kswapd.priority;
        sc.may_deactivate = self.kswapd.may_deactivate;
        let mut nr = self.kswapd.nr;
        self.shrink_round(&mut sc, &mut nr);
        self.kswapd.pass_scanned += sc.nr_scanned;
        self.kswapd.pass_reclaimed += sc.nr_reclaimed;
        self.kswapd.run_reclaimed += sc.nr_reclaimed;
        // The proportional adjustment looks at the whole pass's progress.
        let mut pass_sc = sc.clone();
        pass_sc.nr_reclaimed = self.kswapd.pass_reclaimed;
        let targets = self.kswapd.targets;
        let mut proportional = self.kswapd.proportional;
        let go_on = proportional_adjust(&pass_sc, &mut nr, &targets, &mut proportional);
        self.kswapd.proportional = proportional;
        self.kswapd.nr = nr;
        let pass_done = !go_on || (nr[0] == 0 && nr[2] == 0 && nr[3] == 0);
        if pass_done {
            self.age_active_anon(&mut sc);
            let ks = &mut self.kswapd;
            let raise_priority = ks.pass_scanned < ks.target;
            if raise_priority || ks.pass_reclaimed == 0 {
                ks.priority -= 1;
            }
            ks.in_pass = false;
        }
        self.flush_writeback(&sc);
        // kswapd's work is CPU time on some core, and a memory stall (balance_pgdat runs under
        // psi_memstall_enter).
        let cost = sc.cost_ns.max(1);
        let slot = self.cpus.run(KSWAPD_THREAD, now, cost);
        self.kswapd.cpu_ns += cost + slot.stretch;
        self.psi.record(slot.start, cost + slot.stretch, false);
        self.psi.check_monitors(slot.end);
        self.queue.push(slot.end, Event::Kswapd);
    }

    /// Pure-LRU eviction of the single list's tail. Returns false if nothing can be evicted.
    pub(crate) fn pure_evict_one(&mut self, t: &mut Task) -> bool {
        let p = self.lru.tail_of(&self.frames, lru::INACTIVE_ANON);
        if p == NO_PFN {
            return false;
        }
        let i = p as usize;
        let anon = self.frames.flags[i] & pg::SWAPBACKED != 0;
        if anon && !self.swap.enabled() {
            return false;
        }
        self.lru.remove(&mut self.frames, p);
        let mut sc = ScanControl::new(1, false, self.cfg.scope == ReclaimScope::MemcgLimit, t.now);
        sc.ignore_references = true;
        self.vmstat.pgscan_direct += 1;
        self.touch_gen += 1;
        let out = if anon { self.reclaim_anon(&mut sc, p) } else { self.reclaim_file(&mut sc, p) };
        if out != Outcome::Freed {
            // Swap full: nothing else can be done in pure mode.
            self.lru.add_head(&mut self.frames, lru::INACTIVE_ANON, p);
            return false;
        }
        self.vmstat.pgsteal_direct += 1;
        let start = t.now;
        t.kernel_cpu(sc.cost_ns + self.cfg.costs.reclaim_page_ns);
        t.bd.reclaim_stall_ns += t.now - start;
        true
    }

    /// Reclaim a list of isolated pages now, ignoring references (`reclaim_pages`, used by
    /// MADV_PAGEOUT). Pages that cannot be reclaimed go back to their inactive list.
    pub(crate) fn reclaim_pages(&mut self, t: &mut Task, pages: &[Pfn]) -> u64 {
        let mut sc = ScanControl::new(pages.len() as u64, false, false, t.now);
        sc.ignore_references = true;
        let mut freed = 0;
        for &p in pages {
            match self.shrink_page(&mut sc, p) {
                Outcome::Freed => freed += 1,
                Outcome::Activate => {
                    let l = self.page_list_type(p);
                    self.lru.add_head(&mut self.frames, l + 1, p);
                }
                Outcome::Keep => {
                    let l = self.page_list_type(p);
                    self.lru.add_head(&mut self.frames, l, p);
                }
            }
        }
        self.flush_writeback(&sc);
        sc.cost_ns += pages.len() as u64 * self.cfg.costs.scan_page_ns + freed * self.cfg.costs.reclaim_page_ns;
        t.cpu(sc.cost_ns);
        freed
    }
}
