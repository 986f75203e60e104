//! madvise on a VMA whose process is gone (`crates/kernel/src/madvise.rs`).

use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, KernelConfig, Task};

/// A runtime's GC thread can still advise its heap after the kernel killed its process (the
/// session reaps the runtime later): every advice, built-in or a registered hint, is then a
/// no-op, as `madvise(2)` on an unmapped range does nothing to anyone else.
#[test]
fn advice_on_a_killed_process_is_a_no_op() {
    let mut c = KernelConfig::default();
    for (k, v) in [("ram_mib", "64"), ("swap", "zram"), ("swap_mib", "16"), ("lmkd", "off")] {
        c.set(k, v).unwrap();
    }
    let mut k = Kernel::new(c).unwrap();
    let p = k.create_process(10, "app", 900, 0).unwrap();
    let heap = k.map_anon(p, "heap", 256).unwrap();
    let mut t = Task::new(k.thread_of(p), p, 0);
    k.touch_range(&mut t, heap, 0, 256, true);
    k.kill_process(p, "test", 0, "test", 0, 0);
    let free = k.nr_free();
    k.madvise_custom(&mut t, heap, 100, 50, "hot").unwrap();
    for a in [Advice::DontNeed, Advice::Cold, Advice::PageOut, Advice::WillNeed] {
        k.madvise(&mut t, heap, 100, 50, a).unwrap();
    }
    assert_eq!(k.nr_free(), free, "advice on a dead process's range moved no frame");
    k.check_invariants().unwrap();
}
