"""The kernel model seen from Python: replay a page trace and get the JSON result.

Settings are layered as in the Rust core: model defaults ← device profile ([kernel] table of
``python/mobmem/data/devices/NAME.toml``) ← the trace header (ram, swap) ← ``--set`` values.
Errors in the trace or settings raise :class:`mobmem.errors.MobmemError` with the Rust core's
``FILE:LINE: problem`` message.
"""

from __future__ import annotations

import json
from pathlib import Path

from mobmem import pairs
from mobmem.errors import MobmemError


def device_names() -> list[str]:
    from mobmem import catalog

    return catalog.names("devices")


def device_settings(name: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(``kernel.*`` pairs of the device's [kernel] table, runtime pairs of its [runtime] table),
    read by the core; an unknown device lists the known ones."""
    from mobmem import _core
    from mobmem.paths import DATA

    try:
        kernel, runtime = _core.device_settings(str(DATA), name)
    except ValueError as e:
        raise MobmemError(str(e)) from None
    return [tuple(p) for p in kernel], [tuple(p) for p in runtime]


def device_kernel_settings(name: str | None) -> list[tuple[str, str]]:
    """The device's [kernel] table as ("kernel.key", "value") pairs; [] without a device."""
    return device_settings(name)[0] if name else []


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def normalise_settings(settings: dict | list | None) -> list[tuple[str, str]]:
    """Accept {"kernel.x": 1} or [("x", "1")] or ["x=1"]; keys get the ``kernel.`` prefix."""
    if not settings:
        return []
    items = settings.items() if isinstance(settings, dict) else settings
    out = []
    for it in items:
        if isinstance(it, str):
            ((k, v),) = pairs.parse([it])
        else:
            k, v = it
        k = k.strip()
        if not k.startswith("kernel."):
            k = "kernel." + k
        out.append((k, _text(v)))
    return out


def replay(trace_path: str | Path, device: str | None = None, settings: dict | list | None = None) -> dict:
    """Replay ``trace_path`` in the kernel model and return the result dict
    (keys ``vmstat``, ``meminfo``, ``kills``, ``per_process``, ``psi``, ``watermarks``,
    ``kswapd``, ``timeseries``, ``config``, ``trace``, ``wall``)."""
    from mobmem import _core

    path = str(trace_path)
    if not Path(path).is_file():
        raise MobmemError(f"{path}: no such trace file")
    try:
        text = _core.replay_trace(path, device_kernel_settings(device), normalise_settings(settings))
    except ValueError as e:
        raise MobmemError(str(e)) from None
    return json.loads(text)


def result_json(res: dict) -> dict:
    """A replay result as printed and written: the documented keys first; wall time kept apart
    (not deterministic)."""
    out = {k: res[k] for k in ("vmstat", "meminfo", "kills", "per_process")}
    for k in ("psi", "watermarks", "kswapd", "trace", "config", "timeseries", "wall"):
        out[k] = res[k]
    return out


def write_outputs(res: dict, out: Path) -> None:
    """A replay result as files in ``out``: ``result.json`` and the CSV tables ``timeseries.csv``,
    ``per_process.csv`` and ``kills.csv`` (each written atomically)."""
    from mobmem.files import atomic_write, csv_text

    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MobmemError(f"--out {out}: {e.strerror}") from None
    ts = res["timeseries"]
    cols = list(ts.keys())
    series_rows = [dict(zip(cols, vals)) for vals in zip(*(ts[c] for c in cols))]
    atomic_write(out / "result.json", json.dumps(result_json(res), indent=1) + "\n")
    atomic_write(out / "timeseries.csv", csv_text(series_rows, cols))
    atomic_write(out / "per_process.csv", csv_text(res["per_process"]))
    atomic_write(out / "kills.csv", csv_text(res["kills"]))
