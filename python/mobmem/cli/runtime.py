"""``mobmem runtime …``: the ART-like managed runtime model.

- ``mobmem runtime run --app PROFILE_OR_SYNTHETIC --collector NAME --heap SIZE
  --seconds N [--state fg|bg] [--device NAME] [--json]`` — one app's runtime on the device model:
  ART-style GC log lines and a summary; ``--json`` gives ``gcs``, ``summary`` and ``oom`` (and more).
- ``mobmem runtime gcbench --collector … --heap SIZE [--json]`` — the simulated GCBench.
- ``mobmem runtime gclog FILE [--process P] [--window A-B …] [--json]`` — a phone's ART GC log
  (logcat) read back: live heap, footprint and allocation rate, the inputs of an app profile.
- ``mobmem runtime apps`` / ``mobmem runtime keys`` — app profiles, setting names and policies.
- ``mobmem bench runtime`` — the model's tracing and allocation throughput.
"""

from __future__ import annotations

import json
import sys
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

from mobmem.errors import MobmemError

app = typer.Typer(help="The ART-like managed runtime model: run an app's heap and collectors, GCBench.", no_args_is_help=True)
console = Console()

SUMMARY_ROWS = [
    ("gc_count", "collections", "{:,}"),
    ("sticky_count", "  sticky (young)", "{:,}"),
    ("full_count", "  full", "{:,}"),
    ("alloc_gc_count", "  for allocation (thread waited)", "{:,}"),
    ("pause_total_ms", "pause total ms", "{:.2f}"),
    ("pause_max_ms", "pause max ms", "{:.3f}"),
    ("gc_cpu_ms", "GC-thread CPU ms", "{:.1f}"),
    ("gc_cpu_pause_ms", "  of it in pauses (STW)", "{:.2f}"),
    ("mutator_cpu_ms", "mutator CPU ms", "{:.1f}"),
    ("total_cpu_ms", "total CPU ms", "{:.1f}"),
    ("mutator_wait_ms", "mutator waiting for GC ms", "{:.2f}"),
    ("mutator_gc_work_ms", "mutator barrier work ms", "{:.2f}"),
    ("bytes_allocated_total", "bytes allocated", "{:,}"),
    ("live_bytes_end", "heap bytes at end", "{:,}"),
    ("peak_footprint_mib", "peak heap footprint MiB", "{:.1f}"),
    ("peak_rss_mib", "peak RSS MiB", "{:.1f}"),
    ("copied_by_mutator", "objects copied by the mutator", "{:,}"),
    ("gc_pages_touched", "GC pages touched (sum)", "{:,}"),
    ("trims", "heap trims", "{:,}"),
    ("transitions", "collector transitions", "{:,}"),
]


def _print_result(res: dict, title: str) -> None:
    for line in res.get("log", []):
        sys.stdout.write(line + "\n")  # ART's log lines, unwrapped
    sys.stdout.flush()
    s = res["summary"]
    t = Table(title=title, show_edge=False)
    t.add_column("")
    t.add_column("value", justify="right")
    for key, label, fmt in SUMMARY_ROWS:
        if key in s:
            t.add_row(label, fmt.format(s[key]))
    f = s.get("faults", {})
    t.add_row(
        "GC-thread faults minor / major", f"{f.get('gc_minor', 0):,} / {f.get('gc_major_zram', 0) + f.get('gc_major_flash', 0) + f.get('gc_major_file', 0):,}"
    )
    t.add_row(
        "mutator faults minor / major",
        f"{f.get('mutator_minor', 0):,} / {f.get('mutator_major_zram', 0) + f.get('mutator_major_flash', 0) + f.get('mutator_major_file', 0):,}",
    )
    fr = res.get("frames") or {}
    if fr.get("frames"):
        t.add_row("frames (janky %)", f"{fr['frames']:,} ({100 * fr['jank_ratio']:.1f} %)")
        t.add_row("frame time p50 / p90 / p99 ms", f"{fr['p50_ms']:.1f} / {fr['p90_ms']:.1f} / {fr['p99_ms']:.1f}")
    pc = res.get("pacing") or {}
    if pc.get("units"):
        # How much later the run ended because of GC: stops inside frames that still met their
        # deadline cost none of it.
        t.add_row("GC stops in units of work / run delayed by ms", f"{pc['gc_stall_ms']:.1f} / {pc['gc_delay_ms']:.1f}")
    console.print(t)
    console.print(
        f"simulated {s['sim_time_ms'] / 1000:.2f} s; out of memory: {'yes' if res.get('oom') else 'no'}; wall {res.get('wall', {}).get('seconds', 0):.2f} s",
        highlight=False,
    )


