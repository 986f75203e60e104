//! fork and copy-on-write sharing (`crates/kernel/src/fork.rs`): a zygote's private anon pages
//! are shared with the children it forks until someone writes.

use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, KernelConfig, Task};

const HEAP: u32 = 4096;

fn kernel(set: &[(&str, &str)]) -> Kernel {
    let mut c = KernelConfig::default();
    for (k, v) in [("ram_mib", "256"), ("swap", "zram"), ("swap_mib", "128"), ("lmkd", "off")].iter().chain(set) {
        c.set(k, v).unwrap();
    }
    Kernel::new(c).unwrap()
}

/// A zygote with a written heap of HEAP pages, a mapped boot image, and a few zero-page reads.
fn zygote(k: &mut Kernel) -> (u32, u32, Task) {
    let z = k.create_process(1, "zygote", -1000, 0).unwrap();
    let heap = k.map_anon(z, "heap", HEAP + 64).unwrap();
    let art = k.map_file(z, "boot.art", "boot.art", 512, false).unwrap();
    let mut t = Task::new(k.thread_of(z), z, 0);
    k.touch_range(&mut t, heap, 0, HEAP, true);
    k.touch_range(&mut t, heap, HEAP, 16, false); // zero page
    k.touch_range(&mut t, art, 0, 512, false);
    k.check_invariants().unwrap();
    (z, heap, t)
}

fn fork(k: &mut Kernel, z: u32, pid: u32) -> (u32, u32, Task) {
    let c = k.fork_process(z, pid, &format!("app{pid}"), 900, 0).unwrap();
    let heap = k.vma_index(c, "heap").unwrap();
    (c, heap, Task::new(k.thread_of(c), c, 0))
}

#[test]
fn fork_duplicates_vmas_and_child_reads_allocate_nothing() {
    let mut k = kernel(&[]);
    let (z, zheap, _) = zygote(&mut k);
    let free = k.nr_free();
    let faults = k.vmstat.pgfault;
    let (c, heap, mut t) = fork(&mut k, z, 2);
    assert_eq!(k.vmas[heap as usize].cow_parent, Some(zheap));
    assert_eq!(k.procs[c as usize].parent, Some(z));
    assert!(k.vma_index(c, "boot.art").is_ok());
    // Reads of the shared heap: accesses, not faults, and no frame allocated.
    k.touch_range(&mut t, heap, 0, HEAP, false);
    assert_eq!(k.nr_free(), free);
    assert_eq!(k.vmstat.pgfault, faults);
    assert_eq!(t.bd.minor_faults, 0);
    // The zero-page reads were inherited as zero-page entries.
    assert_eq!(k.procs[c as usize].nr_zero, 16);
    k.touch_range(&mut t, heap, HEAP, 16, false);
    assert_eq!(k.nr_free(), free);
    // RSS counts the shared pages in both; PSS splits them.
    let (uc, uz) = (k.proc_usage(c), k.proc_usage(z));
    assert_eq!(uc.anon, HEAP as u64);
    assert_eq!(uc.anon_shared, HEAP as u64);
    assert_eq!(uz.anon, HEAP as u64);
    assert!((uc.pss - HEAP as f64 / 2.0).abs() < 1e-6, "child pss {}", uc.pss);
    assert!((uz.pss - HEAP as f64 / 2.0 - uz.file as f64).abs() < 1e-6, "zygote pss {} file {}", uz.pss, uz.file);
    // Shared pages are counted once in memory.
    assert_eq!(k.meminfo().AnonPages, HEAP as u64 * 4);
    k.check_invariants().unwrap();
}

#[test]
fn child_write_copies_one_page_and_counts_one_cow() {
    let mut k = kernel(&[]);
    let (z, zheap, mut zt) = zygote(&mut k);
    let (c, heap, mut t) = fork(&mut k, z, 2);
    let free = k.nr_free();
    let minflt = k.procs[c as usize].stats.minflt;
    k.touch(&mut t, heap, 7, true);
    assert_eq!(k.nr_free(), free - 1);
    assert_eq!(k.vmstat.cow_fault, 1);
    assert_eq!(k.procs[c as usize].stats.minflt, minflt + 1);
    assert_eq!(t.bd.minor_fault_ns, k.cfg.costs.minor_fault_ns + k.cfg.costs.cow_copy_ns);
    // The copy is private now: writing again is a plain hit.
    k.touch(&mut t, heap, 7, true);
    assert_eq!(k.vmstat.cow_fault, 1);
    assert_eq!(k.nr_free(), free - 1);
    let (e, n) = k.anon_entry(heap, 7);
    assert!(e.is_present() && n == 1);
    // The parent is the page's last sharer: its write takes the page over without a copy.
    k.touch(&mut zt, zheap, 7, true);
    assert_eq!(k.vmstat.cow_fault, 1);
    assert_eq!(k.vmstat.cow_reuse, 1);
    assert_eq!(k.nr_free(), free - 1);
    // The parent writes a page still shared: it copies too (Linux semantics).
    k.touch(&mut zt, zheap, 8, true);
    assert_eq!(k.vmstat.cow_fault, 2);
    assert_eq!(k.nr_free(), free - 2);
    // ... and the child, now the last sharer of page 8, reuses it.
    k.touch(&mut t, heap, 8, true);
    assert_eq!(k.vmstat.cow_reuse, 2);
    assert_eq!(k.nr_free(), free - 2);
    // A write to an untouched page of the child is an ordinary anonymous fault.
    k.touch(&mut t, heap, HEAP + 20, true);
    assert_eq!(k.vmstat.cow_fault, 2);
    assert_eq!(k.nr_free(), free - 3);
    let u = k.proc_usage(c);
    assert_eq!(u.anon, HEAP as u64 + 1);
    assert_eq!(u.anon_shared, HEAP as u64 - 2);
    k.check_invariants().unwrap();
}

