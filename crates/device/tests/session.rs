//! Whole-session properties of the simulator: determinism, conservation,
//! hot launches faster than cold ones, swap keeps more apps cached, pressure slows hot launches
//! by what their major faults cost, kills follow oom_score_adj order.
//!
//! Scenarios are small (short use, a small phone) so that the suite stays fast; they run the
//! full models (kernel, runtimes, ActivityManager, lmkd) with debug assertions on.

mod common;
use common::*;
use mobmem_device::session::run::run_file;
use serde_json::Value;

#[test]
fn same_seed_same_result_and_invariants_hold() {
    let text = two_passes(&APPS[..3]);
    let mut a = run("det", &text, &[]);
    let mut b = run("det", &text, &[]);
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("wall_seconds");
        v.as_object_mut().unwrap().remove("sim_speed");
    }
    assert_eq!(a, b, "same scenario and seed must give identical results");
    // A different seed changes the run (the workloads draw differently).
    let path = scenario_file("det2", &text);
    let c = run_file(&path, &data(), &uncalibrated(), Some(8)).unwrap();
    assert_ne!(a["gc"], c["gc"]);
}

#[test]
fn hot_launches_are_faster_than_cold_launches_for_every_app() {
    let v = run("hotcold", &two_passes(&APPS), &[]);
    for app in APPS {
        let mine: Vec<&Value> = launches(&v).iter().filter(|l| l["app"] == app).collect();
        let cold: Vec<f64> = mine.iter().filter(|l| l["kind"] == "cold").map(|l| l["ttid_ms"].as_f64().unwrap()).collect();
        let hot: Vec<f64> = mine.iter().filter(|l| l["kind"] == "hot").map(|l| l["ttid_ms"].as_f64().unwrap()).collect();
        assert!(!cold.is_empty() && !hot.is_empty(), "{app}: expected a cold and a hot launch, got {mine:?}");
        let worst_hot = hot.iter().cloned().fold(0.0, f64::max);
        let best_cold = cold.iter().cloned().fold(f64::MAX, f64::min);
        assert!(worst_hot < best_cold, "{app}: hot {hot:?} ms not faster than cold {cold:?} ms");
    }
}

/// A 1.5 GB phone: eight apps do not fit in RAM next to the system processes.
const SMALL: [(&str, &str); 2] = [("kernel.ram_mib", "1536"), ("kernel.reserved_mib", "100")];

#[test]
fn without_swap_fewer_apps_stay_cached() {
    let text = two_passes(&MORE);
    let with = run("swap", &text, &SMALL);
    let mut no = SMALL.to_vec();
    no.push(("kernel.swap", "none"));
    let without = run("noswap", &text, &no);
    let mean = |v: &Value| v["cached_apps"]["mean"].as_f64().unwrap();
    let relaunches = |v: &Value| launches(v).iter().filter(|l| l["relaunch"] == true).count();
    assert!(mean(&without) < mean(&with), "cached apps without swap {} vs with {}", mean(&without), mean(&with));
    assert!(relaunches(&without) > relaunches(&with), "cold relaunches without swap {} vs with {}", relaunches(&without), relaunches(&with));
    // lmkd acts on critical PSI pressure at most once per 1 s PSI window (a trigger fires once
    // per window), so such kills never come in bursts.
    for v in [&with, &without] {
        let t: Vec<f64> =
            v["kill_records"].as_array().unwrap().iter().filter(|k| k["reason"] == "critical_pressure").map(|k| k["t_s"].as_f64().unwrap()).collect();
        assert!(t.windows(2).all(|w| w[1] - w[0] >= 1.0), "critical-pressure kills closer than a PSI window: {t:?}");
    }
}

