"""The session simulator's speed (``mobmem bench session``): one session timed, the work it did,
and a floor under its wall time measured on this machine.

The work is per object: Java objects allocated, objects the collections touched and objects the
apps' workloads read. Host time per object operation (wall time over their sum) is the figure
the speed goals are set in, with a wall-time goal for the two experiments the studies and the
calibration lean on (:data:`GOAL_WALL_S`) and a peak-memory goal for the full one. The floor is
the runtime's allocation benchmark (allocation only — no reads, no tracing, no kernel; the
fastest collector's rate) applied to the objects the session's apps allocated: no simulation at
the object grain can be faster than that.
"""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Callable

#: Host time per object operation (allocations + objects touched by GCs + objects read), ns.
GOAL_NS_PER_OBJECT_OP = 100.0
#: Wall-time goals on a two-core machine, seconds, by scenario (stock, its own seed).
GOAL_WALL_S = {"hot_launch_groups": 120.0, "hot_launch": 600.0}
#: Peak resident memory goal of the full hot-launch experiment, bytes.
GOAL_PEAK_RSS = {"hot_launch": 2 << 30}


def measure(path: Path, pairs: list[tuple[str, str]], seed: int | None = None, run: Callable[..., dict] | None = None) -> dict:
    """Run the scenario at ``path`` once (``run(path, pairs, seed)``, default
    :func:`mobmem.session.run`) and return its speed record."""
    from mobmem import _core, session
    from mobmem import runtime as rtm

    t0 = time.perf_counter()
    res = (run or (lambda p, s, sd: session.run(p, s, seed=sd)))(path, pairs, seed)
    wall = time.perf_counter() - t0
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    alloc_rate = max(r["objects_per_s"] for r in rtm.bench(1000, 5_000_000)["allocation"])
    g = res["gc"]
    objects, touched, read = g["objects_allocated"], g["gc_objects_touched"], g["objects_read"]
    ops = objects + touched + read
    ns_per_op = wall * 1e9 / ops if ops else None
    name = Path(path).stem
    goal_wall = GOAL_WALL_S.get(name) if not pairs else None
    goal_rss = GOAL_PEAK_RSS.get(name) if not pairs else None
    return {
        "scenario": res["scenario"],
        "scenario_file": res["scenario_file"],
        "parameters": res["parameters"],
        "seed": res["seed"],
        "sim_seconds": res["sim_seconds"],
        "wall_seconds": wall,
        "core_wall_seconds": res["wall_seconds"],
        "sim_seconds_per_wall_second": res["sim_seconds"] / max(wall, 1e-9),
        "launches": len(res["launches"]),
        "objects_allocated": objects,
        "bytes_allocated": g["bytes_allocated"],
        "gc_objects_touched": touched,
        "objects_read": read,
        "ns_per_object_op": ns_per_op,
        "goal_ns_per_object_op": GOAL_NS_PER_OBJECT_OP,
        "meets_ns_goal": None if ns_per_op is None else ns_per_op <= GOAL_NS_PER_OBJECT_OP,
        "peak_rss_bytes": peak_rss,
        "goal_peak_rss_bytes": goal_rss,
        "allocation_benchmark_objects_per_s": alloc_rate,
        "allocation_only_floor_wall_seconds": objects / alloc_rate,
        "goal_wall_seconds": goal_wall,
        "meets_goal": (wall <= goal_wall and (goal_rss is None or peak_rss <= goal_rss)) if goal_wall else None,
        "debug_build": _core.debug_build(),
    }
