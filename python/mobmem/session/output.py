"""A session result as files in a directory.

- ``summary.json`` — the whole result except its series (:data:`SERIES`; it records the
  scenario, its file, the device, the seed, every override in ``parameters``, the system name and
  the effective kernel/runtime settings);
- ``launches.csv`` — one row per launch, the breakdown flattened into columns;
- ``timeline.csv`` — the memory time series (one row per sample);
- ``events.csv`` — the event log (launches, kills, OOMs, compactions, restarts);
- ``kills.csv`` — one row per kill with its app, reason, killer, oom_score_adj, RSS and swap, and
  the swap device's use and the free memory when the kill was decided;
- ``per_app.csv`` — each app's totals;
- ``gcs.csv`` — one row per collection; ``gc_phases.csv`` — its phases (``gc`` is the row of
  ``gcs.csv``);
- ``janky_frames.csv`` — every frame that missed its vsync (start, app, duration);
- ``app_memory.csv`` — each live app's RSS, PSS and swap every ``session.app_sample_ms``;
- ``mutator_stops.csv`` — every interval an app's main thread was stopped by its collector
  (pause, wait, checkpoint): what minimum mutator utilisation is computed from.

Every file is written to a temporary name and renamed, so an interrupted run never leaves half a
file and never damages what an earlier run wrote; ``summary.json`` is written last, so its
presence means the directory is complete. Nothing is written before a run has finished, and
Ctrl-C or SIGTERM during the writing waits until the files are all written
(:func:`deferred_interrupts`), so an interrupted command leaves either no files or all of them.
"""

from __future__ import annotations

import json
from pathlib import Path

from mobmem import _core
from mobmem.errors import MobmemError
from mobmem.files import atomic_write, check_out_dir, csv_text, deferred_interrupts  # noqa: F401  (this module's API)

#: Every table of the result with its columns, as the simulator's row types declare them.
TABLES: dict[str, list[str]] = {name: list(cols) for name, cols in _core.table_columns()}
GC_FIELDS = TABLES["gcs"]
APP_MEMORY_FIELDS = TABLES["app_memory"]
#: dumpsys meminfo App Summary categories of the per-app series (RSS by category, MiB).
MEMINFO_CATEGORIES: list[str] = list(_core.meminfo_categories())
#: The kills table joins two lists of the result (:func:`kill_rows`).
KILL_FIELDS = ["t_s", "app", "is_app", "process", "oom_score_adj", "reason", "killer", "rss_kb", "swap_kb", "swap_used_kb", "free_kb"]

#: The result's bulky series with their columns: each is written to its own CSV file named after
#: its key and left out of ``summary.json`` (:func:`summary`).
SERIES = {k: v for k, v in TABLES.items() if k != "gcs"}
#: Every file of a run directory, in the order written (``summary.json`` last: its presence means
#: the directory is complete).
FILES = ("launches.csv", "kills.csv", "per_app.csv", "gcs.csv", *(f"{k}.csv" for k in SERIES), "summary.json")


def summary(res: dict) -> dict:
    """The result without its bulky series (:data:`SERIES`)."""
    return {k: v for k, v in res.items() if k not in SERIES}


LAUNCH_FIELDS = ["index", "t_s", "app", "kind", "relaunch", "ttid_ms"]


def launch_rows(res: dict) -> list[dict]:
    """Launches with ``breakdown`` flattened (its keys as columns) and ``objects`` as ``objects_*``."""
    rows = []
    for l in res.get("launches", []):
        r = {k: l.get(k) for k in LAUNCH_FIELDS}
        r.update(l.get("breakdown", {}))
        for k, v in (l.get("objects") or {}).items():
            r[f"objects_{k}"] = v
        for k in ("alive_after", "cached_after"):
            r[k] = l.get(k)
        rows.append(r)
    return rows


def kill_rows(res: dict) -> list[dict]:
    """``kill_records`` (adj, reason, killer, sizes) joined with ``kills`` (the app's name)."""
    kills = res.get("kills", [])
    rows = []
    for i, r in enumerate(res.get("kill_records", [])):
        app, is_app = r.get("name"), False
        if i < len(kills) and abs(kills[i]["t_s"] - r["t_s"]) < 1e-6:
            app, is_app = kills[i]["app"], kills[i]["is_app"]
        rows.append(
            {
                "t_s": r["t_s"],
                "app": app,
                "is_app": is_app,
                "process": r.get("name"),
                "oom_score_adj": r.get("oom_score_adj"),
                "reason": r.get("reason"),
                "killer": r.get("killer"),
                "rss_kb": r.get("rss_kb"),
                "swap_kb": r.get("swap_kb"),
                "swap_used_kb": r.get("swap_used_kb"),
                "free_kb": r.get("free_kb"),
            }
        )
    return rows


def per_app_rows(res: dict) -> list[dict]:
    rows = []
    for app, t in res.get("per_app", {}).items():
        r = {"app": app}
        for k, v in t.items():
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    r[f"{k}_{k2}"] = v2
            elif isinstance(v, list):
                continue  # per-mapping memory: in summary.json only
            else:
                r[k] = v
        rows.append(r)
    return rows


def write_outputs(res: dict, out: Path) -> list[Path]:
    """Write the result's files into ``out`` (created if needed); returns the paths written.
    ``summary.json`` also records the ``code_version`` of the simulator that made the run."""
    from mobmem.session.provenance import code_version

    out = Path(out)
    files = {
        "launches.csv": csv_text(launch_rows(res)),
        "kills.csv": csv_text(kill_rows(res), KILL_FIELDS),
        "per_app.csv": csv_text(per_app_rows(res)),
        "gcs.csv": csv_text(res.get("gcs", []), GC_FIELDS),
        **{f"{k}.csv": csv_text(res.get(k, []), cols) for k, cols in SERIES.items()},
        # The code that made the run, so that a resumed comparison never reuses another code's run.
        "summary.json": json.dumps({**summary(res), "code_version": code_version(res.get("device"))}, indent=1) + "\n",
    }
    written = []
    with deferred_interrupts():
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MobmemError(f"--out {out}: {e.strerror}") from None
        for name in FILES:
            atomic_write(out / name, files[name])
            written.append(out / name)
    return written
