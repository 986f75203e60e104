"""Parameter sweeps: a grid of settings × systems × devices × seeds, one tidy table.

``mobmem sweep SCENARIO --grid 'kernel.swappiness=60,100,160' --grid 'system.collector=cc,cmc'
--systems stock --devices pixel3,pixel7pro --seeds 5`` runs every combination (the cartesian
product of the grid, in the order given) and returns one row per run: the scenario, device,
system, seed, each grid key's value, the run's key and the compared metrics of
:func:`mobmem.session.compare.metrics`.

Each run is keyed by a content hash of what determines its result: the scenario file's bytes,
the device, the named system's settings, the grid point, the user's other settings, the seed and
the code version (a hash of the compiled core and of the package's data files). With ``out``,
every run's files go to ``out/runs/KEY/`` as it finishes, and ``resume`` reuses a run whose key
is already there — wherever the scenario file lives and whatever the directory was called, and
never a run of other code or inputs. ``sweep.csv`` and ``sweep.json`` are written at the end.

Runs are independent and deterministic; they go to the executor (:mod:`mobmem.session.executor`:
local worker processes by default, Ray on request).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from pathlib import Path
from typing import Callable, Mapping, Sequence

from mobmem.errors import MobmemError
from mobmem.session.provenance import code_version, file_hash, run_device

#: Columns of every row before the grid keys and the metrics.
ID_COLUMNS = ["scenario", "device", "system", "seed", "key"]


def parse_grid(specs: Sequence[str]) -> dict[str, list[str]]:
    """``["kernel.swappiness=60,100", …]`` → ``{"kernel.swappiness": ["60", "100"], …}``."""
    grid: dict[str, list[str]] = {}
    for s in specs:
        key, sep, vals = str(s).partition("=")
        key = key.strip()
        values = [v.strip() for v in vals.split(",")]
        if not sep or not key or not any(values) or any(not v for v in values):
            raise MobmemError(f"--grid {s!r}: expected KEY=VALUE[,VALUE…] with no empty value")
        if key in grid:
            raise MobmemError(f"--grid {key}: given twice (list all its values in one --grid)")
        dup = sorted({v for v in values if values.count(v) > 1})
        if dup:
            raise MobmemError(f"--grid {key}: value {dup[0]} given twice")
        grid[key] = values
    return grid


def points(grid: Mapping[str, Sequence[object]]) -> list[dict[str, str]]:
    """The grid's points: the cartesian product in the order given (the last key varies fastest)."""
    keys = list(grid)
    return [dict(zip(keys, (str(v) for v in combo))) for combo in itertools.product(*(list(grid[k]) for k in keys))]


def run_key(scenario: Path, settings: Sequence[tuple[str, str]], system: str, seed: int) -> str:
    """The content hash that names a run (see the module docstring)."""
    h = hashlib.sha256()
    file_hash(h, scenario)
    h.update(
        json.dumps(
            {"settings": [list(p) for p in settings], "system": system, "seed": int(seed), "code": code_version(run_device(scenario, settings))}, sort_keys=True
        ).encode()
    )
    return h.hexdigest()[:20]


def _job(args: tuple) -> tuple[str, dict]:
    """One run in a worker (picklable): (key, result)."""
    key, scenario, system, seed, pairs = args
    from mobmem import session

    res = session.run(scenario, pairs, seed=seed, system=system)
    return key, res


