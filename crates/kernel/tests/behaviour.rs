//! Behaviour of the kernel model on small traces: each test states a mechanism and checks that
//! the counters it drives move the way the mechanism says.

mod common;
use common::{replay, replay_stats};
use std::fmt::Write;

/// A sequential pass over `pages` of anon memory, `passes` times, writing.
fn anon_loop(ram: u64, swap: &str, pages: u32, passes: u32) -> String {
    let mut s = format!("ram {ram}\nswap {swap}\nproc 1 app\nmap 1 heap anon {pages}\n");
    for _ in 0..passes {
        for first in (0..pages).step_by(64) {
            writeln!(s, "touch 1 heap {first} {} w", 64.min(pages - first)).unwrap();
        }
    }
    s
}

#[test]
fn working_set_bigger_than_ram_swaps_out_and_refaults() {
    // 96 MiB working set, 64 MiB RAM, zram swap.
    let k = replay(&anon_loop(64, "zram 128 ratio=3", 96 * 256, 3), &[]);
    let v = &k.vmstat;
    assert!(v.pswpout > 10_000, "pswpout {}", v.pswpout);
    assert!(v.pswpin > 10_000, "pswpin {}", v.pswpin);
    assert!(v.workingset_refault_anon > 10_000, "refaults {}", v.workingset_refault_anon);
    assert!(v.pgmajfault >= v.pswpin);
    // The same working set fitting in RAM: no swap traffic at all.
    let k2 = replay(&anon_loop(256, "zram 128 ratio=3", 96 * 256, 3), &[]);
    assert_eq!(k2.vmstat.pswpout, 0);
    assert_eq!(k2.vmstat.workingset_refault_anon, 0);
}

#[test]
fn burst_below_min_direct_reclaims_slow_allocation_is_absorbed_by_kswapd() {
    // 128 MiB RAM full of clean file cache, then an anon allocation of 64 MiB.
    let mut prefix = String::from("ram 128\nswap none\nproc 1 reader\nmap 1 data file data.bin 30000\n");
    // Read slowly (≈ 50 MB/s) so that only the phase under test can outrun kswapd.
    for first in (0..30000).step_by(256) {
        writeln!(prefix, "touch 1 data {first} {}\ntick 20000", 256.min(30000 - first)).unwrap();
    }
    prefix.push_str("proc 2 app\nmap 2 heap anon 16384\n");
    // Burst: all at once.
    let mut burst = prefix.clone();
    for first in (0..16384).step_by(512) {
        writeln!(burst, "touch 2 heap {first} 512 w").unwrap();
    }
    // Slow: the same pages in 64 KiB steps 1 ms apart (64 MB/s), each step smaller than the
    // 360 KiB between the low and min watermarks of this 128 MiB machine: kswapd keeps up.
    let mut slow = prefix.clone();
    for first in (0..16384).step_by(16) {
        writeln!(slow, "touch 2 heap {first} 16 w\ntick 1000").unwrap();
    }
    let kb = replay(&burst, &[]);
    let ks = replay(&slow, &[]);
    assert!(kb.vmstat.allocstall > 0, "burst allocstall {}", kb.vmstat.allocstall);
    assert!(kb.vmstat.pgsteal_direct > 0);
    assert_eq!(ks.vmstat.allocstall, 0, "slow allocation stalled: {:?}", ks.vmstat);
    assert!(ks.vmstat.pgsteal_kswapd > 0);
}

#[test]
fn lmkd_psi_kills_cached_processes_first_oldest_first() {
    // Six "cached" apps (adj 900..950) and a foreground app that keeps allocating in a small
    // phone with little swap: lmkd must kill cached apps, least recently used first, and never
    // the foreground app while cached ones remain.
    let mut s = String::from("ram 256\nswap zram 64 ratio=3\n");
    for i in 0..6u32 {
        let pid = 10 + i;
        writeln!(s, "proc {pid} cached{i} adj=0\nmap {pid} heap anon 6000\nmap {pid} code file app{i}.apk 2000").unwrap();
        writeln!(s, "touch {pid} heap 0 6000 w\ntouch {pid} code 0 2000").unwrap();
        // Goes to background: cached, with adj rising by recency.
        writeln!(s, "adj {pid} {}\ntick 1000", 900 + i * 10).unwrap();
    }
    writeln!(s, "proc 1 fg adj=0\nmap 1 heap anon 60000\nmap 1 code file fg.apk 4000").unwrap();
    for round in 0..4 {
        for first in (0..60000u32).step_by(500) {
            writeln!(s, "touch 1 heap {first} 500 w\ntouch 1 code {} 100", (first / 500 * 100 + round) % 3900).unwrap();
            if first % 5000 == 0 {
                s.push_str("tick 10000\n");
            }
        }
    }
    let k = replay(&s, &[("kernel.lmkd", "psi")]);
    let kills: Vec<_> = k.kills.iter().filter(|k| k.killer == "lmkd").collect();
    assert!(!kills.is_empty(), "no lmkd kills; vmstat {:?}", k.vmstat);
    for w in kills.windows(2) {
        // Higher adj (less important) first; within equal importance, older first.
        assert!(w[0].oom_score_adj >= w[1].oom_score_adj, "kill order {:?}", kills);
    }
    let fg_killed_at = kills.iter().position(|x| x.name == "fg");
    if let Some(i) = fg_killed_at {
        assert_eq!(i, kills.len() - 1);
        assert!(kills[..i].len() == 6, "fg killed while cached apps lived: {kills:?}");
    }
    // The first victim is the highest-adj cached app.
    assert_eq!(kills[0].name, "cached5");
}

