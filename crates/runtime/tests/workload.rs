//! The mutator workload model produces heaps with the configured properties.
//! Tolerances: near-root byte share within ±2 percentage points of `near_root_share`; survival
//! (objects still reachable 1–5 MiB after allocation) within ±5 pp of `1 − temp_share` (medium-
//! lived units evicted and long-lived units replaced in that span account for ~2 pp); bytes by
//! size class of the objects that died within ±3 pp of the configured mix; the survivors' mean
//! size within ±15 % of `survivor_object_bytes`.

#![allow(clippy::field_reassign_with_default, clippy::needless_range_loop, clippy::unnecessary_cast, clippy::while_let_loop)]

use mobmem_kernel::{Kernel, KernelConfig};
use mobmem_runtime::config::{CollectorKind, Grain};
use mobmem_runtime::workload::{android_size_mix, near_root_bytes, reachable_set, survivor_count_probs, AppProfile, SizeClass, Workload};
use mobmem_runtime::{AppState, Runtime, RuntimeConfig};

fn nogc(heap_mib: u64) -> (Kernel, Runtime) {
    nogc_grain(heap_mib, Grain::Unit)
}

fn nogc_grain(heap_mib: u64, grain: Grain) -> (Kernel, Runtime) {
    let mut k = Kernel::new(KernelConfig::default()).unwrap();
    let mut c = RuntimeConfig::default();
    c.fg_collector = CollectorKind::NoGc;
    c.bg_collector = CollectorKind::NoGc;
    c.heap.growth_limit = heap_mib << 20;
    c.heap.capacity = heap_mib << 20;
    c.heap.boot_image_bytes = 256 << 10;
    c.heap.zygote_space_bytes = 64 << 10;
    c.grain = grain;
    let rt = Runtime::new(&mut k, 7, "app", 0, c, 0).unwrap();
    (k, rt)
}

#[test]
fn near_root_share_matches_the_profile() {
    for share in [0.05, 0.10, 0.20] {
        let (mut k, mut rt) = nogc(64);
        let p = AppProfile { live_heap: 12 << 20, near_root_share: share, native_anon: 0, file_bytes: 0, ..AppProfile::default() };
        let mut w = Workload::new(p);
        w.build(&mut rt, &mut k);
        let (near, all) = near_root_bytes(&rt, 2);
        let got = near as f64 / all as f64;
        assert!((got - share).abs() < 0.02, "near-root share {got:.3} for {share}");
        assert!((all as f64 - (12 << 20) as f64).abs() < 0.1 * (12 << 20) as f64, "structure {all} bytes");
    }
}

#[test]
fn survival_and_size_mix_match_the_profile() {
    // Object grain keeps the record of every object ever allocated under NoGc; unit grain frees the
    // records of dead units at once (their bytes stay accounted), and this test reads records.
    let (mut k, mut rt) = nogc_grain(96, Grain::Object);
    let p = AppProfile { live_heap: 4 << 20, native_anon: 0, file_bytes: 0, ..AppProfile::default() };
    let temp = p.temp_share;
    let mix = p.size_mix.clone();
    let survivor = p.survivor_object_bytes;
    let mut w = Workload::new(p);
    w.build(&mut rt, &mut k);
    let c1 = rt.heap.alloc_clock + (4 << 20);
    let c2 = c1 + (4 << 20);
    let end = c2 + (1 << 20);
    while rt.heap.alloc_clock < end {
        assert!(w.unit_of_work(&mut rt, &mut k));
    }
    let reach = reachable_set(&rt);
    let (mut alloc, mut live, mut live_objects) = (0u64, 0u64, 0u64);
    let (mut dead, mut dead_objects) = (0u64, 0u64);
    // Bytes by size class of the objects that died (temporaries, drawn from the allocation mix).
    let mut by_class = vec![0u64; mix.len()];
    for o in rt.heap.objs.live_ids() {
        let c = rt.heap.objs.alloc_clock(o);
        if c < c1 || c >= c2 {
            continue;
        }
        let s = rt.heap.objs.size(o) as u64;
        alloc += s;
        if reach.contains(&o) {
            live += s;
            live_objects += 1;
            continue;
        }
        dead += s;
        dead_objects += 1;
        if let Some(i) = mix.iter().position(|m| (m.lo as u64..=m.hi as u64).contains(&s) || (m.lo <= 16 && s <= 16)) {
            by_class[i] += s;
        }
    }
    // Lifetime shares are shares of objects (docs/runtime.md: "54–88% of objects die…").
    let survival = live_objects as f64 / (live_objects + dead_objects) as f64;
    assert!((survival - (1.0 - temp)).abs() < 0.05, "survival {survival:.3}, expected about {:.3}", 1.0 - temp);
    assert!(live + dead == alloc);
    let total: u64 = by_class.iter().sum();
    assert!(total as f64 > 0.97 * dead as f64, "sizes outside the mix");
    for (m, b) in mix.iter().zip(&by_class) {
        let got = *b as f64 / total as f64;
        assert!((got - m.byte_share).abs() < 0.03, "class {}..{}: {got:.3} vs {}", m.lo, m.hi, m.byte_share);
    }
    // Survivors are larger: their mean is the profile's survivor size (±15 %: the window also
    // holds temporaries still alive at its end, and large objects are counted too), well above
    // the temporaries' mean.
    let (live_mean, dead_mean) = (live as f64 / live_objects as f64, dead as f64 / dead_objects as f64);
    assert!((live_mean / survivor - 1.0).abs() < 0.15, "survivors' mean {live_mean:.1} B vs {survivor} B");
    assert!(live_mean > 1.25 * dead_mean, "survivors {live_mean:.1} B, temporaries {dead_mean:.1} B");
}

