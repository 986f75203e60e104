"""Minimum mutator utilisation (MMU, Cheng and Blelloch, PLDI 2001) of a session's apps.

For a window length *w*, MMU(*w*) is the smallest share of any window of that length, inside the
run, in which the app's main thread was not stopped by its collector. The stops are the ones the
runtime records (``mutator_stops`` of a result: stop-the-world pauses, waits for a collection,
checkpoints run at the thread's safepoint); time the thread is idle between frames counts as
available, as in the definition. An MMU curve shows at once the worst pause (where the curve
leaves 0) and the utilisation a collector leaves over longer windows.

The maximum stopped time over windows of length *w* is reached where a window starts at a stop's
start or ends at a stop's end, so those candidates are evaluated exactly (prefix sums over the
merged stops): O(*n* log *n*) per window length, no sampling.
"""

from __future__ import annotations

from typing import Iterable, Sequence

#: Window lengths of the default curve, ms (1 ms … 1 s).
WINDOWS_MS = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


def merge(intervals: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """Sorted, non-overlapping intervals (empty ones dropped, touching ones joined)."""
    out: list[list[float]] = []
    for a, b in sorted((float(a), float(b)) for a, b in intervals if b > a):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def mmu(intervals: Iterable[tuple[float, float]], span: tuple[float, float], windows: Sequence[float]) -> list[float | None]:
    """MMU for each window length in ``windows`` over the run ``span`` = (start, end), given the
    stop ``intervals`` (same unit); ``None`` for a window longer than the span."""
    import numpy as np

    t0, t1 = float(span[0]), float(span[1])
    iv = [(max(a, t0), min(b, t1)) for a, b in merge(intervals)]
    iv = [(a, b) for a, b in iv if b > a]
    s = np.array([a for a, _ in iv], dtype=float)
    e = np.array([b for _, b in iv], dtype=float)
    c = np.concatenate(([0.0], np.cumsum(e - s)))  # stopped time before interval k

    def stopped_before(x):
        j = np.searchsorted(s, x, side="right") - 1  # the last stop starting at or before x
        jj = np.clip(j, 0, max(len(s) - 1, 0))
        inside = np.clip(x - s[jj], 0.0, e[jj] - s[jj]) if len(s) else np.zeros_like(x)
        return np.where(j >= 0, c[jj] + inside, 0.0)

    out: list[float | None] = []
    for w in windows:
        w = float(w)
        if w <= 0 or w > t1 - t0:
            out.append(None)
            continue
        if not len(s):
            out.append(1.0)
            continue
        cand = np.concatenate((s, e - w, [t0, t1 - w]))
        cand = np.clip(cand, t0, t1 - w)
        worst = float(np.max(stopped_before(cand + w) - stopped_before(cand)))
        out.append(max(0.0, 1.0 - worst / w))
    return out


def mmu_rows(res: dict, windows_ms: Sequence[float] = WINDOWS_MS) -> list[dict]:
    """One row per app and window length: ``app, window_ms, mmu`` from a session result (the
    span is the whole session)."""
    span = (0.0, float(res.get("sim_seconds", 0.0)) * 1e3)
    by_app: dict[str, list[tuple[float, float]]] = {a: [] for a in res.get("per_app", {})}
    for st in res.get("mutator_stops", []):
        a = st["t_s"] * 1e3
        by_app.setdefault(st["app"], []).append((a, a + st["dur_ms"]))
    rows = []
    for app, iv in by_app.items():
        for w, m in zip(windows_ms, mmu(iv, span, windows_ms)):
            rows.append({"app": app, "window_ms": float(w), "mmu": m})
    return rows
