"""Results processors: turn the list of run records of one configuration into statistics.

The pipeline, in order: drop warm-up runs, keep only a trailing window (optional), separate
unsuccessful runs (counted and listed by status, never silently dropped), flag outliers with Tukey's
fences (reported; removed only when asked), then summarise each metric (n, mean, median, quartiles,
std, CV, Student-t CI of the mean, bootstrap CI of the median, histogram). Left out: weighting,
trimmed means, multi-modal detection.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

import numpy as np

from mobmem.harness import stats


def drop_warmup(records: Iterable[dict]) -> list[dict]:
    return [r for r in records if r.get("phase", "measure") == "measure"]


def trailing_window(records: list[dict], n: int | None) -> list[dict]:
    return records if not n else records[-n:]


def split_failed(records: list[dict]) -> tuple[list[dict], list[dict]]:
    ok = [r for r in records if r.get("status") == "ok"]
    bad = [r for r in records if r.get("status") != "ok"]
    return ok, bad


def metric_names(records: list[dict]) -> list[str]:
    names: dict[str, None] = {}
    for r in records:
        for k, v in (r.get("metrics") or {}).items():
            if isinstance(v, (int, float)):
                names.setdefault(k, None)
    return list(names)


def process(
    records: Iterable[dict],
    *,
    metrics: list[str] | None = None,
    window: int | None = None,
    outliers: str = "flag",
    tukey_k: float = 1.5,
    confidence: float = 0.95,
    histogram_bins: int | str = "auto",
) -> dict[str, Any]:
    """Runs the pipeline; ``outliers`` is "flag" (default) or "remove"."""
    if outliers not in ("flag", "remove"):
        raise ValueError("outliers must be 'flag' or 'remove'")
    measured = trailing_window(drop_warmup(records), window)
    ok, bad = split_failed(measured)
    out: dict[str, Any] = {
        "runs": len(measured),
        "statuses": dict(Counter(r.get("status") for r in measured)),
        "unsuccessful": [
            {"run_id": r.get("run_id"), "status": r.get("status"), "exit_code": r.get("exit_code"), "signal": r.get("signal"), "error": r.get("error")}
            for r in bad
        ],
        "metrics": {},
    }
    for m in metrics or metric_names(ok):
        vals = np.array([r["metrics"][m] for r in ok if m in (r.get("metrics") or {})], dtype=float)
        if vals.size == 0:
            continue
        mask = stats.tukey_outliers(vals, tukey_k)
        flagged = [ok[i].get("run_id") for i in np.flatnonzero(mask)]
        used = vals[~mask] if outliers == "remove" else vals
        counts, edges = stats.histogram(used, histogram_bins) if used.size else ([], [])
        out["metrics"][m] = {
            "summary": stats.summarize(used, confidence).to_dict(),
            "outliers": {
                "k": tukey_k,
                "fences": stats.tukey_fences(vals, tukey_k) if vals.size >= 4 else None,
                "flagged": flagged,
                "removed": outliers == "remove",
            },
            "histogram": {"counts": counts, "edges": edges},
            "values": used.tolist(),
        }
    return out