#[test]
fn survivor_size_mix_reaches_its_mean_and_keeps_large_objects() {
    let mix = android_size_mix();
    let base = survivor_count_probs(&mix, 0.0);
    let small_mean = |p: &[f64]| {
        let (mut n, mut b) = (0.0, 0.0);
        for (c, x) in mix.iter().zip(p) {
            if c.lo < 12 * 1024 {
                n += x;
                b += x * c.mean_bytes();
            }
        }
        b / n
    };
    assert!(small_mean(&base) < 40.0, "allocation mix mean {:.1}", small_mean(&base));
    for target in [30.0, 52.0, 80.0] {
        let p = survivor_count_probs(&mix, target);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        assert!((small_mean(&p) - target).abs() < 0.01, "mean {:.3} for {target}", small_mean(&p));
        assert_eq!(p.last(), base.last(), "the large-object class keeps its probability");
    }
    // One object size: nothing to tilt.
    let one = vec![SizeClass { lo: 512, hi: 512, byte_share: 1.0 }];
    assert_eq!(survivor_count_probs(&one, 52.0), vec![1.0]);
}

#[test]
fn synthetic_app_has_one_object_size_and_a_fixed_footprint() {
    let (mut k, mut rt) = nogc(64);
    let p = AppProfile::synthetic("synthetic:footprint=8m,objsize=512").unwrap();
    assert!(AppProfile::synthetic("synthetic:footprint=8m,bogus=1").is_err());
    let mut w = Workload::new(p);
    w.build(&mut rt, &mut k);
    let (_, all0) = near_root_bytes(&rt, 2);
    for _ in 0..120 {
        assert!(w.unit_of_work(&mut rt, &mut k));
    }
    let (_, all1) = near_root_bytes(&rt, 2);
    assert!((all1 as f64 - all0 as f64).abs() < 0.05 * all0 as f64, "footprint drifted {all0} → {all1}");
    let sizes: std::collections::BTreeSet<u32> =
        rt.heap.objs.live_ids().filter(|&o| rt.heap.objs.alloc_clock(o) > rt.heap.alloc_clock / 2).map(|o| rt.heap.objs.size(o)).collect();
    assert_eq!(sizes.into_iter().collect::<Vec<_>>(), vec![512]);
}

#[test]
fn a_large_heap_app_is_limited_by_heapsize_not_the_growth_limit() {
    let device = mobmem_runtime::RuntimeConfig::default();
    assert!(device.heap.growth_limit < device.heap.capacity);
    // Synthetic apps declare largeHeap unless told otherwise; an app without it keeps the growth limit.
    let large = AppProfile::synthetic("synthetic:footprint=180m").unwrap();
    assert_eq!(large.runtime_config(&device).heap.limit(), device.heap.capacity);
    let normal = AppProfile::synthetic("synthetic:footprint=180m,largeheap=false").unwrap();
    assert_eq!(normal.runtime_config(&device).heap.limit(), device.heap.growth_limit);
    assert_eq!(AppProfile::default().runtime_config(&device).heap.limit(), device.heap.growth_limit);
    // The device-wide setting still gives every app the large heap.
    let mut all = device.clone();
    all.heap.large_heap = true;
    assert_eq!(normal.runtime_config(&all).heap.limit(), device.heap.capacity);
}

