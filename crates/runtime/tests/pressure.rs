//! GC under memory pressure: a background app whose heap pages were swapped out runs a full
//! collection; its GC thread takes the major faults and pswpin rises by about the number of pages
//! holding live objects (the pages it traced). The same collection without pressure takes none.

#![allow(clippy::field_reassign_with_default, clippy::needless_range_loop, clippy::unnecessary_cast, clippy::while_let_loop)]

use mobmem_kernel::madvise::Advice;
use mobmem_kernel::{Kernel, KernelConfig, Task};
use mobmem_runtime::config::CollectorKind;
use mobmem_runtime::object::{AppState, SpaceId};
use mobmem_runtime::workload::{reachable_set, AppProfile, Workload};
use mobmem_runtime::{GcCause, GcType, Runtime, RuntimeConfig};
use std::collections::HashSet;

fn run(kind: CollectorKind, pressure: bool) -> (u64, u64, u64, u64) {
    let mut kc = KernelConfig::default();
    kc.set("ram_mib", "2048").unwrap();
    kc.set("swap", "zram").unwrap();
    kc.set("swap_mib", "1024").unwrap();
    kc.set("zram.same_page_fraction", "0").unwrap();
    let mut k = Kernel::new(kc).unwrap();
    let mut c = RuntimeConfig::default();
    c.fg_collector = kind;
    c.bg_collector = kind;
    c.transition_gc = false;
    c.heap.boot_image_bytes = 256 << 10;
    c.heap.zygote_space_bytes = 64 << 10;
    let mut rt = Runtime::new(&mut k, 9, "bgapp", 0, c, 0).unwrap();
    let p = AppProfile { live_heap: 8 << 20, native_anon: 0, file_bytes: 0, ..AppProfile::default() };
    let mut w = Workload::new(p);
    w.build(&mut rt, &mut k);
    let t = rt.mutator.now;
    assert!(w.run_until(&mut rt, &mut k, t + 500_000_000));
    rt.finish(&mut k);
    w.set_state(&mut rt, AppState::Background);
    // Pages holding live objects now: what a full collection must read.
    let reach = reachable_set(&rt);
    let mut pages = HashSet::new();
    for &o in &reach {
        let sp = rt.heap.objs.space(o);
        if sp < SpaceId::Zygote as u8 {
            let a = rt.heap.objs.addr(o);
            for p in a / 4096..=(a + rt.heap.objs.size(o) as u64 - 1) / 4096 {
                pages.insert((sp, p));
            }
        }
    }
    if pressure {
        // Reclaim swaps the app's heap out (as CachedAppOptimizer's PAGEOUT would).
        let mut sys = Task::new(k.new_thread(), rt.proc_idx, rt.mutator.now);
        for sp in 0..3 {
            let v = rt.heap.vma[sp];
            let n = k.vmas[v as usize].npages;
            k.madvise(&mut sys, v, 0, n, Advice::PageOut).unwrap();
        }
    }
    let pswpin0 = k.vmstat.pswpin;
    rt.collect_blocking(&mut k, GcCause::Explicit, GcType::Full);
    let r = rt.records.last().unwrap();
    let majors = r.gc_faults.major_faults_zram + r.gc_faults.major_faults_flash_swap;
    (k.vmstat.pswpin - pswpin0, majors, pages.len() as u64, r.gc_pages_touched)
}

#[test]
fn full_gc_of_a_swapped_out_background_app_swaps_in_what_it_traces() {
    for kind in [CollectorKind::ConcurrentCopying, CollectorKind::MarkSweep] {
        let (pswpin, majors, live_pages, touched) = run(kind, true);
        eprintln!("{kind:?}: pswpin {pswpin}, GC major faults {majors}, pages with live objects {live_pages}, GC pages touched {touched}");
        assert!(majors > 0);
        assert!(pswpin >= majors && pswpin - majors <= live_pages / 50 + 4, "swap-ins by others: {pswpin} vs {majors}");
        let err = (pswpin as f64 - live_pages as f64).abs() / live_pages as f64;
        assert!(err < 0.10, "{kind:?}: pswpin {pswpin} vs {live_pages} live pages");
        let (pswpin, majors, _, _) = run(kind, false);
        assert_eq!((pswpin, majors), (0, 0), "{kind:?} without pressure");
    }
}

#[test]
fn hot_launch_touches_near_root_and_foreground_young_objects() {
    for pressure in [true, false] {
        let mut kc = KernelConfig::default();
        kc.set("swap", "zram").unwrap();
        kc.set("swap_mib", "512").unwrap();
        let mut k = Kernel::new(kc).unwrap();
        let mut c = RuntimeConfig::default();
        c.transition_gc = false;
        c.heap.boot_image_bytes = 64 << 10;
        c.heap.zygote_space_bytes = 16 << 10;
        let mut rt = Runtime::new(&mut k, 9, "app", 0, c, 0).unwrap();
        let p = AppProfile { live_heap: 4 << 20, native_anon: 0, file_bytes: 0, ..AppProfile::default() };
        let mut w = Workload::new(p);
        w.build(&mut rt, &mut k);
        let t = rt.mutator.now;
        assert!(w.run_until(&mut rt, &mut k, t + 500_000_000));
        w.set_state(&mut rt, AppState::Background);
        assert!(!w.fyo.is_empty());
        if pressure {
            let mut sys = Task::new(k.new_thread(), rt.proc_idx, rt.mutator.now);
            let v = rt.heap.vma[0];
            let n = k.vmas[v as usize].npages;
            k.madvise(&mut sys, v, 0, n, Advice::PageOut).unwrap();
        }
        w.set_state(&mut rt, AppState::Foreground);
        let la = w.hot_launch(&mut rt, &mut k);
        assert_eq!(la.near_root as usize, w.near.len());
        assert!(la.foreground_young > 0 && la.other > 0);
        if pressure {
            assert!(la.major_faults > 100, "{la:?}");
        } else {
            assert_eq!(la.major_faults, 0);
        }
    }
}
