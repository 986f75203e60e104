"""LBO outputs: terminal tables (rich), Markdown tables, plots of LBO against heap multiple
(matplotlib, PNG and SVG), ``lbo.json`` and a ``report.md`` with the environment record and the
exact command. Cells read "1.169 ±2.58 %" (LBO and the CI half-width relative to it); a cell with
failed invocations says so (e.g. "oom×3"). Left out: HTML, interactive plots.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from mobmem.lbo.analysis import Cell, fmt_lbo


def _cell_text(c: Cell | None) -> str:
    if c is None:
        return ""
    s = fmt_lbo(c.lbo, c.ci_low, c.ci_high)
    if c.n_failed:
        f = ", ".join(f"{k}×{v}" for k, v in sorted(c.failures.items()))
        s = f"{s} ({f})" if c.n_ok else f
    return s


#: The heap multiples of the summary table (ISMM'24 quotes LBO at 2× and 6× the minimum heap).
SUMMARY_MULTIPLES = (2.0, 6.0)


def lbo_at(points: list[tuple[float, float]], x: float) -> tuple[float | None, bool]:
    """The LBO at heap multiple ``x`` from measured (multiple, LBO) points: the measured value
    where ``x`` is one of the multiples, else interpolated linearly in log(multiple) and log(LBO)
    between the two measured multiples around it (``(value, True)``); ``(None, False)`` outside
    the measured range."""
    pts = sorted((m, v) for m, v in points if v is not None and math.isfinite(v) and v > 0)
    for m, v in pts:
        if math.isclose(m, x, rel_tol=1e-9):
            return v, False
    for (m0, v0), (m1, v1) in zip(pts, pts[1:]):
        if m0 < x < m1:
            f = (math.log(x) - math.log(m0)) / (math.log(m1) - math.log(m0))
            return math.exp(math.log(v0) + f * (math.log(v1) - math.log(v0))), True
    return None, False


def summary_table(res: dict[str, Any], at: tuple[float, ...] = SUMMARY_MULTIPLES) -> tuple[str, list[str], list[list[str]]]:
    """(title, header, rows): the geometric-mean LBO of every collector at the multiples ``at``
    for each metric (wall time, CPU) — the paper's summary."""
    header = ["collector"] + [f"{label}, {x:g}×" for _, _, label in res["metrics"] for x in at]
    rows = []
    for col in res["collectors"]:
        row = [col]
        for total_m, _, _ in res["metrics"]:
            pts = [(g["multiple"], g["lbo"]) for g in res["geomean"] if g["metric"] == total_m and g["collector"] == col]
            for x in at:
                v, approx = lbo_at(pts, x)
                row.append("—" if v is None else f"{'≈ ' if approx else ''}{v:.3f}")
        rows.append(row)
    measured = ", ".join(f"{m:.2f}×" for m in res["multiples"])
    title = (
        "Geometric-mean LBO at " + " and ".join(f"{x:g}×" for x in at) + " the minimum heap "
        f"(≈: between two measured heap multiples, interpolated linearly in log multiple and log LBO; measured: {measured})"
    )
    return title, header, rows


