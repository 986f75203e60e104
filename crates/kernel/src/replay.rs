//! Replaying a page-access trace in the kernel model.
//!
//! Configuration is layered: model defaults ← device settings ← the trace's header (`ram`,
//! `swap`) ← the user's `--set` settings. Each trace process gets its own thread; trace order is
//! kept on one timeline, and kernel events (kswapd batches, lmkd, reaping, writeback completion,
//! sampling) run whenever the timeline passes their time. Ops of a process that was killed are
//! skipped and counted. In debug builds the O(1) frame-conservation check runs after every op
//! and the full invariant check every `check_every` ops.

use crate::config::{KernelConfig, ReclaimScope, SwapKind};
use crate::kernel::Kernel;
use crate::task::Task;
use crate::trace::{Op, SwapSpec, Trace, TraceError};
use mobmem_engine::Nanos;
use serde_json::{json, Value};

/// Settings given as (key, value) pairs, e.g. ("kernel.swappiness", "100").
pub type Settings = [(String, String)];

fn apply(cfg: &mut KernelConfig, settings: &Settings, origin: &str) -> Result<(), String> {
    for (k, v) in settings {
        cfg.set(k, v).map_err(|e| format!("{origin}: {e}"))?;
    }
    Ok(())
}

/// Build the configuration for a trace from device and user settings.
pub fn config_for(trace: &Trace, device: &Settings, user: &Settings) -> Result<KernelConfig, String> {
    let mut cfg = KernelConfig::default();
    apply(&mut cfg, device, "device")?;
    if let Some(mib) = trace.ram_mib {
        // A trace's `ram` is the memory it runs in: the device's carve-outs do not apply.
        cfg.ram_pages = mib * 256;
        cfg.reserved_pages = 0;
        cfg.memcg_limit_pages = mib * 256;
    }
    match trace.swap {
        None => {}
        Some(SwapSpec::None) => {
            cfg.swap = SwapKind::None;
            cfg.swap_pages = 0;
        }
        Some(SwapSpec::Zram { mib, ratio }) => {
            cfg.swap = SwapKind::Zram;
            cfg.swap_pages = mib * 256;
            if let Some(r) = ratio {
                cfg.zram.ratio = r;
            }
        }
        Some(SwapSpec::File { mib }) => {
            cfg.swap = SwapKind::File;
            cfg.swap_pages = mib * 256;
        }
    }
    apply(&mut cfg, user, "--set")?;
    if cfg.scope == ReclaimScope::MemcgLimit && cfg.memcg_limit_pages == 0 {
        cfg.memcg_limit_pages = cfg.ram_pages;
    }
    Ok(cfg)
}

/// Counters of the replay itself.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ReplayStats {
    pub(crate) ops: u64,
    pub(crate) touches: u64,
    pub(crate) ops_after_kill: u64,
    pub sim_time_ns: Nanos,
}

