//! `mobmem._core`: the Rust simulation core as a Python module.
//!
//! Results cross the boundary as JSON strings (parsed by `mobmem.kernel.model`), which keeps the
//! binding thin and the result format identical to what the CLI prints. Long runs release the GIL
//! and stay interruptible: every ~0.1 s of wall time they check Python's signals, so Ctrl-C (or
//! any signal handler that raises) stops them with that exception. Sessions check from their
//! slice loop and stop; the other runs go on a thread of their own, which the caller stops
//! waiting for (see [`interruptible`]).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Pairs = Vec<(String, String)>;

/// Large tables get their own mappings and grow by `mremap`: see `host_alloc`.
#[global_allocator]
static ALLOC: mobmem_engine::host_alloc::HostAlloc = mobmem_engine::host_alloc::HostAlloc;

/// How often a long run looks at Python (pending signals, the progress callback), in wall time.
const POLL: Duration = Duration::from_millis(100);

/// Run `f` on a thread of its own while the calling thread waits with the GIL released, checking
/// Python's signals every [`POLL`]: on an exception from a signal handler (KeyboardInterrupt)
/// this returns it at once. The thread is not stopped: it finishes in the background and its
/// result is dropped (the command line exits right away). For the runs whose loops have no
/// observer (kernel replay, runtime runs and benchmarks); a panic on the thread is re-raised here.
fn interruptible<T: Send + 'static>(py: Python<'_>, f: impl FnOnce() -> T + Send + 'static) -> PyResult<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("mobmem-run".into())
        .stack_size(64 << 20)
        .spawn(move || {
            let _ = tx.send(f());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the simulation thread: {e}")))?;
    let mut rx = Some(rx);
    loop {
        // The receiver is Send but not Sync: moved into the GIL-free closure and back.
        let (got, back) = py.allow_threads(move || {
            let r = rx.take().expect("receiver");
            (r.recv_timeout(POLL), r)
        });
        rx = Some(back);
        match got {
            Ok(v) => return Ok(v),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => match handle.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => return Err(PyRuntimeError::new_err("the simulation thread ended without a result")),
            },
        }
    }
}