#[test]
fn pressure_slows_hot_launches_by_what_their_faults_cost() {
    let text = away_and_back(&MORE[..4], &MORE[4..]);
    let roomy = run("roomy", &text, &[("system.lmkd", "off")]);
    let mut tight = SMALL.to_vec();
    tight.push(("system.lmkd", "off"));
    let pressed = run("pressed", &text, &tight);
    let hot = |v: &Value| -> Vec<Value> { launches(v).iter().filter(|l| l["kind"] == "hot").cloned().collect() };
    let (a, b) = (hot(&roomy), hot(&pressed));
    assert_eq!(a.len(), 4);
    assert_eq!(b.len(), 4, "with lmkd off every app stays and comes back hot");
    let stall = |l: &Value| {
        let d = &l["breakdown"];
        ["major_fault_zram_ms", "major_fault_flash_swap_ms", "major_fault_file_ms", "file_read_wait_ms", "reclaim_stall_ms"]
            .iter()
            .map(|k| d[k].as_f64().unwrap())
            .sum::<f64>()
    };
    let majors = |l: &Value| {
        let d = &l["breakdown"];
        ["major_faults_zram", "major_faults_flash_swap", "major_faults_file"].iter().map(|k| d[k].as_u64().unwrap()).sum::<u64>()
    };
    let ttid = |l: &Value| l["ttid_ms"].as_f64().unwrap();
    let slower: f64 = b.iter().map(ttid).sum::<f64>() - a.iter().map(ttid).sum::<f64>();
    let explained: f64 = b.iter().map(stall).sum::<f64>() - a.iter().map(stall).sum::<f64>();
    assert!(b.iter().map(majors).sum::<u64>() > a.iter().map(majors).sum::<u64>() + 100, "pressure must cause major faults: {b:?}");
    assert!(slower > 0.0, "hot launches under pressure must be slower ({slower} ms)");
    // The extra time is the faults' and stalls' time (other parts — CPU wait, GC — may differ a little).
    assert!((slower - explained).abs() <= 0.25 * slower, "slower by {slower:.1} ms, faults and stalls explain {explained:.1} ms");
    breakdowns_sum_to_ttid(&roomy);
    breakdowns_sum_to_ttid(&pressed);
    // The version-independent refault (file refaults + swap-ins) sees the pressure whatever the
    // kernel version counts as an anon refault, and the apps' shares add up to at most it.
    let refault = |v: &Value| v["refaults"]["refault"].as_u64().unwrap();
    for v in [&roomy, &pressed] {
        assert_eq!(refault(v), v["refaults"]["file"].as_u64().unwrap() + v["swap"]["pswpin"].as_u64().unwrap());
        let apps: u64 = v["per_app"].as_object().unwrap().values().map(|p| p["refault"].as_u64().unwrap()).sum();
        assert!(apps <= refault(v), "apps' refaults {apps} exceed the total {}", refault(v));
    }
    assert!(refault(&pressed) > refault(&roomy) + 100, "pressure must make evicted pages come back: {} vs {}", refault(&pressed), refault(&roomy));
}

/// Every launch's breakdown covers its TTID to the nanosecond: the system part, CPU, CPU wait,
/// faults, reclaim stalls, GC waits and idle time (the counts and the GC thread's CPU are not
/// time of the main thread's).
fn breakdowns_sum_to_ttid(v: &Value) {
    const PARTS: [&str; 11] = [
        "system_ms",
        "cpu_ms",
        "cpu_wait_ms",
        "cpu_slow_ms",
        "minor_fault_ms",
        "major_fault_zram_ms",
        "major_fault_flash_swap_ms",
        "major_fault_file_ms",
        "file_read_wait_ms",
        "reclaim_stall_ms",
        "gc_wait_ms",
    ];
    let ls = launches(v);
    assert!(!ls.is_empty());
    for l in ls {
        let d = &l["breakdown"];
        let sum: f64 = PARTS.iter().chain(["idle_ms"].iter()).map(|k| d[k].as_f64().unwrap_or_else(|| panic!("breakdown has no {k}: {d}"))).sum();
        let ttid = l["ttid_ms"].as_f64().unwrap();
        assert!((sum - ttid).abs() < 1e-6 * ttid.max(1.0), "{} {} launch: parts sum to {sum} ms, TTID {ttid} ms ({d})", l["app"], l["kind"]);
    }
}

/// Energy by category as the result reports it, joules.
fn energy_by(v: &Value) -> std::collections::BTreeMap<String, f64> {
    v["energy"]["by_category_j"].as_object().unwrap().iter().map(|(k, x)| (k.clone(), x.as_f64().unwrap())).collect()
}

