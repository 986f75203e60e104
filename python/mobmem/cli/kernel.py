"""``mobmem kernel …``: replay page traces in the kernel model (and on the real kernel),
validate the model, benchmark it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="The Linux memory-management model: replay page traces, compare with the real kernel.", no_args_is_help=True)
console = Console()

# The counters shown first in tables (all non-zero ones follow).
KEY_COUNTERS = [
    "pgfault",
    "pgmajfault",
    "pswpin",
    "pswpout",
    "pgscan_kswapd",
    "pgscan_direct",
    "pgsteal_kswapd",
    "pgsteal_direct",
    "allocstall",
    "workingset_refault_anon",
    "workingset_refault_file",
    "workingset_activate",
    "workingset_restore",
    "oom_kill",
    "lmkd_kills",
]
MEMINFO_SHOWN = [
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Active(anon)",
    "Inactive(anon)",
    "Active(file)",
    "Inactive(file)",
    "SwapTotal",
    "SwapFree",
    "ZramPool",
    "ZramOrigData",
    "ZramComprData",
]


def print_model_result(res: dict, title: str = "") -> None:
    """Human-readable tables of a model result."""
    vm = res["vmstat"]
    t = Table(title=f"vmstat {title}".strip(), show_edge=False)
    t.add_column("counter")
    t.add_column("value", justify="right")
    shown = [k for k in KEY_COUNTERS if k in vm] + [k for k, v in vm.items() if v and k not in KEY_COUNTERS]
    for k in shown:
        t.add_row(k, f"{vm[k]:,}")
    mi = res["meminfo"]
    m = Table(title="meminfo (kB)", show_edge=False)
    m.add_column("field")
    m.add_column("kB", justify="right")
    for k in MEMINFO_SHOWN:
        m.add_row(k, f"{mi[k]:,}")
    console.print(t)
    console.print(m)
    psi = res["psi"]
    tr = res.get("trace", {})
    console.print(
        f"simulated {tr.get('sim_time_ms', 0) / 1000:.2f} s, {tr.get('touches', 0):,} page touches; "
        f"PSI memory some {psi['some_total_us'] / 1000:.1f} ms, full {psi['full_total_us'] / 1000:.1f} ms; "
        f"kswapd CPU {res['kswapd']['cpu_ms']:.1f} ms"
    )
    procs = res["per_process"]
    if procs:
        p = Table(title="per process", show_edge=False)
        for c in ["pid", "name", "adj", "alive", "RSS anon kB", "RSS file kB", "PSS kB", "swap kB", "majflt", "refaults", "stall ms"]:
            p.add_column(c, justify="right" if c not in ("name",) else "left")
        for r in procs:
            p.add_row(
                str(r["pid"]),
                r["name"],
                str(r["oom_score_adj"]),
                "yes" if r["alive"] else "killed",
                f"{r['rss_anon_kb']:,}",
                f"{r['rss_file_kb']:,}",
                f"{r['pss_kb']:,.0f}",
                f"{r['swap_kb']:,}",
                f"{r['majflt']:,}",
                f"{r['refault_anon'] + r['refault_file']:,}",
                f"{r['memstall_ms']:.1f}",
            )
        console.print(p)
    kills = res["kills"]
    if kills:
        k = Table(title="kills", show_edge=False)
        for c in ["time s", "pid", "name", "adj", "reason", "by", "RSS kB", "swap kB"]:
            k.add_column(c)
        for r in kills:
            k.add_row(
                f"{r['time_ns'] / 1e9:.3f}",
                str(r["pid"]),
                r["name"],
                str(r["oom_score_adj"]),
                r["reason"],
                r["killer"],
                f"{r['rss_kb']:,}",
                f"{r['swap_kb']:,}",
            )
        console.print(k)
    else:
        console.print("kills: none")


@app.command()
def replay(
    trace: Path = typer.Argument(..., help="A page trace (mobmem page trace v1)."),
    device: Optional[str] = typer.Option(None, "--device", help="Device profile whose kernel settings apply before the trace header."),
    set_: List[str] = typer.Option([], "--set", help="kernel.KEY=VALUE, applied after the trace header (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    real: bool = typer.Option(False, "--real", help="Also execute the trace on this machine's kernel (root) and compare."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write result.json, timeseries.csv, per_process.csv and kills.csv to this directory."),
) -> None:
    """Replay TRACE in the kernel model and print the vmstat counters, meminfo and kills."""
    from mobmem.kernel import model

    if real:
        from mobmem.kernel import real as real_mod

        # The real kernel runs under a memory cgroup: compare with the model's memcg-limit path.
        res = model.replay(trace, device, ["scope=memcg", *set_])
        code = real_mod.replay_real(str(trace), as_json=as_json, model=model.result_json(res))
        raise typer.Exit(code)
    res = model.replay(trace, device, set_)
    if out is not None:
        model.write_outputs(res, out)
    if as_json:
        sys.stdout.write(json.dumps(model.result_json(res)) + "\n")
    else:
        print_model_result(res, title=str(trace))


@app.command()
def devices() -> None:
    """List the device profiles."""
    from mobmem import catalog

    for d in catalog.catalog()["devices"]:
        console.print(f"{d['name']:12s} {d['title']}", highlight=False)


def register_bench(bench_app: typer.Typer) -> None:
    """Add ``mobmem bench kernel`` to the bench group."""
    from mobmem.cli.kernel_bench import bench_kernel

    bench_app.command("kernel")(bench_kernel)


try:  # validation commands (validate, gen-trace) live in their own module
    from mobmem.cli import kernel_validation as _kv

    _kv.register(app)
except ImportError as _e:  # pragma: no cover - only while that module is absent
    print(f"note: kernel validation commands unavailable: {_e}", file=sys.stderr)
