"""The Python API: sessions, comparisons and sweeps as pandas DataFrames.

::

    import mobmem
    r = mobmem.run("demo_hot_launch", system="stock", seed=1, set={"kernel.swappiness": 100})
    r.launches[["app", "kind", "ttid_ms"]]          # one row per launch
    r.timeline.plot(x="t_s", y="free_mib")          # the phone's memory over time
    df = mobmem.compare("demo_hot_launch", systems=["stock", "zram"], seeds=3)

- :func:`run` — one session → :class:`Result`, whose attributes are DataFrames with stable
  column names that carry their unit (``t_s``, ``ttid_ms``, ``rss_mib``, ``rss_kb``);
- :func:`load` — a :class:`Result` from a run directory written by ``mobmem run --out`` or by
  :meth:`Result.write`;
- :func:`compare` — several named systems × seeds → a tidy frame, one row per run;
- :func:`sweep` — a grid of settings × systems × seeds → a tidy frame (see
  :mod:`mobmem.session.sweep`).

A table with no rows still has its columns, and counters that stayed at zero are present with
0 (the core reports every counter). Everything here is a view of the session result
(:mod:`mobmem.session`): ``Result.raw`` is that dict.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Mapping, Sequence  # noqa: F401  (signatures)

from mobmem.errors import MobmemError
from mobmem.pairs import strings as _settings
from mobmem.tables import frame as _frame


class Result:
    """One session's result; each table is a pandas DataFrame built on first use."""

    def __init__(self, raw: dict):
        self.raw = raw
        self._cache: dict[str, object] = {}

    def __repr__(self) -> str:
        r = self.raw
        return (
            f"<mobmem.Result {r.get('scenario')!r} system={r.get('system_name')!r} seed={r.get('seed')} "
            f"{r.get('sim_seconds', 0):.0f} simulated s, {len(r.get('launches', []))} launches, {len(r.get('kills', []))} kills>"
        )

    def _get(self, name: str, build):
        if name not in self._cache:
            self._cache[name] = build()
        return self._cache[name]

    def _series(self, key: str):
        """One of the result's series (:data:`mobmem.session.output.SERIES`) with its columns."""
        from mobmem.session.output import SERIES

        return self._get(key, lambda: _frame(self.raw.get(key, []), SERIES[key]))

    @property
    def summary(self) -> dict:
        """The result without its bulky series (what ``summary.json`` holds)."""
        from mobmem import session

        return session.summary(self.raw)

    @property
    def metrics(self) -> dict:
        """The numbers ``mobmem compare`` compares (hot-launch percentiles, cached apps, kills,
        refaults, reclaim, jank, GCs), ``None`` where the run has no such launch."""
        from mobmem.session.compare import metrics

        return metrics(self.raw)

    @property
    def launches(self):
        """One row per launch: ``index, t_s, app, kind, relaunch, ttid_ms``, the launch breakdown
        (``*_ms`` times and counts), ``objects_*`` and ``alive_after, cached_after``."""
        from mobmem.session.output import LAUNCH_FIELDS, launch_rows

        def build():
            return _frame(launch_rows(self.raw), LAUNCH_FIELDS)

        return self._get("launches", build)

    @property
    def kills(self):
        """One row per kill: ``t_s, app, is_app, process, oom_score_adj, reason, killer, rss_kb,
        swap_kb, swap_used_kb, free_kb`` (the last two: the phone's swap in use and free memory when
        the kill was decided; empty in results saved before they were recorded)."""
        from mobmem.session.output import KILL_FIELDS, kill_rows

        return self._get("kills", lambda: _frame(kill_rows(self.raw), KILL_FIELDS))

    @property
    def timeline(self):
        """The phone's time series, one row per sample (``session.sample_ms``): ``t_s``, memory in
        MiB, apps alive and cached, PSI, cumulative reclaim counters."""
        return self._series("timeline")

    @property
    def app_memory(self):
        """Each live app's ``rss_mib, pss_mib, swap_mib`` and its RSS by ``dumpsys meminfo``
        category (``java_heap_mib`` … ``other_mib``) every ``session.app_sample_ms``."""
        return self._series("app_memory")

    @property
    def vmstat(self):
        """``/proc/vmstat`` at the end of the session, tidy: one row per ``counter`` with its
        ``value`` (counters that stayed at zero included)."""
        return self._get("vmstat", lambda: _frame([{"counter": k, "value": v} for k, v in self.raw.get("vmstat", {}).items()], ["counter", "value"]))

    @property
    def gc(self):
        """One row per collection: ``t_s, app, collector, type, cause, state, duration_ms,
        pause_ms, gc_cpu_ms, freed_bytes, objects_touched, pages_touched, major_faults``."""
        from mobmem.session.output import GC_FIELDS

        return self._get("gc", lambda: _frame(self.raw.get("gcs", []), GC_FIELDS))

    @property
    def gc_phases(self):
        """One row per phase of a collection (``gc`` is the row of :attr:`gc`)."""
        return self._series("gc_phases")

    @property
    def frames(self):
        """Frames per app: ``app, frames, janky, jank_ratio, missed_vsyncs, max_frame_ms``."""

        def build():
            rows = []
            for app, t in self.raw.get("per_app", {}).items():
                f = t.get("frames", {})
                n, j = f.get("frames", 0), f.get("janky", 0)
                rows.append(
                    {
                        "app": app,
                        "frames": n,
                        "janky": j,
                        "jank_ratio": j / n if n else 0.0,
                        "missed_vsyncs": f.get("missed_vsyncs", 0),
                        "max_frame_ms": f.get("max_frame_ms", 0.0),
                    }
                )
            return _frame(rows, ["app", "frames", "janky", "jank_ratio", "missed_vsyncs", "max_frame_ms"])

        return self._get("frames", build)

    @property
    def janky_frames(self):
        """Every frame that missed its vsync: ``t_s`` (the vsync it was due at), ``app, dur_ms``."""
        return self._series("janky_frames")

    @property
    def mutator_stops(self):
        """Every interval an app's main thread was stopped by its collector: ``t_s, app, dur_ms,
        kind`` (pause, wait, checkpoint)."""
        return self._series("mutator_stops")

    @property
    def mmu(self):
        """Minimum mutator utilisation per app: ``app, window_ms, mmu`` for windows of 1 ms … 1 s
        (the exact curve over the run's mutator stops, computed by the core; a run records them,
        older runs' are computed from their mutator stops)."""
        return self._get("mmu", lambda: _frame(self.raw.get("mmu") or _older_mmu(self.raw), ["app", "window_ms", "mmu"]))

    @property
    def apps(self):
        """Each app's totals over its process incarnations, one row per app (nested counters
        flattened as ``frames_janky``, ``object_swap_pauses``, …)."""
        from mobmem.session.output import per_app_rows

        return self._get("apps", lambda: _frame(per_app_rows(self.raw)))

    @property
    def events(self):
        """The event log: ``t_s, kind, app, detail``."""
        return self._series("events")

    def write(self, out: str | os.PathLike) -> list[Path]:
        """Write the run's files (as ``mobmem run --out``) into directory ``out``."""
        from mobmem.session.output import check_out_dir, write_outputs

        check_out_dir(Path(out))
        return write_outputs(self.raw, Path(out))

    def trace(self, path: str | os.PathLike) -> Path:
        """Write the run's timeline for Perfetto UI (``.perfetto-trace``, ``.pftrace``, ``.pb``)
        or as Chrome trace events (``.json``); see :mod:`mobmem.session.trace`."""
        from mobmem.files import check_out_file
        from mobmem.session.trace import trace_format, write_trace

        if not Path(path).is_dir():  # a directory: check_out_file says so
            trace_format(path, "trace")
        check_out_file(Path(path), "trace")
        return write_trace(self.raw, path)