#[test]
fn frequency_scaling_stretches_work_and_energy_is_accounted_in_full() {
    let text = two_passes(&APPS[..3]);
    let top = run("gov-top", &text, &[]);
    let low = run("gov-low", &text, &[("kernel.cpufreq.governor", "powersave")]);
    let ondemand = run("gov-od", &text, &[("kernel.cpufreq.governor", "ondemand")]);
    for v in [&top, &low, &ondemand] {
        breakdowns_sum_to_ttid(v);
        // The categories are the whole: their sum is the total, and the apps' threads' energy
        // lies within the categories of app work.
        let by = energy_by(v);
        let total = v["energy"]["total_j"].as_f64().unwrap();
        assert!((by.values().sum::<f64>() - total).abs() <= 1e-9 * total, "{by:?} vs {total}");
        let apps: f64 =
            v["per_app"].as_object().unwrap().values().map(|p| p["mutator_energy_mj"].as_f64().unwrap() + p["gc_energy_mj"].as_f64().unwrap()).sum::<f64>()
                / 1e3;
        assert!(apps > 0.0 && apps <= (by["mutator"] + by["gc"] + by["kernel"]) * (1.0 + 1e-9), "apps {apps} J, {by:?}");
    }
    let stretch = |v: &Value| -> f64 { launches(v).iter().map(|l| l["breakdown"]["cpu_slow_ms"].as_f64().unwrap()).sum() };
    // At the top frequency only work placed on a slower core, while the fast ones are busy with
    // the processes running beside the launch, is stretched: a small part of the lowest
    // frequencies' stretch.
    assert!(stretch(&low) > 0.0);
    assert!(stretch(&top) * 10.0 < stretch(&low), "stretched at the top frequency {} ms, at the lowest {} ms", stretch(&top), stretch(&low));
    let cpu =
        |v: &Value| -> f64 { launches(v).iter().map(|l| l["breakdown"]["cpu_ms"].as_f64().unwrap() + l["breakdown"]["cpu_slow_ms"].as_f64().unwrap()).sum() };
    assert!(cpu(&low) > 1.5 * cpu(&top), "the lowest frequencies must slow launch work: {} vs {} ms", cpu(&low), cpu(&top));
    // Busy cores cost less per unit of work at a lower voltage and frequency.
    let busy = |v: &Value| -> f64 { energy_by(v).iter().filter(|(k, _)| *k != "idle").map(|x| x.1).sum() };
    assert!(busy(&low) < busy(&top), "{} vs {} J", busy(&low), busy(&top));
    let mhz = |v: &Value| v["energy"]["mean_mhz"]["big"].as_f64().unwrap();
    assert!(mhz(&ondemand) < mhz(&top) && mhz(&ondemand) > mhz(&low), "{} {} {}", mhz(&low), mhz(&ondemand), mhz(&top));
}

#[test]
fn lmkd_kills_follow_oom_score_adj_order() {
    // Without swap, eight apps on a 1.5 GB phone leave lmkd several kills to make.
    let v = run("kills", &two_passes(&MORE), &[SMALL[0], SMALL[1], ("kernel.swap", "none")]);
    let kills: Vec<&Value> = v["kill_records"].as_array().unwrap().iter().filter(|k| k["killer"] == "lmkd").collect();
    assert!(kills.len() >= 3, "expected lmkd kills on a 1.5 GB phone without swap and eight apps, got {kills:?}");
    // Within a burst of kills (no launch in between, so no adj changes), lmkd goes from the
    // highest oom_score_adj down; cached apps' adj grows with time since use, so the least
    // recently used cached app goes first.
    let starts: Vec<f64> = launches(&v).iter().map(|l| l["t_s"].as_f64().unwrap()).collect();
    let burst = |t: f64| starts.iter().filter(|&&s| s <= t).count();
    for w in kills.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (ta, tb) = (a["t_s"].as_f64().unwrap(), b["t_s"].as_f64().unwrap());
        if burst(ta) == burst(tb) {
            let (ja, jb) = (a["oom_score_adj"].as_i64().unwrap(), b["oom_score_adj"].as_i64().unwrap());
            assert!(ja >= jb, "lmkd killed {} (adj {ja}) before {} (adj {jb}) in the same burst", a["name"], b["name"]);
        }
        assert!(a["oom_score_adj"].as_i64().unwrap() >= a["min_score_adj"].as_i64().unwrap_or(i64::MIN));
    }
}

#[test]
fn bad_inputs_name_file_and_field() {
    let path = scenario_file("bad", &two_passes(&APPS[..1]).replace("telegram", "telegrm"));
    let e = run_file(&path, &data(), &vec![], None).unwrap_err();
    assert!(e.contains("bad.toml:") && e.contains("apps.name: unknown app \"telegrm\""), "{e}");
    let path = scenario_file("ok", &two_passes(&APPS[..1]));
    let e = run_file(&path, &data(), &vec![("system.collector".into(), "g1".into())], None).unwrap_err();
    assert!(e.contains("system.collector") && e.contains("g1"), "{e}");
    let e = run_file(&path, &data(), &vec![("kernel.swappiness".into(), "-3".into())], None).unwrap_err();
    assert!(e.contains("swappiness"), "{e}");
}

