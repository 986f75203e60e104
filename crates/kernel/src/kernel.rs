//! The kernel model's construction, process/VMA API and clock: one `Kernel` per simulated device.
//!
//! The state is declared in `mmzone`; mechanisms live in their own modules as `impl Kernel`
//! blocks (`memory` for faults, `page_alloc` for allocation and watermarks, `vmscan` for reclaim
//! and kswapd, `workingset` for refaults, `madvise`, `psi`, `lmkd`, `oom_kill`); this module
//! builds the state, offers the process/VMA API, and runs the event loop that runs kernel
//! threads (kswapd, lmkd, the reaper, writeback completion, the time-series sampler) between the
//! callers' operations.
//!
//! Time: callers run threads with their own clocks (`Task::now`); before a thread acts at time
//! `t`, the caller runs `advance_to(t)` (or `sync`) so that every kernel event due by `t` has
//! happened.

use crate::config::{KernelConfig, LruMode, ReclaimScope, SwapKind};
use crate::lmkd;
use crate::lru::LruLists;
use crate::madvise::HintRegistry;
use crate::mm::{Mapping, MappingKind, ProcStats, Process, Vma};
pub use crate::mmzone::{CoRunner, Event, Kernel, KernelError, ProcUsage, EXTRA_THREAD_BASE, FIRST_USER_THREAD, KSWAPD_THREAD, LMKD_THREAD};
use crate::mmzone::{EvictionPolicy, KillPolicy, KillRecord, KswapdSizing, KswapdState, ScanBalance, Series, Watermarks};
use crate::page::{lru, Frames};
use crate::psi_types::Psi;
use crate::swap::SwapDevice;
use crate::task::Task;
use crate::vmstat::VmStat;
use mobmem_engine::{CpuSet, EventQueue, Nanos, ThreadId};
use std::collections::HashMap;

/// The most pages of RAM, of swap, or of one mapping the model accepts (64 GiB): it keeps
/// per-page state for each, so more would exhaust the host before anything runs.
pub const MAX_MODEL_PAGES: u64 = crate::config::MAX_MODEL_MIB * 256;