def run(
    scenario: str | os.PathLike,
    system: str | None = None,
    seed: int | None = None,
    set: Mapping[str, object] | Iterable[str] | None = None,
) -> Result:
    """Run one session: ``scenario`` is a file or a shipped scenario's name, ``system`` a named
    system (``mobmem systems``), ``seed`` replaces the scenario's, ``set`` holds settings as a
    mapping (``{"kernel.swappiness": 100}``) or ``key=value`` strings. Bad input raises
    :class:`mobmem.errors.MobmemError` with a one-line message."""
    from mobmem import session

    if system is not None:
        from mobmem.session import systems

        systems.get(system)
    return Result(session.run(scenario, _settings(set), seed=seed, system=system))


def load(run_dir: str | os.PathLike) -> Result:
    """A :class:`Result` from a directory written by ``mobmem run --out`` (or a compare run's
    ``runs/SYSTEM/seed-N``): ``summary.json`` plus its series from the CSV files."""
    import pandas as pd

    d = Path(run_dir)
    try:
        raw = json.loads((d / "summary.json").read_text())
    except FileNotFoundError:
        raise MobmemError(f"{d}: no summary.json (not a run directory, or the run did not finish)") from None
    except (OSError, ValueError) as e:
        raise MobmemError(f"{d / 'summary.json'}: {e}") from None
    from mobmem.session.output import SERIES

    raw.pop("code_version", None)  # which code wrote the file, not part of the result
    for key in SERIES:  # each series is its own CSV file
        p = d / f"{key}.csv"
        if p.is_file() and p.stat().st_size > 0:
            try:
                df = pd.read_csv(p, keep_default_na=False, na_values=[""])
            except (OSError, ValueError) as e:
                raise MobmemError(f"{p}: {e}") from None
            raw[key] = json.loads(df.to_json(orient="records"))
    return Result(raw)


