"""Fixed-heap mode: the heap's size is an input, so a garbage collector's cost falls as its heap
grows — the time–space trade-off LBO measures (GCBench, the runtime's collectors)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOBMEM = [sys.executable, "-m", "mobmem"]


def gcbench(collector: str, mb: int, sizing: str = "fixed") -> dict:
    p = subprocess.run(
        [*MOBMEM, "runtime", "gcbench", "--collector", collector, "--heap", f"{mb}m", "--set", f"heap_sizing={sizing}", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    d = json.loads(p.stdout)
    return {"oom": d["oom"], "gcs": d["summary"]["gc_count"], "gc_cpu_ms": d["summary"]["gc_cpu_ms"]}


def min_heap_mb(collector: str) -> int:
    """The smallest heap (MiB) GCBench completes in, by bisection."""
    lo, hi = 4, 68
    assert gcbench(collector, lo)["oom"] and not gcbench(collector, hi)["oom"]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if gcbench(collector, mid)["oom"]:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize("collector", ["ss", "cc"])
def test_gc_count_and_cpu_fall_strictly_as_the_fixed_heap_grows(collector):
    from concurrent.futures import ThreadPoolExecutor

    m = min_heap_mb(collector)
    with ThreadPoolExecutor(2) as ex:
        runs = list(ex.map(lambda k: gcbench(collector, round(m * k)), (1.5, 2.0, 3.0, 4.0)))
    assert not any(r["oom"] for r in runs)
    for a, b in zip(runs, runs[1:]):
        assert b["gcs"] < a["gcs"] and b["gc_cpu_ms"] < a["gc_cpu_ms"], (collector, m, runs)
    # ART's own sizing grows the heap from the live size: the same heap limits give the same work.
    art = [gcbench(collector, round(m * k), "art") for k in (2.0, 4.0)]
    assert art[0]["gcs"] == art[1]["gcs"], art


def test_an_app_profiles_gc_cost_falls_strictly_as_the_fixed_heap_grows():
    """The same on a shipped app profile, run by the LBO back end for a fixed allocation volume
    (heap sizes are multiples of the minimum heap found with cc, as in an LBO study)."""
    from concurrent.futures import ThreadPoolExecutor

    from mobmem.harness.implementation import Parameters, RunContext
    from mobmem.lbo.backends.sim import SimBackend
    from mobmem.lbo.heaps import find_min_heap

    be = SimBackend()
    # The volume is about a dozen times the minimum heap, so that each heap step changes how many
    # collections it takes (with 400 MiB, 3x and 4x both needed two semi-space collections).
    (wl,), _ = be.check(["app:telegram@700m"], ["cc"])
    m = find_min_heap(lambda h: be.probe_heap(wl, "cc", h), start_mb=be.start_heap_mb(wl)).min_heap_mb
    for collector in ("ss", "cc"):

        def run(k, collector=collector):
            o = be.implementation().run(Parameters(workload=wl, collector=collector, heap_mb=round(m * k), invocation=0), RunContext(0, "measure", "."))
            assert o.status == "ok", o.error
            return o.metrics

        with ThreadPoolExecutor(2) as ex:
            runs = list(ex.map(run, (1.5, 2.0, 3.0, 4.0)))
        for a, b in zip(runs, runs[1:]):
            assert b["gc_count"] < a["gc_count"] and b["task_clock_gc_s"] < a["task_clock_gc_s"], (collector, m, runs)
        # Fixed work: the same frames at every heap size (late frames delay, never drop, work).
        walls = [r["wall_s"] for r in runs]
        assert max(walls) - min(walls) < 0.01 * min(walls), walls