#[test]
fn cached_app_compaction_pages_out_and_freezer_stops_background_work() {
    let text = away_and_back(&APPS[..2], &APPS[2..4]);
    let stock = run("stock", &text, &[]);
    let compact = run("compact", &text, &[("system.cached_app_compaction", "true")]);
    let frozen = run("frozen", &text, &[("system.freezer", "true")]);
    let pswpout = |v: &Value| v["vmstat"]["pswpout"].as_u64().unwrap_or(0);
    let hot_majors = |v: &Value| -> u64 {
        launches(v)
            .iter()
            .filter(|l| l["kind"] == "hot")
            .map(|l| l["breakdown"]["major_faults_flash_swap"].as_u64().unwrap() + l["breakdown"]["major_faults_zram"].as_u64().unwrap())
            .sum()
    };
    // A roomy phone: nothing is swapped out unless compaction asks for it.
    assert_eq!(pswpout(&stock), 0, "no pressure, no swap-out");
    assert!(pswpout(&compact) > 10_000, "compaction pages out cached apps' anon memory: {}", pswpout(&compact));
    assert!(hot_majors(&compact) > hot_majors(&stock) + 100, "compacted apps swap their launch set back in");
    assert!(v_events(&compact, "compact") >= 2);
    // Frozen cached apps do no background work: less CPU for the apps sent to the background.
    let cpu = |v: &Value, app: &str| v["per_app"][app]["mutator_cpu_ms"].as_f64().unwrap();
    for app in &APPS[..2] {
        assert!(cpu(&frozen, app) < cpu(&stock, app), "{app}: frozen {} ms vs stock {} ms of CPU", cpu(&frozen, app), cpu(&stock, app));
    }
}

#[test]
fn idle_cached_apps_do_no_background_work_but_finish_their_collector_transition() {
    let text = away_and_back(&APPS[..2], &APPS[2..4]);
    let stock = run("stock", &text, &[]);
    let idle = run("idle", &text, &[("system.cached_app_work", "false")]);
    assert_eq!(idle["system"]["cached_app_work"], false);
    let per = |v: &Value, app: &str, key: &str| v["per_app"][app][key].as_f64().unwrap();
    for app in &APPS[..2] {
        // While cached they allocate nothing, so over the session they allocate less.
        assert!(
            per(&idle, app, "bytes_allocated") < per(&stock, app, "bytes_allocated"),
            "{app}: idle {} B vs stock {} B allocated",
            per(&idle, app, "bytes_allocated"),
            per(&stock, app, "bytes_allocated")
        );
        // The runtime still ran its collector transition after the app left the foreground.
        assert!(per(&idle, app, "transitions") >= 1.0, "{app}: no collector transition when idle");
    }
}

fn v_events(v: &Value, kind: &str) -> usize {
    v["events"].as_array().unwrap().iter().filter(|e| e["kind"] == kind).count()
}

#[test]
fn apps_share_the_zygote_space_copy_on_write() {
    use mobmem_device::session::{inputs, Session};
    let path = scenario_file("zygote", &two_passes(&APPS[..3]).replace("times = 2", "times = 1"));
    let inp = inputs::load(&path, &data(), &vec![], None).unwrap();
    let mut s = Session::boot(inp).unwrap();
    let actions = s.inp.scenario.actions.clone();
    s.execute(&actions, None).unwrap();
    let zy = s.k.vma_index(s.zygote.proc_idx, mobmem_runtime::heap::ZYGOTE_SPACE_VMA).unwrap();
    let n = s.zygote.zygote_space_pages;
    let mut shared_by_all = 0;
    let mut copied = 0;
    for a in &s.apps {
        let l = a.live.as_ref().expect("no pressure: every app is alive");
        let v = s.k.vma_index(l.proc_idx, mobmem_runtime::heap::ZYGOTE_SPACE_VMA).unwrap();
        for idx in 0..n {
            let (pte, sharers) = s.k.anon_entry(v, idx);
            assert!(pte.is_present() || pte.is_swap(), "every zygote-space page is populated");
            if sharers == 1 {
                copied += 1; // written by the app: its private copy
            }
        }
    }
    for idx in 0..n {
        if s.k.anon_entry(zy, idx).1 == 4 {
            shared_by_all += 1;
        }
    }
    // Each app copied the tenth of the zygote space that class initialisation writes; the rest
    // is one page per index for the zygote and all three apps.
    assert_eq!(copied, 3 * (n / 10) as usize);
    assert_eq!(shared_by_all, n - n / 10);
    assert_eq!(s.k.vmstat.cow_fault, 3 * (n / 10) as u64);
}