#[test]
fn ten_reading_children_use_about_one_copy() {
    let mut k = kernel(&[]);
    let (z, _, _) = zygote(&mut k);
    let free = k.nr_free();
    let mut kids = Vec::new();
    for pid in 2..12 {
        let (c, heap, mut t) = fork(&mut k, z, pid);
        k.touch_range(&mut t, heap, 0, HEAP, false);
        kids.push(c);
    }
    let used = free - k.nr_free();
    assert!(used <= 8, "ten reading children took {used} pages");
    // One COW object serves all the forks (no parent write in between).
    assert_eq!(k.mappings.iter().filter(|m| m.cow_object).count(), 1);
    let pss: f64 = kids.iter().map(|&c| k.proc_usage(c).pss).sum::<f64>() + k.proc_usage(z).pss - k.proc_usage(z).file as f64;
    assert!((pss - HEAP as f64).abs() < 1e-3, "PSS sums to {pss}");
    for &c in &kids {
        assert!((k.proc_usage(c).pss - HEAP as f64 / 11.0).abs() < 1e-6);
    }
    k.check_invariants().unwrap();
}

#[test]
fn shared_page_swapped_out_is_swapped_in_once_for_everyone() {
    let mut k = kernel(&[]);
    let (z, zheap, mut zt) = zygote(&mut k);
    // Swap the zygote's heap out, then fork: the swap entries are shared.
    k.madvise(&mut zt, zheap, 0, HEAP, Advice::PageOut).unwrap();
    assert_eq!(k.vmstat.pswpout, HEAP as u64);
    let slots = k.swap.nr_used();
    let (c1, h1, mut t1) = fork(&mut k, z, 2);
    let (c2, h2, mut t2) = fork(&mut k, z, 3);
    assert_eq!(k.swap.nr_used(), slots);
    assert_eq!(k.proc_usage(c1).swap, HEAP as u64);
    assert_eq!(k.proc_usage(c1).swap_shared, HEAP as u64);
    let pswpin = k.vmstat.pswpin;
    k.touch(&mut t1, h1, 5, false);
    assert_eq!(k.vmstat.pswpin, pswpin + 1);
    assert_eq!(k.procs[c1 as usize].stats.majflt, 1);
    assert_eq!(t1.bd.major_faults_zram, 1);
    // Resident for the parent and the other child: no fault at all.
    let faults = k.vmstat.pgfault;
    k.touch(&mut zt, zheap, 5, false);
    k.touch(&mut t2, h2, 5, false);
    assert_eq!(k.vmstat.pswpin, pswpin + 1);
    assert_eq!(k.vmstat.pgfault, faults);
    assert_eq!(k.procs[c2 as usize].stats.majflt, 0);
    // A write to a swapped shared page swaps it in once and copies it, in one major fault.
    let free = k.nr_free();
    k.touch(&mut t2, h2, 9, true);
    assert_eq!(k.vmstat.pswpin, pswpin + 2);
    assert_eq!(k.vmstat.cow_fault, 1);
    assert_eq!(k.procs[c2 as usize].stats.majflt, 1);
    assert_eq!(k.procs[c2 as usize].stats.minflt, 0);
    assert_eq!(k.nr_free(), free - 2);
    k.check_invariants().unwrap();
}

