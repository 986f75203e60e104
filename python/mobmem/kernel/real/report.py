"""The report of a real replay: model vs real counter differences, the table, and the command's entry point (`mobmem kernel replay --real`)."""

from __future__ import annotations

import json
import math
import sys

from mobmem.kernel.real.host import Skipped
from mobmem.kernel.real.replayer import RealOptions, _Interrupted, run_real


# ----------------------------------------------------------------------------------------
# comparison and printing
# ----------------------------------------------------------------------------------------
def diff_pct(model: dict | None, real: dict) -> dict[str, float | None]:
    """(model − real) / real × 100 per counter both have; 0 when both are 0, None when real is 0."""
    out: dict[str, float | None] = {}
    if not model:
        return out
    mv = model.get("vmstat", model)
    for k, r in real.items():
        if k not in mv or not isinstance(mv[k], (int, float)):
            continue
        m = mv[k]
        if r == 0:
            out[k] = 0.0 if m == 0 else None
        else:
            out[k] = round((m - r) / r * 100.0, 2)
    return out


def build_report(real: dict, model: dict | None) -> dict:
    env = dict(real["environment"])
    env["zram"] = real.get("zram")
    env["counter_sources"] = real.get("sources")
    return {
        "real": {
            "vmstat": real["vmstat"],
            "vmstat_global": real["vmstat_global"],
            "memcg": real["memcg"],
            "meminfo": real["meminfo"],
            "zram": real["zram"],
            "kills": real["kills"],
            "per_process": real["per_process"],
        },
        "model": model,
        "diff_pct": diff_pct(model, real["vmstat"]),
        "environment": env,
    }


def _print_table(report: dict, trace_path: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    real = report["real"]["vmstat"]
    model = (report.get("model") or {}).get("vmstat", {}) if report.get("model") else {}
    diffs = report["diff_pct"]
    sources = report["environment"].get("counter_sources", {})
    env = report["environment"]
    t = Table(title=f"real kernel vs model: {trace_path}")
    t.add_column("counter")
    t.add_column("model", justify="right")
    t.add_column("real", justify="right")
    t.add_column("diff %", justify="right")
    t.add_column("real source", style="dim")
    names = list(real) + [k for k in model if k not in real]
    for k in names:
        m = model.get(k)
        r = real.get(k)
        d = diffs.get(k)
        t.add_row(
            k,
            "—" if m is None else f"{m:,}" if isinstance(m, int) else str(m),
            "—" if r is None else f"{r:,}",
            "—" if k not in diffs else ("n/a" if d is None else f"{d:+.1f}"),
            sources.get(k, ""),
        )
    console.print(t)
    z = report["real"].get("zram")
    if z:
        pk = z.get("peak") or z
        console.print(
            f"zram ({env['swap'].get('comp_algorithm')}) at its fullest: stored {pk['stored_pages']} pages, "
            f"orig {pk['orig_data_size']:,} B, compressed {pk['compr_data_size']:,} B (ratio {pk['ratio']}), "
            f"pool {pk['mem_used_total']:,} B, same-filled {pk['same_pages']}; at the end: {z['stored_pages']} pages"
        )
    mi = report["real"]["meminfo"]
    console.print("cgroup meminfo (kB): " + ", ".join(f"{k} {v:,}" for k, v in mi.items()))
    if report["real"]["kills"]:
        for k in report["real"]["kills"]:
            console.print(f"kill: pid {k['pid']} {k['name']} adj {k['adj']}: {k['reason']} (lines {k['line']}-{k['line_end']})")
    console.print(
        f"[dim]cgroup v{env['cgroup_version']}, {env['reclaim_path']}; {env['lru']}; swappiness {env['swappiness']}, "
        f"page-cluster {env['page_cluster']}; replay {env['replay_seconds']} s (ticks slept {env['tick_seconds_slept']} s)[/dim]"
    )


def replay_real(trace_path: str, as_json: bool = False, model: dict | None = None, *, options: RealOptions | None = None) -> int:
    """``mobmem kernel replay --real``: run, print (table or one JSON object), return the exit code.

    Prints ``skipped: <why>`` and returns 0 where the machine cannot do it; bad input or a
    trace the kernel refuses raises :class:`MobmemError` (exit 2) after restoring.
    """
    from mobmem.kernel import trace as tr

    trace = tr.parse_trace(trace_path)  # bad input: MobmemError before touching the machine
    try:
        real = run_real(str(trace_path), options, trace=trace)
    except Skipped as e:
        print(f"skipped: {e}")
        return 0
    except _Interrupted as e:
        print(f"interrupted ({e}); machine restored", file=sys.stderr)
        return 128 + e.signum
    except KeyboardInterrupt:
        print("interrupted (SIGINT); machine restored", file=sys.stderr)
        return 130
    report = build_report(real, model)
    if as_json:
        print(json.dumps(report, indent=2, sort_keys=False, default=_json_default))
    else:
        _print_table(report, str(trace_path))
    return 0


def _json_default(o):
    try:
        import numpy as np

        if isinstance(o, np.integer):
            return int(o)
        if isinstance(o, np.floating):
            return float(o)
    except ImportError:  # pragma: no cover
        pass
    if isinstance(o, float) and not math.isfinite(o):
        return None
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")