#[test]
fn file_io_steps_measure_throughput_and_check_their_fields() {
    let step = |mib: &str, mode: &str| format!("[[script]]\naction = \"file_io\"\nmib = {mib}\nmode = \"{mode}\"\n");
    let launch = format!("[[script]]\naction = \"launch\"\napp = \"{}\"\n", APPS[0]);
    let base = two_passes(&APPS[..1]);
    let v = run("io", &format!("{base}{launch}{}{}", step("64", "read"), step("64", "write")), &[]);
    let recs = v["file_io"].as_array().unwrap();
    assert_eq!(recs.len(), 2);
    let (r, w) = (&recs[0], &recs[1]);
    assert_eq!((r["mode"].as_str(), r["mib"].as_u64(), w["mode"].as_str()), (Some("read"), Some(64), Some("write")));
    // A new file is read from flash (bounded by its bandwidth); writing one reads nothing.
    let mbps = r["mb_per_s"].as_f64().unwrap();
    assert!(mbps > 1.0 && mbps < 1000.0, "{mbps} MB/s");
    assert!(r["file_read_wait_ms"].as_f64().unwrap() > 0.0 || r["major_faults"].as_u64().unwrap() > 0);
    assert_eq!(w["file_read_wait_ms"].as_f64(), Some(0.0));
    assert_eq!(w["major_faults"].as_u64(), Some(0));
    for (mib, mode, msg) in [("0", "read", "script.file_io.mib"), ("64", "append", "script.file_io.mode")] {
        let path = scenario_file("badio", &format!("{base}{launch}{}", step(mib, mode)));
        let e = run_file(&path, &data(), &vec![], None).unwrap_err();
        assert!(e.contains("badio.toml:") && e.contains(msg), "{e}");
    }
}

/// The GC service and the concurrency policies keep every invariant (debug assertions on) and
/// every launch's breakdown still covers its TTID.
#[test]
fn gc_service_and_concurrency_policies_keep_the_invariants() {
    let text = two_passes(&APPS[..3]);
    for set in [&[("system.gc_service", "true")][..], &[("runtime.gc_concurrency", "fg")], &[("runtime.gc_concurrency", "pin"), ("runtime.gc_pin_mhz", "826")]]
    {
        let v = run("gc-policies", &text, set);
        breakdowns_sum_to_ttid(&v);
        let causes: Vec<&str> = v["gcs"].as_array().unwrap().iter().map(|g| g["cause"].as_str().unwrap()).collect();
        if set[0].0 == "system.gc_service" {
            assert!(v["gc_service"]["periods"].as_u64().unwrap() > 0);
            assert!(!causes.contains(&"Background"), "{causes:?}");
        } else if set[0].1 == "fg" {
            assert!(!causes.contains(&"Background") && causes.contains(&"Alloc"), "{causes:?}");
        }
    }
}