/// Replay a page trace in the kernel model. `device` and `user` are (key, value) settings applied
/// before and after the trace header. Returns the JSON result as a string; bad input raises
/// ValueError with "FILE:LINE: problem".
#[pyfunction]
#[pyo3(signature = (path, device=Vec::new(), user=Vec::new()))]
fn replay_trace(py: Python<'_>, path: String, device: Pairs, user: Pairs) -> PyResult<String> {
    let r = interruptible(py, move || mobmem_kernel::replay::replay_file(&path, &device, &user))?;
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Check a trace file without running it; returns (ops, touches) or raises ValueError.
#[pyfunction]
fn check_trace(path: String) -> PyResult<(u64, u64)> {
    let t = mobmem_kernel::trace::parse_file(&path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((t.ops.len() as u64, t.touches))
}

/// Parse a trace (the file at `path`, or `text` reported under the name `path`) into a dict:
/// `ram_mib`, `swap` (None, or (kind, MiB, ratio)), `procs` [(pid, name, adj)], `vmas` [(proc
/// index, name, pages, file or None, exec)], `hints`, and the op columns of
/// `mobmem_kernel::trace::Columns` as native-endian bytes (`op` u8, `flag` u8, `proc` i32, `vma`
/// i32, `a`/`b`/`line` i64). Bad input raises ValueError with "FILE:LINE: problem".
#[pyfunction]
#[pyo3(signature = (path, text=None))]
fn parse_trace<'py>(py: Python<'py>, path: String, text: Option<String>) -> PyResult<Bound<'py, PyDict>> {
    use mobmem_kernel::trace::{self, SwapSpec};
    let text = match text {
        Some(t) => t,
        None => {
            let bytes = std::fs::read(&path).map_err(|e| PyValueError::new_err(format!("{path}: cannot read trace: {e}")))?;
            String::from_utf8(bytes).map_err(|e| PyValueError::new_err(format!("{path}: not a text trace (not UTF-8): {e}")))?
        }
    };
    let t = py.allow_threads(|| trace::parse(&path, &text)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let c = t.columns();
    let d = PyDict::new(py);
    d.set_item("ram_mib", t.ram_mib)?;
    let swap: Option<(&str, u64, Option<f64>)> = t.swap.map(|s| match s {
        SwapSpec::None => ("none", 0, None),
        SwapSpec::Zram { mib, ratio } => ("zram", mib, ratio),
        SwapSpec::File { mib } => ("file", mib, None),
    });
    d.set_item("swap", swap)?;
    d.set_item("procs", t.procs.iter().map(|p| (p.pid, p.name.as_str(), p.adj)).collect::<Vec<_>>())?;
    d.set_item("vmas", t.vmas.iter().map(|v| (v.proc_, v.name.as_str(), v.pages, v.file.as_deref(), v.exec)).collect::<Vec<_>>())?;
    d.set_item("hints", &t.hints)?;
    fn bytes<T: Copy, const N: usize>(v: &[T], f: impl Fn(T) -> [u8; N]) -> Vec<u8> {
        v.iter().flat_map(|&x| f(x)).collect()
    }
    d.set_item("op", PyBytes::new(py, &c.op))?;
    d.set_item("flag", PyBytes::new(py, &c.flag))?;
    d.set_item("proc", PyBytes::new(py, &bytes(&c.proc_, i32::to_ne_bytes)))?;
    d.set_item("vma", PyBytes::new(py, &bytes(&c.vma, i32::to_ne_bytes)))?;
    d.set_item("a", PyBytes::new(py, &bytes(&c.a, i64::to_ne_bytes)))?;
    d.set_item("b", PyBytes::new(py, &bytes(&c.b, i64::to_ne_bytes)))?;
    d.set_item("line", PyBytes::new(py, &bytes(&c.line, i64::to_ne_bytes)))?;
    Ok(d)
}

/// Whether this build has debug assertions (invariant checks) enabled.
#[pyfunction]
fn debug_build() -> bool {
    cfg!(debug_assertions)
}

// ---------------------------------------------------------------------- runtime

/// The layered settings of a standalone runtime run (see `mobmem_device::standalone`).
fn standalone_settings(data_dir: &str, device: Option<&str>, settings: &Pairs) -> PyResult<mobmem_device::standalone::RunSettings> {
    mobmem_device::standalone::settings(std::path::Path::new(data_dir), device, settings).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Run one app's runtime on the device model for `seconds` after its start-up (or until it has
/// allocated `alloc` — a size such as "2g" or a multiple of its live heap such as "12x": a fixed
/// amount of work). `data_dir` holds
/// devices/, apps/ and the calibration file; `device` names a device profile (none: the model's
/// defaults); `settings` are the user's (key, value) pairs (`kernel.*`, `app.*`, the rest
/// runtime); `app` is a profile name of `data_dir` or a `synthetic:…` spec. Returns the JSON
/// result (keys `gcs`, `summary`, `oom`, `log`, …); bad input raises ValueError.
#[pyfunction]
#[pyo3(signature = (data_dir, app, device=None, settings=Vec::new(), seconds=10.0, state="fg".to_string(), policies=Vec::new(), alloc=None))]
#[allow(clippy::too_many_arguments)] // the Python signature
fn runtime_run(
    py: Python<'_>,
    data_dir: String,
    app: String,
    device: Option<String>,
    settings: Pairs,
    seconds: f64,
    state: String,
    policies: Vec<String>,
    alloc: Option<String>,
) -> PyResult<String> {
    let st = mobmem_runtime::AppState::parse(&state).ok_or_else(|| PyValueError::new_err(format!("state must be fg or bg, got {state:?}")))?;
    let s = standalone_settings(&data_dir, device.as_deref(), &settings)?;
    let w =
        mobmem_device::standalone::app_workload(std::path::Path::new(&data_dir), &app, &s.knobs, &s.app).map_err(|e| PyValueError::new_err(e.to_string()))?;
    let alloc_bytes = match alloc.as_deref() {
        None => None,
        Some(a) => Some(mobmem_runtime::sim::alloc_bytes(a, &w).map_err(PyValueError::new_err)?),
    };
    let r = interruptible(py, move || {
        mobmem_runtime::sim::run_app(&mobmem_runtime::sim::RunOptions {
            kernel: &s.kernel,
            runtime: &s.runtime,
            app: &w,
            seconds,
            alloc_bytes,
            state: st,
            policies: &policies,
        })
    })?;
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Run the simulated GCBench (settings as for [`runtime_run`]); `params` may set stretch_depth,
/// long_lived_depth, array_doubles, min_depth, max_depth, node_ns.
#[pyfunction]
#[pyo3(signature = (data_dir, device=None, settings=Vec::new(), params=Vec::new()))]
fn runtime_gcbench(py: Python<'_>, data_dir: String, device: Option<String>, settings: Pairs, params: Pairs) -> PyResult<String> {
    let s = standalone_settings(&data_dir, device.as_deref(), &settings)?;
    if let Some((k, _)) = s.app.first() {
        return Err(PyValueError::new_err(format!("--set {k}: GCBench has no app settings")));
    }
    let mut p = mobmem_runtime::gcbench::GcBenchParams::default();
    for (k, v) in &params {
        let n: u64 = v.trim().parse().map_err(|_| PyValueError::new_err(format!("gcbench {k}: expected a non-negative integer, got {v:?}")))?;
        match k.as_str() {
            "stretch_depth" => p.stretch_depth = n as u32,
            "long_lived_depth" => p.long_lived_depth = n as u32,
            "array_doubles" => p.array_doubles = n as u32,
            "min_depth" => p.min_depth = n as u32,
            "max_depth" => p.max_depth = n as u32,
            "node_ns" => p.node_ns = n,
            _ => return Err(PyValueError::new_err(format!("unknown gcbench parameter {k:?}"))),
        }
    }
    if p.stretch_depth > 24 || p.long_lived_depth > p.stretch_depth || p.min_depth > p.max_depth || p.max_depth > p.stretch_depth {
        return Err(PyValueError::new_err("gcbench depths must satisfy min ≤ max ≤ stretch ≤ 24 and long-lived ≤ stretch"));
    }
    let r = interruptible(py, move || mobmem_runtime::sim::run_gcbench(&s.kernel, &s.runtime, &p))?;
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Runtime model throughput benchmarks (tracing refs/s, allocation objects/s), JSON.
#[pyfunction]
#[pyo3(signature = (objects=2_000_000, allocations=20_000_000))]
fn runtime_bench(py: Python<'_>, objects: u64, allocations: u64) -> PyResult<String> {
    interruptible(py, move || mobmem_runtime::bench::run_all(objects, allocations).to_string())
}

/// The catalogue of every named choice, setting and (with `data_dir`) data file, as JSON (see
/// `mobmem_device::catalog`); a data file that does not load raises ValueError naming it.
#[pyfunction]
#[pyo3(signature = (data_dir=None))]
fn catalog(data_dir: Option<String>) -> PyResult<String> {
    mobmem_device::catalog::catalog(data_dir.as_deref().map(std::path::Path::new)).map(|v| v.to_string()).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The named systems of a systems file, in file order, as JSON `[{name, description, settings,
/// line}]`; a bad entry raises ValueError naming FILE:LINE:COL and the field.
#[pyfunction]
fn systems(path: String) -> PyResult<String> {
    let s = mobmem_device::systems::load(std::path::Path::new(&path)).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(serde_json::to_string(&s).expect("plain data"))
}

/// The MMU curves (`[{app, window_ms, mmu}]` JSON) of a saved session result's JSON, for results
/// written before runs recorded them.
#[pyfunction]
fn mmu_rows(result: String) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(&result).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(serde_json::to_string(&mobmem_device::session::mmu::rows_of_result(&v)).expect("plain data"))
}

/// The result's tables with their columns, in the order of their row types' fields:
/// `[(table, [column, …]), …]` (timeline, events, gcs, gc_phases, janky_frames, app_memory,
/// mutator_stops).
#[pyfunction]
fn table_columns() -> Vec<(&'static str, Vec<&'static str>)> {
    mobmem_device::session::records::table_columns()
}

/// The `dumpsys meminfo` App Summary categories that split an app's RSS (columns of `app_memory`).
#[pyfunction]
fn meminfo_categories() -> Vec<&'static str> {
    mobmem_device::session::records::MEMINFO_CATEGORIES.to_vec()
}

/// System `name` of the systems file `path` (a `+` combination too) as JSON: name, description,
/// settings (variables unresolved), line; an unknown or repeated part raises ValueError.
#[pyfunction]
fn system(path: String, name: String) -> PyResult<String> {
    let s = mobmem_device::systems::get(std::path::Path::new(&path), &name).map_err(PyValueError::new_err)?;
    Ok(serde_json::to_string(&s).expect("plain data"))
}

/// The settings of system `name` (of the systems file `path`; a `+` combination too, its runtime
/// policies merged) as pairs, `${ram_mib}`/`${zram_mib}` resolved for `scenario` with the user's
/// `overrides`.
#[pyfunction]
#[pyo3(signature = (path, name, scenario, data_dir, overrides=Vec::new()))]
fn system_settings(path: String, name: String, scenario: String, data_dir: String, overrides: Pairs) -> PyResult<Pairs> {
    mobmem_device::systems::settings_for(std::path::Path::new(&path), &name, &scenario, std::path::Path::new(&data_dir), &overrides)
        .map_err(PyValueError::new_err)
}

// ---------------------------------------------------------------------- sessions

/// Run a scenario file on the simulated phone. `data_dir` holds devices/, apps/, system.toml
/// and runtime_costs.toml; `overrides` are the user's `--set` pairs; `seed` replaces the
/// scenario's seed. Returns the result JSON; bad input raises ValueError naming file and field.
///
/// `progress`, if given, is called as `progress(sim_seconds_done, sim_seconds_estimated)` at the
/// first slice and then at most every ~0.1 s of wall time (the estimate: boot plus the script's
/// use/wait time; launches make a session longer, so done may pass it). Signals are checked as
/// often; an exception from a signal handler (KeyboardInterrupt) or from `progress` stops the
/// session and is raised.
#[pyfunction]
#[pyo3(signature = (scenario, data_dir, overrides=Vec::new(), seed=None, progress=None))]
fn session_run(py: Python<'_>, scenario: String, data_dir: String, overrides: Pairs, seed: Option<u64>, progress: Option<PyObject>) -> PyResult<String> {
    let stopped: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let stash = stopped.clone();
    let mut last: Option<Instant> = None;
    let observer = move |now: u64, end: u64| -> Result<(), String> {
        if last.is_some_and(|t| t.elapsed() < POLL) {
            return Ok(());
        }
        last = Some(Instant::now());
        Python::with_gil(|py| -> PyResult<()> {
            py.check_signals()?;
            if let Some(cb) = &progress {
                cb.call1(py, (now as f64 / 1e9, end as f64 / 1e9))?;
            }
            Ok(())
        })
        .map_err(|e| {
            let msg = e.to_string();
            *stash.lock().unwrap() = Some(e);
            msg
        })
    };
    let r = py.allow_threads(|| {
        mobmem_device::session::run::run_file_observed(&scenario, std::path::Path::new(&data_dir), &overrides, seed, Some(Box::new(observer)))
    });
    if let Some(e) = stopped.lock().unwrap().take() {
        return Err(e);
    }
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Check a session's inputs (scenario, overrides, seed) without running it: ValueError as
/// `session_run` would raise it, before any simulation.
#[pyfunction]
#[pyo3(signature = (scenario, data_dir, overrides=Vec::new(), seed=None))]
fn session_check(scenario: String, data_dir: String, overrides: Pairs, seed: Option<u64>) -> PyResult<()> {
    mobmem_device::session::run::check(&scenario, std::path::Path::new(&data_dir), &overrides, seed).map_err(PyValueError::new_err)
}

/// The seed of the scenario file at `path` (bad file: ValueError with FILE:LINE:COL).
#[pyfunction]
fn scenario_seed(path: String) -> PyResult<u64> {
    mobmem_device::scenario::seed_of(&path).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// The settings of device `name` of `data_dir`: (`kernel.*` pairs of its `[kernel]` table, runtime
/// pairs of its `[runtime]` table). An unknown name or a bad file raises ValueError.
#[pyfunction]
fn device_settings(data_dir: String, name: String) -> PyResult<(Pairs, Pairs)> {
    let d = mobmem_device::device::load_named(std::path::Path::new(&data_dir), &name).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((d.kernel_settings(), d.runtime_settings()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay_trace, m)?)?;
    m.add_function(wrap_pyfunction!(device_settings, m)?)?;
    m.add_function(wrap_pyfunction!(check_trace, m)?)?;
    m.add_function(wrap_pyfunction!(parse_trace, m)?)?;
    m.add("TRACE_OPS", mobmem_kernel::trace::OP_NAMES.to_vec())?;
    m.add("MADVISE_ADVICE", mobmem_kernel::madvise::Advice::NAMES.to_vec())?;
    m.add_function(wrap_pyfunction!(debug_build, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_run, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_gcbench, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_bench, m)?)?;
    m.add_function(wrap_pyfunction!(systems, m)?)?;
    m.add_function(wrap_pyfunction!(system, m)?)?;
    m.add_function(wrap_pyfunction!(mmu_rows, m)?)?;
    m.add_function(wrap_pyfunction!(table_columns, m)?)?;
    m.add_function(wrap_pyfunction!(meminfo_categories, m)?)?;
    m.add_function(wrap_pyfunction!(system_settings, m)?)?;
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(session_run, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_seed, m)?)?;
    m.add_function(wrap_pyfunction!(session_check, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Which simulator code this is, independent of the machine and checkout (build.rs).
    m.add("SOURCE_HASH", env!("MOBMEM_SOURCE_HASH"))?;
    Ok(())
}
