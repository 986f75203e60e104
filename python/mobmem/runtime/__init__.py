"""The runtime model seen from Python: run an app's runtime or GCBench on a device model.

Settings are layered as in the Rust core: model defaults ← device profile ([kernel] and [runtime]
tables of ``python/mobmem/data/devices/NAME.toml``) ← the calibration file
``python/mobmem/data/runtime_costs.toml`` ← the user's ``--heap``/``--collector``/``--set`` values.
App profiles come from ``python/mobmem/data/runtime_apps.toml`` or a ``synthetic:key=value,…`` spec.
Bad input raises :class:`mobmem.errors.MobmemError`.
"""

from __future__ import annotations

import json
from pathlib import Path

from mobmem import catalog
from mobmem.errors import MobmemError
from mobmem.paths import RUNTIME_APPS_FILE, RUNTIME_COSTS_FILE

COSTS_FILE = RUNTIME_COSTS_FILE
APPS_FILE = RUNTIME_APPS_FILE


def _toml(path: Path) -> dict:
    import tomllib

    try:
        with path.open("rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise MobmemError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise MobmemError(f"{path}: {e}") from None


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def cost_settings(path: Path | None = None) -> list[tuple[str, str]]:
    """The calibration file's [cost] table as ("cost.NAME", "value") pairs."""
    data = _toml(path or COSTS_FILE)
    return [(f"cost.{k}", _text(v)) for k, v in data.get("cost", {}).items()]


def device_settings(name: str | None) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(kernel pairs, runtime pairs) of a device profile; ([], []) without a device."""
    if not name:
        return [], []
    from mobmem.kernel import model

    return model.device_settings(name)


def app_names() -> list[str]:
    return sorted(_toml(APPS_FILE).keys())


def app_settings(app: str) -> list[tuple[str, str]]:
    """Settings of a named app profile; [] for synthetic specs (parsed by the core)."""
    if app.startswith("synthetic"):
        return []
    apps = _toml(APPS_FILE)
    if app not in apps:
        raise MobmemError(f"unknown app {app!r}; known apps: {', '.join(sorted(apps))}, or synthetic:footprint=180m,objsize=512")
    return [(k, _text(v)) for k, v in apps[app].items() if k != "description"]


def split_settings(items: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """``--set`` values: ``kernel.x=…`` → kernel, ``app.x=…`` → app, anything else → runtime."""
    kernel, runtime, app = [], [], []
    for it in items:
        k, sep, v = it.partition("=")
        if not sep or not k.strip():
            raise MobmemError(f"--set {it!r}: expected key=value")
        k = k.strip()
        if k.startswith("kernel."):
            kernel.append((k, v.strip()))
        elif k.startswith("app."):
            app.append((k[4:], v.strip()))
        else:
            runtime.append((k, v.strip()))
    return kernel, runtime, app


def _call(fn, *args):
    try:
        return json.loads(fn(*args))
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError):
            raise
        raise MobmemError(str(e)) from None


def run(
    app: str,
    collector: str | None = None,
    heap: str | None = None,
    seconds: float = 10.0,
    state: str = "fg",
    device: str | None = None,
    settings: list[str] | None = None,
    policies: list[str] | None = None,
) -> dict:
    """Run one app's runtime and return the result dict (keys ``gcs``, ``summary``, ``oom``, ``log``…)."""
    from mobmem import _core

    if collector is not None:
        collector = catalog.collector(collector)
    if state not in ("fg", "bg"):
        raise MobmemError(f"--state must be fg or bg, got {state!r}")
    if not (0 <= seconds <= 86400):
        raise MobmemError(f"--seconds must be within [0, 86400], got {seconds}")
    dk, dr = device_settings(device)
    uk, ur, ua = split_settings(settings or [])
    rt = [*dr, *cost_settings(), *ur]
    if collector:
        rt.append(("collector", collector))
    if heap:
        rt.append(("heap", heap))
    return _call(_core.runtime_run, [*dk, *uk], rt, app, [*app_settings(app), *ua], float(seconds), state, list(policies or []))


def gcbench(
    collector: str | None = None, heap: str | None = None, device: str | None = None, settings: list[str] | None = None, params: dict | None = None
) -> dict:
    """Run the simulated GCBench and return the result dict."""
    from mobmem import _core

    if collector is not None:
        collector = catalog.collector(collector)
    dk, dr = device_settings(device)
    uk, ur, _ = split_settings(settings or [])
    rt = [*dr, *cost_settings(), *ur]
    if collector:
        rt.append(("collector", collector))
    if heap:
        rt.append(("heap", heap))
    p = [(k, _text(v)) for k, v in (params or {}).items()]
    return _call(_core.runtime_gcbench, [*dk, *uk], rt, p)


def bench(objects: int = 2_000_000, allocations: int = 20_000_000) -> dict:
    from mobmem import _core

    return json.loads(_core.runtime_bench(objects, allocations))