#[test]
fn reclaim_swaps_a_shared_page_out_once() {
    // 64 MiB RAM: the zygote heap (16 MiB) shared by three children, then an app writing 80 MiB
    // three times over: some shared pages age onto the inactive list and are swapped out.
    let mut k = kernel(&[("ram_mib", "64")]);
    let (z, _, _) = zygote(&mut k);
    let mut kids = Vec::new();
    for pid in 2..5 {
        let (c, heap, mut t) = fork(&mut k, z, pid);
        k.touch_range(&mut t, heap, 0, HEAP, false);
        kids.push(c);
    }
    let p = k.create_process(10, "hog", 0, 0).unwrap();
    let v = k.map_anon(p, "heap", 20480).unwrap();
    let mut t = Task::new(k.thread_of(p), p, 0);
    for page in (0..3 * 20480).map(|i| i % 20480) {
        if Some(t.now) >= k.next_event_time() {
            k.book_cpu(&mut t);
            k.advance_to(t.now);
        }
        k.touch(&mut t, v, page, true);
    }
    k.advance_to(t.now + 1_000_000_000);
    let shared_swapped = k.proc_usage(kids[0]).swap_shared;
    assert!(shared_swapped > 0, "no shared page swapped");
    // Every sharer sees the same swapped pages; each holds one slot.
    for &c in &kids {
        assert_eq!(k.proc_usage(c).swap_shared, shared_swapped);
    }
    let private_swapped = k.proc_usage(p).swap;
    assert_eq!(k.swap.nr_used(), private_swapped + shared_swapped);
    k.check_invariants().unwrap();
}

#[test]
fn killing_a_child_frees_only_its_private_pages() {
    let mut k = kernel(&[]);
    let (z, zheap, mut zt) = zygote(&mut k);
    let (c, heap, mut t) = fork(&mut k, z, 2);
    k.touch_range(&mut t, heap, 0, 100, true); // 100 COW copies
    k.touch_range(&mut t, heap, HEAP + 30, 20, true); // 20 new pages
    let free = k.nr_free();
    k.kill_process(c, "test", 0, "test", 0, 0);
    assert_eq!(k.nr_free(), free + 120);
    let rec = k.kills.last().unwrap();
    assert_eq!(rec.rss_kb, 120 * 4);
    assert_eq!(rec.shared_kb, (HEAP as u64 - 100) * 4);
    // The parent still has every page, and reads them without faults.
    let faults = k.vmstat.pgfault;
    k.touch_range(&mut zt, zheap, 0, HEAP, false);
    assert_eq!(k.vmstat.pgfault, faults);
    assert_eq!(k.nr_free(), free + 120);
    assert_eq!(k.proc_usage(z).anon, HEAP as u64);
    assert_eq!(k.proc_usage(z).anon_shared, 0);
    k.check_invariants().unwrap();
}

#[test]
fn parent_exit_leaves_pages_to_children_and_the_last_sharer_frees_them() {
    let mut k = kernel(&[]);
    let base = k.nr_free();
    let (z, _, _) = zygote(&mut k);
    let (c1, h1, mut t1) = fork(&mut k, z, 2);
    let (c2, _, _) = fork(&mut k, z, 3);
    let free = k.nr_free();
    k.exit_process(z);
    assert_eq!(k.nr_free(), free, "shared pages freed while children map them");
    let faults = k.vmstat.pgfault;
    k.touch_range(&mut t1, h1, 0, HEAP, false);
    assert_eq!(k.vmstat.pgfault, faults);
    k.exit_process(c1);
    assert_eq!(k.nr_free(), free);
    k.exit_process(c2);
    // Only the boot image stays, in the page cache.
    assert_eq!(k.nr_free(), base - 512);
    assert_eq!(k.lru.anon(), 0);
    k.check_invariants().unwrap();
}

#[test]
fn dontneed_drops_the_childs_mapping_and_reads_then_see_zeroes() {
    let mut k = kernel(&[]);
    let (z, zheap, mut zt) = zygote(&mut k);
    let (c, heap, mut t) = fork(&mut k, z, 2);
    k.touch_range(&mut t, heap, 0, 10, true); // private copies of 0..10
    let free = k.nr_free();
    let mut pt = Task::new(k.thread_of(c), c, 0);
    k.madvise(&mut pt, heap, 0, 100, Advice::DontNeed).unwrap();
    assert_eq!(k.nr_free(), free + 10);
    // The child's reads map the zero page; the parent's pages are untouched.
    k.touch_range(&mut t, heap, 0, 100, false);
    assert_eq!(k.procs[c as usize].nr_zero, 16 + 100);
    assert_eq!(k.nr_free(), free + 10);
    assert_eq!(k.proc_usage(c).anon, HEAP as u64 - 100);
    // Pages 10..100 are the parent's alone now: its write reuses them.
    k.touch_range(&mut zt, zheap, 10, 90, true);
    assert_eq!(k.vmstat.cow_reuse, 90);
    assert_eq!(k.nr_free(), free + 10);
    // PAGEOUT on the child skips pages still shared; COLD too.
    let pswpout = k.vmstat.pswpout;
    k.madvise(&mut pt, heap, 100, 200, Advice::PageOut).unwrap();
    assert_eq!(k.vmstat.pswpout, pswpout);
    k.check_invariants().unwrap();
}

