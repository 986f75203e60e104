"""LBO arithmetic: distilled cost, minimum distilled cost (MDC), LBO with confidence intervals,
geometric means.

For a metric with total cost T and GC cost S per invocation (each back end says what S is: the
JVM's stop-the-world cost of all threads, the simulator's exact GC cost), distilled cost D = T − S.
For each workload, heap size and metric, MDC = min over collectors of mean(D) (a no-GC baseline's
invocations count at every heap size). LBO(collector) = mean(T) / MDC, and the absolute overhead
mean(T) − MDC. Confidence intervals come from a seeded percentile bootstrap over invocations:
every collector's invocations are resampled independently, the MDC is recomputed in each
replicate (so its uncertainty propagates), and the same replicates give the interval of the
geometric mean over workloads. ``±x %`` in tables is the CI half-width relative to the LBO.
Left out: per-phase attribution inside pauses; for the JVM, corrections for concurrent GC work
(kept in the distilled cost, so the bound stays a lower bound).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mobmem.harness.stats import DEFAULT_SEED


@dataclass
class Cell:
    workload: str
    collector: str
    multiple: float | None
    heap_mb: int
    metric: str
    n_ok: int
    n_failed: int
    failures: dict[str, int]
    mean_total: float = math.nan
    mean_distilled: float = math.nan
    mdc: float = math.nan
    mdc_collector: str | None = None
    lbo: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    abs_overhead: float = math.nan
    replicates: np.ndarray | None = field(default=None, repr=False)

    @property
    def pm_pct(self) -> float:
        if not math.isfinite(self.lbo) or not math.isfinite(self.ci_low):
            return math.nan
        return (self.ci_high - self.ci_low) / 2 / self.lbo * 100

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "replicates"}
        d["pm_pct"] = self.pm_pct
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


def _group(records: list[dict]):
    """-> {(workload, collector, multiple or None): [records]}"""
    g: dict[tuple, list[dict]] = defaultdict(list)
    for r in records:
        p = r["params"]
        g[(p["workload"], p["collector"], p.get("multiple"))].append(r)
    return g


def compute(
    records: list[dict], metric_pairs: list[tuple[str, str, str]], *, n_boot: int = 2000, confidence: float = 0.95, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """Returns {"cells": [Cell…], "geomean": {...}, "metrics": [...], "multiples": [...]}"""
    g = _group(records)
    workloads = sorted({k[0] for k in g})
    collectors = list(dict.fromkeys(k[1] for k in g))
    multiples = sorted({k[2] for k in g if k[2] is not None})
    nogc = {k[1] for k in g if k[2] is None}
    rng = np.random.default_rng(seed)
    alpha = (1 - confidence) / 2
    cells: list[Cell] = []
    metrics_present = []
    for total_m, stw_m, label in metric_pairs:
        if not any(total_m in (r.get("metrics") or {}) for r in records if r["status"] == "ok"):
            continue
        metrics_present.append((total_m, stw_m, label))
        for w in workloads:
            # per-collector arrays of (total, distilled), and bootstrap replicates of their means
            def arrays(key, total_m=total_m, stw_m=stw_m):
                rs = [r for r in g.get(key, []) if r["status"] == "ok" and total_m in r["metrics"]]
                t = np.array([r["metrics"][total_m] for r in rs], dtype=float)
                s = np.array([r["metrics"].get(stw_m, 0.0) for r in rs], dtype=float)
                return t, t - s

            def boot(x):
                if x.size == 0:
                    return np.full(n_boot, np.nan)
                idx = rng.integers(0, x.size, size=(n_boot, x.size))
                return x[idx].mean(axis=1)

            base = {}
            for c in nogc:
                t, d = arrays((w, c, None))
                base[c] = (t, d, boot(t), boot(d))
            for m in multiples:
                per = dict(base)
                for c in collectors:
                    if c in nogc:
                        continue
                    t, d = arrays((w, c, m))
                    per[c] = (t, d, boot(t), boot(d))
                dmeans = {c: v[1].mean() for c, v in per.items() if v[1].size}
                if not dmeans:
                    continue
                mdc_c = min(dmeans, key=dmeans.get)
                mdc = dmeans[mdc_c]
                boot_d = np.vstack([v[3] for v in per.values()])
                mdc_rep = np.nanmin(np.where(np.isnan(boot_d), np.inf, boot_d), axis=0)
                for c in collectors:
                    key = (w, c, None if c in nogc else m)
                    rs = g.get(key, [])
                    fails: dict[str, int] = defaultdict(int)
                    for r in rs:
                        if r["status"] != "ok":
                            fails[r["info"].get("failure") or r["status"]] += 1
                    t, d, bt, _ = per.get(c, (np.array([]), np.array([]), None, None))
                    heap = rs[0]["info"].get("heap_mb", rs[0]["params"].get("heap_mb")) if rs else 0
                    cell = Cell(w, c, m, int(heap or 0), total_m, int(t.size), sum(fails.values()), dict(fails))
                    if t.size:
                        cell.mean_total, cell.mean_distilled = float(t.mean()), float(d.mean())
                        cell.mdc, cell.mdc_collector = float(mdc), mdc_c
                        cell.lbo = cell.mean_total / mdc
                        cell.abs_overhead = cell.mean_total - mdc
                        rep = bt / mdc_rep
                        cell.replicates = rep
                        if t.size >= 2:
                            cell.ci_low, cell.ci_high = (float(x) for x in np.nanpercentile(rep, [100 * alpha, 100 * (1 - alpha)]))
                    cells.append(cell)
    geo = geomeans(cells, confidence)
    return {
        "cells": cells,
        "geomean": geo,
        "metrics": metrics_present,
        "multiples": multiples,
        "workloads": workloads,
        "collectors": collectors,
        "nogc": sorted(nogc),
    }


def geomeans(cells: list[Cell], confidence: float = 0.95) -> list[dict[str, Any]]:
    """Geometric mean of LBO over workloads per (metric, collector, multiple); only where every
    workload has a value (else ``complete`` is False and the mean is over those that do)."""
    alpha = (1 - confidence) / 2
    by: dict[tuple, list[Cell]] = defaultdict(list)
    workloads = {c.workload for c in cells}
    for c in cells:
        by[(c.metric, c.collector, c.multiple)].append(c)
    out = []
    for (metric, coll, mult), cs in by.items():
        good = [c for c in cs if math.isfinite(c.lbo)]
        if not good:
            out.append(
                {"metric": metric, "collector": coll, "multiple": mult, "lbo": None, "ci_low": None, "ci_high": None, "n_workloads": 0, "complete": False}
            )
            continue
        lbo = float(np.exp(np.mean(np.log([c.lbo for c in good]))))
        reps = [c.replicates for c in good if c.replicates is not None and len(good) and np.isfinite(c.ci_low)]
        lo = hi = None
        if len(reps) == len(good):
            gm = np.exp(np.mean(np.log(np.vstack(reps)), axis=0))
            lo, hi = (float(x) for x in np.nanpercentile(gm, [100 * alpha, 100 * (1 - alpha)]))
        out.append(
            {
                "metric": metric,
                "collector": coll,
                "multiple": mult,
                "lbo": lbo,
                "ci_low": lo,
                "ci_high": hi,
                "n_workloads": len(good),
                "complete": {c.workload for c in good} == workloads,
            }
        )
    return out


def side_means(records: list[dict], side_metrics: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """A back end's side metrics (not LBOs: collections, frame statistics) per (metric, collector,
    multiple): the mean over workloads of each workload's mean over its successful invocations. A
    no-GC baseline's rows have ``multiple`` None (it serves every heap size). Workloads without
    the metric (GCBench has no frames) are left out."""
    g = _group(records)
    out = []
    for key, _, _ in side_metrics:
        per: dict[tuple, list[float]] = defaultdict(list)
        for (_, c, m), rs in g.items():
            xs = [r["metrics"][key] for r in rs if r["status"] == "ok" and key in (r.get("metrics") or {})]
            if xs:
                per[(c, m)].append(float(np.mean(xs)))
        for (c, m), ws in per.items():
            out.append({"metric": key, "collector": c, "multiple": m, "mean": float(np.mean(ws)), "n_workloads": len(ws)})
    return out


def fmt_lbo(lbo: float | None, lo: float | None, hi: float | None) -> str:
    """'1.169 ±2.58 %' (half-width of the CI relative to the LBO); '—' when there is no value."""
    if lbo is None or not math.isfinite(lbo):
        return "—"
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return f"{lbo:.3f}"
    return f"{lbo:.3f} ±{(hi - lo) / 2 / lbo * 100:.2f} %"