def _json_out(res: dict) -> None:
    out = {k: res[k] for k in ("gcs", "summary", "oom") if k in res}
    for k, v in res.items():
        if k not in out:
            out[k] = v
    sys.stdout.write(json.dumps(out) + "\n")


@app.command()
def run(
    app_: str = typer.Option(..., "--app", help="An app profile (see `mobmem runtime apps`) or synthetic:footprint=180m,objsize=512[,churn=0.01]."),
    collector: Optional[str] = typer.Option(
        None, "--collector", help="A collector's name or alias (`mobmem catalog` lists them; default: the device's, else cc)."
    ),
    heap: Optional[str] = typer.Option(None, "--heap", help="Per-app heap size override (growth limit and capacity), e.g. 256m."),
    seconds: float = typer.Option(10.0, "--seconds", help="Simulated seconds after the app's start-up."),
    alloc: Optional[str] = typer.Option(
        None,
        "--alloc",
        help="Instead of --seconds: run until the app has allocated this much (2g, or 12x: twelve times its live heap), a fixed amount of work.",
    ),
    state: str = typer.Option("fg", "--state", help="fg or bg: the app's state after start-up."),
    device: Optional[str] = typer.Option(None, "--device", help="Device profile (kernel and dalvik.vm.heap* settings)."),
    set_: List[str] = typer.Option([], "--set", help="runtime KEY=VALUE, kernel.KEY=VALUE or app.KEY=VALUE (repeatable)."),
    policy: List[str] = typer.Option([], "--policy", help="Runtime policy to install (repeatable; see `mobmem runtime keys`)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (gcs, summary, oom, …)."),
) -> None:
    """Run one app's runtime on the device model: ART-style GC log lines and a summary."""
    from mobmem import runtime as rtm

    res = rtm.run(app_, collector=collector, heap=heap, seconds=seconds, state=state, device=device, settings=set_, policies=policy, alloc=alloc)
    if as_json:
        _json_out(res)
    else:
        _print_result(res, f"{app_} · {res['summary']['collector']} · {state}")