/// A warm-up launch (`warmup = true`) is a launch like any other — recorded, counted, hot or cold
/// as the app's state says — but its time is left out of the launch statistics.
#[test]
fn warmup_launches_are_recorded_but_left_out_of_launch_statistics() {
    let apps = &APPS[..2];
    let warm = STEPS.replace(r#"app = "{app}" }"#, r#"app = "{app}", warmup = true }"#);
    let text = format!("{}[[script]]\naction = \"each\"\napps = [{}]\n{warm}\n", two_passes(apps), list(apps));
    let v = run("warmup", &text, &[]);
    let ls = launches(&v);
    assert_eq!(ls.len(), 6);
    let (measured, warmups): (Vec<&Value>, Vec<&Value>) = ls.iter().partition(|l| l.get("warmup").is_none());
    assert_eq!((measured.len(), warmups.len()), (4, 2));
    assert!(warmups.iter().all(|l| l["warmup"] == true && l["kind"] == "hot"), "{warmups:?}");
    for app in apps {
        let hot: Vec<f64> = measured.iter().filter(|l| l["app"] == *app && l["kind"] == "hot").map(|l| l["ttid_ms"].as_f64().unwrap()).collect();
        let stats = &v["launch_stats"]["hot"][*app];
        assert_eq!(stats["n"].as_u64(), Some(hot.len() as u64), "{app}: {stats}");
        assert!((stats["mean"].as_f64().unwrap() - hot.iter().sum::<f64>() / hot.len() as f64).abs() < 1e-9, "{app}: {stats}");
        assert_eq!(v["per_app"][*app]["hot_launches"].as_u64(), Some(2), "warm-ups still count as launches");
    }
    // Only a launch can be a warm-up.
    let bad = text.replacen(r#"{ action = "home" }"#, r#"{ action = "home", warmup = true }"#, 1);
    let e = run_file(&scenario_file("badwarmup", &bad), &data(), &vec![], None).unwrap_err();
    assert!(e.contains("badwarmup.toml:") && e.contains("field `warmup` does not belong to a `home` step"), "{e}");
}

/// `onTrimMemory(TRIM_MEMORY_UI_HIDDEN)`: an app sent home frees the calibrated share of its
/// native heap's used part (its caches), and nothing else changes with the knob.
#[test]
fn apps_trim_their_caches_when_their_ui_is_hidden() {
    let text = "name = \"trim\"\ndevice = \"pixel3\"\nseed = 3\n[[apps]]\nname = \"telegram\"\n\
        [[script]]\naction = \"launch\"\napp = \"telegram\"\n[[script]]\naction = \"use\"\nseconds = 2.0\n\
        [[script]]\naction = \"home\"\n[[script]]\naction = \"wait\"\nseconds = 0.5\n";
    let native = |v: &Value| -> (u64, u64) {
        let m = v["per_app"]["telegram"]["memory_at_end"].as_array().unwrap();
        let n = m.iter().find(|x| x["name"] == "[anon:libc_malloc]").unwrap();
        (n["pages"].as_u64().unwrap(), n["rss_pages"].as_u64().unwrap())
    };
    let keep = run("trim0", text, &[("calibration.ui_hidden_release_share", "0")]);
    let trim = run("trim5", text, &[("calibration.ui_hidden_release_share", "0.5")]);
    let ((pages, rss_keep), (_, rss_trim)) = (native(&keep), native(&trim));
    // Units of work touch the leading third of the native heap (native_hot_share); half of it goes.
    let hot = pages / 3;
    let freed = rss_keep - rss_trim;
    // (A few come back at once: background units still touch the used part now and then.)
    assert!(freed.abs_diff(hot / 2) <= hot / 100, "freed {freed} pages of the {hot} used ones");
    assert_eq!(keep["launches"], trim["launches"], "the launch happened before the trim");
}

#[test]
fn a_hidden_app_releases_its_window_buffers_and_keeps_its_gpu_cache_up_to_the_limit() {
    let script = |app: &str| {
        format!(
            "name = \"gfx\"\ndevice = \"pixel3\"\nseed = 3\n[[apps]]\nname = \"{app}\"\n\
             [[script]]\naction = \"launch\"\napp = \"{app}\"\n[[script]]\naction = \"use\"\nseconds = 1.0\n\
             [[script]]\naction = \"home\"\n[[script]]\naction = \"wait\"\nseconds = 0.5\n"
        )
    };
    let dev: toml::Value = toml::from_str(&std::fs::read_to_string(data().join("devices/pixel3.toml")).unwrap()).unwrap();
    let d = &dev["device"];
    let (w, h) = (d["display_px"][0].as_integer().unwrap() as u64, d["display_px"][1].as_integer().unwrap() as u64);
    let limit = (d["gpu_cache_background_mib"].as_float().unwrap() * 256.0) as u64;
    let window = (3 * 4 * w * h).div_ceil(4096);
    // A light app keeps what its cache holds beyond the window; a game's cache is cut to the limit.
    for app in ["telegram", "angrybirds"] {
        let prof: toml::Value = toml::from_str(&std::fs::read_to_string(data().join(format!("apps/{app}.toml"))).unwrap()).unwrap();
        let graphics = (prof["native"]["graphics_mib"].as_float().unwrap() * 256.0) as u64;
        let v = run(app, &script(app), &[]);
        let m = v["per_app"][app]["memory_at_end"].as_array().unwrap();
        let vma = |name: &str| m.iter().find(|x| x["name"] == name).map(|x| (x["pages"].as_u64().unwrap(), x["rss_pages"].as_u64().unwrap()));
        let kept = graphics.saturating_sub(window).min(limit);
        assert!(kept > 0, "{app}: the profile leaves no GPU cache beyond the window");
        assert_eq!(vma("[anon:graphics] gpu cache"), Some((kept, kept)), "{app}: the GPU cache stays resident");
        let (pages, rss) = vma("[anon:graphics]").unwrap();
        assert_eq!((pages, rss), (graphics - kept, 0), "{app}: window buffers and the cache above the limit go");
    }
}

#[test]
fn app_settings_on_the_command_line_apply_to_every_app_of_the_session() {
    let text = two_passes(&APPS[..2]);
    // The app's own native heap VMA, in pages, at the end of the session.
    let native = |v: &Value, app: &str| -> u64 {
        let vmas = v["per_app"][app]["memory_at_end"].as_array().unwrap_or_else(|| panic!("{app}: no memory_at_end"));
        vmas.iter().find(|m| m["name"] == "[anon:libc_malloc]").unwrap()["pages"].as_u64().unwrap()
    };
    let default = run("app-default", &text, &[]);
    let small = run("app-small", &text, &[("app.native_anon", "8m")]);
    let large = run("app-large", &text, &[("app.native_anon", "96m")]);
    for app in &APPS[..2] {
        let (d, s, l) = (native(&default, app), native(&small, app), native(&large, app));
        assert_eq!((s, l), (8 * 256, 96 * 256), "{app}: native heap pages with 8m and 96m (profile's own: {d})");
        assert_ne!(d, s, "{app}: the profile's native heap is not 8m");
    }
    // A key of the app table that is not one, a bad value, and keys that are each app's own.
    let path = scenario_file("app-bad", &text);
    let err = |k: &str, v: &str| run_file(&path, &data(), &vec![(k.into(), v.into())], None).unwrap_err();
    let e = err("app.nosuch", "1");
    assert!(e.contains("unknown setting") && e.contains("app settings") && e.contains("native_anon"), "{e}");
    assert!(err("app.native_anon", "-5m").contains("native_anon"));
    for k in ["app.name", "app.seed"] {
        assert!(err(k, "x").contains("cannot be set for all apps"), "{k}");
    }
}

/// The ActivityManager's memory factor and trim levels (`system.trim_levels`, on by default): on a phone short
/// of memory (a memtester holds most of it, lmkd kills), levels go out once a process has died
/// other than by the ActivityManager; RUNNING_* levels go only to the app on screen, and an app
/// given COMPLETE while hidden has released its GPU cache. Off, apps only get UI_HIDDEN and
/// keep their GPU cache.
#[test]
fn under_pressure_the_activity_manager_sends_trim_levels_and_apps_release_their_caches() {
    let apps = &MORE[..6];
    let text = format!(
        "name = \"test\"\ndevice = \"pixel3\"\nseed = 7\n{}\n[[script]]\naction = \"each\"\napps = [{}]\n{}\n",
        decl(apps),
        list(apps),
        STEPS.replace("2.0", "1.0")
    );
    // The memtester leaves the six apps short enough of memory that a process dies other than
    // by the ActivityManager and some app still alive at the end has been sent COMPLETE. Which
    // size does that depends on the run's dynamics (at some sizes every process dies at once or
    // no level goes out, at others each app sent COMPLETE is killed before the end), so five sizes are run,
    // every property is checked on each, and COMPLETE with the GPU cache released must be seen
    // in at least one.
    let events = |v: &Value, kind: &str| -> Vec<(f64, String, String)> {
        v["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == kind)
            .map(|e| (e["t_s"].as_f64().unwrap(), e["app"].as_str().unwrap().to_string(), e["detail"].as_str().unwrap().to_string()))
            .collect()
    };
    let gpu = |v: &Value, app: &str| -> Option<(u64, u64)> {
        let m = v["per_app"][app]["memory_at_end"].as_array()?;
        m.iter().find(|x| x["name"] == "[anon:graphics] gpu cache").map(|x| (x["pages"].as_u64().unwrap(), x["rss_pages"].as_u64().unwrap()))
    };
    let mut checked = 0;
    for memtester in ["2400", "2500", "2600", "2650", "2700"] {
        let set = [("system.memtester_mib", memtester), ("system.max_cached_processes", "8"), ("calibration.ui_hidden_release_share", "0.25")];
        // On is the default.
        let on = run("trim-levels-on", &text, &set);
        let off = run("trim-levels-off", &text, &[&set[..], &[("system.trim_levels", "false")]].concat());
        assert!(events(&off, "trim").is_empty(), "off: no trim levels");
        let trims = events(&on, "trim");
        let kills = events(&on, "kill");
        // (Only a death other than by the ActivityManager lets the level worsen; the unit tests of
        // the ActivityManager check that rule.)
        let pressed = !trims.is_empty() && kills.iter().any(|(_, _, d)| !d.contains("by activity_manager"));
        // Every level is a known one; the app on screen at the time gets a RUNNING_* level.
        for (t, app, d) in &trims {
            let level = d.trim_start_matches("onTrimMemory(").trim_end_matches(')');
            assert!(
                [
                    "TRIM_MEMORY_RUNNING_MODERATE",
                    "TRIM_MEMORY_RUNNING_LOW",
                    "TRIM_MEMORY_RUNNING_CRITICAL",
                    "TRIM_MEMORY_BACKGROUND",
                    "TRIM_MEMORY_MODERATE",
                    "TRIM_MEMORY_COMPLETE"
                ]
                .contains(&level),
                "{d}"
            );
            let on_screen = launches(&on).iter().rfind(|l| l["t_s"].as_f64().unwrap() <= *t).is_some_and(|l| l["app"] == app.as_str());
            let running = level.starts_with("TRIM_MEMORY_RUNNING");
            assert!(!running || on_screen, "{app} got {level} at {t} s while not on screen");
        }
        // The last app is previous at the end (home pressed after it): hidden, and not launched again.
        let completed: Vec<&String> = trims.iter().filter(|(_, _, d)| d.contains("TRIM_MEMORY_COMPLETE")).map(|(_, a, _)| a).collect();
        for app in apps {
            if let Some((pages, rss_off)) = gpu(&off, app) {
                assert_eq!(rss_off, pages, "off: {app} keeps its GPU cache");
            }
            let Some((pages, rss_on)) = gpu(&on, app) else { continue };
            if completed.contains(&&app.to_string()) {
                assert_eq!(rss_on, 0, "{app} got COMPLETE while hidden: its GPU cache is released");
                checked += pressed as u32;
            } else {
                assert_eq!(rss_on, pages, "{app} got no COMPLETE: its GPU cache stays");
            }
        }
    }
    assert!(checked > 0, "at no memtester size did a process die other than by the ActivityManager and an app alive at the end get COMPLETE");
}

/// With the buddy allocator (order-2 kernel stacks for the apps' threads, page tables and
/// unmovable graphics buffers, compaction) a session keeps every invariant (checked in debug
/// builds), every launch's breakdown covers its TTID, the same seed gives the same result, and
/// the stacks and page tables are allocations the run counts.
#[test]
fn buddy_allocator_sessions_keep_the_invariants() {
    let text = two_passes(&APPS[..3]);
    let set = [("kernel.buddy", "true")];
    let mut a = run("buddy", &text, &set);
    let mut b = run("buddy", &text, &set);
    breakdowns_sum_to_ttid(&a);
    for v in [&mut a, &mut b] {
        v.as_object_mut().unwrap().remove("wall_seconds");
        v.as_object_mut().unwrap().remove("sim_speed");
    }
    assert_eq!(a, b, "same scenario and seed must give identical results");
    let off = run("buddy-off", &text, &[]);
    let pgalloc = |v: &Value| v["vmstat"]["pgalloc_normal"].as_u64().unwrap();
    assert!(pgalloc(&a) > pgalloc(&off), "stacks and page tables are allocated: {} vs {}", pgalloc(&a), pgalloc(&off));
    // The free lists are recorded at each cold launch's thread start.
    let f = &a["fragmentation"];
    assert!(f["stack_batches"].as_u64().unwrap() >= 3, "{f}");
    assert!(f["min_free_pages"].as_u64().unwrap() > 0 && f["max_pagetable_pages"].as_u64().unwrap() > 0, "{f}");
    assert!(off.get("fragmentation").is_none());
}

#[test]
fn the_activity_manager_moves_processes_to_their_cpusets() {
    use mobmem_device::session::{inputs, Session};
    // Three apps launched in turn, the last one left on screen.
    let text = two_passes(&APPS[..3]).replace("times = 2", "times = 1").replace(r#", { action = "home" }]"#, "]");
    let path = scenario_file("cpusets", &text);
    for on in [true, false] {
        let set = vec![("system.cpusets".to_string(), on.to_string())];
        let mut s = Session::boot(inputs::load(&path, &data(), &set, None).unwrap()).unwrap();
        let actions = s.inp.scenario.actions.clone();
        s.execute(&actions, None).unwrap();
        let c = mobmem_device::device::load_named(&data(), "pixel3").unwrap().device.cpuset_masks().unwrap().expect("the Pixel 3 profile has cpusets");
        // The Pixel 3's init: top-app 0-7, foreground 0-3 and 6-7, background 0-1 (kernel CPU
        // numbers; the model lists the big cluster, cpu4-7, first).
        assert_eq!((c.top_app, c.foreground, c.background), (0xff, 0xfc, 0x30));
        let allowed = |s: &Session, t| s.k.cpus.allowed(t);
        for (i, a) in s.apps.iter().enumerate() {
            let l = a.live.as_ref().expect("no pressure: every app is alive");
            let want = match (on, i) {
                (false, _) => 0,
                (true, 2) => c.top_app,
                (true, _) => c.background,
            };
            // Its main thread and the runtime's GC thread.
            let threads: Vec<_> = s.k.threads_of(l.proc_idx).collect();
            assert_eq!(threads.len(), 2, "app {i}: {threads:?}");
            for t in threads {
                assert_eq!(allowed(&s, t), want, "app {i}, cpusets {on}: thread {t}");
            }
        }
        // The persistent system processes (system_server, SystemUI…) are in foreground.
        let n_fg = s.k.procs.iter().enumerate().filter(|(p, q)| q.alive && allowed(&s, s.k.thread_of(*p as u32)) == c.foreground).count();
        assert!(if on { n_fg >= 4 } else { n_fg == 0 }, "cpusets {on}: {n_fg} processes in foreground");
    }
}
