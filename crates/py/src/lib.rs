//! `mobmem._core`: the Rust simulation core as a Python module.
//!
//! Results cross the boundary as JSON strings (parsed by `mobmem.kernel.model`), which keeps the
//! binding thin and the result format identical to what the CLI prints. Long runs release the GIL.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

type Pairs = Vec<(String, String)>;

/// Replay a page trace in the kernel model. `device` and `user` are (key, value) settings applied
/// before and after the trace header. Returns the JSON result as a string; bad input raises
/// ValueError with "FILE:LINE: problem".
#[pyfunction]
#[pyo3(signature = (path, device=Vec::new(), user=Vec::new()))]
fn replay_trace(py: Python<'_>, path: String, device: Pairs, user: Pairs) -> PyResult<String> {
    let r = py.allow_threads(|| mobmem_kernel::replay::replay_file(&path, &device, &user));
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Check a trace file without running it; returns (ops, touches) or raises ValueError.
#[pyfunction]
fn check_trace(path: String) -> PyResult<(u64, u64)> {
    let t = mobmem_kernel::trace::parse_file(&path).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((t.ops.len() as u64, t.touches))
}

/// The names accepted by `kernel.<name>` settings.
#[pyfunction]
fn kernel_setting_keys() -> Vec<&'static str> {
    mobmem_kernel::KernelConfig::KEYS.to_vec()
}

/// Whether this build has debug assertions (invariant checks) enabled.
#[pyfunction]
fn debug_build() -> bool {
    cfg!(debug_assertions)
}

// ---------------------------------------------------------------------- runtime (issue 3)

/// Run one app's runtime on the device model for `seconds` after its start-up. `kernel` and
/// `runtime` are (key, value) settings (device tables first, then calibration, then the user's);
/// `app` is a profile name or a `synthetic:…` spec with `app_settings` applied on top. Returns
/// the JSON result (keys `gcs`, `summary`, `oom`, `log`, …); bad input raises ValueError.
#[pyfunction]
#[pyo3(signature = (kernel, runtime, app, app_settings=Vec::new(), seconds=10.0, state="fg".to_string(), policies=Vec::new()))]
fn runtime_run(py: Python<'_>, kernel: Pairs, runtime: Pairs, app: String, app_settings: Pairs, seconds: f64, state: String, policies: Vec<String>) -> PyResult<String> {
    let st = mobmem_runtime::AppState::parse(&state).ok_or_else(|| PyValueError::new_err(format!("state must be fg or bg, got {state:?}")))?;
    let r = py.allow_threads(|| {
        mobmem_runtime::sim::run_app(&mobmem_runtime::sim::RunOptions {
            kernel: &kernel,
            runtime: &runtime,
            app: &app,
            app_settings: &app_settings,
            seconds,
            state: st,
            policies: &policies,
        })
    });
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Run the simulated GCBench; `params` may set stretch_depth, long_lived_depth, array_doubles,
/// min_depth, max_depth, node_ns.
#[pyfunction]
#[pyo3(signature = (kernel, runtime, params=Vec::new()))]
fn runtime_gcbench(py: Python<'_>, kernel: Pairs, runtime: Pairs, params: Pairs) -> PyResult<String> {
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
    let r = py.allow_threads(|| mobmem_runtime::sim::run_gcbench(&kernel, &runtime, &p));
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

/// Runtime model throughput benchmarks (tracing refs/s, allocation objects/s), JSON.
#[pyfunction]
#[pyo3(signature = (objects=2_000_000, allocations=20_000_000))]
fn runtime_bench(py: Python<'_>, objects: u64, allocations: u64) -> String {
    py.allow_threads(|| mobmem_runtime::bench::run_all(objects, allocations).to_string())
}

/// The names accepted by `runtime.<name>` settings, app settings, and the runtime policies.
#[pyfunction]
fn runtime_setting_keys() -> (Vec<&'static str>, Vec<&'static str>, Vec<(&'static str, &'static str)>) {
    (
        mobmem_runtime::RuntimeConfig::KEYS.to_vec(),
        mobmem_runtime::workload::AppProfile::KEYS.to_vec(),
        mobmem_runtime::hooks::POLICIES.iter().map(|(n, d, _)| (*n, *d)).collect(),
    )
}

// ---------------------------------------------------------------------- sessions (issue 4)

/// Run a scenario file on the simulated phone. `data_dir` holds devices/, apps/, system.toml
/// and runtime_costs.toml; `overrides` are the user's `--set` pairs; `seed` replaces the
/// scenario's seed. Returns the result JSON; bad input raises ValueError naming file and field.
#[pyfunction]
#[pyo3(signature = (scenario, data_dir, overrides=Vec::new(), seed=None))]
fn session_run(py: Python<'_>, scenario: String, data_dir: String, overrides: Pairs, seed: Option<u64>) -> PyResult<String> {
    let r = py.allow_threads(|| mobmem_device::session::run_file(&scenario, std::path::Path::new(&data_dir), &overrides, seed));
    r.map(|v| v.to_string()).map_err(PyValueError::new_err)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay_trace, m)?)?;
    m.add_function(wrap_pyfunction!(check_trace, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_setting_keys, m)?)?;
    m.add_function(wrap_pyfunction!(debug_build, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_run, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_gcbench, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_bench, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_setting_keys, m)?)?;
    m.add_function(wrap_pyfunction!(session_run, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