#[test]
fn lmkd_least_recently_used_within_an_adj_slot() {
    let mut s = String::from("ram 128\nswap zram 128 ratio=3\n");
    for i in 0..4u32 {
        let pid = 10 + i;
        writeln!(s, "proc {pid} c{i} adj=0\nmap {pid} heap anon 4000\ntouch {pid} heap 0 4000 w\nadj {pid} 900\ntick 1000").unwrap();
    }
    // The foreground app allocates at ≈ 200 MB/s, a realistic peak for an app.
    writeln!(s, "proc 1 fg\nmap 1 heap anon 40000").unwrap();
    for _ in 0..3 {
        for first in (0..40000u32).step_by(500) {
            writeln!(s, "touch 1 heap {first} 500 w\ntick 10000").unwrap();
        }
    }
    let k = replay(&s, &[("kernel.lmkd", "psi")]);
    let names: Vec<_> = k.kills.iter().filter(|x| x.killer == "lmkd").map(|x| x.name.clone()).collect();
    assert!(names.len() >= 2, "{names:?} {:?}", k.kills);
    assert_eq!(names[0], "c0", "{:?}", k.kills);
    assert_eq!(names[1], "c1");
}

/// Cached apps of different sizes in one adj slot, then a foreground app that needs more memory
/// than is free.
fn cached_then_growing_fg() -> String {
    let mut s = String::from("ram 128\nswap zram 128 ratio=3\n");
    for (i, pages) in [2000u32, 6000, 3000, 4000].iter().enumerate() {
        let pid = 10 + i as u32;
        writeln!(s, "proc {pid} c{i} adj=0\nmap {pid} heap anon {pages}\ntouch {pid} heap 0 {pages} w\nadj {pid} 950\ntick 1000").unwrap();
    }
    writeln!(s, "proc 1 fg\nmap 1 heap anon 40000").unwrap();
    for _ in 0..3 {
        for first in (0..40000u32).step_by(500) {
            writeln!(s, "touch 1 heap {first} 500 w\ntick 10000").unwrap();
        }
    }
    s
}

#[test]
fn psi_minfree_lmkd_kills_the_heaviest_by_minfree_levels_on_psi_triggers() {
    let s = cached_then_growing_fg();
    let lmkd_kills = |k: &mobmem_kernel::Kernel| k.kills.iter().filter(|x| x.killer == "lmkd").cloned().collect::<Vec<_>>();
    let k = replay(&s, &[("kernel.lmkd", "psi-minfree")]);
    let kills = lmkd_kills(&k);
    assert!(!kills.is_empty(), "no lmkd kills; vmstat {:?}", k.vmstat);
    // kill_heaviest_task: the cached app with the largest RSS goes first. By then reclaim has
    // swapped out the older ones, so that is c3, the last one used (the polled legacy mode
    // takes the least recently used one, c0, whatever its size).
    assert_eq!(kills[0].name, "c3", "{kills:?}");
    assert!(kills[1..].iter().filter(|x| x.name.starts_with('c')).all(|x| x.rss_kb < kills[0].rss_kb), "{kills:?}");
    assert!(kills.iter().all(|x| x.reason == "minfree" && x.oom_score_adj >= x.min_score_adj), "{kills:?}");
    let legacy = lmkd_kills(&replay(&s, &[("kernel.lmkd", "minfree")]));
    assert_eq!(legacy.first().map(|x| x.name.as_str()), Some("c0"), "{legacy:?}");
    // Woken by PSI only: with a trigger no stall can reach, lmkd never checks the levels.
    let quiet = replay(&s, &[("kernel.lmkd", "psi-minfree"), ("kernel.lmkd.psi_some_ms", "1000"), ("kernel.lmkd.psi_full_ms", "1000")]);
    assert!(lmkd_kills(&quiet).is_empty(), "{:?}", quiet.kills);
}

