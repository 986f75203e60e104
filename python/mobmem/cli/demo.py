"""``mobmem demo``: the README's main job.

On the Pixel-3-class phone with stock Android (``cc`` collector, the device's lmkd and swap),
runs the two short versions of the field's standard experiments, side by side in two worker
processes:

- ``demo_caching`` — apps launched one after another, two passes: how many are still alive after
  each launch (the curve), the maximum and mean number of cached apps, and the first kill;
- ``demo_hot_launch`` — apps kept in the background and brought back in rotation: each app's
  hot-launch time (TTID) distribution and the cold launches that happened instead.

The kernel-model demo that used to live here (a page trace replayed under lmkd psi and off) is
``mobmem kernel replay traces/app_switch.trace``.
"""

from __future__ import annotations

import time
from typing import Callable

import typer

from mobmem.cli import options
from mobmem.errors import Interrupted

SCENARIOS = ("demo_caching", "demo_hot_launch")


def _run(name: str, progress: Callable[[str, float, float], None] | None = None) -> tuple[str, dict, float]:
    """One scenario (in a worker process, its progress goes to the parent)."""
    from mobmem import session
    from mobmem.session import pool

    if progress is None and pool.reporting():
        progress = pool.report
    t0 = time.perf_counter()
    res = session.run(name, progress=(lambda d, e: progress(name, d, e)) if progress else None)
    return name, res, time.perf_counter() - t0


def run_demos(
    jobs: int = 2, progress: Callable[[str, float, float], None] | None = None, finished: Callable[[str], None] | None = None
) -> dict[str, tuple[dict, float]]:
    """Both demo scenarios, in parallel worker processes when ``jobs`` > 1 (same results);
    ``progress(name, done_s, estimated_s)`` as they run, ``finished(name)`` when each is done.
    Ctrl-C stops both at once (KeyboardInterrupt)."""
    out: dict[str, tuple[dict, float]] = {}

    def done(r: tuple[str, dict, float]) -> None:
        out[r[0]] = r[1:]
        if finished:
            finished(r[0])

    if jobs <= 1:
        for n in SCENARIOS:
            done(_run(n, progress))
        return out
    from mobmem.session.pool import run_parallel

    run_parallel(_run, SCENARIOS, min(jobs, len(SCENARIOS)), done, on_report=progress)
    return {n: out[n] for n in SCENARIOS}


def demo(
    jobs_: str = options.jobs("2", what="Scenarios"),
) -> None:
    """Caching capacity and hot launch on a Pixel-3-class phone with stock Android (two short sessions)."""
    from mobmem import session
    from mobmem.cli.progress import SimProgress, plain, wanted
    from mobmem.cli.session import cached_lines, console, curve_table, kills_table, launch_stats_table, relaunch_line
    from mobmem.session.executor import parse_jobs

    jobs = parse_jobs(jobs_)
    console.rule("[bold]mobmem demo: caching capacity and hot launch on a Pixel-3-class phone, stock Android")
    for n in SCENARIOS:
        d = session.scenario_description(n)
        console.print(f"[bold]{n}[/bold]: {d.split('. ')[0]}.", highlight=False)
    console.print(f"running both sessions ({'in parallel' if jobs > 1 else 'one after the other'}) …", style="dim")
    t0 = time.perf_counter()
    bars = SimProgress(list(SCENARIOS), wanted(), plain())
    try:
        with bars:
            runs = run_demos(jobs, progress=bars.update, finished=bars.finish)
    except KeyboardInterrupt:
        raise Interrupted("demo: " + ", ".join(f"{n} done" if n in bars.finished else f"{n} at {bars.where(n)}" for n in SCENARIOS)) from None
    total = time.perf_counter() - t0

    res, wall = runs["demo_caching"]
    s = res["system"]
    console.rule(f"[bold]caching capacity ({res['scenario']})")
    console.print(f"device {res['device']} · collector {s['collector']} · lmkd {s['lmkd']} · swap {s['swap']} · seed {res['seed']}", highlight=False)
    console.print(curve_table(res))
    for ln in cached_lines(res):
        console.print(ln, highlight=False)
    kt = kills_table(res)
    if kt is not None:
        console.print(kt)
    console.print(f"simulated {res['sim_seconds']:.0f} s in {wall:.1f} s wall", style="dim", highlight=False)

    res, wall = runs["demo_hot_launch"]
    console.rule(f"[bold]hot launch ({res['scenario']})")
    console.print(launch_stats_table(res, kinds=("hot",), title="hot launch time (TTID ms) per app"))
    console.print(relaunch_line(res), highlight=False)
    c = res["cached_apps"]
    console.print(
        f"cached apps: max {c['max']:.0f}, mean {c['mean']:.2f}; kills: {len(res['kill_records'])} "
        f"({', '.join(f'{k} {v}' for k, v in res['kills_by_reason'].items()) or 'none'})",
        highlight=False,
    )
    console.print(f"simulated {res['sim_seconds']:.0f} s in {wall:.1f} s wall", style="dim", highlight=False)

    console.rule()
    console.print(
        f"demo done in {total:.1f} s wall. Next: `mobmem run demo_hot_launch` for every launch's breakdown "
        "(faults, reclaim stalls, GC waits), `mobmem compare demo_hot_launch --systems stock,zram,compaction` "
        "for other systems with confidence intervals, `mobmem scenarios` / `mobmem systems` for what ships, "
        "and docs/sessions.md.",
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
