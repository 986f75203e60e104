"""Parsing HotSpot unified GC logs (``-Xlog:gc,gc+phases:file=F:timenanos``).

Recognises pause lines of every HotSpot collector — ``GC(n) Pause Young (…) 24M->3M(256M) 2.345ms``
(Serial, Parallel, G1), ``GC(n) Pause Mark Start 0.009ms`` (ZGC, also generational ``Y:``/``O:``
prefixes), ``GC(n) Pause Init Mark 0.014ms`` (Shenandoah) — and ZGC allocation stalls (mutator
waits, not pauses). With the ``timenanos`` decorator (System.nanoTime(), the clock the workload
harness prints) a window [start, end] selects the pauses that ended inside it. Left out: phase
breakdowns, heap occupancy series.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_PAUSE = re.compile(r"GC\((\d+)\)\s+(?:[YO]:\s+)?Pause\s+(.+?)\s+(\d+(?:\.\d+)?)ms\s*$")
_STALL = re.compile(r"Allocation Stall \(.*?\)\s+(\d+(?:\.\d+)?)ms")
_TN = re.compile(r"\[(\d+)ns\]")


@dataclass
class GCLogSummary:
    count: int = 0
    total_s: float = 0.0
    max_s: float = 0.0
    stalls: int = 0
    stall_total_s: float = 0.0
    pauses: list[tuple[int | None, str, float]] = field(default_factory=list)  # (end timenanos, kind, seconds)


def parse_gc_log(path: str, window: tuple[int, int] | None = None) -> GCLogSummary:
    s = GCLogSummary()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = _PAUSE.search(line)
            st = None if m else _STALL.search(line)
            if not m and not st:
                continue
            t = _TN.search(line)
            tn = int(t.group(1)) if t else None
            if window is not None and (tn is None or not (window[0] <= tn <= window[1])):
                continue
            if m:
                d = float(m.group(3)) / 1000.0
                s.count += 1
                s.total_s += d
                s.max_s = max(s.max_s, d)
                s.pauses.append((tn, m.group(2), d))
            else:
                s.stalls += 1
                s.stall_total_s += float(st.group(1)) / 1000.0
    return s