def compare(
    scenario: str | os.PathLike,
    systems: Sequence[str],
    seeds: int = 3,
    seed: int | None = None,
    set: Mapping[str, object] | Iterable[str] | None = None,
    jobs: int = 1,
    out: str | os.PathLike | None = None,
    resume: bool = False,
    executor: str = "local",
    address: str | None = None,
):
    """Run ``scenario`` under each of ``systems`` for ``seeds`` seeds (as ``mobmem compare``) →
    a tidy DataFrame, one row per run: ``system, seed`` and the compared metrics
    (:attr:`Result.metrics`). The statistics (means, 95 % intervals, tests against the first
    system) are in ``df.attrs["aggregate"]``. ``executor="ray"`` runs them on Ray
    (:mod:`mobmem.session.executor`)."""
    from mobmem import session
    from mobmem.session import compare as cmp

    path = session.resolve_scenario(scenario)
    doc = cmp.compare(
        path,
        list(systems),
        seeds=seeds,
        seed=seed,
        settings=_settings(set),
        jobs=jobs,
        out=Path(out) if out else None,
        resume=resume,
        executor=executor,
        address=address,
    )
    rows = []
    for r in doc["runs"]:
        rows.append({"system": r["system"], "seed": r["seed"], **cmp.metrics(r["summary"])["overall"]})
    df = _frame(rows)
    df.attrs["aggregate"] = doc["aggregate"]
    return df


def sweep(scenario: str | os.PathLike, grid: Mapping[str, Sequence[object]], **kw):
    """A parameter sweep → a tidy DataFrame; see :func:`mobmem.session.sweep.sweep`."""
    from mobmem.session import sweep as sw

    return sw.sweep(scenario, grid, **kw)


def _older_mmu(raw: dict) -> list[dict]:
    """The MMU curves of a result saved before runs recorded them (the core computes them)."""
    import json

    from mobmem import _core

    keys = ("per_app", "mutator_stops", "sim_seconds")
    return json.loads(_core.mmu_rows(json.dumps({k: raw.get(k) for k in keys})))
