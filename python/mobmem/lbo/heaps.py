"""Heap sizes for an LBO study.

:func:`heap_multiples` is running-ng's spacing rule: N multiples of the minimum heap up to R,
closer together at the small end — multiple(n) = 1 + (R − 1)·s(n)/s(N) with
s(n) = n + sf/(N − 1)·n(n − 1)/2, for n = 1 … N, as docs/evaluation.md states it: the last size is R
times the minimum heap and the first lies just above it (1.37× for N = 9, R = 6, sf = 1), so no
configuration sits exactly at the edge where the reference collector barely completes. :func:`find_min_heap` bisects the smallest
heap at which a workload completes with a reference collector: out-of-memory or a time-out means
"too small"; a crash is retried a few times before it is taken as "too small" too. Left out:
non-monotonic heap behaviour (the search assumes larger heaps never fail).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from mobmem.errors import MobmemError


def heap_multiples(n: int, r: float, sf: float = 1.0) -> list[float]:
    if n < 1:
        raise MobmemError(f"number of heap sizes must be ≥ 1, got {n}")
    if not (math.isfinite(r) and r >= 1):
        raise MobmemError(f"heap range must be a finite number ≥ 1 (a multiple of the minimum heap), got {r}")
    if not (math.isfinite(sf) and sf >= 0):
        raise MobmemError(f"spacing factor must be a finite number ≥ 0, got {sf}")
    if n == 1:
        return [float(r)]

    def s(k: int) -> float:
        return k + sf / (n - 1) * k * (k - 1) / 2

    return [1 + (r - 1) * s(k) / s(n) for k in range(1, n + 1)]


def heap_sizes_mb(min_heap_mb: int, multiples: list[float]) -> list[int]:
    return [int(math.ceil(min_heap_mb * m)) for m in multiples]


@dataclass
class MinHeapResult:
    min_heap_mb: int
    probes: list[tuple[int, str]] = field(default_factory=list)  # (heap MB, outcome) in order

    def to_dict(self) -> dict:
        return {"min_heap_mb": self.min_heap_mb, "probes": self.probes}


def find_min_heap(probe: Callable[[int], str], *, start_mb: int = 64, max_mb: int = 16384, tolerance: float = 0.02, crash_retries: int = 2) -> MinHeapResult:
    """Smallest heap (MB) for which ``probe(heap)`` returns "ok". ``probe`` returns "ok", "oom",
    "timeout" or "crash". Precision: within ``tolerance`` (relative) or 1 MB."""
    if start_mb < 1:
        raise MobmemError(f"start heap must be ≥ 1 MB, got {start_mb}")
    res = MinHeapResult(0)
    cache: dict[int, bool] = {}

    def ok(h: int) -> bool:
        if h in cache:
            return cache[h]
        out = "crash"
        for _ in range(crash_retries + 1):
            out = probe(h)
            res.probes.append((h, out))
            if out != "crash":
                break
        cache[h] = out == "ok"
        return cache[h]

    hi = start_mb
    while not ok(hi):
        if hi >= max_mb:
            raise MobmemError(f"workload does not run even with {max_mb} MB of heap (probes: {res.probes[-3:]})")
        hi = min(max_mb, hi * 2)
    lo = hi
    while lo > 1 and ok(lo):
        hi = lo
        lo = max(1, lo // 2)
    if lo == 1 and ok(1):
        res.min_heap_mb = 1
        return res
    # invariant: lo fails, hi succeeds
    while hi - lo > max(1, int(hi * tolerance)):
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    res.min_heap_mb = hi
    return res
