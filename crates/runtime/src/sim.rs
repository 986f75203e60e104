//! One app's runtime on a device model, from settings to a JSON result (what `mobmem runtime
//! run` and `mobmem runtime gcbench` print). Settings are layered like the kernel's: model
//! defaults ← device (`[kernel]` and `[runtime]` tables) ← calibration file ← the user's options.

use crate::config::RuntimeConfig;
use crate::gc::GcRecord;
use crate::gcbench::{self, GcBenchParams};
use crate::object::AppState;
use crate::runtime::Runtime;
use crate::workload::{AppProfile, Workload};
use mobmem_engine::Nanos;
use mobmem_kernel::{Kernel, KernelConfig};
use serde_json::{json, Value};

pub type Settings = [(String, String)];

pub fn kernel_config(settings: &Settings) -> Result<KernelConfig, String> {
    let mut cfg = KernelConfig::default();
    for (k, v) in settings {
        cfg.set(k, v).map_err(|e| e.to_string())?;
    }
    Ok(cfg)
}

/// The runtime configuration of `settings`: runtime keys and runtime policies' keys.
pub fn runtime_config(settings: &Settings) -> Result<RuntimeConfig, String> {
    let mut cfg = RuntimeConfig::default();
    for (k, v) in settings {
        crate::policies::apply_setting(&mut cfg, k, v).map_err(|e| e.to_string())?;
    }
    cfg.validate()?;
    Ok(cfg)
}

/// Install `policies` on a throwaway runtime of `cfg` (a small kernel, nothing allocated): an
/// unknown policy, an incompatible collector or two policies claiming the same hook fail here,
/// before any simulation starts, with the message the first app's launch would give.
pub fn check_policies(cfg: &RuntimeConfig, policies: &[String]) -> Result<(), String> {
    if policies.is_empty() {
        return Ok(());
    }
    // 64 MiB: nothing is allocated.
    let mut k = Kernel::new(KernelConfig { ram_pages: 64 << 8, ..KernelConfig::default() }).map_err(|e| e.to_string())?;
    let mut rt = Runtime::new(&mut k, 1, "check", 0, cfg.clone(), 0)?;
    for p in policies {
        rt.install_policy(p)?;
    }
    Ok(())
}

/// Summary over a run's collections (pause totals and maxima, CPU split for LBO).
pub fn summarize(rt: &Runtime, k: &Kernel, sim_ns: Nanos) -> Value {
    let recs = &rt.records;
    let sum = |f: &dyn Fn(&GcRecord) -> u64| recs.iter().map(f).sum::<u64>();
    let pause_total = sum(&|r| r.pause_total_ns);
    let pause_max = recs.iter().map(|r| r.pause_max_ns).max().unwrap_or(0);
    let gc_cpu = rt.gc_cpu_ns();
    let gc_cpu_pause = sum(&|r| r.gc_cpu_pause_ns);
    let mut_cpu = rt.mutator_cpu_ns();
    let peak_fp = rt.footprint.iter().map(|s| s.footprint_bytes).max().unwrap_or(0);
    let peak_rss = rt.footprint.iter().map(|s| s.rss_pages).max().unwrap_or(0);
    let m = &rt.mutator.bd;
    let g = &rt.gc_task.bd;
    let (rss, swap) = k.proc_rss_swap(rt.proc_idx);
    json!({
        "collector": rt.collector_kind.short(),
        "gc_count": recs.len(),
        "sticky_count": recs.iter().filter(|r| r.gc_type == "sticky").count(),
        "full_count": recs.iter().filter(|r| r.gc_type == "full").count(),
        "alloc_gc_count": recs.iter().filter(|r| r.cause == "Alloc").count(),
        "pause_total_ms": pause_total as f64 / 1e6,
        "pause_max_ms": pause_max as f64 / 1e6,
        "gc_cpu_ms": gc_cpu as f64 / 1e6,
        "gc_cpu_pause_ms": gc_cpu_pause as f64 / 1e6,
        "gc_cpu_concurrent_ms": gc_cpu.saturating_sub(gc_cpu_pause) as f64 / 1e6,
        "mutator_cpu_ms": mut_cpu as f64 / 1e6,
        "total_cpu_ms": (mut_cpu + gc_cpu) as f64 / 1e6,
        // LBO: the cost of all threads during stop-the-world pauses vs everything else.
        "stw_ms": pause_total as f64 / 1e6,
        "stw_cpu_ms": gc_cpu_pause as f64 / 1e6,
        "other_cpu_ms": (mut_cpu + gc_cpu - gc_cpu_pause.min(gc_cpu)) as f64 / 1e6,
        "mutator_wait_ms": rt.stats.mutator_wait_ns as f64 / 1e6,
        "mutator_gc_work_ms": rt.stats.mutator_gc_work_ns as f64 / 1e6,
        "sim_time_ms": sim_ns as f64 / 1e6,
        "bytes_allocated_total": rt.heap.alloc_clock,
        "objects_allocated_total": rt.heap.objects_allocated,
        "live_bytes_end": rt.heap.bytes_allocated,
        "target_footprint_end": rt.target_footprint,
        "peak_footprint_mib": peak_fp as f64 / (1 << 20) as f64,
        "peak_rss_mib": peak_rss as f64 / 256.0,
        "rss_mib_end": rss as f64 / 256.0,
        "swap_mib_end": swap as f64 / 256.0,
        "bytes_copied": sum(&|r| r.bytes_copied),
        "objects_copied": sum(&|r| r.objects_copied),
        "copied_by_mutator": sum(&|r| r.copied_by_mutator),
        "gc_pages_touched": sum(&|r| r.gc_pages_touched),
        "gc_objects_touched": sum(&|r| r.gc_objects_touched),
        "faults": {
            "gc_minor": g.minor_faults, "gc_major_zram": g.major_faults_zram, "gc_major_flash": g.major_faults_flash_swap, "gc_major_file": g.major_faults_file,
            "mutator_minor": m.minor_faults, "mutator_major_zram": m.major_faults_zram, "mutator_major_flash": m.major_faults_flash_swap, "mutator_major_file": m.major_faults_file,
            "gc_reclaim_stall_ms": g.reclaim_stall_ns as f64 / 1e6, "mutator_reclaim_stall_ms": m.reclaim_stall_ns as f64 / 1e6,
        },
        "trims": rt.stats.trims,
        "trimmed_pages": rt.stats.trimmed_pages,
        "read_barriers": rt.stats.read_barriers,
        "write_barriers": rt.stats.write_barriers,
        "transitions": rt.stats.transitions,
    })
}