/// Replay `trace` in `k`. `check_every` = 0 disables the periodic full invariant check.
pub fn run(k: &mut Kernel, trace: &Trace, check_every: u64) -> Result<ReplayStats, TraceError> {
    let err = |i: usize, msg: String| TraceError { file: trace.file.clone(), line: trace.lines[i] as usize, msg };
    let mut kproc: Vec<u32> = vec![u32::MAX; trace.procs.len()];
    let mut kvma: Vec<u32> = vec![u32::MAX; trace.vmas.len()];
    let mut tasks: Vec<Task> = Vec::with_capacity(trace.procs.len());
    let mut stats = ReplayStats::default();
    let mut now: Nanos = 0;
    let mut next_ev = k.next_event_at();
    let mut cur: usize = usize::MAX; // task that ran last (its CPU is booked at sync points)

    macro_rules! sync {
        ($t:expr) => {{
            if cur != usize::MAX {
                k.book_cpu(&mut tasks[cur]);
            }
            k.advance_to($t);
            next_ev = k.next_event_at();
        }};
    }

    for (i, op) in trace.ops.iter().enumerate() {
        next_ev = next_ev.min(k.next_event_at());
        if now >= next_ev {
            sync!(now);
        }
        stats.ops += 1;
        // The kernel VMA and trace process of a trace VMA, unless its process is gone.
        let target = |vma: u32| {
            let kv = kvma[vma as usize];
            let ti = trace.vmas[vma as usize].proc_ as usize;
            (kv != u32::MAX && k.procs[kproc[ti] as usize].alive).then_some((kv, ti))
        };
        match *op {
            Op::Proc { proc_ } => {
                let p = &trace.procs[proc_ as usize];
                let idx = k.create_process(p.pid, &p.name, p.adj, now).map_err(|e| err(i, e.to_string()))?;
                kproc[proc_ as usize] = idx;
                tasks.push(Task::new(k.thread_of(idx), idx, now));
            }
            Op::Map { vma } => {
                let v = &trace.vmas[vma as usize];
                let pi = kproc[v.proc_ as usize];
                if !k.procs[pi as usize].alive {
                    stats.ops_after_kill += 1;
                    continue;
                }
                let kv = match &v.file {
                    None => k.map_anon(pi, &v.name, v.pages),
                    Some(f) => k.map_file(pi, &v.name, f, v.pages, v.exec),
                }
                .map_err(|e| err(i, e.to_string()))?;
                kvma[vma as usize] = kv;
            }
            Op::Touch { vma, first, count, write } => {
                let Some((kv, ti)) = target(vma) else {
                    stats.ops_after_kill += 1;
                    continue;
                };
                cur = ti;
                let t = &mut tasks[ti];
                t.now = t.now.max(now);
                for pg in first..first + count {
                    // Not the cached `next_ev`: the previous touch may have woken kswapd.
                    if k.sync(t) {
                        next_ev = k.next_event_at();
                        if !k.procs[t.proc_idx as usize].alive {
                            break;
                        }
                    }
                    k.touch(t, kv, pg, write);
                    if t.killed {
                        break;
                    }
                }
                stats.touches += count as u64;
                now = t.now;
            }
            Op::Madvise { vma, first, count, advice } => {
                let Some((kv, ti)) = target(vma) else {
                    stats.ops_after_kill += 1;
                    continue;
                };
                cur = ti;
                let t = &mut tasks[ti];
                t.now = t.now.max(now);
                k.madvise(t, kv, first, count, advice).map_err(|e| err(i, e.to_string()))?;
                now = t.now;
            }
            Op::Hint { vma, first, count, hint } => {
                let Some((kv, ti)) = target(vma) else {
                    stats.ops_after_kill += 1;
                    continue;
                };
                cur = ti;
                let t = &mut tasks[ti];
                t.now = t.now.max(now);
                k.madvise_custom(t, kv, first, count, &trace.hints[hint as usize]).map_err(|e| err(i, e.to_string()))?;
                now = t.now;
            }
            Op::Adj { proc_, adj } => {
                let pi = kproc[proc_ as usize];
                k.set_adj(pi, adj, now).map_err(|e| err(i, e.to_string()))?;
            }
            Op::Tick { us } => {
                now = now.saturating_add(us.saturating_mul(1000)); // the parser bounds the total
                sync!(now);
            }
            Op::Exit { proc_ } => {
                let pi = kproc[proc_ as usize];
                k.exit_process(pi);
            }
        }
        debug_assert!(k.frames_conserved(), "frames not conserved after line {}", trace.lines[i]);
        if cfg!(debug_assertions) && check_every > 0 && (i as u64 + 1).is_multiple_of(check_every) {
            k.check_invariants().map_err(|e| err(i, format!("internal invariant violated: {e}")))?;
        }
    }
    if cur != usize::MAX {
        k.book_cpu(&mut tasks[cur]);
    }
    k.advance_to(now);
    for t in tasks.iter_mut() {
        k.book_cpu(t);
    }
    k.sample(now);
    stats.sim_time_ns = now;
    Ok(stats)
}

/// Parse, configure, replay; return the JSON result.
pub fn replay_file(path: &str, device: &Settings, user: &Settings) -> Result<Value, String> {
    let trace = crate::trace::parse_file(path).map_err(|e| e.to_string())?;
    replay_trace(&trace, device, user)
}

pub fn replay_trace(trace: &Trace, device: &Settings, user: &Settings) -> Result<Value, String> {
    let cfg = config_for(trace, device, user)?;
    let mut k = Kernel::new(cfg).map_err(|e| format!("{}: {e}", trace.file))?;
    let wall = std::time::Instant::now();
    let stats = run(&mut k, trace, 4096).map_err(|e| e.to_string())?;
    let wall_s = wall.elapsed().as_secs_f64();
    let mut v = k.result_json();
    v["trace"] = json!({
        "file": trace.file,
        "ops": stats.ops,
        "touches": stats.touches,
        "ops_after_kill": stats.ops_after_kill,
        "sim_time_ms": stats.sim_time_ns as f64 / 1e6,
    });
    // Wall time is reported apart from the deterministic result.
    v["wall"] = json!({ "replay_s": wall_s, "touches_per_s": stats.touches as f64 / wall_s.max(1e-9) });
    Ok(v)
}
