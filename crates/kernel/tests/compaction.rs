//! The buddy allocator, compaction and high-order allocations (`kernel.buddy`): an order-2
//! kernel stack is served by compaction when movable pages sit in the way, and by the OOM killer
//! — with most of memory free — when unmovable pages pin every small block.

use mobmem_kernel::buddy::mt;
use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, KernelConfig, Task};

/// A 24 MiB phone with no reserved memory and lmkd off, the buddy allocator on.
fn phone(swap: bool) -> Kernel {
    let mut c = KernelConfig::default();
    c.set("ram_mib", "24").unwrap();
    c.set("lmkd", "off").unwrap();
    c.set("buddy", "true").unwrap();
    if swap {
        c.set("swap", "zram").unwrap();
        c.set("swap_mib", "64").unwrap();
    }
    Kernel::new(c).unwrap()
}

fn no_block_of_order_2(k: &Kernel) -> bool {
    (2..11).all(|o| (0..3).all(|m| k.free_blocks(o, m) == 0))
}

fn free_on(k: &Kernel, m: u8) -> u64 {
    (0..11).map(|o| k.free_blocks(o, m) << o).sum()
}

/// Process A fills memory (movable, or unmovable if asked) and drops three pages of every four;
/// process B, of the other kind, then allocates until only small free blocks are left: free
/// memory is then mostly A's holes, in blocks of order 0 and 1. Sizes follow the allocator's
/// state (page-table pages are unmovable allocations interleaved with the faults).
fn fragmented(a_unmovable: bool) -> (Kernel, [Task; 2], [u32; 2]) {
    let mut k = phone(false);
    let n = k.managed_pages() as u32;
    let high = k.watermarks().high;
    let a = k.create_process(100, "a", 0, 0).unwrap();
    let b = k.create_process(101, "b", 0, 0).unwrap();
    let va = k.map_anon(a, "heap", n).unwrap();
    let vb = k.map_anon(b, "heap", n).unwrap();
    k.set_unmovable(if a_unmovable { va } else { vb }).unwrap();
    let mut ta = Task::new(k.thread_of(a), a, 0);
    let mut tb = Task::new(k.thread_of(b), b, 0);
    // Unmovable A: 2044 pages and their 4 page-table pages fill two max-order blocks exactly.
    // Movable A: most of memory.
    let mut a_pages = 0;
    while if a_unmovable { a_pages < 2044 } else { k.nr_free() > high + 600 } {
        k.touch(&mut ta, va, a_pages, true);
        a_pages += 1;
    }
    for first in (1..a_pages).step_by(4) {
        k.madvise(&mut ta, va, first, 3.min(a_pages - first), Advice::DontNeed).unwrap();
    }
    // B: until no movable free page is left (B movable) or no block of order 2 (B unmovable,
    // whose fallbacks take the largest blocks first).
    let mut b_pages = 0;
    while if a_unmovable { free_on(&k, mt::MOVABLE) > 0 } else { !no_block_of_order_2(&k) } {
        k.touch(&mut tb, vb, b_pages, true);
        b_pages += 1;
    }
    k.check_invariants().unwrap();
    assert!(no_block_of_order_2(&k), "no free block of order 2 or more is left");
    assert!(k.nr_free() > 4 * high, "memory is far from the order-0 watermarks: {} free", k.nr_free());
    (k, [ta, tb], [va, vb])
}

#[test]
fn compaction_moves_movable_pages_to_form_an_order_2_block() {
    let (mut k, [_, mut tb], _) = fragmented(false);
    let b = 1;
    assert!(k.alloc_kernel_stacks(&mut tb, b, 1));
    assert_eq!(k.procs[b as usize].kstacks.len(), 1);
    assert_eq!(k.nr_kernel_pages - k.nr_pagetable_pages, 4);
    assert!(k.vmstat.compact_stall >= 1 && k.vmstat.compact_success >= 1, "{:?}", k.vmstat);
    assert!(k.vmstat.pgmigrate_success >= 1);
    assert_eq!(k.vmstat.oom_kill, 0);
    k.check_invariants().unwrap();
    // The stack is freed with the process, and the frames are conserved.
    k.exit_process(b);
    k.exit_process(0);
    assert_eq!(k.nr_kernel_pages, 0, "stacks and page tables are freed with their process");
    k.check_invariants().unwrap();
}

#[test]
fn unmovable_pages_in_every_block_make_the_oom_killer_run_with_memory_free() {
    let (mut k, [_, mut tb], _) = fragmented(true);
    assert_eq!(free_on(&k, mt::MOVABLE), 0, "no movable pageblock has a free page to migrate into");
    let b = 1;
    // B's stack: compaction finds no movable pageblock with free pages to migrate into, reclaim
    // has nothing (no swap), and no block of order 2 can form: the OOM killer picks B itself.
    assert!(!k.alloc_kernel_stacks(&mut tb, b, 1));
    assert_eq!(k.vmstat.oom_kill, 1);
    assert_eq!(k.vmstat.oom_kill_high_order, 1);
    assert!(k.vmstat.compact_fail >= 1);
    assert!(!k.procs[b as usize].alive);
    assert!(k.kills.iter().any(|r| r.reason.contains("order-2")), "{:?}", k.kills);
    k.check_invariants().unwrap();
}

#[test]
fn unmovable_mappings_take_unmovable_pageblocks() {
    let mut k = phone(false);
    let a = k.create_process(100, "a", 0, 0).unwrap();
    let v = k.map_anon(a, "gfx", 300).unwrap();
    k.set_unmovable(v).unwrap();
    let mut t = Task::new(k.thread_of(a), a, 0);
    k.touch_range(&mut t, v, 0, 300, true);
    // The first unmovable page (the area's page-table page) stole a whole max-order block: the
    // rest of it is on the unmovable lists, less the 300 pages.
    assert_eq!(k.nr_pagetable_pages, 1);
    assert_eq!(free_on(&k, mt::UNMOVABLE), 1024 - 301);
    assert!(k.set_unmovable(v).is_err(), "a touched mapping cannot change type");
    k.check_invariants().unwrap();
}
