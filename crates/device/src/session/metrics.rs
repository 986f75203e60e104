//! What a session reports (docs/sessions.md, "Where the metrics come from"): launches by kind and app with
//! their breakdowns, cached apps over time, kills by reason, vmstat and its ratios, per-app
//! refaults, direct reclaims, kswapd CPU, swap traffic, GCs, frames and jank, the memory
//! timeline, and the event log. Everything is read from the models' counters.

use super::app::FrameStats;
use super::records::AppTotals;
use super::Session;
use mobmem_kernel::vmstat::VmStat;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// p-th percentile (0–100) by linear interpolation between order statistics (numpy's default).
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let r = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = r.floor() as usize;
    let hi = r.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (r - lo as f64)
}

fn dist(v: &[f64]) -> Value {
    if v.is_empty() {
        return json!({ "n": 0 });
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    json!({ "n": s.len(), "p10": percentile(&s, 10.0), "p50": percentile(&s, 50.0), "p90": percentile(&s, 90.0), "mean": mean, "min": s[0], "max": s[s.len() - 1] })
}

fn ratio(a: u64, b: u64) -> Value {
    if b == 0 {
        Value::Null
    } else {
        json!(a as f64 / b as f64)
    }
}

/// A count per evicted page: 0 when nothing was evicted and nothing it counts happened either
/// (0 of 0 — no reclaim at all, as a phone's counters read such a run, so a published ratio above
/// 0 is missed by its whole value instead of looking unmeasured); `null` when events happened
/// without an eviction to divide by (refaults of pages evicted before the interval).
fn per_eviction(a: u64, evicted: u64) -> Value {
    if a == 0 && evicted == 0 {
        json!(0.0)
    } else {
        ratio(a, evicted)
    }
}

/// The reclaim ratios of the counters since `base` (the whole run without one): refaults over
/// evicted pages, pages reclaimed directly over evicted pages, the anonymous share of evictions,
/// and activating file refaults over evicted file pages — the refault ratio as a kernel
/// instrumented at `workingset_eviction` and at `workingset_refault`'s activation counts it.
/// The anonymous share of no evictions stays `null`: it has no value to read.
fn reclaim_ratios(v: &VmStat, base: Option<&VmStat>) -> Value {
    let d = |f: fn(&VmStat) -> u64| f(v).saturating_sub(base.map_or(0, f));
    let evictions = d(|x| x.pgsteal_kswapd) + d(|x| x.pgsteal_direct);
    let (anon, file) = (d(|x| x.pgsteal_anon), d(|x| x.pgsteal_file));
    json!({
        "refault_ratio": per_eviction(d(|x| x.workingset_refault_anon) + d(|x| x.workingset_refault_file), evictions),
        "direct_reclaim_ratio": per_eviction(d(|x| x.pgsteal_direct), evictions),
        "anon_share_of_evictions": ratio(anon, anon + file),
        "file_activate_ratio": per_eviction(d(|x| x.workingset_activate_file), file),
    })
}

/// The result of a session as JSON.
/// CPU energy by category and frequency residency per cluster (`null` energy on a device
/// without a power model).
fn energy(s: &Session) -> Value {
    let cpus = &s.k.cpus;
    let end = s.now;
    let Some(d) = cpus.dvfs.as_ref() else { return Value::Null };
    let by = cpus.energy_pj(end);
    let j = |pj: u64| pj as f64 / 1e12;
    let total_j = by.as_ref().map(|v| j(v.iter().map(|x| x.1).sum()));
    let residency: Vec<Value> = d.residency(end).into_iter().map(|(c, mhz, ns)| json!({"cluster": c, "mhz": mhz, "s": ns as f64 / 1e9})).collect();
    let mean: serde_json::Map<String, Value> = d.mean_mhz(end).into_iter().map(|(c, f)| (c, json!(f))).collect();
    json!({
        "governor": s.k.cfg.cpufreq.governor,
        "total_j": total_j,
        "by_category_j": by.as_ref().map(|v| v.iter().map(|(c, e)| (c.name().to_string(), json!(j(*e)))).collect::<serde_json::Map<_, _>>()),
        "mean_power_mw": total_j.map(|t| if end > 0 { t / (end as f64 / 1e9) * 1e3 } else { 0.0 }),
        "mean_mhz": mean,
        "residency": residency,
    })
}

pub fn result(s: &Session, wall_s: f64) -> Value {
    let k = &s.k;
    let v = &k.vmstat;
    // Launch statistics by kind, per app and overall (warm-up launches left out).
    let mut by_kind: BTreeMap<&str, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    for l in s.launches.iter().filter(|l| !l.warmup) {
        let e = by_kind.entry(l.kind).or_default();
        e.entry(l.app.clone()).or_default().push(l.ttid_ms);
        e.entry("*".into()).or_default().push(l.ttid_ms);
    }
    let launch_stats: BTreeMap<&str, BTreeMap<String, Value>> =
        by_kind.iter().map(|(kind, m)| (*kind, m.iter().map(|(a, xs)| (a.clone(), dist(xs))).collect())).collect();
    // Cached apps.
    let cached: Vec<f64> = s.samples.iter().map(|x| x.cached_apps as f64).collect();
    let alive_after: Vec<u32> = s.launches.iter().map(|l| l.alive_after).collect();
    let first_kill = s.events.iter().find(|e| e.kind == "kill" && s.apps.iter().any(|a| a.spec.name == e.app)).map(|e| e.t_s);
    let first_kill_launch = first_kill.and_then(|t| s.launches.iter().rev().find(|l| l.t_s <= t).map(|l| l.index));
    // Kills.
    let app_names: Vec<&str> = s.apps.iter().map(|a| a.spec.name.as_str()).collect();
    let kills: Vec<Value> = s
        .events
        .iter()
        .filter(|e| e.kind == "kill")
        .map(|e| json!({ "t_s": e.t_s, "app": e.app, "is_app": app_names.contains(&e.app.as_str()), "detail": e.detail }))
        .collect();
    let mut kills_by_reason: BTreeMap<String, u64> = BTreeMap::new();
    for r in &k.kills {
        *kills_by_reason.entry(format!("{} ({})", r.reason, r.killer)).or_default() += 1;
    }
    let kills_adj: Vec<Value> = k.kills.iter().map(|r| json!({ "t_s": r.time_ns as f64 / 1e9, "name": r.name, "oom_score_adj": r.oom_score_adj, "min_score_adj": r.min_score_adj, "reason": r.reason, "killer": r.killer, "rss_kb": r.rss_kb, "swap_kb": r.swap_kb, "swap_used_kb": r.swap_used_kb, "free_kb": r.free_kb })).collect();
    // Per app.
    let mut per_app = serde_json::Map::new();
    let mut frames = FrameStats::default();
    let mut gc = AppTotals::default();
    for a in &s.apps {
        let t = &a.totals;
        frames.add(&t.frames);
        gc.gc_count += t.gc_count;
        gc.gc_sticky += t.gc_sticky;
        gc.gc_full += t.gc_full;
        gc.gc_pause_total_ms += t.gc_pause_total_ms;
        gc.gc_pause_max_ms = gc.gc_pause_max_ms.max(t.gc_pause_max_ms);
        gc.gc_cpu_ms += t.gc_cpu_ms;
        gc.gc_pages_touched += t.gc_pages_touched;
        gc.gc_objects_touched += t.gc_objects_touched;
        gc.gc_objects_marked += t.gc_objects_marked;
        gc.gc_objects_copied += t.gc_objects_copied;
        gc.gc_major_faults += t.gc_major_faults;
        gc.objects_allocated += t.objects_allocated;
        gc.bytes_allocated += t.bytes_allocated;
        gc.objects_read += t.objects_read;
        let launches: Vec<&super::app::LaunchRecord> = s.launches.iter().filter(|l| l.app == a.spec.name).collect();
        let mut j = serde_json::to_value(t).unwrap_or(Value::Null);
        j["cold_launches"] = json!(launches.iter().filter(|l| l.kind == "cold").count());
        j["hot_launches"] = json!(launches.iter().filter(|l| l.kind == "hot").count());
        j["relaunches"] = json!(launches.iter().filter(|l| l.relaunch).count());
        j["kills"] = json!(kills.iter().filter(|x| x["app"] == json!(a.spec.name)).count());
        j["jank_ratio"] = ratio(t.frames.janky, t.frames.frames);
        // Evicted pages of the app needed again, whatever the kernel version counts as a refault.
        j["refault"] = json!(t.refault_file + t.swapin);
        j["estimate"] = json!(a.spec.estimate);
        // The Java heap's share (%) of the app's PSS in the foreground, as `dumpsys meminfo` reads it.
        j["java_share_fg"] = if t.java_share_fg_n > 0 { json!(t.java_share_fg_sum / t.java_share_fg_n as f64) } else { Value::Null };
        // Its secondary processes: how often each started, whether it lives at the end, and its
        // oom_score_adj then.
        j["secondary"] = json!(a
            .secondary
            .iter()
            .map(|p| {
                let kp = &k.procs[p.proc_idx as usize];
                json!({ "name": p.spec.name, "starts": p.starts, "alive": kp.alive, "oom_score_adj": if kp.alive { json!(kp.oom_score_adj) } else { Value::Null } })
            })
            .collect::<Vec<_>>());
        per_app.insert(a.spec.name.clone(), j);
    }
    let refaults = v.workingset_refault_anon + v.workingset_refault_file;
    let app_refaults: BTreeMap<&str, u64> = s.apps.iter().map(|a| (a.spec.name.as_str(), a.totals.refault_anon + a.totals.refault_file)).collect();
    let sys_refaults: u64 = s
        .sys
        .iter()
        .map(|p| {
            let st = &k.procs[p.proc_idx as usize].stats;
            st.refault_anon + st.refault_file
        })
        .sum();
    // Activating file refaults per app and of the system processes: what a kernel instrumented
    // in `workingset_refault`'s activation branch counts per page owner (Acclaim's refault figures).
    let app_activations: BTreeMap<&str, u64> = s.apps.iter().map(|a| (a.spec.name.as_str(), a.totals.activate_file)).collect();
    let sys_activations = s.sys_activate_file();
    // The case: from the script's first launch to the end, as a phone's per-case log counts (the
    // boot, and what the system did before the first launch, left out). Apps run only after a
    // launch, so their counts are all inside it; the system processes' are taken from that time.
    let case = s.case_start.as_ref().map(|c| {
        let d = |f: fn(&VmStat) -> u64| f(v).saturating_sub(f(&c.vmstat));
        let evictions = d(|x| x.pgsteal_kswapd) + d(|x| x.pgsteal_direct);
        json!({
            "from_s": c.at as f64 / 1e9,
            "ratios": reclaim_ratios(v, Some(&c.vmstat)),
            "refaults": {
                "activate_file": d(|x| x.workingset_activate_file),
                "activate_file_by_app": app_activations,
                "activate_file_system_processes": sys_activations.saturating_sub(c.sys_activate_file),
            },
            "evictions": evictions,
            "direct_reclaims": d(|x| x.allocstall),
        })
    });
    let alive_max = alive_after.iter().copied().max().unwrap_or(0);
    let alive_mean = if alive_after.is_empty() { 0.0 } else { alive_after.iter().map(|&x| x as f64).sum::<f64>() / alive_after.len() as f64 };
    let evictions = v.pgsteal_kswapd + v.pgsteal_direct;
    let sim_s = s.now as f64 / 1e9;
    let apps: Vec<String> = per_app.keys().cloned().collect();
    let mmu = super::mmu::rows(&apps, &s.mutator_stops, sim_s * 1e3);
    let o = &s.inp.options;
    let mut out = json!({
        "scenario": s.inp.scenario.name,
        "scenario_file": s.inp.scenario_file,
        "device": s.inp.device_name,
        "seed": s.inp.seed,
        "parameters": s.inp.overrides,
        "system": {
            "collector": o.collector, "lmkd": k.cfg.lmkd, "policies": o.policies,
            "cached_app_compaction": o.cached_app_compaction, "freezer": o.freezer, "cached_app_work": o.cached_app_work,
            "cpusets": if o.cpusets { s.am.cpusets } else { None },
            "swap": format!("{:?}", k.cfg.swap).to_lowercase(), "kernel_settings": s.inp.kernel, "runtime_settings": s.inp.runtime,
            "calibration": s.inp.knobs, "calibration_settings": s.inp.calibration,
            "slice_ms": o.slice_ns as f64 / 1e6, "time_scale": o.time_scale,
        },
        "sim_seconds": sim_s,
        "wall_seconds": wall_s,
        "sim_speed": sim_s / wall_s.max(1e-9),
        "launches": s.launches,
        "file_io": s.file_io,
        "launch_stats": launch_stats,
        "cached_apps": {
            "max": cached.iter().cloned().fold(0.0, f64::max),
            "mean": if cached.is_empty() { 0.0 } else { cached.iter().sum::<f64>() / cached.len() as f64 },
            "alive_after_launch": alive_after,
            "alive_after_launch_max": alive_max,
            "alive_after_launch_mean": alive_mean,
            "first_kill_s": first_kill,
            "first_kill_launch": first_kill_launch,
        },
        "kills": kills,
        "kill_records": kills_adj,
        "kills_by_reason": kills_by_reason,
        "vmstat": mobmem_runtime::sim::vmstat_json(k),
        "case": case,
        "ratios": reclaim_ratios(v, None),
        "refaults": {
            "total": refaults, "anon": v.workingset_refault_anon, "file": v.workingset_refault_file, "evictions": evictions, "by_app": app_refaults, "system_processes": sys_refaults,
            "activate_file": v.workingset_activate_file, "activate_file_by_app": app_activations, "activate_file_system_processes": sys_activations,
            // Version-independent: an evicted page needed again — a file page read back (its
            // shadow entry found) or a swapped-out page swapped in. Kernels before 5.9 count no
            // anon refaults, so `total` alone is not comparable across kernel versions.
            "refault": v.workingset_refault_file + v.pswpin,
        },
        "direct_reclaims": v.allocstall,
        "kswapd_cpu_ms": k.kswapd.cpu_ns as f64 / 1e6,
        "energy": energy(s),
        "swap": { "pswpin": v.pswpin, "pswpout": v.pswpout },
        "gc": {
            "count": gc.gc_count, "sticky": gc.gc_sticky, "full": gc.gc_full,
            "pause_total_ms": gc.gc_pause_total_ms, "pause_max_ms": gc.gc_pause_max_ms,
            "gc_cpu_ms": gc.gc_cpu_ms, "gc_pages_touched": gc.gc_pages_touched,
            "gc_objects_touched": gc.gc_objects_touched, "objects_marked": gc.gc_objects_marked,
            "objects_copied": gc.gc_objects_copied, "gc_major_faults": gc.gc_major_faults,
            "objects_allocated": gc.objects_allocated, "bytes_allocated": gc.bytes_allocated,
            "objects_read": gc.objects_read,
        },
        "frames": { "total": frames.frames, "janky": frames.janky, "jank_ratio": ratio(frames.janky, frames.frames), "missed_vsyncs": frames.missed_vsyncs, "max_frame_ms": frames.max_frame_ms },
        "per_app": per_app,
        "timeline": s.samples,
        "events": s.events,
        "gcs": s.gcs.iter().map(|(g, _)| g).collect::<Vec<_>>(),
        "gc_phases": s.gc_phases,
        "janky_frames": s.janky_frames,
        "mutator_stops": s.mutator_stops,
        "app_memory": s.app_memory,
        "mmu": mmu,
        "java_heap": java_heap(&s.app_memory),
    });
    out["system"]["trim_levels"] = json!(o.trim_levels);
    // The buddy allocator's free lists at each app's thread start (kernel.buddy only).
    if k.cfg.buddy {
        out["fragmentation"] = json!(k.fragmentation);
    }
    // Each session service under its name: what it did; a registered one that was off, null.
    for c in super::services::SERVICES.entries {
        out[c.name] = Value::Null;
    }
    for (name, svc) in &s.services {
        out[*name] = svc.stats();
    }
    out
}

/// The apps' Java heaps together over the run, from the per-app memory series (every
/// `session.app_sample_ms`): the mean and the largest, over sample times, of the sum over live
/// apps of the Java heap's resident MiB (dumpsys meminfo's "Java Heap").
fn java_heap(samples: &[super::records::AppSample]) -> Value {
    let mut by_t: Vec<(f64, f64)> = Vec::new();
    for r in samples {
        match by_t.iter_mut().rev().find(|(t, _)| *t == r.t_s) {
            Some(x) => x.1 += r.java_heap_mib,
            None => by_t.push((r.t_s, r.java_heap_mib)),
        }
    }
    let n = by_t.len();
    let mean = (n > 0).then(|| by_t.iter().map(|(_, v)| v).sum::<f64>() / n as f64);
    let max = by_t.iter().map(|(_, v)| *v).reduce(f64::max);
    json!({ "mean_mib": mean, "max_mib": max, "samples": n })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_evicted_nothing_has_reclaim_ratios_of_zero() {
        let r = reclaim_ratios(&VmStat::default(), None);
        assert_eq!(r["refault_ratio"], json!(0.0));
        assert_eq!(r["direct_reclaim_ratio"], json!(0.0));
        assert_eq!(r["file_activate_ratio"], json!(0.0));
        assert!(r["anon_share_of_evictions"].is_null(), "no evictions have no anonymous share");
    }

    #[test]
    fn refaults_without_an_eviction_in_the_interval_are_undefined() {
        let base = VmStat { pgsteal_kswapd: 10, pgsteal_file: 10, ..VmStat::default() };
        let now = VmStat { workingset_refault_file: 4, workingset_activate_file: 2, ..base.clone() };
        let r = reclaim_ratios(&now, Some(&base));
        assert!(r["refault_ratio"].is_null());
        assert!(r["file_activate_ratio"].is_null());
        assert_eq!(r["direct_reclaim_ratio"], json!(0.0));
    }

    #[test]
    fn ratios_count_since_the_base() {
        let base = VmStat { pgsteal_kswapd: 10, pgsteal_file: 10, workingset_refault_file: 5, ..VmStat::default() };
        let now = VmStat {
            pgsteal_kswapd: 30,
            pgsteal_direct: 10,
            pgsteal_file: 30,
            pgsteal_anon: 10,
            workingset_refault_file: 15,
            workingset_activate_file: 3,
            ..VmStat::default()
        };
        let r = reclaim_ratios(&now, Some(&base));
        assert_eq!(r["refault_ratio"], json!(10.0 / 30.0));
        assert_eq!(r["direct_reclaim_ratio"], json!(10.0 / 30.0));
        assert_eq!(r["anon_share_of_evictions"], json!(10.0 / 30.0));
        assert_eq!(r["file_activate_ratio"], json!(3.0 / 20.0));
    }
}
