"""The session simulator's speed (``mobmem bench session``): one session timed, the work it did,
and a floor under its wall time measured on this machine.

The floor is the runtime's allocation benchmark (allocation only — no reads, no tracing, no
kernel; the fastest collector's rate) applied to the objects the session's apps allocated: no
simulation at the object grain can be faster than that. The goal is the full hot-launch
experiment (``hot_launch``, ≈ 8,000 simulated s) in at most :data:`GOAL_WALL_S` of wall time on a
two-core machine; the goal is judged only for that scenario.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

#: Wall-time goal for the full hot-launch experiment, seconds.
GOAL_WALL_S = 60.0
#: The scenario the goal is set for.
GOAL_SCENARIO = "hot_launch"


def measure(path: Path, pairs: list[tuple[str, str]], seed: int | None = None, run: Callable[..., dict] | None = None) -> dict:
    """Run the scenario at ``path`` once (``run(path, pairs, seed)``, default
    :func:`mobmem.session.run`) and return its speed record."""
    from mobmem import _core, session
    from mobmem import runtime as rtm

    t0 = time.perf_counter()
    res = (run or (lambda p, s, sd: session.run(p, s, seed=sd)))(path, pairs, seed)
    wall = time.perf_counter() - t0
    alloc_rate = max(r["objects_per_s"] for r in rtm.bench(1000, 5_000_000)["allocation"])
    objects = res["gc"]["objects_allocated"]
    goal = Path(path).stem == GOAL_SCENARIO
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
        "bytes_allocated": res["gc"]["bytes_allocated"],
        "gc_objects_touched": res["gc"]["gc_objects_touched"],
        "allocation_benchmark_objects_per_s": alloc_rate,
        "allocation_only_floor_wall_seconds": objects / alloc_rate,
        "goal_wall_seconds": GOAL_WALL_S if goal else None,
        "meets_goal": (wall <= GOAL_WALL_S) if goal else None,
        "debug_build": _core.debug_build(),
    }
