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


def _register() -> None:
    from mobmem.cli import bench as bench_cli
    from mobmem.cli import demo as demo_cli
    from mobmem.cli import kernel as kernel_cli
    from mobmem.cli import lbo as lbo_cli

    app.add_typer(kernel_cli.app, name="kernel")
    app.add_typer(bench_cli.app, name="bench")
    app.add_typer(lbo_cli.app, name="lbo")
    demo_cli.register(app)
    kernel_cli.register_bench(bench_cli.app)
    from mobmem.cli import session as session_cli  # run, compare, scenarios, systems; bench session

    session_cli.register(app)
    session_cli.register_bench(bench_cli.app)
    try:  # the runtime group (issue 3) registers itself when present
        from mobmem.cli import runtime as runtime_cli
    except ImportError:
        runtime_cli = None
    if runtime_cli is not None:
        app.add_typer(runtime_cli.app, name="runtime")
        if hasattr(runtime_cli, "register_bench"):
            runtime_cli.register_bench(bench_cli.app)


_register()


def _sigterm_interrupts() -> None:
    """SIGTERM stops a command as Ctrl-C does (a KeyboardInterrupt: the same clean exit 130)."""
    import signal

    def handler(signum, frame):
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not the main thread, or no such signal here
        pass


def main() -> None:
    _sigterm_interrupts()
    try:
        app()
    except MobmemError as e:  # bad input: one clear line, exit 2
        print(f"error: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except Interrupted as e:  # Ctrl-C or SIGTERM in a long run: what stopped and what was kept
        print(f"interrupted: {e}", file=sys.stderr)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    except SystemExit as e:
        # Typer turns a KeyboardInterrupt it sees into a silent exit 130: say what happened.
        if e.code == 130 and isinstance(getattr(e.__context__, "__cause__", None), KeyboardInterrupt):
            print("interrupted", file=sys.stderr)
        raise
