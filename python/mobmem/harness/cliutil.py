"""Helpers shared by the ``mobmem bench`` and ``mobmem lbo`` commands: error handling (a
:class:`~mobmem.errors.MobmemError` becomes one ``error: …`` line and exit code 2, also when the
command group is invoked directly rather than through ``mobmem.cli.main``) and table rendering."""

from __future__ import annotations

import functools
import math
import sys

import typer

from mobmem.errors import MobmemError


def handle_errors(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except MobmemError as e:
            print(f"error: {e}", file=sys.stderr)
            raise typer.Exit(e.exit_code) from None

    return wrapper


def fmt_value(v: float, metric: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    if metric.endswith("_s"):
        av = abs(v)
        if av < 1e-3:
            return f"{v * 1e6:.1f} µs"
        if av < 1:
            return f"{v * 1e3:.3f} ms"
        return f"{v:.4f} s"
    if metric.endswith("_kb"):
        return f"{v / 1024:.1f} MiB"
    return f"{v:.6g}"
