"""The kernel model seen from Python: replay a page trace and get the JSON result.

Settings are layered as in the Rust core: model defaults ← device profile ([kernel] table of
``python/mobmem/data/devices/NAME.toml``) ← the trace header (ram, swap) ← ``--set`` values.
Errors in the trace or settings raise :class:`mobmem.errors.MobmemError` with the Rust core's
``FILE:LINE: problem`` message.
"""

from __future__ import annotations

import json
from pathlib import Path

from mobmem.errors import MobmemError
from mobmem.paths import DEVICES

DEVICES_DIR = DEVICES


def device_names() -> list[str]:
    return sorted(p.stem for p in DEVICES_DIR.glob("*.toml"))


def load_device(name: str) -> dict:
    """Read a device profile (TOML). Unknown names list the known ones."""
    import tomllib

    path = DEVICES_DIR / f"{name}.toml"
    if not path.is_file():
        raise MobmemError(f"unknown device {name!r}; known devices: {', '.join(device_names())}")
    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise MobmemError(f"{path}: {e}") from None


def device_kernel_settings(name: str | None) -> list[tuple[str, str]]:
    """The device's [kernel] table as ("kernel.key", "value") pairs (booleans/numbers as text)."""
    if not name:
        return []
    dev = load_device(name)
    kernel = dev.get("kernel", {})
    out = []
    for k, v in kernel.items():
        if isinstance(v, dict):  # sub-tables like [kernel.cost]
            out.extend((f"kernel.{k}.{kk}", _text(vv)) for kk, vv in v.items() if kk != "source")
        elif k != "source" and not k.endswith("_source"):
            out.append((f"kernel.{k}", _text(v)))
    return out


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
            k, sep, v = it.partition("=")
            if not sep:
                raise MobmemError(f"--set {it!r}: expected key=value")
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
