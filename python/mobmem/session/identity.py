"""Bit-identical results across a change: the check every refactor of the simulator must pass.

:data:`RUNS` is a fixed set of short sessions that exercises every collector but the no-GC baseline, memory pressure,
zram, breadth-first tracing, a runtime policy and a session service. :func:`record` runs them and returns each
result without its wall-clock fields (:func:`mobmem.session.deterministic_view`);
:func:`save` writes them to a directory before a change, and :func:`differences` compares a
later run with the saved files, naming the first fields that differ. ``mobmem bench identical
--save DIR`` / ``--check DIR`` is the command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from mobmem.errors import MobmemError

_HOT = ("session.time_scale=0.1",)
#: (label, scenario, settings): the fixed set of runs.
RUNS: list[tuple[str, str, tuple[str, ...]]] = [
    ("cc", "demo_hot_launch", _HOT),
    ("ms", "demo_hot_launch", (*_HOT, "system.collector=ms")),
    ("cmc", "demo_hot_launch", (*_HOT, "system.collector=cmc")),
    ("ms-otf", "demo_hot_launch", (*_HOT, "system.collector=ms-otf")),
    ("pressure", "demo_hot_launch", (*_HOT, "kernel.ram_mib=2560")),
    ("bfs-segregate", "demo_caching", (*_HOT, "trace_order=bfs", "system.policies=segregate-by-state", "kernel.ram_mib=2560")),
    ("ss", "demo_caching", (*_HOT, "system.collector=ss")),
    ("zram", "demo_caching", (*_HOT, "kernel.ram_mib=2560", "kernel.swap=zram")),
    ("gc-service", "demo_caching", (*_HOT, "kernel.ram_mib=2560", "system.services=gc_service")),
]


def _job(args: tuple[str, str, tuple[str, ...]]) -> tuple[str, dict]:
    label, scenario, settings = args
    from mobmem import session

    return label, session.deterministic_view(session.run(scenario, list(settings)))


def record(runs: list[tuple[str, str, tuple[str, ...]]] | None = None, jobs: int = 1, on_run: Callable[[str], None] | None = None) -> dict[str, dict]:
    """Every run's result without its wall-clock fields, by label."""
    runs = RUNS if runs is None else runs
    out: dict[str, dict] = {}

    def done(r: tuple[str, dict]) -> None:
        out[r[0]] = r[1]
        if on_run:
            on_run(r[0])

    from mobmem.session.pool import run_all

    run_all(_job, runs, jobs, done)
    return {label: out[label] for label, _, _ in runs}


def save(directory: Path, results: dict[str, dict]) -> None:
    """One ``LABEL.json`` per run (keys sorted), written atomically."""
    from mobmem.session.output import atomic_write

    directory.mkdir(parents=True, exist_ok=True)
    for label, res in results.items():
        atomic_write(directory / f"{label}.json", json.dumps(res, sort_keys=True, indent=1) + "\n")


def _diff(a, b, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit or a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}.{k}: {'only after' if k not in a else 'only before'}")
            else:
                _diff(a[k], b[k], f"{path}.{k}", out, limit)
            if len(out) >= limit:
                return
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{path}[{i}]", out, limit)
    else:
        out.append(f"{path}: {json.dumps(a)[:60]} before, {json.dumps(b)[:60]} after")


def differences(directory: Path, results: dict[str, dict], limit: int = 5) -> dict[str, list[str]]:
    """Per run whose result differs from the saved one: its first ``limit`` differing fields
    (``.gc.count: 41 before, 42 after``). A run with no saved file is an error."""
    out: dict[str, list[str]] = {}
    for label, res in results.items():
        f = directory / f"{label}.json"
        try:
            saved = json.loads(f.read_text())
        except OSError as e:
            raise MobmemError(f"{f}: {e.strerror} (save the reference first: --save {directory})") from None
        except json.JSONDecodeError as e:
            raise MobmemError(f"{f}:{e.lineno}:{e.colno}: not a saved result ({e.msg})") from None
        found: list[str] = []
        _diff(saved, json.loads(json.dumps(res)), "", found, limit)
        if found:
            out[label] = found
    return out