#[test]
fn balance_anon_file_reclaim_scans_anon_while_inactive_file_is_plentiful() {
    // An idle anon heap, then a large file streamed once: its pages pile up on the inactive file
    // list, so stock reclaim trims the page cache only; with the Qualcomm option anon is scanned
    // (and swapped) alongside.
    let mut s = String::from("ram 128\nswap zram 128 ratio=3\nproc 1 app\nmap 1 heap anon 12000\ntouch 1 heap 0 12000 w\nmap 1 data file d.bin 60000\n");
    for first in (0..60000u32).step_by(500) {
        writeln!(s, "touch 1 data {first} 500\ntick 1000").unwrap();
    }
    let stock = replay(&s, &[("kernel.semantics", "4.19")]);
    let balanced = replay(&s, &[("kernel.semantics", "4.19"), ("kernel.balance_anon_file_reclaim", "true")]);
    assert!(stock.vmstat.pgscan_file > 0 && balanced.vmstat.pgscan_file > 0);
    assert!(
        balanced.vmstat.pgscan_anon > stock.vmstat.pgscan_anon + 1000,
        "anon scanned: stock {}, balanced {}",
        stock.vmstat.pgscan_anon,
        balanced.vmstat.pgscan_anon
    );
    assert!(balanced.vmstat.pswpout > stock.vmstat.pswpout);
}

fn mixed(swappiness: &str) -> mobmem_kernel::Kernel {
    // Anon and file working sets together larger than RAM; both re-used.
    let mut s = String::from("ram 128\nswap zram 256 ratio=3\nproc 1 app\nmap 1 heap anon 20000\nmap 1 data file d.bin 20000\n");
    for _ in 0..4 {
        for first in (0..20000u32).step_by(250) {
            writeln!(s, "touch 1 heap {first} 250 w\ntouch 1 data {first} 250").unwrap();
        }
    }
    replay(&s, &[("kernel.swappiness", swappiness)])
}

#[test]
fn higher_swappiness_shifts_reclaim_from_file_to_anon() {
    let lo = mixed("10");
    let hi = mixed("190");
    let share = |k: &mobmem_kernel::Kernel| k.vmstat.pgsteal_anon as f64 / (k.vmstat.pgsteal_anon + k.vmstat.pgsteal_file).max(1) as f64;
    assert!(share(&hi) > share(&lo) + 0.1, "anon share of reclaim: swappiness 10 → {:.3}, 190 → {:.3}", share(&lo), share(&hi));
    assert!(hi.vmstat.pswpout > lo.vmstat.pswpout);
}

#[test]
fn no_swap_reclaims_file_only() {
    let mut s = String::from("ram 128\nswap none\nproc 1 app\nmap 1 heap anon 10000\nmap 1 data file d.bin 40000\n");
    for _ in 0..2 {
        for first in (0..40000u32).step_by(500) {
            writeln!(s, "touch 1 data {first} 500\ntouch 1 heap {} 100 w", (first / 500 * 100) % 10000).unwrap();
        }
    }
    let k = replay(&s, &[("kernel.swappiness", "200")]);
    assert_eq!(k.vmstat.pgsteal_anon, 0);
    assert!(k.vmstat.pgsteal_file > 0);
}

#[test]
fn madv_pageout_reclaims_at_once_and_touch_refaults() {
    let s = "ram 256\nswap zram 128 ratio=3\nproc 1 app\nmap 1 heap anon 1000\ntouch 1 heap 0 1000 w\nmadvise 1 heap 0 1000 pageout\n";
    let k = replay(s, &[]);
    assert_eq!(k.vmstat.pswpout, 1000);
    assert_eq!(k.mappings[0].nr_present, 0);
    assert_eq!(k.vmstat.workingset_refault_anon, 0);
    let s2 = format!("{s}touch 1 heap 0 1000\n");
    let k2 = replay(&s2, &[]);
    assert_eq!(k2.vmstat.pswpin, 1000);
    assert_eq!(k2.vmstat.workingset_refault_anon, 1000);
    assert_eq!(k2.vmstat.pgmajfault, 1000);
}

#[test]
fn madv_cold_deactivates_and_dontneed_frees() {
    let s = "ram 256\nswap zram 128\nproc 1 app\nmap 1 heap anon 1000\ntouch 1 heap 0 1000 w\nmadvise 1 heap 0 1000 dontneed\n";
    let k = replay(s, &[]);
    assert_eq!(k.mappings[0].nr_present, 0);
    assert_eq!(k.lru.total(), 0);
    // Under 4.19 semantics new anon pages start active; COLD moves them to inactive.
    let s2 = "ram 256\nswap zram 128\nproc 1 app\nmap 1 heap anon 1000\ntouch 1 heap 0 1000 w\nmadvise 1 heap 0 1000 cold\n";
    let k2 = replay(s2, &[("kernel.semantics", "4.19")]);
    assert_eq!(k2.lru.len[0], 1000);
    assert_eq!(k2.vmstat.pgdeactivate, 1000);
}