def tables(res: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """[(title, header, rows)] — the summary at 2× and 6×, one table per metric × workload, a
    geometric-mean table per metric, then the side metrics."""
    out = [summary_table(res)]
    mults = res["multiples"]
    header = ["collector"] + [f"{m:.2f}×" for m in mults]
    for total_m, _, label in res["metrics"]:
        for w in res["workloads"] + ["geomean"]:
            rows = []
            for col in res["collectors"]:
                row = [col]
                for m in mults:
                    if w == "geomean":
                        g = next((x for x in res["geomean"] if x["metric"] == total_m and x["collector"] == col and x["multiple"] == m), None)
                        t = fmt_lbo(g["lbo"], g["ci_low"], g["ci_high"]) if g else ""
                        if g and g["lbo"] is not None and not g["complete"]:
                            t += f" ({g['n_workloads']} wl)"
                        row.append(t)
                    else:
                        c = next((x for x in res["cells"] if x.metric == total_m and x.workload == w and x.collector == col and x.multiple == m), None)
                        row.append(_cell_text(c))
                rows.append(row)
            title = f"LBO ({label}) — {w}" + ("" if w == "geomean" else _heap_note(res, w, total_m))
            out.append((title, header, rows))
    return out + side_tables(res)


def side_tables(res: dict[str, Any]) -> list[tuple[str, list[str], list[list[str]]]]:
    """One table per side metric: its mean over the workloads that report it per collector × heap
    multiple (a no-GC baseline's value in every column)."""
    out = []
    mults = res["multiples"]
    header = ["collector"] + [f"{m:.2f}×" for m in mults]
    for key, label, unit in res.get("side_metrics", []):
        rows_ = [x for x in res.get("side", []) if x["metric"] == key]
        if not rows_:
            continue
        n = max(x["n_workloads"] for x in rows_)
        scale = 100.0 if unit == "%" else 1.0
        rows = []
        for col in res["collectors"]:
            row = [col]
            for m in mults:
                x = next((x for x in rows_ if x["collector"] == col and x["multiple"] in (m, None)), None)
                row.append("" if x is None else f"{x['mean'] * scale:.2f}" + (" %" if unit == "%" else ""))
            rows.append(row)
        what = f"{label.capitalize()}" + ("" if unit == "count" else f" ({unit})")
        out.append((f"{what}, mean over {n} workload{'s' if n != 1 else ''}", header, rows))
    return out


def _heap_note(res, w, metric) -> str:
    hs = {}
    for c in res["cells"]:
        if c.workload == w and c.metric == metric and c.collector not in res["nogc"]:
            hs[c.multiple] = c.heap_mb
    return " (heaps " + ", ".join(f"{hs[m]}" for m in sorted(hs)) + " MB)" if hs else ""


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def print_tables(res: dict[str, Any], console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    con = console or Console()
    for title, header, rows in tables(res):
        t = Table(title=title, title_justify="left")
        for h in header:
            t.add_column(h, justify="left" if h == "collector" else "right")
        for r in rows:
            t.add_row(*r)
        con.print(t)


def plots(res: dict[str, Any], out_dir: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    files = []
    for total_m, _, label in res["metrics"]:
        panels = res["workloads"] + ["geomean"]
        ncol = min(3, len(panels))
        nrow = math.ceil(len(panels) / ncol)
        fig, axes = plt.subplots(nrow, ncol, figsize=(5 * ncol, 3.6 * nrow), squeeze=False)
        for ax, w in zip(axes.flat, panels):
            for col in res["collectors"]:
                xs, ys, lo, hi = [], [], [], []
                for m in res["multiples"]:
                    if w == "geomean":
                        g = next((x for x in res["geomean"] if x["metric"] == total_m and x["collector"] == col and x["multiple"] == m), None)
                        v, a, b = (g["lbo"], g["ci_low"], g["ci_high"]) if g and g["complete"] else (None, None, None)
                    else:
                        c = next((x for x in res["cells"] if x.metric == total_m and x.workload == w and x.collector == col and x.multiple == m), None)
                        v, a, b = (c.lbo, c.ci_low, c.ci_high) if c else (None, None, None)
                    if v is None or not math.isfinite(v):
                        continue
                    xs.append(m)
                    ys.append(v)
                    # A percentile-bootstrap interval of a ratio need not contain the ratio of the
                    # means (a skewed replicate distribution): the bar then ends at the point.
                    lo.append(max(0.0, v - a) if a is not None and math.isfinite(a) else 0)
                    hi.append(max(0.0, b - v) if b is not None and math.isfinite(b) else 0)
                if xs:
                    style = "--" if col in res["nogc"] else "-"
                    ax.errorbar(xs, ys, yerr=[lo, hi], label=col, marker="o", ms=3, capsize=2, linestyle=style)
            ax.set_title(w)
            ax.set_xlabel("heap size (× minimum heap)")
            ax.set_ylabel(f"LBO ({label})")
            ax.axhline(1.0, color="grey", lw=0.5)
            ax.grid(alpha=0.3)
        for ax in list(axes.flat)[len(panels) :]:
            ax.axis("off")
        handles, labels = axes.flat[0].get_legend_handles_labels()
        if handles:
            fig.legend(handles, labels, loc="upper center", ncol=len(labels), frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 0.94))
        base = os.path.join(out_dir, f"lbo_{total_m.removesuffix('_s')}")
        for ext in ("png", "svg"):
            fig.savefig(f"{base}.{ext}", dpi=130)
            files.append(f"{base}.{ext}")
        plt.close(fig)
    return files


def to_json(res: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    return {
        **extra,
        "multiples": res["multiples"],
        "workloads": res["workloads"],
        "collectors": res["collectors"],
        "nogc": res["nogc"],
        "metrics": [m[0] for m in res["metrics"]],
        "cells": [c.to_dict() for c in res["cells"]],
        "geomean": res["geomean"],
        "side": res.get("side", []),
    }


def write_report(
    res: dict[str, Any],
    out_dir: str,
    *,
    command: str,
    distillation: str = "the cost of all threads during stop-the-world pauses",
    env: dict,
    minheap: dict,
    settings: dict,
    warnings: list[str],
    plot_files: list[str],
    elapsed_s: float | None,
    records: list[dict],
) -> str:
    lines = ["# LBO report", "", "Generated by mobmem on this machine. Exact command:", "", "```", command, "```", ""]
    lines += ["## Settings", ""] + [f"- {k}: {v}" for k, v in settings.items()]
    if elapsed_s is not None:
        lines.append(f"- wall time of this session: {elapsed_s / 60:.1f} min")
    n_ok = sum(r["status"] == "ok" for r in records)
    lines += [f"- invocations recorded: {len(records)} ({n_ok} ok, {len(records) - n_ok} unsuccessful)", ""]
    lines += ["## Minimum heaps", "", "| workload | minimum heap (MB) | how |", "|---|---|---|"]
    for w, d in minheap.items():
        lines.append(
            f"| {w} | {d['min_heap_mb']} | {d.get('source')}{' with ' + d['reference'] if d.get('reference') else ''}"
            f"{', ' + str(len(d.get('probes', []))) + ' probes' if d.get('probes') else ''} |"
        )
    lines += [
        "",
        "## Results",
        "",
        "LBO = total cost / minimum distilled cost over all collectors at that workload and heap size "
        f"(distilled = total − {distillation}). ± is the half-width of a "
        "95 % bootstrap CI over invocations, relative to the LBO. A failed cell shows why (oom = out of memory, "
        "timeout, crashed). Epsilon runs with its own fixed heap and serves every heap size.",
        "",
    ]
    if res.get("side"):
        lines += [
            "The tables after the LBOs are not LBOs: each is the mean over the workloads that report it of each "
            "workload's mean over its invocations. Collections per invocation show where a heap filled: a heap size "
            "at which no collection ran measures nothing but the allocator. A frame's time (app workloads) runs from "
            "its vsync to the end of its work (collector pauses, waits for the collector and fault stalls included); "
            "a frame is janky when that exceeds one frame period.",
            "",
        ]
    for title, header, rows in tables(res):
        lines += [f"### {title}", "", markdown_table(header, rows), ""]
    if plot_files:
        lines += ["## Plots", ""]
        for p in plot_files:
            if p.endswith(".png"):
                b = os.path.basename(p)
                lines += [f"![{b}]({b}) (also [{b[:-4]}.svg]({b[:-4]}.svg))", ""]
    lines += ["## Warnings about this environment", ""] + [f"- {w}" for w in warnings] + [""]
    lines += ["## Environment record", "", "```json", json.dumps(env, indent=2, default=str), "```", ""]
    path = os.path.join(out_dir, "report.md")
    from mobmem.files import atomic_write

    atomic_write(Path(path), "\n".join(lines))
    return path
