"""``mobmem demo``: the README's main job.

Until the app layer exists (issue 4), the demo replays the shipped app-switching trace in the
kernel model on the Pixel-3-class device's kernel settings (the trace header sets RAM and zram),
once with lmkd in PSI mode and once with it off, and prints the counters side by side.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from mobmem.errors import MobmemError

console = Console()

REPO_ROOT = Path(__file__).resolve().parents[3]


def find_trace(name: str) -> Path:
    for base in (REPO_ROOT / "traces", Path.cwd() / "traces"):
        p = base / name
        if p.is_file():
            return p
    raise MobmemError(f"cannot find traces/{name} (run the demo from a clone of the repository)")


def demo() -> None:
    """Replay the shipped app-switching trace in the kernel model and print its counters."""
    from mobmem.cli.kernel import KEY_COUNTERS, print_model_result
    from mobmem.kernel import model

    trace = find_trace("app_switch.trace")
    console.rule("[bold]mobmem demo: app switching on a Pixel-3-class kernel")
    console.print(f"trace {trace.relative_to(REPO_ROOT) if trace.is_relative_to(REPO_ROOT) else trace}; "
                  "device pixel3 (kernel 4.9 semantics, swappiness 100); the trace sets 256 MiB RAM and zram")
    runs = {}
    for lmkd in ("psi", "off"):
        t0 = time.perf_counter()
        runs[lmkd] = model.replay(trace, "pixel3", [f"lmkd={lmkd}", "swap=zram"])
        runs[lmkd]["_wall"] = time.perf_counter() - t0
    print_model_result(runs["psi"], title="(lmkd psi)")
    t = Table(title="lmkd psi vs off", show_edge=False)
    t.add_column("counter")
    t.add_column("lmkd psi", justify="right")
    t.add_column("lmkd off", justify="right")
    for k in KEY_COUNTERS:
        t.add_row(k, f"{runs['psi']['vmstat'][k]:,}", f"{runs['off']['vmstat'][k]:,}")
    t.add_row("kills", str(len(runs["psi"]["kills"])), str(len(runs["off"]["kills"])))
    console.print(t)
    for k, r in runs.items():
        console.print(f"lmkd {k}: {r['trace']['touches']:,} touches replayed in {r['_wall']:.2f} s wall "
                      f"({r['trace']['touches'] / r['_wall'] / 1e6:.1f} M touches/s)")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
