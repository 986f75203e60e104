"""A session result as files in a directory.

- ``summary.json`` — the whole result except ``timeline`` and ``events`` (it records the
  scenario, its file, the device, the seed, every override in ``parameters``, the system name and
  the effective kernel/runtime settings);
- ``launches.csv`` — one row per launch, the breakdown flattened into columns;
- ``timeline.csv`` — the memory time series (one row per sample);
- ``events.csv`` — the event log (launches, kills, OOMs, compactions, restarts);
- ``kills.csv`` — one row per kill with its app, reason, killer, oom_score_adj, RSS and swap;
- ``per_app.csv`` — each app's totals.

Every file is written to a temporary name and renamed, so an interrupted run never leaves half a
file and never damages what an earlier run wrote; ``summary.json`` is written last, so its
presence means the directory is complete. Nothing is written before a run has finished, and
Ctrl-C or SIGTERM during the writing waits until the files are all written
(:func:`deferred_interrupts`), so an interrupted command leaves either no files or all of them.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import signal
import threading
from pathlib import Path

from mobmem.errors import MobmemError

FILES = ("launches.csv", "timeline.csv", "events.csv", "kills.csv", "per_app.csv", "summary.json")


def check_out_dir(out: Path) -> None:
    """Fail before a long run if ``out`` cannot be a directory."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise MobmemError(f"--out {out}: exists and is not a directory")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise MobmemError(f"--out {out}: {parent} is not writable")


@contextlib.contextmanager
def deferred_interrupts():
    """Hold SIGINT and SIGTERM until the block is done, then raise KeyboardInterrupt if one came
    (only in the main thread, where signal handlers live; elsewhere the block runs as is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        prev = signal.getsignal(sig)
        if prev is None:  # a handler not installed from Python: leave it alone
            continue
        old[sig] = prev
        signal.signal(sig, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        for sig, prev in old.items():
            signal.signal(sig, prev)
        if got:
            raise KeyboardInterrupt


def atomic_write(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise MobmemError(f"{path}: {e.strerror}") from None


def csv_text(rows: list[dict], fields: list[str] | None = None) -> str:
    buf = io.StringIO()
    if fields is None:
        fields = []
        for r in rows:
            for k in r:
                if k not in fields:
                    fields.append(k)
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()


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
            else:
                r[k] = v
        rows.append(r)
    return rows


def write_outputs(res: dict, out: Path) -> list[Path]:
    """Write the result's files into ``out`` (created if needed); returns the paths written."""
    from mobmem.session import summary

    out = Path(out)
    files = {
        "launches.csv": csv_text(launch_rows(res)),
        "timeline.csv": csv_text(res.get("timeline", [])),
        "events.csv": csv_text(res.get("events", []), ["t_s", "kind", "app", "detail"]),
        "kills.csv": csv_text(kill_rows(res), ["t_s", "app", "is_app", "process", "oom_score_adj", "reason", "killer", "rss_kb", "swap_kb"]),
        "per_app.csv": csv_text(per_app_rows(res)),
        "summary.json": json.dumps(summary(res), indent=1) + "\n",
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