#[test]
fn anon_insertion_list_depends_on_kernel_semantics() {
    let s = "ram 256\nproc 1 app\nmap 1 heap anon 100\ntouch 1 heap 0 100 w\n";
    let old = replay(s, &[("kernel.semantics", "4.19")]);
    let new = replay(s, &[("kernel.semantics", "5.10")]);
    assert_eq!(old.lru.len[1], 100, "4.19: active_anon");
    assert_eq!(new.lru.len[0], 100, "5.9+: inactive_anon");
}

#[test]
fn file_page_read_again_after_eviction_refaults() {
    // A file read once, evicted by a scan of another file, then read again: refaults.
    let mut s = String::from("ram 64\nswap none\nproc 1 app\nmap 1 a file a.bin 4000\nmap 1 b file b.bin 30000\ntouch 1 a 0 4000\n");
    for first in (0..30000u32).step_by(500) {
        writeln!(s, "touch 1 b {first} 500").unwrap();
    }
    s.push_str("touch 1 a 0 4000\n");
    let k = replay(&s, &[]);
    assert!(k.vmstat.workingset_refault_file > 0);
}

#[test]
fn activating_file_refaults_are_counted_per_faulting_process() {
    // Process 1 keeps file c in use while it streams through file b (each chunk of b made cold
    // after its read): reclaim takes b and activates c. Then process 2 reads file a once, it is
    // evicted by more of the stream, and read again within the active list's length: every one
    // of its refaults activates, and each is counted for process 2. Process 3 read file d before
    // all of it and reads it again at the end, far beyond that distance: refaults, none activating.
    let mut s = String::from("ram 64\nswap none\nproc 1 app\nproc 2 other\nproc 3 third\nmap 1 c file c.bin 6000\nmap 2 a file a.bin 1000\nmap 1 b file b.bin 41000\nmap 3 d file d.bin 500\n");
    s.push_str("touch 3 d 0 500\nmadvise 3 d 0 500 cold\ntouch 1 c 0 6000\n");
    for first in (0..30000u32).step_by(250) {
        writeln!(s, "touch 1 b {first} 250\nmadvise 1 b {first} 250 cold").unwrap();
        if first % 500 == 0 {
            s.push_str("touch 1 c 0 6000\n");
        }
    }
    s.push_str("touch 2 a 0 1000\nmadvise 2 a 0 1000 cold\n");
    for first in (30000..41000u32).step_by(250) {
        writeln!(s, "touch 1 b {first} 250\nmadvise 1 b {first} 250 cold").unwrap();
    }
    s.push_str("touch 2 a 0 1000\ntouch 3 d 0 500\n");
    let k = replay(&s, &[]);
    let (p1, p2, p3) = (&k.procs[0].stats, &k.procs[1].stats, &k.procs[2].stats);
    assert!(k.vmstat.pgactivate >= 6000, "c activated: pgactivate {}", k.vmstat.pgactivate);
    assert_eq!((p2.refault_file, p2.activate_file), (1000, 1000), "a's refaults all activate");
    assert_eq!((p3.refault_file, p3.activate_file), (500, 0), "d's refaults are too far to activate");
    assert_eq!(p1.activate_file + p2.activate_file + p3.activate_file, k.vmstat.workingset_activate_file);
    assert_eq!(p1.refault_file + p2.refault_file + p3.refault_file, k.vmstat.workingset_refault_file);
}

#[test]
fn read_of_untouched_anon_maps_the_zero_page() {
    let k = replay("ram 64\nproc 1 app\nmap 1 heap anon 100\ntouch 1 heap 0 100 r\n", &[]);
    assert_eq!(k.lru.total(), 0);
    assert_eq!(k.vmstat.pgfault, 100);
    let k2 = replay("ram 64\nproc 1 app\nmap 1 heap anon 100\ntouch 1 heap 0 100 r\ntouch 1 heap 0 100 w\n", &[]);
    assert_eq!(k2.lru.total(), 100);
    assert_eq!(k2.vmstat.pgfault, 200);
}

#[test]
fn memcg_limit_reclaims_in_the_charging_task_without_kswapd() {
    let k = replay(&anon_loop(64, "zram 128 ratio=3", 96 * 256, 2), &[("kernel.scope", "memcg")]);
    assert_eq!(k.vmstat.pgscan_kswapd, 0);
    assert!(k.vmstat.pgscan_direct > 0);
    assert!(k.memcg_charged <= 64 * 256);
    assert_eq!(k.vmstat.allocstall, 0, "memcg reclaim is not counted as allocstall");
}

