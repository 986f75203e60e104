"""``mobmem bench kernel``: page touches per second of the kernel model under memory pressure,
and the wall-clock ratio of model replay to real-kernel replay of the same trace.

The benchmark trace (≥ 10 million touches by several processes whose anonymous working sets
exceed RAM, under zram) is generated deterministically into a cache directory. Model throughput
is touches replayed / replay wall time (parse time excluded, reported separately), on one core.
Goal: ≥ 20 million touches per second.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import typer
from rich.console import Console

console = Console()
GOAL_TOUCHES_PER_S = 20e6


def _cache_dir() -> Path:
    d = Path(os.environ.get("MOBMEM_CACHE", Path.home() / ".cache" / "mobmem")) / "traces"
    d.mkdir(parents=True, exist_ok=True)
    return d


def bench_kernel(
    touches: int = typer.Option(10_000_000, "--touches", help="Page touches in the benchmark trace (≥ 10 M for the issue's goal)."),
    repeat: int = typer.Option(3, "--repeat", help="Model replays; the median is reported."),
    real: bool = typer.Option(False, "--real", help="Also replay the trace on the real kernel (root, minutes) for the wall-clock ratio."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Benchmark the kernel model's replay throughput (touches/s) under memory pressure."""
    from mobmem import _core
    from mobmem.kernel import model, tracegen

    path = _cache_dir() / f"bench_{touches}.trace"
    if not path.is_file():
        t0 = time.perf_counter()
        tracegen.GENERATORS["bench"](str(path), touches=touches)
        console.print(f"generated {path} in {time.perf_counter() - t0:.1f} s", style="dim")
    walls, rates = [], []
    res = None
    for _ in range(max(1, repeat)):
        res = model.replay(path)
        walls.append(res["wall"]["replay_s"])
        rates.append(res["wall"]["touches_per_s"])
    walls.sort()
    rates.sort()
    med_wall = walls[len(walls) // 2]
    med_rate = rates[len(rates) // 2]
    out = {
        "trace": str(path),
        "touches": res["trace"]["touches"],
        "sim_time_s": res["trace"]["sim_time_ms"] / 1000,
        "model_replay_wall_s": med_wall,
        "model_touches_per_s": med_rate,
        "goal_touches_per_s": GOAL_TOUCHES_PER_S,
        "meets_goal": med_rate >= GOAL_TOUCHES_PER_S,
        "debug_build": _core.debug_build(),
        "pressure": {k: res["vmstat"][k] for k in ("pswpout", "pswpin", "pgscan_kswapd", "pgscan_direct", "workingset_refault_anon")},
        "repeats": len(walls),
    }
    if real:
        from mobmem.kernel import real as real_mod

        try:
            r = real_mod.run_real(str(path))
        except real_mod.Skipped as e:
            out["real_skipped"] = str(e)
        else:
            # The replay phase only (not parsing or swap/cgroup setup), like the model's number.
            wall_real = float(r["environment"]["replay_seconds"])
            out["real_replay_wall_s"] = wall_real
            out["model_to_real_wall_ratio"] = med_wall / wall_real if wall_real else None
    if as_json:
        print(json.dumps(out))
        return
    console.print(
        f"kernel model: {out['touches']:,} touches in {med_wall:.2f} s (median of {len(walls)}) → "
        f"[bold]{med_rate / 1e6:.1f} M touches/s[/bold] (goal ≥ {GOAL_TOUCHES_PER_S / 1e6:.0f} M: "
        f"{'met' if out['meets_goal'] else 'NOT met'})"
    )
    console.print(f"pressure: {out['pressure']}")
    if out["debug_build"]:
        console.print("[yellow]warning: debug build of the core; numbers are not representative[/yellow]")
    if real and "real_skipped" in out:
        console.print(f"real kernel: skipped: {out['real_skipped']}")
    elif real:
        console.print(
            f"real kernel: {out['real_replay_wall_s']:.1f} s → model/real wall ratio "
            f"{out['model_to_real_wall_ratio']:.4f} (the model is {1 / out['model_to_real_wall_ratio']:.0f}× faster)"
        )