def sweep(
    scenario: str | os.PathLike,
    grid: Mapping[str, Sequence[object]],
    systems: Sequence[str] = ("stock",),
    devices: Sequence[str] | None = None,
    seeds: int = 1,
    seed: int | None = None,
    set: Mapping[str, object] | Sequence[str] | None = None,
    jobs: int = 1,
    executor: str = "local",
    address: str | None = None,
    out: str | os.PathLike | None = None,
    resume: bool = False,
    progress: Callable[[dict, bool], None] | None = None,
):
    """Run the sweep and return its tidy DataFrame (see the module docstring). ``devices``
    default to the scenario's own; ``set`` holds settings applied to every run (the grid's
    values win over them); ``executor`` is ``local`` (``jobs`` worker processes) or ``ray``
    (``address``: a ``ray://`` URL, or none to start a local Ray). ``progress(row, reused)`` is
    called as each run finishes. Every input is checked before the first run: an unknown key or
    a bad value raises :class:`MobmemError` with one line."""
    from mobmem import session
    from mobmem.pairs import strings as _settings
    from mobmem.session import systems as systems_mod
    from mobmem.session.compare import metrics
    from mobmem.tables import frame as _frame

    path = session.resolve_scenario(scenario)
    if not grid:
        raise MobmemError("--grid: give at least one KEY=VALUE[,VALUE…]")
    if seeds < 1:
        raise MobmemError(f"--seeds must be at least 1, got {seeds}")
    if not systems:
        raise MobmemError("--systems: give at least one system")
    for s in systems:
        systems_mod.get(s)
    base = session.scenario_seed(path) if seed is None else seed
    seed_list = [base + i for i in range(seeds)]
    for s in seed_list:
        session.check_seed(s)
    user = session.parse_settings(_settings(set))
    grid_keys = [str(k) for k in grid]
    for k in grid_keys:
        if k == "session.device":
            raise MobmemError("--grid session.device: sweep devices with --devices")
    devs = list(devices) if devices else [None]
    plan = []  # (row, job)
    for dev in devs:
        dev_pairs = [("session.device", dev)] if dev else []
        for pt in points(grid):
            pt_pairs = list(pt.items())
            for sysname in systems:
                pairs = [*user, *dev_pairs, *pt_pairs]
                sys_pairs = systems_mod.settings_for(sysname, path, pairs)
                try:
                    session.check(path, [*sys_pairs, *pairs])
                except MobmemError as e:
                    msg = str(e).removeprefix("--set: ")
                    raise MobmemError(f"--grid {', '.join(f'{k}={v}' for k, v in pt.items())}: {msg}") from None
                for sd in seed_list:
                    key = run_key(path, [*sys_pairs, *pairs], sysname, sd)
                    row = {"scenario": None, "device": dev, "system": sysname, "seed": sd, "key": key, **pt}
                    plan.append((row, (key, str(path), sysname, sd, pairs)))
    from mobmem.files import atomic_write, csv_text, deferred_interrupts, out_dir_lock
    from mobmem.session.output import write_outputs

    outp = Path(out) if out is not None else None
    if outp is not None:
        from mobmem.files import check_out_dir

        check_out_dir(outp)
    if resume and outp is None:
        raise MobmemError("--resume needs --out (the directory of the earlier sweep)")
    rows_by_key: dict[str, dict] = {}
    todo: dict[str, tuple] = {}  # key → (row, job): one run per key

    def finish(row: dict, res: dict) -> dict:
        r = dict(row)
        r["scenario"] = res.get("scenario")
        r["device"] = res.get("device")
        r.update(metrics(res)["overall"])
        return r

    with out_dir_lock(outp):
        for row, job in plan:
            key = row["key"]
            if key in rows_by_key or key in todo:
                continue
            prev = None
            if resume:
                try:
                    prev = json.loads((outp / "runs" / key / "summary.json").read_text())
                except (OSError, ValueError):
                    prev = None
            if prev is not None:
                rows_by_key[key] = finish(row, prev)
                if progress:
                    progress(rows_by_key[key], True)
            else:
                todo[key] = (row, job)

        def done(r: tuple[str, dict]) -> None:
            key, res = r
            with deferred_interrupts():
                if outp is not None:
                    write_outputs(res, outp / "runs" / key)
                rows_by_key[key] = finish(todo[key][0], res)
                if progress:
                    progress(rows_by_key[key], False)

        from mobmem.session.executor import run_jobs

        run_jobs(_job, [job for _, job in todo.values()], done, jobs=jobs, executor=executor, address=address)
        rows = [rows_by_key[row["key"]] for row, _ in plan]
        df = _frame(rows, [*ID_COLUMNS, *grid_keys])
        if outp is not None:
            atomic_write(outp / "sweep.csv", csv_text(rows, list(df.columns)))
            doc = {
                "scenario": str(path),
                "grid": {k: [str(v) for v in grid[k]] for k in grid_keys},
                "systems": list(systems),
                "devices": devs,
                "seeds": seed_list,
                "settings": [list(p) for p in user],
                "code_version": code_version(),
                "rows": rows,
            }
            atomic_write(outp / "sweep.json", json.dumps(doc, indent=1) + "\n")
    return df
