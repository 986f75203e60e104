"""``mobmem lbo …``: lower-bound overhead of GC on a back end.

``mobmem lbo --backend jvm|sim --workloads … --collectors … --heaps N [--range R] [--invocations K]
[--out DIR] [--json]`` runs a whole study (minimum heaps, sweep, analysis, tables, plots, report);
re-running with the same ``--out`` resumes it. ``mobmem lbo minheap …`` runs only the minimum-heap
search. ``--backend sim`` runs the runtime model's collectors on the simulated GCBench and on app
profiles; ``--quick`` scales a study down (every app profile: about 15 minutes on two cores).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Optional

import typer

from mobmem.cli import options
from mobmem.errors import MobmemError
from mobmem.harness.cliutil import handle_errors

app = typer.Typer(help="Lower-bound overhead (LBO) of garbage collection.", invoke_without_command=True, no_args_is_help=False)


def _list(s: str, what: str) -> list[str]:
    items = [x.strip() for x in s.split(",") if x.strip()]
    if not items:
        raise MobmemError(f"--{what} is empty")
    return items


def _log(quiet: bool):
    def log(msg: str) -> None:
        if not quiet:
            print(msg, file=sys.stderr, flush=True)

    return log


def _parse_min_heaps(s: Optional[str]) -> dict[str, int]:
    out = {}
    if not s:
        return out
    for part in s.split(","):
        w, eq, v = part.partition("=")
        if not eq:
            raise MobmemError(f"--min-heap expects WORKLOAD=MB[,…], got {part!r}")
        try:
            mb = int(v)
        except ValueError:
            raise MobmemError(f"--min-heap: {v!r} is not a whole number of MB") from None
        if mb <= 0:
            raise MobmemError(f"--min-heap: heap size must be positive, got {mb}")
        out[w.strip().lower()] = mb
    return out


def _backend(name, jdk, measure, log, warmup, timeout, app_alloc=None, device=None):
    from mobmem.lbo.backends import get_backend

    if app_alloc is not None and name.strip().lower() != "sim":
        raise MobmemError("--app-alloc applies to the sim back end only")
    if device is not None and name.strip().lower() != "sim":
        raise MobmemError("--device applies to the sim back end only")
    if name.strip().lower() == "jvm":
        wu = None
        if warmup is not None:
            if warmup < 0:
                raise MobmemError(f"--warmup must be ≥ 0, got {warmup}")
            from mobmem.jvm.workload import WORKLOADS

            wu = {w: warmup for w in WORKLOADS}
        return get_backend("jvm", jdk=jdk, measure=measure, log=log, warmup=wu, timeout_s=timeout)
    kw = {"app_alloc": app_alloc} if app_alloc is not None else {}
    if device is not None:
        from mobmem import catalog

        known = catalog.names("devices")
        if device not in known:
            raise MobmemError(f"--device: unknown device {device!r}; known: {', '.join(known)}")
        kw["device"] = device
    return get_backend(name, **kw)


@app.callback()
@handle_errors
def main(
    ctx: typer.Context,
    backend: str = typer.Option("jvm", "--backend", help="jvm (real JVMs on this host) or sim (the simulator: GCBench and app profiles on the runtime model)."),
    workloads: str = typer.Option(
        "gcbench",
        "--workloads",
        help="Comma-separated. jvm: gcbench, lusearch, xalan, pmd; sim: gcbench, gcbench-small, app:NAME[@SIZE] (an app profile run until it allocated SIZE), app:all.",
    ),
    collectors: Optional[str] = typer.Option(
        None,
        "--collectors",
        help="Comma-separated collectors (default: the back end's: Serial, Parallel, G1, ZGC, Shenandoah, Epsilon on the JVM; all of the simulator's).",
    ),
    heaps: Optional[int] = typer.Option(None, "--heaps", help="Number of heap sizes (N; default 9, 3 with --quick)."),
    range_: float = typer.Option(6.0, "--range", help="Largest heap as a multiple of the minimum heap (R)."),
    spacing: float = typer.Option(1.0, "--spacing", help="running-ng spread factor sf (0: evenly spaced)."),
    invocations: Optional[int] = typer.Option(
        None, "--invocations", help="Invocations (JVM launches, simulator seeds) per configuration (K; default 5, 2 with --quick)."
    ),
    app_alloc: Optional[str] = typer.Option(
        None,
        "--app-alloc",
        help="sim back end: how much each app invocation allocates (its fixed work): a size (2g) or a multiple of the app's live heap (default 12x, 3x with --quick).",
    ),
    device: Optional[str] = typer.Option(
        None,
        "--device",
        help="With --backend sim: run on this device profile (its kernel, heap settings and the calibration knobs of its apps); default: the model's defaults.",
    ),
    quick: bool = typer.Option(
        False,
        "--quick",
        help="A scaled-down study: 3 heap sizes, 2 invocations, app runs of 3x their live heap (sim, app:all: about 15 minutes on two cores; one app: a minute or two).",
    ),
    out: str = typer.Option("mobmem-lbo", "--out", help="Output directory; an existing one is resumed."),
    json_flag: bool = typer.Option(False, "--json", help="Print lbo.json on stdout instead of tables."),
    jdk: Optional[str] = typer.Option(None, "--jdk", help="JDK major version (17, 25) or home; default: java on PATH."),
    measure: str = typer.Option("auto", "--measure", help="auto (perf_event, else /proc fallback), perf, proc."),
    reference: Optional[str] = typer.Option(
        None, "--reference", help="Collector used for the minimum-heap search (default: the back end's: G1 on the JVM, cc in the simulator)."
    ),
    min_heap: Optional[str] = typer.Option(None, "--min-heap", help="Skip the search: WORKLOAD=MB[,…]."),
    warmup: Optional[int] = typer.Option(None, "--warmup", help="Warm-up iterations in each JVM (default: per workload)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Per-invocation time limit in seconds (default: per workload)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the per-round shuffle of configurations."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress messages."),
    report_only: bool = typer.Option(False, "--report-only", help="Run nothing: analyse the invocations already in --out."),
    jobs_: Optional[str] = typer.Option(
        None,
        "--jobs",
        metavar="N|auto",
        help="sim back end: invocations at a time on this machine, a number or 'auto' (from the CPUs and the free memory; the default — simulated runs give the same results in parallel). The jvm back end runs one at a time.",
    ),
    executor: str = options.executor("sim back end: "),
    address: Optional[str] = options.address(),
):
    """Run an LBO study (or use the `minheap` sub-command)."""
    ctx.obj = {k: v for k, v in locals().items() if k != "ctx"}
    if ctx.invoked_subcommand is not None:
        return
    from mobmem.lbo import analysis, report, sweep
    from mobmem.lbo.heaps import heap_multiples

    heaps = heaps if heaps is not None else (3 if quick else 9)
    invocations = invocations if invocations is not None else (2 if quick else 5)
    if app_alloc is None and quick and backend.strip().lower() == "sim":
        app_alloc = "3x"
    if heaps < 1:
        raise MobmemError(f"--heaps must be ≥ 1, got {heaps}")
    if invocations < 1:
        raise MobmemError(f"--invocations must be ≥ 1, got {invocations}")
    if timeout is not None and timeout <= 0:
        raise MobmemError(f"--timeout must be positive, got {timeout}")
    heap_multiples(heaps, range_, spacing)  # validates R and sf
    from mobmem.session.executor import check as check_executor

    log = _log(quiet or json_flag)
    be = _backend(backend, jdk, measure, log, warmup, timeout, app_alloc, device)
    jobs = check_executor(jobs_ or ("auto" if be.deterministic else "1"), executor)
    sweep.check_parallel(be, jobs, executor)  # before the minimum-heap search
    ws, cs = be.check(_list(workloads, "workloads"), _list(collectors, "collectors") if collectors is not None else list(be.default_collectors))
    ref = be.check(ws[:1], [reference or be.reference_collector])[1][0]
    if be.is_nogc(ref):
        raise MobmemError(f"--reference {ref} cannot find a minimum heap (its heap is fixed); use e.g. G1")
    given = _parse_min_heaps(min_heap)
    t0 = time.monotonic()
    if report_only and not os.path.exists(os.path.join(out, "results.jsonl")):
        raise MobmemError(f"--report-only: no results.jsonl in {out}")
    if not report_only:
        be.prepare(ws, log)
    mh = sweep.min_heaps(be, ws, ref, out, given, log, jobs=jobs, any_code=report_only)
    configs = sweep.plan(be, ws, cs, mh, heaps, range_, spacing)
    cmd = ["mobmem", "lbo", *sys.argv[2:]] if len(sys.argv) > 1 and sys.argv[1] == "lbo" else ["mobmem", "lbo", *sys.argv[1:]]
    if report_only:
        records, meta = sweep.load_sweep(be, configs, out, command=cmd)
    else:
        log(f"{len(configs)} configurations × {invocations} invocations, interleaved (seed {seed}) → {out}")
        records, meta = sweep.run_sweep(be, configs, invocations, out, seed=seed, command=cmd, log=log, jobs=jobs, executor=executor, address=address)
    res = analysis.compute(records, be.metric_pairs)
    res["side_metrics"] = be.side_metrics
    res["side"] = analysis.side_means(records, be.side_metrics)
    files = report.plots(res, out) if res["cells"] else []
    settings = {
        "backend": be.name,
        "workloads": ", ".join(ws),
        "collectors": ", ".join(cs),
        "heap sizes (N)": heaps,
        "range (R)": range_,
        "spread factor (sf)": spacing,
        "heap multiples": ", ".join(f"{m:.3f}" for m in heap_multiples(heaps, range_, spacing)),
        "invocations (K)": invocations,
        "shuffle seed": seed,
        "minimum-heap reference collector": ref,
        **({"allocation per app invocation": be.app_alloc} if getattr(be, "app_alloc", None) and any(w.startswith("app:") for w in ws) else {}),
    }
    rpath = report.write_report(
        res,
        out,
        command=shlex.join(cmd),
        distillation=be.distillation,
        env=meta["environment"],
        minheap=mh,
        settings=settings,
        warnings=meta["warnings"],
        plot_files=files,
        elapsed_s=None if report_only else time.monotonic() - t0,
        records=records,
    )
    doc = report.to_json(res, {"command": shlex.join(cmd), "settings": settings, "min_heaps": mh, "warnings": meta["warnings"]})
    from mobmem.files import atomic_write

    atomic_write(Path(out) / "lbo.json", json.dumps(doc, indent=2, default=str))
    if json_flag:
        print(json.dumps(doc, indent=2, default=str))
    else:
        report.print_tables(res)
        log(f"report: {rpath}; plots: {', '.join(os.path.basename(p) for p in files)}")


@app.command("minheap")
@handle_errors
def minheap_cmd(ctx: typer.Context):
    """Find the minimum heap of each workload with the reference collector (--reference)."""
    from mobmem.lbo import sweep

    o = ctx.obj or {}
    log = _log(o.get("quiet") or o.get("json_flag"))
    be = _backend(o.get("backend", "jvm"), o.get("jdk"), o.get("measure", "auto"), log, o.get("warmup"), o.get("timeout"), o.get("app_alloc"))
    ws, _ = be.check(_list(o.get("workloads", "gcbench"), "workloads"), [o.get("reference") or be.reference_collector])
    ref = be.check(ws[:1], [o.get("reference") or be.reference_collector])[1][0]
    if be.is_nogc(ref):
        raise MobmemError(f"--reference {ref} cannot find a minimum heap (its heap is fixed); use e.g. G1")
    be.prepare(ws, log)
    mh = sweep.min_heaps(be, ws, ref, o.get("out"), _parse_min_heaps(o.get("min_heap")), log)
    if o.get("json_flag"):
        print(json.dumps(mh, indent=2))
    else:
        for w, d in mh.items():
            print(f"{w}: {d['min_heap_mb']} MB ({d.get('source')}{', ' + str(len(d.get('probes', []))) + ' probes' if d.get('probes') else ''})")
