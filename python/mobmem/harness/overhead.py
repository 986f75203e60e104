"""The harness measured against hyperfine (Debian's package) on the same trivial command.

Two questions, answered side by side in one run:

1. Extra time per run: both tools run the command R times with no shell; the harness's extra time
   per run is (its elapsed time for the R measured runs)/R − hyperfine's mean time per run. The
   harness's own bookkeeping (meters, records, stop checks) is also shown as elapsed/R − the mean
   wall time the harness itself measured for the child.
2. Adaptive stopping: how many runs ``ci:1%`` needs to reach a 1 % relative CI half-width (upper
   bound 500), against a fixed 15-run plan and the half-width that plan actually achieves.

Left out: hyperfine's shell-spawning mode (-N is used so both tools start the command directly).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time

from mobmem.errors import MobmemError
from mobmem.harness import stats
from mobmem.harness.implementation import CommandImplementation, Configuration, Parameters
from mobmem.harness.meters import RusageMeter, WallClockMeter
from mobmem.harness.runner import Runner
from mobmem.harness.stop import Bounded, Fixed, RelativeCI


def _hyperfine(argv: list[str], runs: int) -> dict:
    hf = shutil.which("hyperfine")
    if not hf:
        raise MobmemError("hyperfine not found: install it with `apt-get install hyperfine`")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "hf.json")
        cmd = [hf, "-N", "--warmup", "5", "--runs", str(runs), "--export-json", out, "--style", "none", " ".join(argv)]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        el = time.perf_counter() - t0
        with open(out) as f:
            r = json.load(f)["results"][0]
    return {
        "mean_s": r["mean"],
        "stddev_s": r["stddev"],
        "median_s": r["median"],
        "runs": len(r["times"]),
        "times": r["times"],
        "elapsed_s": el,
        "version": subprocess.run([hf, "--version"], capture_output=True, text=True).stdout.strip(),
    }


def _harness(argv: list[str], stop, env) -> tuple[dict, Runner]:
    impl = CommandImplementation(argv)
    r = Runner([Configuration("cmd", impl, Parameters())], stop, meters=[WallClockMeter(), RusageMeter()], env=env)
    r.run()
    # warm up the same way as hyperfine (5 runs), outside the timed loop
    recs = r.results["cmd"].records
    wall = [x["metrics"]["wall_s"] for x in recs if x["status"] == "ok"]
    loop = sum(x["duration_s"] for x in recs)
    first, last = recs[0]["t_start"], recs[-1]["t_start"] + recs[-1]["duration_s"]
    return {
        "runs": len(recs),
        "mean_wall_s": sum(wall) / len(wall),
        "elapsed_s": last - first,
        "per_run_s": (last - first) / len(recs),
        "impl_per_run_s": loop / len(recs),
        "wall": wall,
    }, r


def measure(runs: int = 200, command: str = "true", adaptive_command: str | None = None) -> dict:
    if runs < 15:
        raise MobmemError("--runs must be ≥ 15")
    argv = [command]
    if shutil.which(command) is None:
        raise MobmemError(f"command not found: {command!r}")
    from mobmem.harness import environment

    env = environment.collect(["mobmem", "bench", "harness-overhead"])
    env_light = {k: env[k] for k in ("cpu_model", "kernel", "cpus_online", "hypervisor")} | {"warnings": []}
    # interleave: hyperfine, harness, hyperfine, harness — drift hits both
    hf1 = _hyperfine(argv, runs)
    h1, _ = _harness(argv, Bounded(Fixed(runs), runs, max_failures=None), env_light)
    hf2 = _hyperfine(argv, runs)
    h2, _ = _harness(argv, Bounded(Fixed(runs), runs, max_failures=None), env_light)
    hf_mean = (hf1["mean_s"] + hf2["mean_s"]) / 2
    h_per_run = (h1["per_run_s"] + h2["per_run_s"]) / 2
    h_wall = (h1["mean_wall_s"] + h2["mean_wall_s"]) / 2
    out = {
        "command": command,
        "runs_per_tool": runs,
        "hyperfine": {"version": hf1["version"], "mean_s": hf_mean, "rounds": [hf1["mean_s"], hf2["mean_s"]]},
        "harness": {"per_run_s": h_per_run, "mean_child_wall_s": h_wall, "rounds": [h1["per_run_s"], h2["per_run_s"]]},
        "extra_per_run_s": h_per_run - hf_mean,
        "bookkeeping_per_run_s": h_per_run - h_wall,
        "measured_wall_vs_hyperfine_s": h_wall - hf_mean,
        "goal_s": 1e-3,
    }
    # adaptive vs fixed-15 on the same command (and a heavier one when given)
    cmds = [command] + ([adaptive_command] if adaptive_command else [])
    out["adaptive"] = []
    for c in cmds:
        a = c.split()
        ad, _ = _harness(a, Bounded(RelativeCI(0.01, 0.95, min_runs=3), max_runs=500, max_failures=None), env_light)
        fx, _ = _harness(a, Bounded(Fixed(15), 15, max_failures=None), env_light)
        fw = fx["wall"]
        fixed_hw = stats.t_interval(fw).relative_half_width(sum(fw) / len(fw))
        aw = ad["wall"]
        ad_hw = stats.t_interval(aw).relative_half_width(sum(aw) / len(aw))
        out["adaptive"].append(
            {
                "command": c,
                "adaptive_runs": ad["runs"],
                "adaptive_half_width": ad_hw,
                "adaptive_met": ad_hw <= 0.01,
                "fixed_runs": 15,
                "fixed_half_width": fixed_hw,
                "fixed_meets_1pct": fixed_hw <= 0.01,
            }
        )
    out["environment"] = env
    return out


def render(res: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    con = Console()
    t = Table(
        title=f"harness vs {res['hyperfine']['version']} on `{res['command']}` ({res['runs_per_tool']} runs each, 2 interleaved rounds)", title_justify="left"
    )
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_row("hyperfine mean time per run", f"{res['hyperfine']['mean_s'] * 1e3:.3f} ms")
    t.add_row("harness elapsed time per run", f"{res['harness']['per_run_s'] * 1e3:.3f} ms")
    t.add_row("harness extra time per run (goal ≤ 1 ms)", f"{res['extra_per_run_s'] * 1e3:.3f} ms")
    t.add_row("  of which bookkeeping outside the child's wall time", f"{res['bookkeeping_per_run_s'] * 1e3:.3f} ms")
    t.add_row("  harness-measured child wall − hyperfine mean", f"{res['measured_wall_vs_hyperfine_s'] * 1e3:.3f} ms")
    con.print(t)
    a = Table(title="runs to a 1 % CI half-width (95 %): adaptive `ci:1%` vs a fixed 15-run plan", title_justify="left")
    for h in ("command", "adaptive runs", "adaptive half-width", "fixed-15 half-width", "fixed-15 meets 1 %?"):
        a.add_column(h, justify="right" if h != "command" else "left")
    for r in res["adaptive"]:
        a.add_row(
            r["command"],
            str(r["adaptive_runs"]) + ("" if r["adaptive_met"] else " (bound hit)"),
            f"{r['adaptive_half_width'] * 100:.2f} %",
            f"{r['fixed_half_width'] * 100:.2f} %",
            "yes" if r["fixed_meets_1pct"] else "no",
        )
    con.print(a)
