"""Options several commands share: where their runs execute (``--jobs``, ``--executor``,
``--address``; :mod:`mobmem.session.executor`). Each call returns a fresh typer option."""

from __future__ import annotations

import typer


def jobs(default: str = "1", what: str = "Runs") -> typer.models.OptionInfo:
    return typer.Option(
        default,
        "--jobs",
        metavar="N|auto",
        help=f"{what} at a time on this machine: a number, or 'auto' (from the CPUs and the free memory); results do not depend on it.",
    )


def executor(scope: str = "") -> typer.models.OptionInfo:
    return typer.Option("local", "--executor", metavar="local|ray", help=f"{scope}local (worker processes) or ray (a Ray cluster).")


def address() -> typer.models.OptionInfo:
    return typer.Option(None, "--address", metavar="ray://HOST:PORT", help="With --executor ray: ray://HOST:PORT or 'auto' (default: start a local Ray).")