#[test]
fn oom_killer_runs_without_swap() {
    let k = replay(
        &anon_loop(32, "none", 16 * 256, 1).replace("proc 1 app", "proc 1 app\nproc 2 big\nmap 2 h anon 8000\ntouch 2 h 0 8000 w"),
        &[("kernel.lmkd", "off")],
    );
    assert!(k.vmstat.oom_kill >= 1);
    assert_eq!(k.kills[0].killer, "kernel");
}

#[test]
fn pure_lru_evicts_least_recently_touched() {
    // Capacity 4 pages is too small for RAM sizes in MiB; use 1 MiB = 256 frames and 300 pages.
    let mut s = String::from("ram 1\nswap file 16\nproc 1 app\nmap 1 heap anon 300\n");
    for p in 0..300 {
        writeln!(s, "touch 1 heap {p} 1 w").unwrap();
    }
    // Pages 44..299 are the 256 most recent; touching 0 now misses, 299 hits.
    s.push_str("touch 1 heap 299\ntouch 1 heap 0\n");
    let k = replay(&s, &[("kernel.lru", "pure")]);
    assert_eq!(k.vmstat.pgfault, 301);
    assert_eq!(k.vmstat.pswpin, 1);
}

#[test]
fn pure_lru_capacity_is_the_memcg_limit() {
    let mut s = String::from("ram 4\nswap file 16\nproc 1 app\nmap 1 heap anon 600\n");
    for _ in 0..2 {
        writeln!(s, "touch 1 heap 0 600 w").unwrap();
    }
    // 600 pages cycled through a 256-page (1 MiB) limit: every touch misses under LRU.
    let k = replay(&s, &[("kernel.lru", "pure"), ("kernel.scope", "memcg"), ("kernel.memcg_limit_mib", "1")]);
    assert_eq!(k.vmstat.pgfault, 1200);
    assert!(k.memcg_charged <= 256);
    // Without the limit (4 MiB of RAM) the second pass hits.
    let k2 = replay(&s, &[("kernel.lru", "pure")]);
    assert_eq!(k2.vmstat.pgfault, 600);
}

#[test]
fn async_readahead_continues_a_sequential_scan_without_major_faults() {
    let mut s = String::from("ram 256\nproc 1 app\nmap 1 data file big.bin 20000\n");
    for first in (0..20000u32).step_by(100) {
        writeln!(s, "touch 1 data {first} 100").unwrap();
    }
    let k = replay(&s, &[("kernel.read_ahead_kb", "512")]);
    // One synchronous read-around; every later window is started by a PG_readahead hit.
    assert_eq!(k.vmstat.pgmajfault, 1, "{:?}", k.vmstat);
    assert_eq!(k.vmstat.pgpgin, 20000 * 4);
}

#[test]
fn a_scan_faster_than_the_flash_waits_for_readahead_reads_in_flight() {
    // 20,000 file pages touched in order as fast as the CPU allows: after the first read-around
    // every page comes from asynchronous readahead, whose reads take the flash's latency and
    // transfer time. The scan cannot run ahead of them: it sleeps on pages still being read.
    let pages = 20_000u32;
    let scan = |gap_us: u32| {
        let mut s = String::from("ram 256\nproc 1 app\nmap 1 data file big.bin 20000\n");
        for first in (0..pages).step_by(100) {
            writeln!(s, "touch 1 data {first} 100").unwrap();
            if gap_us > 0 {
                writeln!(s, "tick {gap_us}").unwrap();
            }
        }
        replay_stats(&s, &[("kernel.read_ahead_kb", "512")])
    };
    let (k, fast) = scan(0);
    let transfer_ns = pages as f64 * 4096.0 * 1e9 / k.cfg.costs.flash_read_bw as f64;
    assert_eq!(k.vmstat.pgmajfault, 1, "{:?}", k.vmstat);
    assert!(fast.sim_time_ns as f64 >= 0.9 * transfer_ns, "scan took {} ns, the reads alone {transfer_ns} ns", fast.sim_time_ns);
    // With 5 ms between batches of 100 pages every read completes before its pages are touched:
    // the scan's own time is its faults' CPU, far below the transfer time.
    let (k2, slow) = scan(5_000);
    let ticks_ns = (pages / 100) as u64 * 5_000_000;
    assert_eq!(k2.vmstat.pgmajfault, 1);
    assert!(((slow.sim_time_ns - ticks_ns) as f64) < 0.5 * transfer_ns, "scan with gaps: {} ns beyond the gaps", slow.sim_time_ns - ticks_ns);
}

