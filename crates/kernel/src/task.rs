//! The context of a thread executing in the kernel model: its clock and where its time went.
//!
//! Every access, fault and reclaim is charged to the `Task` that caused it. The breakdown is what
//! launch-time reports are built from (CPU work, major faults by kind and their time, reclaim
//! stalls, waiting for a CPU).

use mobmem_engine::{Nanos, ThreadId};
use serde::Serialize;

/// Where a thread's time went while it was in the kernel model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// Time doing the task's own work on a core: its compute and resident page accesses (CPU
    /// spent inside faults and reclaim is in those components). With the other time fields and
    /// the time the task was idle, it covers every nanosecond of the task's clock.
    pub cpu_ns: Nanos,
    pub minor_faults: u64,
    pub minor_fault_ns: Nanos,
    pub major_faults_zram: u64,
    pub major_fault_zram_ns: Nanos,
    pub major_faults_flash_swap: u64,
    pub major_fault_flash_swap_ns: Nanos,
    pub major_faults_file: u64,
    pub major_fault_file_ns: Nanos,
    /// Waits for file pages whose readahead read was still in flight (minor faults that sleep on
    /// the page lock until the read completes).
    pub file_read_waits: u64,
    pub file_read_wait_ns: Nanos,
    /// Direct reclaim (global or memcg-limit) done by this thread.
    pub reclaim_stall_ns: Nanos,
    pub allocstalls: u64,
    /// Part of the time above that PSI counts as a memory stall.
    pub(crate) memstall_ns: Nanos,
    /// Time runnable but waiting for a core.
    pub cpu_wait_ns: Nanos,
    /// Extra time the task's CPU work took because its core was slower than the cost model's
    /// reference core at its top frequency: a little core, or a lower frequency.
    pub cpu_slow_ns: Nanos,
    /// Reads of objects from the app's own swap file (object-granularity swap in the runtime,
    /// not the kernel's swap): synchronous file reads by this thread.
    pub object_swap_ins: u64,
    pub object_swap_in_ns: Nanos,
}

impl Breakdown {
    pub fn total_ns(&self) -> Nanos {
        self.cpu_ns
            + self.minor_fault_ns
            + self.major_fault_zram_ns
            + self.major_fault_flash_swap_ns
            + self.major_fault_file_ns
            + self.file_read_wait_ns
            + self.reclaim_stall_ns
            + self.cpu_wait_ns
            + self.cpu_slow_ns
            + self.object_swap_in_ns
    }

    /// Add another breakdown field by field.
    pub fn add(&mut self, o: &Breakdown) {
        self.zip_with(o, |a, b| *a += b);
    }

    /// What accrued since `earlier` (a snapshot of this breakdown taken before).
    pub fn since(&self, earlier: &Breakdown) -> Breakdown {
        let mut d = *self;
        d.zip_with(earlier, |a, b| *a -= b);
        d
    }

    /// Apply `f` to every field of `self` paired with the same field of `o` (one list of fields).
    fn zip_with(&mut self, o: &Breakdown, mut f: impl FnMut(&mut u64, u64)) {
        f(&mut self.cpu_ns, o.cpu_ns);
        f(&mut self.minor_faults, o.minor_faults);
        f(&mut self.minor_fault_ns, o.minor_fault_ns);
        f(&mut self.major_faults_zram, o.major_faults_zram);
        f(&mut self.major_fault_zram_ns, o.major_fault_zram_ns);
        f(&mut self.major_faults_flash_swap, o.major_faults_flash_swap);
        f(&mut self.major_fault_flash_swap_ns, o.major_fault_flash_swap_ns);
        f(&mut self.major_faults_file, o.major_faults_file);
        f(&mut self.major_fault_file_ns, o.major_fault_file_ns);
        f(&mut self.file_read_waits, o.file_read_waits);
        f(&mut self.file_read_wait_ns, o.file_read_wait_ns);
        f(&mut self.reclaim_stall_ns, o.reclaim_stall_ns);
        f(&mut self.allocstalls, o.allocstalls);
        f(&mut self.memstall_ns, o.memstall_ns);
        f(&mut self.cpu_wait_ns, o.cpu_wait_ns);
        f(&mut self.cpu_slow_ns, o.cpu_slow_ns);
        f(&mut self.object_swap_ins, o.object_swap_ins);
        f(&mut self.object_swap_in_ns, o.object_swap_in_ns);
    }
}

/// A thread running in a process, with its own clock.
#[derive(Clone, Debug)]
pub struct Task {
    pub thread: ThreadId,
    pub(crate) proc_idx: u32,
    /// The thread's simulated clock: advanced by everything it does.
    pub now: Nanos,
    pub bd: Breakdown,
    /// CPU time not yet booked on a core (booked in chunks at synchronisation points).
    pub(crate) unbooked_cpu_ns: Nanos,
    /// The part of `unbooked_cpu_ns` that is kernel work on the task's behalf.
    pub(crate) unbooked_kernel_ns: Nanos,
    /// All CPU time charged to this task (its own work, fault handling, reclaim, decompression);
    /// excludes waiting for I/O and for a core.
    pub cpu_total_ns: Nanos,
    /// Set when the task's process was killed under it.
    pub killed: bool,
}

impl Task {
    pub fn new(thread: ThreadId, proc_idx: u32, now: Nanos) -> Self {
        Self { thread, proc_idx, now, bd: Breakdown::default(), unbooked_cpu_ns: 0, unbooked_kernel_ns: 0, cpu_total_ns: 0, killed: false }
    }

    /// Charge CPU work (runs on a core): the task's own work, booked as `bd.cpu_ns`.
    #[inline]
    pub fn cpu(&mut self, ns: Nanos) {
        self.now += ns;
        self.unbooked_cpu_ns += ns;
        self.cpu_total_ns += ns;
        self.bd.cpu_ns += ns;
    }

    /// Charge CPU work the kernel does on the task's behalf inside a fault or a reclaim stall
    /// (runs on a core; the caller books the time to that fault's or stall's component).
    #[inline]
    pub fn kernel_cpu(&mut self, ns: Nanos) {
        self.now += ns;
        self.unbooked_cpu_ns += ns;
        self.unbooked_kernel_ns += ns;
        self.cpu_total_ns += ns;
    }
}