#[test]
fn synthetic_spec_churn_sets_the_rates_unless_they_are_given() {
    let p = AppProfile::synthetic("synthetic:footprint=160m,objsize=512,churn=0.05").unwrap();
    assert_eq!(p.live_heap, 160 << 20);
    assert_eq!(p.alloc_rate_fg, (160u64 << 20) / 20);
    assert_eq!(p.alloc_rate_bg, p.alloc_rate_fg / 16);
    let q = AppProfile::synthetic("synthetic:footprint=160m,churn=0.05,rate=1m,alloc_rate_bg=4k").unwrap();
    assert_eq!((q.alloc_rate_fg, q.alloc_rate_bg), (1 << 20, 4 << 10));
    // the default churn is 1% of the footprint per second
    assert_eq!(AppProfile::synthetic("synthetic:footprint=100m").unwrap().alloc_rate_fg, (100u64 << 20) / 100);
    for (bad, says) in [
        ("synthetic:footprint=-1m,objsize=512", "footprint"),
        ("synthetic:footprint=1m,size=5", "unknown key \"size\""),
        ("synthetic:footprint=1m,churn=2", "churn"),
        ("synthetic:footprint=256,objsize=512", "at least one object"),
        ("synthetic:footprint", "key=value"),
    ] {
        let e = AppProfile::synthetic(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn a_launch_reads_its_file_pages_as_scattered_runs() {
    // 40 MiB of code/resources, 40 % read at start-up. Read as a few long runs, readahead
    // streams them in with a major fault each; read as short runs scattered over the file
    // (the default), each run that lands outside the windows already read is a major fault.
    let launch = |run_pages: f64| {
        let (mut k, mut rt) = nogc(64);
        let p = AppProfile {
            live_heap: 2 << 20,
            native_anon: 0,
            file_bytes: 40 << 20,
            launch_file_share: 0.4,
            launch_read_run_pages: run_pages,
            ..AppProfile::default()
        };
        let mut w = Workload::new(p);
        w.build(&mut rt, &mut k);
        (rt.mutator.bd.major_faults_file, k.vmstat.pgpgin / 4)
    };
    let (seq_faults, seq_read) = launch(1e6);
    let (faults, read) = launch(3.0);
    let pages = 40 * 256;
    assert!(seq_faults <= 5, "sequential launch: {seq_faults} major faults");
    assert!(seq_read >= (pages as f64 * 0.4) as u64, "sequential launch read {seq_read} pages");
    // 4,096 pages in runs of ~3 over 10,240 pages: hundreds of 32-page windows, most of the file.
    assert!(faults >= 150, "scattered launch: {faults} major faults");
    assert!(read > (pages as f64 * 0.6) as u64 && read <= pages as u64, "scattered launch read {read} pages");
}

/// `trim_native`: the app frees halves of its caches from the end of its hot native pages;
/// background work leaves them released, foreground use fills them again.
#[test]
fn trimmed_caches_stay_released_until_the_app_is_in_the_foreground() {
    let (mut k, mut rt) = nogc(64);
    let p = AppProfile { live_heap: 2 << 20, native_anon: 12 << 20, file_bytes: 0, ui_hidden_release_share: 0.25, ..AppProfile::default() };
    let mut w = Workload::new(p.clone());
    w.build(&mut rt, &mut k);
    let pi = rt.proc_idx as usize;
    let native = |k: &Kernel| {
        let v = k.procs[pi].vmas.iter().copied().find(|&v| k.vmas[v as usize].name == "[anon:libc_malloc]").unwrap();
        k.vma_usage(v).anon
    };
    let pages = (12u64 << 20) / 4096;
    let hot = (pages as f64 * p.native_hot_share + 1e-9).floor() as u64;
    let half = (hot as f64 * 0.25) as u64;
    assert_eq!(native(&k), pages, "built: every native page written");
    // In the foreground (RUNNING_CRITICAL) the half goes, but nothing is kept released: use
    // fills it again, and the next trim in the background counts it again.
    w.set_state(&mut rt, AppState::Foreground);
    assert_eq!(w.trim_native(&mut rt, &mut k, 1) as u64, half);
    assert_eq!(w.trim_native(&mut rt, &mut k, 1) as u64, half);
    assert_eq!(native(&k), pages - half);
    w.set_state(&mut rt, AppState::Background);
    assert_eq!(w.trim_native(&mut rt, &mut k, 1) as u64, half, "UI_HIDDEN: half the caches");
    assert_eq!(w.trim_native(&mut rt, &mut k, 2) as u64, half, "BACKGROUND: the other half");
    assert_eq!(w.trim_native(&mut rt, &mut k, 1), 0, "a lower level frees nothing more");
    let trimmed = native(&k);
    assert_eq!(trimmed, pages - 2 * half);
    for _ in 0..200 {
        rt.mutator_idle_until(w.next_unit_at);
        assert!(w.unit_of_work(&mut rt, &mut k));
    }
    assert_eq!(native(&k), trimmed, "background work does not fill the released caches");
    w.set_state(&mut rt, AppState::Foreground);
    for _ in 0..200 {
        rt.mutator_idle_until(w.next_unit_at);
        assert!(w.unit_of_work(&mut rt, &mut k));
    }
    assert!(native(&k) > trimmed, "foreground use fills them again");
}