#[test]
fn anon_second_look_activation_since_5_9() {
    // 4096 heap pages are made inactive and unreferenced (MADV_COLD), read once, then a large
    // write creates pressure. Before 5.9 reclaim activates a referenced anon page at the first
    // look; from 5.9 the first look only marks it (PG_referenced) and it is reclaimed at the
    // second unless used again.
    let mut t = String::from("ram 64\nswap zram 256 ratio=3\nproc 1 app\nmap 1 heap anon 4096\nmap 1 big anon 20000\n");
    t.push_str("touch 1 heap 0 4096 w\nmadvise 1 heap 0 4096 cold\ntouch 1 heap 0 4096 r\n");
    for first in (0..20000u32).step_by(500) {
        writeln!(t, "touch 1 big {first} 500 w").unwrap();
    }
    let old = replay(&t, &[("kernel.semantics", "4.19")]);
    let new = replay(&t, &[("kernel.semantics", "6.1")]);
    assert!(old.vmstat.pgactivate >= 4000, "4.19 pgactivate {}", old.vmstat.pgactivate);
    assert!(new.vmstat.pgactivate < 400, "6.1 pgactivate {}", new.vmstat.pgactivate);
}

#[test]
fn flash_swap_keeps_slot_on_read_swapin_and_skips_rewrite() {
    // Page-out starts asynchronous writeback; the pages stay in the swap cache (a read is a minor
    // fault). Once clean with a valid slot, a page-out frees them without writing again, and a
    // read swap-in keeps the slot, so the next page-out is free too.
    let s = "ram 256\nswap file 128\nproc 1 app\nmap 1 heap anon 100\ntouch 1 heap 0 100 w\nmadvise 1 heap 0 100 pageout\ntick 100000\ntouch 1 heap 0 100 r\nmadvise 1 heap 0 100 pageout\n";
    let k = replay(s, &[]);
    assert_eq!(k.vmstat.pswpout, 100);
    assert_eq!(k.vmstat.pswpin, 0);
    assert_eq!(k.vmstat.pgmajfault, 0);
    assert_eq!(k.mappings[0].nr_present, 0);
    let s2 = format!("{s}touch 1 heap 0 100 r\nmadvise 1 heap 0 100 pageout\n");
    let k2 = replay(&s2, &[]);
    assert_eq!(k2.vmstat.pswpin, 100);
    assert_eq!(k2.vmstat.pswpout, 100);
    assert_eq!(k2.mappings[0].nr_present, 0);
    // A write swap-in drops the slot: the next page-out writes again.
    let s3 = format!("{s}touch 1 heap 0 100 w\nmadvise 1 heap 0 100 pageout\n");
    let k3 = replay(&s3, &[]);
    assert_eq!(k3.vmstat.pswpout, 200);
}

#[test]
fn zram_pool_occupies_ram() {
    let k = replay("ram 256\nswap zram 128 ratio=4\nproc 1 app\nmap 1 heap anon 4096\ntouch 1 heap 0 4096 w\nmadvise 1 heap 0 4096 pageout\n", &[]);
    // 16 MiB at ratio 4 → about 4 MiB of pool.
    let mi = k.meminfo();
    assert!((3500..4800).contains(&mi.ZramPool), "pool {} kB", mi.ZramPool);
    assert!(k.frames_conserved());
}

#[test]
fn same_seed_same_result_and_seed_matters_for_zram() {
    let t = anon_loop(64, "zram 128 ratio=3", 96 * 256, 2);
    let a = replay(&t, &[]).result_json();
    let b = replay(&t, &[]).result_json();
    assert_eq!(a, b);
    let c = replay(&t, &[("kernel.seed", "2")]).result_json();
    assert_ne!(a["meminfo"]["ZramComprData"], c["meminfo"]["ZramComprData"]);
}

#[test]
fn mlocked_pages_are_unevictable() {
    use mobmem_kernel::{Kernel, KernelConfig, Task};
    let mut cfg = KernelConfig::default();
    cfg.set("ram_mib", "32").unwrap();
    cfg.set("swap", "zram").unwrap();
    cfg.set("swap_mib", "64").unwrap();
    let mut k = Kernel::new(cfg).unwrap();
    let p = k.create_process(1, "a", 0, 0).unwrap();
    let locked = k.map_anon(p, "locked", 1024).unwrap();
    let heap = k.map_anon(p, "heap", 12000).unwrap();
    let mut t = Task::new(k.thread_of(p), p, 0);
    k.mlock(&mut t, locked, 0, 512);
    for pg in 512..1024 {
        k.touch(&mut t, locked, pg, true); // later faults in a locked VMA are locked too
    }
    assert_eq!(k.lru.len[4], 1024);
    for pg in 0..12000 {
        if Some(t.now) >= k.next_event_time() {
            k.book_cpu(&mut t);
            k.advance_to(t.now);
        }
        k.touch(&mut t, heap, pg, true);
    }
    k.check_invariants().unwrap();
    assert!(k.vmstat.pswpout > 1000);
    assert_eq!(k.mappings[0].nr_present, 1024, "locked pages were reclaimed");
    k.munlock(locked);
    assert_eq!(k.lru.len[4], 0);
    k.check_invariants().unwrap();
}