impl Kernel {
    pub fn new(cfg: KernelConfig) -> Result<Self, KernelError> {
        let mut cfg = cfg;
        if cfg.scope == ReclaimScope::MemcgLimit {
            if cfg.memcg_limit_pages == 0 {
                return Err(KernelError::Invalid("scope=memcg needs kernel.memcg_limit_mib".into()));
            }
            // The host has far more RAM than the cgroup: give the model enough frames that global
            // watermarks never bind (limit + the whole swap's worth of zram pool + slack).
            cfg.ram_pages = cfg.ram_pages.max(cfg.memcg_limit_pages + cfg.swap_pages + 16 * 256);
        }
        if cfg.reserved_pages >= cfg.ram_pages {
            return Err(KernelError::Invalid("reserved memory is not smaller than RAM".into()));
        }
        if cfg.swap != SwapKind::None && cfg.swap_pages == 0 {
            return Err(KernelError::Invalid("swap enabled with size 0".into()));
        }
        // The settings' ranges hold these for parsed input; a config built in code or read from a
        // trace header is checked here, before anything is allocated for its frames and slots.
        for (key, pages) in [("kernel.ram_mib", cfg.ram_pages), ("kernel.swap_mib", cfg.swap_pages)] {
            if pages > MAX_MODEL_PAGES {
                return Err(KernelError::Invalid(format!("{key}: at most {} MiB is supported, got {}", crate::config::MAX_MODEL_MIB, pages / 256)));
            }
        }
        let managed_kb = (cfg.ram_pages - cfg.reserved_pages) * 4;
        if cfg.min_free_kbytes >= managed_kb {
            return Err(KernelError::Invalid(format!(
                "kernel.min_free_kbytes: {} KiB leaves no memory above the min watermark (managed memory {managed_kb} KiB)",
                cfg.min_free_kbytes
            )));
        }
        let n = cfg.ram_pages as usize;
        let mut frames = Frames::new(n);
        // Reserved kernel memory: frames taken out up front, never on an LRU list.
        for _ in 0..cfg.reserved_pages {
            let p = frames.take().expect("reserved < ram");
            frames.lru[p as usize] = lru::RESERVED;
        }
        if cfg.buddy {
            frames.enable_buddy();
        }
        let managed = cfg.ram_pages - cfg.reserved_pages;
        let wmark = Watermarks::compute(&cfg, managed);
        let swap = SwapDevice::new(cfg.swap, cfg.swap_pages);
        let killer = (lmkd::KILLERS.get(&cfg.lmkd).map_err(KernelError::Invalid)?.build)();
        let eviction = (crate::policies::EVICTION.get(&cfg.eviction).map_err(KernelError::Invalid)?.build)(&cfg, n).map_err(KernelError::Invalid)?;
        let kswapd_sizing =
            (crate::policies::KSWAPD_SIZING.get(&cfg.kswapd_sizing).map_err(KernelError::Invalid)?.build)(&cfg).map_err(KernelError::Invalid)?;
        let mut k = Self {
            cpus: kernel_threads(CpuSet::new(cfg.cores)),
            frames,
            lru: LruLists::default(),
            mappings: Vec::new(),
            files: HashMap::new(),
            vmas: Vec::new(),
            procs: Vec::new(),
            pid_index: HashMap::new(),
            swap,
            wmark,
            vmstat: VmStat::default(),
            touch_gen: 0,
            nonresident_age: 0,
            snapshot_refaults_file: 0,
            balance: ScanBalance::default(),
            kswapd: KswapdState::default(),
            psi: Psi::new(),
            queue: EventQueue::new(),
            now: 0,
            killer: None,
            co_runner: None,
            co_next: Nanos::MAX,
            eviction,
            kswapd_sizing,
            foreground: u32::MAX,
            lmkd_scheduled: false,
            kills: Vec::new(),
            hints: HintRegistry::with_builtins(),
            zram_pool_pages: 0,
            zram_pool_frames: Vec::new(),
            memcg_charged: 0,
            nr_kernel_pages: 0,
            nr_pagetable_pages: 0,
            fragmentation: Default::default(),
            alloc_gen: 0,
            series: Series::default(),
            pending_writeback: Vec::new(),
            flash_busy_until: 0,
            flash_read_busy_until: 0,
            writeback_due: Vec::new(),
            reclaim_congested: false,
            zram_sizes: crate::zram::SizeTable::new(&cfg.zram),
            next_extra_thread: 0,
            cfg,
        };
        if k.cfg.sample_interval_ns > 0 {
            k.queue.push(0, Event::Sample);
        }
        k.install_killer(killer);
        Ok(k)
    }

    /// Install a kill policy in place of the configured one (a policy from outside the kernel's
    /// registry: a test, an experiment); its first poll is scheduled (boot installs the configured
    /// one the same way).
    pub fn install_killer(&mut self, killer: Box<dyn KillPolicy>) {
        if let Some(t) = killer.first_poll() {
            self.queue.push(self.now.max(t), Event::Lmkd);
            self.lmkd_scheduled = true;
        }
        self.killer = Some(killer);
    }

    /// Install a reclaim policy on vmscan's decisions in place of the configured one (None: stock).
    pub fn install_eviction(&mut self, eviction: Option<Box<dyn EvictionPolicy>>) {
        self.eviction = eviction;
    }

    /// Install a kswapd sizing policy in place of the configured one (None: stock).
    pub fn install_kswapd_sizing(&mut self, sizing: Option<Box<dyn KswapdSizing>>) {
        self.kswapd_sizing = sizing;
    }

    pub fn pure_lru(&self) -> bool {
        self.cfg.lru == LruMode::Pure
    }

    /// Frames managed by the page allocator (RAM minus reserved).
    pub fn managed_pages(&self) -> u64 {
        self.cfg.ram_pages - self.cfg.reserved_pages
    }