fn gc_json(rt: &Runtime) -> Value {
    let mut gcs = Vec::with_capacity(rt.records.len());
    for (i, r) in rt.records.iter().enumerate() {
        let mut v = serde_json::to_value(r).unwrap_or(Value::Null);
        if let Some(line) = rt.log.iter().filter(|l| !l.starts_with("Throwing")).nth(i) {
            v["log"] = json!(line);
        }
        gcs.push(v);
    }
    json!(gcs)
}

fn footprint_json(rt: &Runtime) -> Value {
    json!(rt
        .footprint
        .iter()
        .map(|s| json!([s.t_ns as f64 / 1e9, s.bytes_allocated, s.footprint_bytes, s.target_footprint, s.rss_pages, s.swap_pages]))
        .collect::<Vec<_>>())
}

/// The kernel's vmstat counters by name, zeros included.
pub fn vmstat_json(k: &Kernel) -> Value {
    let mut m = serde_json::Map::new();
    for (n, v) in k.vmstat.items() {
        m.insert(n.into(), json!(v));
    }
    Value::Object(m)
}

/// Options of `mobmem runtime run`.
pub struct RunOptions<'a> {
    pub kernel: &'a Settings,
    pub runtime: &'a Settings,
    /// The app's workload (a profile mapped by the device layer, or [`AppProfile::synthetic`]).
    pub app: &'a AppProfile,
    pub seconds: f64,
    /// Run until the app has allocated this many bytes after its start-up (a fixed amount of
    /// work) instead of for `seconds`.
    pub alloc_bytes: Option<u64>,
    pub state: AppState,
    pub policies: &'a [String],
}

/// An allocation volume for [`RunOptions::alloc_bytes`]: a size ("512m", "2g") or a multiple of
/// the app's foreground live heap ("12x" — the same number of heap fills for a small app as for a
/// large one).
pub fn alloc_bytes(spec: &str, app: &AppProfile) -> Result<u64, String> {
    let b = match spec.trim().strip_suffix(['x', 'X']) {
        Some(n) => n.trim().parse::<f64>().ok().filter(|v| v.is_finite() && *v > 0.0).map(|v| (v * app.live_heap as f64) as u64),
        None => mobmem_engine::settings::parse_size(spec),
    };
    match b {
        Some(b) if b > 0 => Ok(b),
        _ => Err(format!("alloc: expected a positive size such as 512m or 2g, or a multiple of the app's live heap such as 12x, got {spec:?}")),
    }
}