@app.command()
def gcbench(
    collector: Optional[str] = typer.Option(None, "--collector", help="A collector's name or alias (`mobmem catalog` lists them)."),
    heap: Optional[str] = typer.Option(None, "--heap", help="Heap size (growth limit and capacity), e.g. 64m."),
    device: Optional[str] = typer.Option(None, "--device"),
    set_: List[str] = typer.Option([], "--set", help="runtime KEY=VALUE or kernel.KEY=VALUE (repeatable)."),
    depth: Optional[int] = typer.Option(None, "--depth", help="Stretch-tree depth (default 18; smaller = a scaled-down run)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Run the simulated GCBench (binary trees) with a collector and heap size."""
    from mobmem import runtime as rtm

    params = {}
    if depth is not None:
        if not 6 <= depth <= 22:
            raise MobmemError(f"--depth must be within [6, 22], got {depth}")
        params = {"stretch_depth": depth, "long_lived_depth": depth - 2, "max_depth": depth - 2}
    res = rtm.gcbench(collector=collector, heap=heap, device=device, settings=set_, params=params)
    if as_json:
        _json_out(res)
    else:
        _print_result(res, f"GCBench · {res['summary']['collector']}")
        r = res["result"]
        wall = res.get("wall", {}).get("seconds", 0)
        rate = f"; {r['nodes_allocated'] / wall / 1e6:.1f} M nodes per wall second" if wall > 0 else ""
        console.print(f"{r['nodes_allocated']:,} nodes, {r['trees_built']:,} trees; simulated {r['sim_time_ns'] / 1e9:.3f} s{rate}", highlight=False)


@app.command()
def gclog(
    path: str = typer.Argument(..., help="A logcat capture (`adb logcat -v threadtime`, the default format, or `-v time`) or bare ART GC lines."),
    process: Optional[str] = typer.Option(None, "--process", help="The process: its id, or a part of its logcat tag (needed when the log has several)."),
    window: List[str] = typer.Option(
        [], "--window", help="START-END seconds from the first collection (repeatable; e.g. 0-180 for the first 3 minutes, 220- to the end)."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Read ART's GC log of an app: live heap and footprint after collections, allocation rate.

    The allocation between two logged collections is what the later ones freed (AllocSpace and
    LOS) plus the growth of the heap; the rate needs timestamps and at least two collections in a
    window. These are the measured inputs of an app profile's [java_heap] (live_fg_mib,
    alloc_fg_mib_s, alloc_bg_mib_s)."""
    from mobmem.runtime import gclog as gl

    specs = [gl.parse_window(w) for w in window]
    cs = gl.read(path, process)
    rows = [w.summary() for w in gl.windows(cs, specs)]
    if as_json:
        sys.stdout.write(json.dumps({"file": path, "process": cs[0].process, "collections": len(cs), "windows": rows}) + "\n")
        return
    t = Table(title=f"{path} · {cs[0].process or 'one process'} · {len(cs):,} logged collections", show_edge=False)
    for col in ("window s", "GCs (young)", "span s", "heap after GC, MiB", "footprint MiB", "alloc MiB/s", "LOS of freed"):
        t.add_column(col, justify="right")

    def f(v, fmt):
        return "—" if v is None else fmt.format(v)

    for r in rows:
        a, b = r["window_s"]
        live = r["heap_after_gc_mib"]
        t.add_row(
            "all" if a is None and b is None else f"{'' if a is None else f'{a:g}'}–{'' if b is None else f'{b:g}'}",
            f"{r['collections']:,} ({r['young_collections']:,})",
            f(r["span_s"], "{:.0f}"),
            "—" if live is None else f"{live['median']:.1f} ({live['min']:.1f}–{live['max']:.1f})",
            f(r["footprint_mib_median"], "{:.1f}"),
            f(r["alloc_mib_per_s"], "{:.2f}"),
            f(r["los_share_of_freed"], "{:.0%}"),
        )
    console.print(t)


@app.command()
def apps() -> None:
    """List the app profiles (the same ones sessions use) and the synthetic app spec."""
    from mobmem import catalog

    for a in catalog.catalog()["apps"]:
        console.print(f"{a['name']:12s} {a['title']} ({a['package']}){' — estimate' if a['estimate'] else ''}", highlight=False)
    console.print(
        "synthetic:footprint=SIZE,objsize=SIZE[,churn=SHARE,KEY=VALUE…]  a fixed-footprint heap of one object size re-creating SHARE of it per second",
        highlight=False,
    )


@app.command()
def keys(layer: str = typer.Argument("runtime", help="kernel, runtime, app or session.")) -> None:
    """List the settings of a layer: key, type, default, unit, range, help and source."""
    from mobmem.cli.keys import print_keys

    print_keys(layer)


def bench_runtime(
    objects: int = typer.Option(2_000_000, "--objects", help="Live objects traced by the tracing benchmark."),
    allocations: int = typer.Option(20_000_000, "--allocations", help="Objects allocated by the allocation benchmark."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Benchmark the runtime model: tracing (refs/s) and allocation (objects/s) throughput, one core."""
    from mobmem import runtime as rtm

    if objects < 1000 or allocations < 1000:
        raise MobmemError("--objects and --allocations must be at least 1000")
    res = rtm.bench(objects, allocations)
    if as_json:
        sys.stdout.write(json.dumps(res) + "\n")
        return
    if res.get("debug_build"):
        console.print("warning: debug build — numbers are not representative", style="yellow")
    g = res["goals"]
    for r in res["tracing"]:
        ok = "ok" if r["refs_per_s"] >= g["refs_per_s"] else "below goal"
        print(
            f"tracing    {r['collector']:4s} {r['refs_per_s'] / 1e6:7.1f} M refs/s   (median of {r['reps']}, {r['refs_per_s_min'] / 1e6:.1f}–{r['refs_per_s_max'] / 1e6:.1f}; "
            f"{r['objects']:,} objects, {r['tracing_wall_s']:.3f} s tracing, {r['refs_per_s_whole_gc'] / 1e6:.1f} M/s over the whole GC; goal ≥ {g['refs_per_s'] / 1e6:.0f} M: {ok})"
        )
    for r in res["allocation"]:
        ok = "ok" if r["objects_per_s"] >= g["objects_per_s"] else "below goal"
        print(
            f"allocation {r['collector']:4s} {r['objects_per_s'] / 1e6:7.1f} M objects/s (median of {r['reps']}, {r['objects_per_s_min'] / 1e6:.1f}–{r['objects_per_s_max'] / 1e6:.1f}; "
            f"{r['objects']:,} objects, {r['gcs']} GCs, {r['wall_s']:.3f} s; goal ≥ {g['objects_per_s'] / 1e6:.0f} M: {ok})"
        )


def register_bench(bench_app: typer.Typer) -> None:
    """Add ``mobmem bench runtime`` to the bench group."""
    bench_app.command("runtime")(bench_runtime)