    // ---------------------------------------------------------------- processes and mappings

    /// Create a process. `now` is its creation time.
    pub fn create_process(&mut self, pid: u32, name: &str, adj: i32, now: Nanos) -> Result<u32, KernelError> {
        if self.pid_index.contains_key(&pid) {
            return Err(KernelError::ProcessExists(pid));
        }
        if !(-1000..=1000).contains(&adj) {
            return Err(KernelError::Invalid(format!("oom_score_adj {adj} outside [-1000, 1000]")));
        }
        let idx = self.procs.len() as u32;
        let fae_exempt = self.cfg.fae_exempt.iter().any(|n| n == name);
        self.procs.push(Process {
            pid,
            name: name.into(),
            app: false,
            fae_exempt,
            oom_score_adj: adj,
            alive: true,
            vmas: Vec::new(),
            vma_by_name: HashMap::new(),
            last_active_ns: now,
            stats: ProcStats::default(),
            nr_zero: 0,
            parent: None,
            kstacks: Vec::new(),
            threads: Vec::new(),
            cpuset: 0,
        });
        self.pid_index.insert(pid, idx);
        Ok(idx)
    }

    pub fn proc_index(&self, pid: u32) -> Result<u32, KernelError> {
        self.pid_index.get(&pid).copied().ok_or(KernelError::NoProcess(pid))
    }

    /// The main thread of a process.
    pub fn thread_of(&self, proc_idx: u32) -> ThreadId {
        FIRST_USER_THREAD + proc_idx
    }

    /// A new thread id for an extra thread (a GC thread, a render thread…), distinct from every
    /// process main thread and kernel thread.
    pub fn new_thread(&mut self) -> ThreadId {
        self.next_extra_thread += 1;
        EXTRA_THREAD_BASE + self.next_extra_thread
    }

    /// A new thread of process `proc_idx` (a GC thread, a render thread…): it follows the
    /// process's cpuset.
    pub fn new_thread_in(&mut self, proc_idx: u32) -> ThreadId {
        let t = self.new_thread();
        let p = &mut self.procs[proc_idx as usize];
        p.threads.push(t);
        self.cpus.set_allowed(t, p.cpuset);
        t
    }

