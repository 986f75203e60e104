"""The ``mobmem`` command: one Typer app composed of per-area sub-apps.

Each area owns its own module (``kernel``, ``bench``, ``lbo``…), so adding a command group is
adding a module and one ``add_typer`` line here.
"""

from __future__ import annotations

import sys

import typer

from mobmem.errors import Interrupted, MobmemError

app = typer.Typer(
    name="mobmem",
    help="mobmem: memory management on mobile devices — simulator and evaluation framework.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from mobmem import __version__

        print(f"mobmem {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """mobmem: memory management on mobile devices — simulator and evaluation framework."""


def catalog_cmd(as_json: bool = typer.Option(False, "--json", help="The whole catalogue as JSON.")) -> None:
    """List every named choice of the simulator: collectors (with aliases), runtime policies,
    kill policies, madvise advice and hints, LRU modes, kernel semantics, setting keys."""
    import json

    from rich.console import Console

    from mobmem.catalog import catalog

    c = catalog()
    if as_json:
        sys.stdout.write(json.dumps(c) + "\n")
        return
    out = Console()
    for title, key in (
        ("collectors (--collector, --set collector=…)", "collectors"),
        ("runtime policies (--set system.policies=…)", "runtime_policies"),
        ("kill policies (--set system.lmkd=…)", "lmkd"),
        ("eviction policies (--set kernel.eviction=…)", "eviction"),
        ("kswapd sizing (--set kernel.kswapd_sizing=…)", "kswapd_sizing"),
        ("cpufreq governors (--set kernel.cpufreq.governor=…)", "governors"),
        ("session services (--set system.services=…)", "session_services"),
    ):
        out.print(f"[bold]{title}[/bold]")
        for e in c[key]:
            aliases = f" (also {', '.join(e['aliases'])})" if e.get("aliases") else ""
            out.print(f"  [bold]{e['name']}[/bold]{aliases}: {e['help']}", highlight=False)
    out.print(f"[bold]madvise[/bold]: advice {', '.join(c['madvise']['advice'])}; hints {', '.join(c['madvise']['hints'])}", highlight=False)
    out.print(f"[bold]kernel.lru[/bold]: {', '.join(c['lru_modes'])}; [bold]kernel.semantics[/bold]: {', '.join(c['kernel_semantics'])}", highlight=False)
    for layer, table in c["settings"].items():
        out.print(f"[bold]{layer} settings[/bold] (mobmem keys {layer}): {', '.join(e['key'] for e in table['keys'])}", highlight=False)
    for kind in ("devices", "apps", "scenarios", "systems"):
        out.print(f"[bold]{kind}[/bold]: {', '.join(e['name'] for e in c[kind])}", highlight=False)


def _register() -> None:
    from mobmem.cli import bench as bench_cli
    from mobmem.cli import demo as demo_cli
    from mobmem.cli import kernel as kernel_cli
    from mobmem.cli import lbo as lbo_cli

    app.add_typer(kernel_cli.app, name="kernel")
    app.add_typer(bench_cli.app, name="bench")
    app.add_typer(lbo_cli.app, name="lbo")
    demo_cli.register(app)
    from mobmem.cli import fidelity as fidelity_cli

    fidelity_cli.register(app)
    from mobmem.cli import calibrate as calibrate_cli

    calibrate_cli.register(app)
    from mobmem.cli import report as report_cli

    report_cli.register(app)
    kernel_cli.register_bench(bench_cli.app)
    from mobmem.cli import session as session_cli  # run, compare, scenarios, systems; bench session

    session_cli.register(app)
    session_cli.register_bench(bench_cli.app)
    app.command("catalog")(catalog_cmd)
    from mobmem.cli.keys import keys

    app.command("keys")(keys)
    try:  # the runtime group registers itself when present
        from mobmem.cli import runtime as runtime_cli
    except ImportError:
        runtime_cli = None
    if runtime_cli is not None:
        app.add_typer(runtime_cli.app, name="runtime")
        if hasattr(runtime_cli, "register_bench"):
            runtime_cli.register_bench(bench_cli.app)


_register()


#: A signal this long after the first one ends the command at once: its clean-up is stuck.
FORCE_AFTER_S = 2.0


def _interrupts() -> None:
    """SIGINT and SIGTERM stop a command the same way. The first raises KeyboardInterrupt (the
    clean exit 130 with the line saying what was interrupted); the ones that follow while the
    command stops are ignored, so that they cannot cut its clean-up short (ending worker
    processes, the line itself). One that comes :data:`FORCE_AFTER_S` or more after the first
    ends the process at once, its worker processes with it (exit 130). A SIGINT the command was
    started to ignore stays ignored."""
    import os
    import signal
    import time

    first: list[float] = []

    def handler(signum, frame):
        if not first:
            first.append(time.monotonic())
            raise KeyboardInterrupt
        if time.monotonic() - first[0] >= FORCE_AFTER_S:
            pool = sys.modules.get("mobmem.session.pool")
            if pool is not None:
                pool.kill_workers()
            os.write(2, b"interrupted (forced)\n")
            os._exit(130)

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            if sig == signal.SIGINT and signal.getsignal(sig) == signal.SIG_IGN:
                continue  # started with Ctrl-C ignored (a background job of a script): keep it so
            signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or no such signal here
            pass


def main() -> None:
    _interrupts()
    try:
        app()
    except MobmemError as e:  # bad input: one clear line, exit 2
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except Interrupted as e:  # Ctrl-C or SIGTERM in a long run: what stopped and what was kept
        _stopping()
        print(f"interrupted: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        _stopping()
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit as e:
        # Typer turns a KeyboardInterrupt it sees into a silent exit 130: say what happened.
        if e.code == 130 and isinstance(getattr(e.__context__, "__cause__", None), KeyboardInterrupt):
            _stopping()
            print("interrupted", file=sys.stderr)
        raise


def _stopping() -> None:
    """An interrupted command is exiting: SIGINT and SIGTERM are ignored from here on (Python
    puts back the default handlers as it shuts down, so a second Ctrl-C arriving then would
    kill the process by the signal instead of the exit 130 it is about to return)."""
    import signal

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (ValueError, OSError):
            pass
