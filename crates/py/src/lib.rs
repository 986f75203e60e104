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

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(replay_trace, m)?)?;
    m.add_function(wrap_pyfunction!(check_trace, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_setting_keys, m)?)?;
    m.add_function(wrap_pyfunction!(debug_build, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
