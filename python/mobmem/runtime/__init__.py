"""The runtime model seen from Python: run an app's runtime or GCBench on a device model.

The core layers the settings as sessions do: model defaults ← the device profile (the
``[kernel]`` and ``[runtime]`` tables of ``data/devices/NAME.toml``) ← the calibration file
``data/runtime_costs.toml`` ← the user's ``--heap``/``--collector``/``--set`` values
(``kernel.*`` to the kernel, ``app.*`` to the app, the rest to the runtime). An app is one of the
session app profiles (``data/apps/NAME.toml``, listed by ``mobmem.catalog.names("apps")``) or a
``synthetic:key=value,…`` spec. Bad input raises :class:`mobmem.errors.MobmemError`.
"""

from __future__ import annotations

import json

from mobmem import catalog, pairs
from mobmem.errors import MobmemError
from mobmem.paths import DATA


def _call(fn, *args):
    try:
        return json.loads(fn(*args))
    except ValueError as e:
        if isinstance(e, json.JSONDecodeError):
            raise
        raise MobmemError(str(e)) from None


def _settings(collector: str | None, heap: str | None, settings: list[str] | None) -> list[pairs.Pair]:
    out = pairs.parse(settings)
    if collector is not None:
        out.append(("collector", catalog.collector(collector)))
    if heap:
        out.append(("heap", heap))
    return out


def run(
    app: str,
    collector: str | None = None,
    heap: str | None = None,
    seconds: float = 10.0,
    state: str = "fg",
    device: str | None = None,
    settings: list[str] | None = None,
    policies: list[str] | None = None,
    alloc: str | None = None,
) -> dict:
    """Run one app's runtime and return the result dict (keys ``gcs``, ``summary``, ``oom``, ``log``,
    ``frames``…): for ``seconds`` of simulated time, or with ``alloc`` (a size such as ``"2g"``, or
    ``"12x"``: twelve times the app's foreground live heap) until the app has allocated that much — a
    fixed amount of work whatever the collector and heap."""
    from mobmem import _core

    if state not in ("fg", "bg"):
        raise MobmemError(f"--state must be fg or bg, got {state!r}")
    if not (0 <= seconds <= 86400):
        raise MobmemError(f"--seconds must be within [0, 86400], got {seconds}")
    s = _settings(collector, heap, settings)
    return _call(_core.runtime_run, str(DATA), app, device or None, s, float(seconds), state, list(policies or []), alloc)


def gcbench(
    collector: str | None = None, heap: str | None = None, device: str | None = None, settings: list[str] | None = None, params: dict | None = None
) -> dict:
    """Run the simulated GCBench and return the result dict."""
    from mobmem import _core

    p = [(k, str(v)) for k, v in (params or {}).items()]
    return _call(_core.runtime_gcbench, str(DATA), device or None, _settings(collector, heap, settings), p)


def bench(objects: int = 2_000_000, allocations: int = 20_000_000) -> dict:
    from mobmem import _core

    return json.loads(_core.runtime_bench(objects, allocations))