#[test]
fn a_forked_child_can_fork_again() {
    let mut k = kernel(&[]);
    let (z, _, _) = zygote(&mut k);
    let (c, heap, mut t) = fork(&mut k, z, 2);
    k.touch_range(&mut t, heap, 0, 50, true);
    let free = k.nr_free();
    let (g, gheap, mut gt) = fork(&mut k, c, 3);
    k.touch_range(&mut gt, gheap, 0, HEAP, false);
    assert_eq!(k.nr_free(), free);
    assert_eq!(k.anon_entry(gheap, 0).1, 2); // the child's copy, shared with the grandchild
    assert_eq!(k.anon_entry(gheap, 60).1, 3); // the zygote's page
    k.exit_process(c);
    k.touch_range(&mut gt, gheap, 0, HEAP, true);
    assert_eq!(k.vmstat.cow_reuse, 50);
    assert_eq!(k.proc_usage(g).anon_shared, 0);
    k.check_invariants().unwrap();
}

#[test]
fn mlocked_parent_pages_stay_locked_until_the_parent_lets_go() {
    let mut k = kernel(&[]);
    let z = k.create_process(1, "zygote", -1000, 0).unwrap();
    let heap = k.map_anon(z, "heap", 256).unwrap();
    let mut zt = Task::new(k.thread_of(z), z, 0);
    k.mlock(&mut zt, heap, 0, 256);
    let (c, ch, mut t) = fork(&mut k, z, 2);
    assert!(!k.vmas[ch as usize].locked, "VM_LOCKED is not inherited");
    assert_eq!(k.lru.len[4], 256);
    k.touch_range(&mut t, ch, 0, 256, false);
    k.munlock(heap);
    assert_eq!(k.lru.len[4], 0);
    k.exit_process(c);
    k.check_invariants().unwrap();
}

#[test]
fn fork_is_deterministic() {
    let run = || {
        let mut k = kernel(&[("ram_mib", "48"), ("sample_interval_ms", "10")]);
        let (z, zheap, mut zt) = zygote(&mut k);
        let mut x = 7u64;
        let mut kids = Vec::new();
        for pid in 2..8 {
            kids.push(fork(&mut k, z, pid));
        }
        for step in 0..200_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % 7) as usize;
            let page = ((x >> 8) % HEAP as u64) as u32;
            let write = (x >> 40).is_multiple_of(8);
            let (t, v) = if i == 6 {
                (&mut zt, zheap)
            } else {
                let k = &mut kids[i];
                (&mut k.2, k.1)
            };
            if Some(t.now) >= k.next_event_time() {
                k.book_cpu(t);
                k.advance_to(t.now);
            }
            k.touch(t, v, page, write);
            if step % 50_000 == 0 {
                k.check_invariants().unwrap();
            }
        }
        k.kill_process(kids[0].0, "test", 0, "test", zt.now, 0);
        k.check_invariants().unwrap();
        k.result_json().to_string()
    };
    let a = run();
    assert_eq!(a, run());
    assert!(a.contains("\"cow_fault\""));
}

#[test]
fn fork_errors() {
    let mut k = kernel(&[]);
    let (z, _, _) = zygote(&mut k);
    assert!(k.fork_process(z, 1, "dup", 0, 0).is_err(), "pid in use");
    let c = k.fork_process(z, 2, "a", 0, 0).unwrap();
    k.exit_process(c);
    assert!(k.fork_process(c, 3, "b", 0, 0).is_err(), "fork of a dead process");
    assert!(k.fork_process(99, 4, "c", 0, 0).is_err());
    k.check_invariants().unwrap();
}

#[test]
fn a_child_starts_in_its_parents_cpuset_and_moves_with_all_its_threads() {
    let mut k = kernel(&[("cores", "4")]);
    let (z, _, _) = zygote(&mut k);
    k.set_cpuset(z, 0b0011);
    let (c, _, _) = fork(&mut k, z, 2);
    let gc = k.new_thread_in(c);
    assert_eq!(k.procs[c as usize].cpuset, 0b0011);
    assert_eq!(k.cpus.allowed(k.thread_of(c)), 0b0011);
    assert_eq!(k.cpus.allowed(gc), 0b0011, "a thread made in the process follows its cpuset");
    // Moved: every thread follows; new cores installed: the cpuset stays.
    k.set_cpuset(c, 0b1100);
    assert_eq!(k.threads_of(c).map(|t| k.cpus.allowed(t)).collect::<Vec<_>>(), vec![0b1100, 0b1100]);
    k.install_cpus(mobmem_engine::CpuSet::new(4));
    assert_eq!(k.cpus.allowed(gc), 0b1100);
    assert_eq!(k.cpus.allowed(k.thread_of(z)), 0b0011);
}
