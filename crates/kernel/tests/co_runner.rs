//! A co-runner runs beside a driver's long synchronous operation: the kernel runs it from the
//! operation's synchronisation points, at each boundary it asked for, before the operation's
//! own events; its own threads' syncs do not run it again.

use mobmem_engine::Nanos;
use mobmem_kernel::{CoRunner, Kernel, KernelConfig, Task};

const SLICE: Nanos = 20_000_000;

/// Another process allocating one page per millisecond, slice by slice.
struct Other {
    task: Task,
    vma: u32,
    next_page: u32,
    /// `until` of each call, and the calling thread's clock seen through its own syncs.
    calls: Vec<Nanos>,
}

impl CoRunner for Other {
    fn run_until(&mut self, k: &mut Kernel, until: Nanos) -> Nanos {
        self.calls.push(until);
        let end = until - until % SLICE;
        while (self.next_page as Nanos + 1) * 1_000_000 <= end {
            self.task.now = self.task.now.max((self.next_page as Nanos + 1) * 1_000_000);
            k.touch(&mut self.task, self.vma, self.next_page, true);
            self.next_page += 1;
            // Its own sync must not re-enter it (the call count would grow by more than one
            // per boundary).
            k.sync(&mut self.task);
        }
        end + SLICE
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// A kernel with the launching process and `Other` installed as its co-runner: (kernel, the
/// launching process, the other process).
fn with_other_process() -> (Kernel, u32, u32) {
    let mut k = Kernel::new(KernelConfig::default()).unwrap();
    let p1 = k.create_process(1, "launching", 0, 0).unwrap();
    let p2 = k.create_process(2, "other", 900, 0).unwrap();
    let v2 = k.map_anon(p2, "heap", 4096).unwrap();
    let other = Other { task: Task::new(k.thread_of(p2), p2, 0), vma: v2, next_page: 0, calls: Vec::new() };
    k.install_co_runner(Box::new(other), SLICE);
    (k, p1, p2)
}

#[test]
fn a_co_runner_runs_at_each_boundary_the_operation_passes() {
    let (mut k, p1, p2) = with_other_process();
    let v1 = k.map_anon(p1, "heap", 4096).unwrap();
    // The operation: 200 ms, one page every 100 µs, syncing after each as drivers do.
    let mut t = Task::new(k.thread_of(p1), p1, 0);
    for pg in 0..2000 {
        t.now = pg as Nanos * 100_000;
        k.touch(&mut t, v1, pg, true);
        k.sync(&mut t);
        // The other process never lags the operation by more than a slice.
        let u = k.proc_usage(p2).anon;
        let behind = t.now.saturating_sub(u as Nanos * 1_000_000);
        assert!(behind <= SLICE, "at {} ns the other process has {u} pages", t.now);
    }
    let co = k.take_co_runner().expect("installed");
    let other = co.into_any().downcast::<Other>().unwrap();
    assert_eq!(other.calls.len(), 9, "one call per 20 ms boundary passed: {:?}", other.calls);
    assert!(other.calls.windows(2).all(|w| w[1] >= w[0] + SLICE));
    assert_eq!(other.next_page, 180);
    // Taken out, it no longer runs.
    t.now += SLICE * 5;
    k.sync(&mut t);
    assert!(k.take_co_runner().is_none());
}

#[test]
fn cpu_work_that_advances_the_kernel_runs_the_co_runner_too() {
    // A launch's CPU work advances the kernel without touching a page (book_cpu, advance_to):
    // the other process must run beside it as well, not all at the operation's next page.
    let (mut k, p1, p2) = with_other_process();
    let mut t = Task::new(k.thread_of(p1), p1, 0);
    for _ in 0..100 {
        t.cpu(1_000_000);
        k.book_cpu(&mut t);
        k.advance_to(t.now);
        let u = k.proc_usage(p2).anon;
        assert!(t.now.saturating_sub(u as Nanos * 1_000_000) <= SLICE, "at {} ns the other process has {u} pages", t.now);
    }
    let other = k.take_co_runner().unwrap().into_any().downcast::<Other>().unwrap();
    assert_eq!(other.calls.len(), 5, "{:?}", other.calls);
}