#[test]
fn task_cpu_total_counts_work_faults_and_reclaim_but_not_io_waits() {
    use mobmem_kernel::{Kernel, KernelConfig, Task};
    let mut cfg = KernelConfig::default();
    cfg.set("ram_mib", "64").unwrap();
    cfg.set("swap", "file").unwrap();
    cfg.set("swap_mib", "64").unwrap();
    let mut k = Kernel::new(cfg).unwrap();
    let p = k.create_process(1, "a", 0, 0).unwrap();
    let v = k.map_anon(p, "h", 100).unwrap();
    let mut t = Task::new(k.thread_of(p), p, 0);
    for pg in 0..100 {
        k.touch(&mut t, v, pg, true);
    }
    assert_eq!(t.cpu_total_ns, t.now, "only CPU so far");
    let f = k.map_file(p, "code", "lib.so", 100, true).unwrap();
    let before = (t.cpu_total_ns, t.now);
    k.touch(&mut t, f, 50, false); // file major fault: mostly waiting for the flash read
    let cpu = t.cpu_total_ns - before.0;
    let elapsed = t.now - before.1;
    assert!(cpu > 0 && cpu < elapsed / 10, "cpu {cpu} elapsed {elapsed}");
}

#[test]
fn direct_reclaim_waits_for_swap_writeback_instead_of_rescanning() {
    // An anon working set twice RAM written in one burst onto a flash swap file: reclaim starts
    // writeback, and until it completes the inactive anon list holds pages that cannot be freed.
    // Direct reclaimers sleep until writeback batches complete (should_reclaim_retry's
    // congestion_wait; reclaim_throttle) instead of rescanning the same pages at every priority
    // and declaring OOM. Without the throttle this trace scanned 548k pages, stole none and
    // OOM-killed the writer.
    let pages = 128 * 256;
    let k = replay(&anon_loop(64, "file 256", pages, 1), &[]);
    let v = &k.vmstat;
    assert_eq!(v.oom_kill, 0, "premature OOM while writeback was in flight: {v:?}");
    assert!(v.pswpout >= (pages - 64 * 256) as u64, "pswpout {}", v.pswpout);
    assert!(v.pgscan_direct < 4 * pages as u64, "direct reclaim scanned {} pages: {v:?}", v.pgscan_direct);
}

#[test]
fn read_around_backs_off_after_lots_of_misses_only_without_fault_around() {
    // Single pages 64 apart (farther than a read-around window) in a shuffled order: every touch
    // misses. With fault-around (the default), each miss's retry maps its block's newly read
    // pages, hits that cancel the miss, so read-around never stops: 400 windows of 32 pages, as
    // in Linux 4.19. Without fault-around nothing cancels the misses: after MMAP_LOTSAMISS of
    // them a miss reads its own page only.
    // 151 is prime to 400: a permutation of 0..400.
    let order: Vec<u32> = (0..400u32).map(|i| (i * 151) % 400).collect();
    let mut s = String::from("ram 256\nproc 1 app\nmap 1 code file app.apk 25600\n");
    for &i in &order {
        writeln!(s, "touch 1 code {} 1", i * 64).unwrap();
    }
    let k = replay(&s, &[("kernel.read_ahead_kb", "128")]);
    assert_eq!(k.vmstat.pgmajfault, 400);
    assert!(k.vmstat.pgpgin / 4 >= 400 * 31, "read {} pages", k.vmstat.pgpgin / 4);
    let k2 = replay(&s, &[("kernel.read_ahead_kb", "128"), ("kernel.fault_around_bytes", "4096")]);
    let read_pages = k2.vmstat.pgpgin / 4;
    assert_eq!(k2.vmstat.pgmajfault, 400);
    let around = 101 * 32;
    assert!(read_pages <= around as u64 + 299, "read {read_pages} pages");
    assert!(read_pages >= around as u64 - 101, "read {read_pages} pages");
}