    /// Every thread of a process: its main thread, then the others (`new_thread_in`).
    pub fn threads_of(&self, proc_idx: u32) -> impl Iterator<Item = ThreadId> + '_ {
        std::iter::once(self.thread_of(proc_idx)).chain(self.procs[proc_idx as usize].threads.iter().copied())
    }

    /// Move a process (every thread of it) to the cpuset of `mask` (bit `c` = core `c` of
    /// `cpus`; 0: every core), as Android's `SetTaskProfiles` does when the activity manager
    /// changes the process's scheduling group.
    pub fn set_cpuset(&mut self, proc_idx: u32, mask: u64) {
        if self.procs[proc_idx as usize].cpuset != mask {
            self.procs[proc_idx as usize].cpuset = mask;
            self.apply_cpuset(proc_idx);
        }
    }

    /// Give every thread of a process its process's cpuset.
    fn apply_cpuset(&mut self, proc_idx: u32) {
        let p = &self.procs[proc_idx as usize];
        self.cpus.set_allowed(FIRST_USER_THREAD + proc_idx, p.cpuset);
        for &t in &p.threads {
            self.cpus.set_allowed(t, p.cpuset);
        }
    }

    /// The activity manager's notice: `proc_idx` is the foreground app (None: no app is).
    pub fn set_foreground(&mut self, proc_idx: Option<u32>) {
        self.foreground = proc_idx.unwrap_or(u32::MAX);
    }

    /// Change a process's oom_score_adj; entering a new adj slot makes it the most recent there.
    pub fn set_adj(&mut self, proc_idx: u32, adj: i32, now: Nanos) -> Result<(), KernelError> {
        if !(-1000..=1000).contains(&adj) {
            return Err(KernelError::Invalid(format!("oom_score_adj {adj} outside [-1000, 1000]")));
        }
        let p = &mut self.procs[proc_idx as usize];
        if p.oom_score_adj != adj {
            p.oom_score_adj = adj;
            p.last_active_ns = now;
        }
        Ok(())
    }

    /// Map a private anonymous area of `npages`.
    pub fn map_anon(&mut self, proc_idx: u32, name: &str, npages: u32) -> Result<u32, KernelError> {
        self.check_new_vma(proc_idx, name, npages)?;
        let m = self.mappings.len() as u32;
        let mut mp = Mapping::new(MappingKind::Anon, format!("{}:{}", self.procs[proc_idx as usize].pid, name), npages, proc_idx);
        mp.nr_vmas = 1;
        self.mappings.push(mp);
        Ok(self.add_vma(proc_idx, name, m, npages, false, false))
    }

    /// Make the private anonymous VMA `v` a driver buffer: with the buddy allocator its pages are
    /// allocated `MIGRATE_UNMOVABLE` and compaction does not move them (graphics memory from
    /// ION/KGSL). Only before any of its pages is present.
    pub fn set_unmovable(&mut self, v: u32) -> Result<(), KernelError> {
        let vm = self.vmas.get(v as usize).ok_or_else(|| KernelError::Invalid(format!("no VMA {v}")))?;
        let m = &mut self.mappings[vm.mapping as usize];
        if vm.file || m.nr_present > 0 || m.nr_swapped > 0 {
            return Err(KernelError::Invalid(format!("{}: only an untouched anonymous mapping can be made unmovable", vm.name)));
        }
        m.unmovable = true;
        Ok(())
    }

    /// The zone's watermarks (min, low, high) in pages.
    pub fn watermarks(&self) -> Watermarks {
        self.wmark
    }

    /// Free blocks of `order` on migrate type `m`'s lists (a row of `/proc/pagetypeinfo`); 0
    /// without the buddy allocator.
    pub fn free_blocks(&self, order: usize, m: u8) -> u64 {
        self.frames.buddy.as_ref().map_or(0, |b| b.nr_blocks(order, m))
    }

    /// Map a shared file of `npages` (its page cache is shared with every other mapper).
    pub fn map_file(&mut self, proc_idx: u32, name: &str, file: &str, npages: u32, exec: bool) -> Result<u32, KernelError> {
        self.check_new_vma(proc_idx, name, npages)?;
        let m = match self.files.get(file) {
            Some(&m) => {
                let existing = self.mappings[m as usize].pages.len() as u32;
                if existing != npages {
                    return Err(KernelError::FileSize { name: file.into(), pages: npages, existing });
                }
                m
            }
            None => {
                let m = self.mappings.len() as u32;
                self.mappings.push(Mapping::new(MappingKind::File, file.into(), npages, u32::MAX));
                self.files.insert(file.into(), m);
                m
            }
        };
        self.mappings[m as usize].nr_vmas += 1;
        Ok(self.add_vma(proc_idx, name, m, npages, true, exec))
    }

    fn check_new_vma(&self, proc_idx: u32, name: &str, npages: u32) -> Result<(), KernelError> {
        let p = &self.procs[proc_idx as usize];
        if p.vma_by_name.contains_key(name) {
            return Err(KernelError::VmaExists { pid: p.pid, vma: name.into() });
        }
        if npages == 0 {
            return Err(KernelError::Invalid(format!("mapping {name:?} has 0 pages")));
        }
        if npages as u64 > MAX_MODEL_PAGES {
            return Err(KernelError::Invalid(format!("mapping {name:?} of {npages} pages: at most {MAX_MODEL_PAGES} pages (64 GiB) per mapping")));
        }
        Ok(())
    }

    fn add_vma(&mut self, proc_idx: u32, name: &str, mapping: u32, npages: u32, file: bool, exec: bool) -> u32 {
        let v = self.vmas.len() as u32;
        self.vmas.push(Vma {
            name: name.into(),
            proc_idx,
            mapping,
            npages,
            file,
            exec,
            mapgen: if file { vec![0; npages as usize] } else { Vec::new() },
            live: true,
            locked: false,
            ra: (0, 0, 0),
            mmap_miss: 0,
            cow_parent: None,
            ptes: Vec::new(),
        });
        let p = &mut self.procs[proc_idx as usize];
        p.vmas.push(v);
        p.vma_by_name.insert(name.into(), v);
        v
    }

    pub fn vma_index(&self, proc_idx: u32, name: &str) -> Result<u32, KernelError> {
        let p = &self.procs[proc_idx as usize];
        p.vma_by_name.get(name).copied().ok_or_else(|| KernelError::NoVma { pid: p.pid, vma: name.into() })
    }

    /// Tear down a process's address space: anon pages and swap slots freed, file pages unmapped
    /// (they stay in the page cache). Used by exit, lmkd reaping and the OOM killer.
    pub fn release_process_memory(&mut self, proc_idx: u32) {
        self.free_kernel_stacks(proc_idx);
        let vmas = std::mem::take(&mut self.procs[proc_idx as usize].vmas);
        for &v in &vmas {
            let n = self.vmas[v as usize].npages;
            if self.vmas[v as usize].file {
                self.unmap_file_range(v, 0, n);
                let m = self.vmas[v as usize].mapping as usize;
                self.mappings[m].nr_vmas -= 1;
            } else {
                self.zap_anon_range(v, 0, n);
                let m = self.vmas[v as usize].mapping as usize;
                self.mappings[m].nr_vmas = 0;
                self.mappings[m].pages = Vec::new();
            }
            self.free_pgtables(v);
            let vm = &mut self.vmas[v as usize];
            vm.live = false;
            vm.mapgen = Vec::new();
        }
        self.procs[proc_idx as usize].vmas = vmas;
        self.procs[proc_idx as usize].nr_zero = 0;
        self.zram_pool_shrink();
    }

    /// A process exits on its own.
    pub fn exit_process(&mut self, proc_idx: u32) {
        if self.procs[proc_idx as usize].alive {
            self.procs[proc_idx as usize].alive = false;
            self.release_process_memory(proc_idx);
        }
    }

    // ---------------------------------------------------------------- events

    /// Earliest pending kernel event.
    pub fn next_event_time(&self) -> Option<Nanos> {
        self.queue.peek_time()
    }

    /// Earliest pending kernel event, `Nanos::MAX` if none.
    #[inline]
    pub fn next_event_at(&self) -> Nanos {
        self.queue.peek_time().unwrap_or(Nanos::MAX)
    }

    /// The synchronisation step of every driver: a thread whose clock reached a pending kernel
    /// event (or a co-runner's turn) books its CPU and lets every event due by its clock happen.
    /// Returns whether it did.
    #[inline]
    pub fn sync(&mut self, t: &mut Task) -> bool {
        if t.now < self.next_event_at() && t.now < self.co_next {
            return false;
        }
        self.book_cpu(t);
        self.advance_to(t.now);
        true
    }

    /// Run the co-runner up to `until`. It is taken out while it runs, so its own threads'
    /// syncs do not run it again.
    #[cold]
    fn run_co_runner(&mut self, until: Nanos) {
        let Some(mut co) = self.co_runner.take() else { return };
        self.co_next = Nanos::MAX;
        let next = co.run_until(self, until);
        self.co_runner = Some(co);
        self.co_next = next;
    }

    /// Run `co` beside what the caller does next, from `next` on (see `CoRunner`).
    pub fn install_co_runner(&mut self, co: Box<dyn CoRunner>, next: Nanos) {
        self.co_runner = Some(co);
        self.co_next = next;
    }

    /// Remove the co-runner, with whatever it holds.
    pub fn take_co_runner(&mut self) -> Option<Box<dyn CoRunner>> {
        self.co_next = Nanos::MAX;
        self.co_runner.take()
    }

    /// Run every kernel event due at or before `t`; first a co-runner whose turn came, up to
    /// `t` (whichever way the operation's thread reaches the kernel: a sync at a page, or
    /// advancing through CPU work, idle time or a wait).
    pub fn advance_to(&mut self, t: Nanos) {
        if t >= self.co_next {
            self.run_co_runner(t);
        }
        while let Some((at, ev)) = self.queue.pop_until(t) {
            self.now = self.now.max(at);
            match ev {
                Event::Kswapd => self.kswapd_run(at),
                Event::WritebackDone(pages) => self.writeback_done_event(at, &pages),
                Event::Lmkd => self.lmkd_run(at),
                Event::Reap(p) => self.reap(p),
                Event::CpufreqTick => {
                    self.cpus.governor_tick(at);
                    self.queue.push(at + self.cfg.cpufreq.sampling_ms * 1_000_000, Event::CpufreqTick);
                }
                Event::Sample => {
                    self.sample(at);
                    if self.cfg.sample_interval_ns > 0 {
                        self.queue.push(at + self.cfg.sample_interval_ns, Event::Sample);
                    }
                }
            }
        }
        self.now = self.now.max(t);
    }

    /// Use these cores (a device's clusters, frequency scaling and power model) from now on.
    pub fn install_cpus(&mut self, cpus: CpuSet) {
        self.cpus = kernel_threads(cpus);
        // Processes already moved to a cpuset keep it (threads' pins and classes do not: install
        // the cores before declaring those).
        for p in 0..self.procs.len() as u32 {
            if self.procs[p as usize].cpuset != 0 {
                self.apply_cpuset(p);
            }
        }
        if self.cpus.dvfs.is_some() && self.cfg.cpufreq.governor != "performance" {
            let p = self.cfg.cpufreq.sampling_ms * 1_000_000;
            self.queue.push(self.now - self.now % p + p, Event::CpufreqTick);
        }
    }

    /// Book a task's pending CPU time on a core (called at synchronisation points). Waiting for a
    /// core delays the task.
    pub fn book_cpu(&mut self, t: &mut Task) {
        if t.unbooked_cpu_ns == 0 {
            return;
        }
        let ready = t.now - t.unbooked_cpu_ns;
        let slot = self.cpus.run_split(t.thread, ready, t.unbooked_cpu_ns, t.unbooked_kernel_ns);
        t.unbooked_cpu_ns = 0;
        t.unbooked_kernel_ns = 0;
        if slot.wait > 0 {
            t.now += slot.wait;
            t.bd.cpu_wait_ns += slot.wait;
        }
        if slot.stretch > 0 {
            // The work ran slower than the clock assumed when it was charged (a slower core, a
            // lower frequency).
            t.now += slot.stretch;
            t.cpu_total_ns += slot.stretch;
            t.bd.cpu_slow_ns += slot.stretch;
        }
    }

    fn reap(&mut self, proc_idx: u32) {
        self.release_process_memory(proc_idx);
        if let Some(k) = self.kills.iter_mut().rev().find(|k| k.proc_idx == proc_idx) {
            k.reaped_ns = Some(self.now);
        }
        if let Some(mut p) = self.killer.take() {
            p.on_reaped(self, proc_idx);
            self.killer = Some(p);
        }
    }

    /// Mark a process killed; its memory is released by the reaper after `delay`.
    /// The kill record reports what the kill frees: RSS and swap without the pages shared
    /// copy-on-write with other processes (reported apart as `shared_kb`).
    pub fn kill_process(&mut self, proc_idx: u32, reason: &str, min_adj: i32, by: &str, now: Nanos, delay: Nanos) {
        let u = self.proc_usage(proc_idx);
        let (rss, swap) = (u.anon - u.anon_shared + u.file, u.swap - u.swap_shared);
        let (swap_used, free) = (self.swap.nr_used(), self.nr_free());
        let p = &mut self.procs[proc_idx as usize];
        if !p.alive {
            return;
        }
        p.alive = false;
        self.kills.push(KillRecord {
            time_ns: now,
            pid: p.pid,
            proc_idx,
            name: p.name.clone(),
            oom_score_adj: p.oom_score_adj,
            min_score_adj: min_adj,
            reason: reason.into(),
            killer: by.into(),
            rss_kb: rss * 4,
            swap_kb: swap * 4,
            shared_kb: u.anon_shared * 4,
            swap_used_kb: swap_used * 4,
            free_kb: free * 4,
            reaped_ns: None,
        });
        if delay == 0 {
            self.reap(proc_idx);
        } else {
            self.queue.push(now + delay, Event::Reap(proc_idx));
        }
    }

    /// Resident (anon + mapped file) and swapped pages of a process, as Linux counts them for
    /// RSS and the OOM badness: COW-shared anon pages count in every process that maps them.
    pub fn proc_rss_swap(&self, proc_idx: u32) -> (u64, u64) {
        let u = self.proc_usage(proc_idx);
        (u.anon + u.file, u.swap)
    }

    /// A process's memory in pages: resident anon, mapped file, PSS, swapped. Pages shared
    /// copy-on-write after fork count in the RSS and swap of every process mapping them and are
    /// divided among them in the PSS.
    pub fn proc_usage(&self, proc_idx: u32) -> ProcUsage {
        let mut u = ProcUsage::default();
        for &v in &self.procs[proc_idx as usize].vmas {
            u.add(&self.vma_usage(v));
        }
        u
    }

    /// One VMA's part of [`Self::proc_usage`] (zero for a VMA already unmapped).
    pub fn vma_usage(&self, v: u32) -> ProcUsage {
        let mut u = ProcUsage::default();
        let vm = &self.vmas[v as usize];
        if !vm.live {
            return u;
        }
        if vm.file {
            let (n, pss) = self.file_mapped_pages(v);
            u.file += n;
            u.pss += pss;
            return u;
        }
        let m = &self.mappings[vm.mapping as usize];
        u.anon += m.nr_present;
        u.swap += m.nr_swapped;
        u.pss += m.nr_present as f64;
        u.pss_anon += m.nr_present as f64;
        if m.nr_cow > 0 {
            for (idx, &e) in m.pages.iter().enumerate() {
                if !e.is_cow() {
                    continue;
                }
                let o = &self.mappings[e.cow_obj() as usize];
                let se = o.pages[idx];
                let shared = o.shares[idx] > 1;
                if se.is_present() {
                    u.anon += 1;
                    u.anon_shared += shared as u64;
                    u.pss += 1.0 / o.shares[idx] as f64;
                    u.pss_anon += 1.0 / o.shares[idx] as f64;
                } else if se.is_swap() {
                    u.swap += 1;
                    u.swap_shared += shared as u64;
                }
            }
        }
        u
    }

    /// (mapped pages, PSS in pages) of a file VMA.
    pub fn file_mapped_pages(&self, v: u32) -> (u64, f64) {
        let vm = &self.vmas[v as usize];
        let m = &self.mappings[vm.mapping as usize];
        let mut n = 0;
        let mut pss = 0.0;
        for (i, &g) in vm.mapgen.iter().enumerate() {
            if g == 0 {
                continue;
            }
            let e = m.pages[i];
            if e.is_present() && self.frames.gen[e.pfn() as usize] == g {
                n += 1;
                pss += 1.0 / self.frames.mapcount[e.pfn() as usize].max(1) as f64;
            }
        }
        (n, pss)
    }
}

/// Declare the kernel's own threads to the CPU set.
fn kernel_threads(mut c: CpuSet) -> CpuSet {
    c.set_class(crate::mmzone::KSWAPD_THREAD, mobmem_engine::cpufreq::Class::Kswapd);
    c.set_class(crate::mmzone::LMKD_THREAD, mobmem_engine::cpufreq::Class::System);
    c
}
