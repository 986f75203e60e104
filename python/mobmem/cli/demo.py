"""``mobmem demo``: the README's main job (issue 4).

On the Pixel-3-class phone with stock Android (``cc`` collector, lmkd PSI, the device's swap),
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

import typer

from mobmem.errors import MobmemError

SCENARIOS = ("demo_caching", "demo_hot_launch")


def _run(name: str) -> tuple[str, dict, float]:
    from mobmem import session

    t0 = time.perf_counter()
    res = session.run(name)
    return name, res, time.perf_counter() - t0


def run_demos(jobs: int = 2) -> dict[str, tuple[dict, float]]:
    """Both demo scenarios, in parallel worker processes when ``jobs`` > 1 (same results)."""
    if jobs <= 1:
        return {n: _run(n)[1:] for n in SCENARIOS}
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=min(jobs, len(SCENARIOS)), mp_context=mp.get_context("spawn")) as ex:
        out = {}
        for name, res, wall in ex.map(_run, SCENARIOS):
            out[name] = (res, wall)
    return out


def demo(
    jobs: int = typer.Option(2, "--jobs", help="Scenarios run at a time (worker processes)."),
) -> None:
    """Caching capacity and hot launch on a Pixel-3-class phone with stock Android (two short sessions)."""
    from mobmem import session
    from mobmem.cli.session import cached_lines, console, curve_table, kills_table, launch_stats_table, relaunch_line

    if not 1 <= jobs <= 8:
        raise MobmemError(f"--jobs must be within [1, 8], got {jobs}")
    console.rule("[bold]mobmem demo: caching capacity and hot launch on a Pixel-3-class phone, stock Android")
    for n in SCENARIOS:
        d = session.scenario_description(session.SCENARIOS / f"{n}.toml")
        console.print(f"[bold]{n}[/bold]: {d.split('. ')[0]}.", highlight=False)
    console.print(f"running both sessions ({'in parallel' if jobs > 1 else 'one after the other'}) …", style="dim")
    t0 = time.perf_counter()
    runs = run_demos(jobs)
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
    console.print(f"cached apps: max {c['max']:.0f}, mean {c['mean']:.2f}; kills: {len(res['kill_records'])} "
                  f"({', '.join(f'{k} {v}' for k, v in res['kills_by_reason'].items()) or 'none'})", highlight=False)
    console.print(f"simulated {res['sim_seconds']:.0f} s in {wall:.1f} s wall", style="dim", highlight=False)

    console.rule()
    console.print(f"demo done in {total:.1f} s wall. Next: `mobmem run demo_hot_launch` for every launch's breakdown "
                  "(faults, reclaim stalls, GC waits), `mobmem compare demo_hot_launch --systems stock,zram,compaction` "
                  "for other systems with confidence intervals, `mobmem scenarios` / `mobmem systems` for what ships, "
                  "and docs/sessions.md.", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