#[test]
fn smaps_counts_every_touched_anon_page_once_resident_or_in_swap() {
    // 96 MiB of heap written in 64 MiB of RAM: part of it ends in zram. Every written page is
    // either resident or in swap; the file VMA's RSS is the cached pages it mapped (the pages it
    // touched and their fault-around neighbours), never more than its size.
    let mut s = anon_loop(64, "zram 128 ratio=3", 96 * 256, 1);
    s.push_str("map 1 code file app.apk 4096\ntouch 1 code 0 1000\n");
    let k = replay(&s, &[]);
    let pi = k.proc_index(1).unwrap();
    let m = k.smaps(pi);
    let heap = m.iter().find(|u| u.name == "heap").unwrap();
    assert!(!heap.file && heap.pages == 96 * 256);
    assert!(heap.swap_pages > 0, "{heap:?}");
    assert_eq!(heap.rss_pages + heap.swap_pages, 96 * 256, "{heap:?}");
    let code = m.iter().find(|u| u.name == "code").unwrap();
    assert!(code.file && code.swap_pages == 0);
    assert!(code.rss_pages <= 4096 && code.rss_pages > 0, "{code:?}");
    assert!(k.smaps(pi + 100).is_empty());
    // An exited process has no memory to report (its VMAs are torn down).
    s.push_str("exit 1\n");
    let k = replay(&s, &[]);
    assert!(k.smaps(k.proc_index(1).unwrap()).is_empty());
}

#[test]
fn sizes_the_host_cannot_hold_are_refused_before_allocation() {
    use mobmem_kernel::{Kernel, KernelConfig};
    let err = |c: KernelConfig| Kernel::new(c).err().map(|e| e.to_string()).unwrap_or_default();
    let base = KernelConfig::default();
    // 100 TB of swap would need gigabytes of slot state: refused, naming the key and its limit.
    let e = err(KernelConfig { swap: mobmem_kernel::config::SwapKind::File, swap_pages: 100 << 28, ..base.clone() });
    assert!(e.contains("kernel.swap_mib") && e.contains("65536"), "{e}");
    let e = err(KernelConfig { ram_pages: 1 << 40, ..base.clone() });
    assert!(e.contains("kernel.ram_mib") && e.contains("65536"), "{e}");
    // A min watermark above all of memory.
    let e = err(KernelConfig { min_free_kbytes: base.ram_pages * 4, ..base.clone() });
    assert!(e.contains("kernel.min_free_kbytes"), "{e}");
    assert!(Kernel::new(base).is_ok());
}

#[test]
fn a_timeline_far_beyond_its_run_stays_bounded() {
    use mobmem_kernel::mmzone::SERIES_CAP;
    use mobmem_kernel::{Kernel, KernelConfig};
    // Sampling every millisecond over 3 × SERIES_CAP ms: the series is decimated (every other
    // sample dropped, the interval doubled) instead of growing without bound.
    let mut k = Kernel::new(KernelConfig { sample_interval_ns: 1_000_000, ..KernelConfig::default() }).unwrap();
    k.advance_to(3 * SERIES_CAP as u64 * 1_000_000);
    let s = &k.series;
    assert!(s.len() < SERIES_CAP && s.len() > SERIES_CAP / 4, "{} samples", s.len());
    assert!(k.cfg.sample_interval_ns >= 2_000_000);
    assert!(s.time_ms.windows(2).all(|w| w[1] > w[0]), "samples stay in time order");
    assert_eq!(s.len(), s.free_kb.len());
    assert_eq!(s.len(), s.procs_alive.len());
}

#[test]
fn reclaim_that_waits_on_slow_swap_writeback_counts_towards_the_oom_killer() {
    // 48 MiB of anon memory written into 32 MiB of RAM with a 64 MiB flash swap file whose
    // writes crawl (1 MB/s): reclaim can only start writeback, which frees nothing for seconds.
    // As in 4.7+'s should_reclaim_retry, each direct-reclaim round without progress counts, waiting
    // on writeback or not, so the OOM killer runs with most of the swap file free; at a normal
    // write speed the same work swaps out and nobody is killed.
    let trace = anon_loop(32, "file 64", 48 * 256, 1).replace("proc 1 app", "proc 1 app\nproc 2 other\nmap 2 h anon 2000\ntouch 2 h 0 2000 w");
    let slow = replay(&trace, &[("kernel.lmkd", "off"), ("kernel.cost.flash_write_bw", "1048576")]);
    assert!(slow.vmstat.oom_kill >= 1, "{:?}", slow.vmstat);
    assert!(slow.swap.nr_free() > slow.swap.nr_used(), "killed with swap free");
    let fast = replay(&trace, &[("kernel.lmkd", "off")]);
    assert_eq!(fast.vmstat.oom_kill, 0, "{:?}", fast.vmstat);
    assert!(fast.vmstat.pswpout > 1000);
}