/// Run one app for `seconds` of simulated time (or `alloc_bytes` of allocation) after its start-up.
pub fn run_app(o: &RunOptions) -> Result<Value, String> {
    let kcfg = kernel_config(o.kernel)?;
    let profile = o.app.clone();
    let rcfg = profile.runtime_config(&runtime_config(o.runtime)?);
    if !(o.seconds >= 0.0 && o.seconds <= 86_400.0) {
        return Err(format!("seconds must be within [0, 86400], got {}", o.seconds));
    }
    let mut k = Kernel::new(kcfg).map_err(|e| e.to_string())?;
    let mut rt = Runtime::new(&mut k, 1000, &profile.name, 0, rcfg, 0)?;
    for p in o.policies {
        rt.install_policy(p)?;
    }
    let wall = std::time::Instant::now();
    let mut w = Workload::new(profile);
    w.build(&mut rt, &mut k);
    let started = rt.mutator.now;
    let mut ok = !w.oom;
    if ok {
        if o.state == AppState::Background {
            w.set_state(&mut rt, AppState::Background);
            let _ = k.set_adj(rt.proc_idx, 900, rt.mutator.now);
        }
        ok = match o.alloc_bytes {
            Some(b) => w.run_allocating(&mut rt, &mut k, b),
            None => w.run_until(&mut rt, &mut k, started + (o.seconds * 1e9) as Nanos),
        };
    }
    rt.finish(&mut k);
    let wall_s = wall.elapsed().as_secs_f64();
    let sim = rt.mutator.now;
    Ok(json!({
        "app": w.p,
        "state": o.state.name(),
        "oom": !ok || rt.oom,
        "killed": !k.procs[rt.proc_idx as usize].alive,
        "startup_ms": started as f64 / 1e6,
        "gcs": gc_json(&rt),
        "summary": summarize(&rt, &k, sim),
        "log": rt.log,
        "workload": w.stats,
        "frames": w.frames.summary(),
        // Wall time the collections cost the paced units of work (see frames::GcFreePacing),
        // and the stall inside those units (the rest of `mutator_wait_ms` fell outside them:
        // start-up, the end of the run).
        "pacing": {
            "units": w.pacing.units,
            "gc_stall_ms": w.pacing.stall_ns as f64 / 1e6,
            "gc_delay_ms": w.pacing.delay_ns() as f64 / 1e6,
        },
        "footprint": footprint_json(&rt),
        "vmstat": vmstat_json(&k),
        "config": rt.cfg,
        "policies": rt.hooks.installed,
        "wall": { "seconds": wall_s },
    }))
}

/// Run GCBench with the given settings.
pub fn run_gcbench(kernel: &Settings, runtime: &Settings, params: &GcBenchParams) -> Result<Value, String> {
    let kcfg = kernel_config(kernel)?;
    let rcfg = runtime_config(runtime)?;
    let mut k = Kernel::new(kcfg).map_err(|e| e.to_string())?;
    let mut rt = Runtime::new(&mut k, 1000, "gcbench", 0, rcfg, 0)?;
    let wall = std::time::Instant::now();
    let r = gcbench::run(&mut rt, &mut k, params);
    let wall_s = wall.elapsed().as_secs_f64();
    let sim = rt.mutator.now;
    Ok(json!({
        "params": params,
        "oom": r.oom,
        "result": r,
        "gcs": gc_json(&rt),
        "summary": summarize(&rt, &k, sim),
        "log": rt.log,
        "footprint": footprint_json(&rt),
        "config": rt.cfg,
        "wall": { "seconds": wall_s, "nodes_per_s": r.nodes_allocated as f64 / wall_s.max(1e-9) },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_volume_is_a_size_or_a_multiple_of_the_live_heap() {
        let app = AppProfile::synthetic("synthetic:footprint=8m,objsize=128").unwrap();
        assert_eq!(alloc_bytes("2g", &app), Ok(2 << 30));
        assert_eq!(alloc_bytes("1.5X", &app), Ok(app.live_heap * 3 / 2));
        for bad in ["0", "0x", "-1x", "lots", "nanx", ""] {
            assert!(alloc_bytes(bad, &app).unwrap_err().contains("multiple of the app's live heap"), "{bad}");
        }
    }
}
