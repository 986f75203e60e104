"""Interoperability with hyperfine: its parameter options, its setup/prepare/cleanup commands and
its export formats, so that a benchmark moves between the two tools unchanged.

- :func:`parameter_values` — ``-L/--parameter-list NAME V1,V2,…`` and ``-P/--parameter-scan NAME
  MIN MAX`` with ``-D/--parameter-step-size`` → the values of the one parameter; each value is one
  configuration, named by the command with ``{NAME}`` replaced (as hyperfine names it).
- :class:`ShellCommands` — ``--setup`` (once before a configuration's runs, warm-up included),
  ``--prepare`` (before each run, not measured) and ``--cleanup`` (after a configuration's runs):
  shell strings run with ``/bin/sh -c`` as hyperfine runs them; ``{NAME}`` is replaced in them too.
  A failing one stops the benchmark with a one-line error, as in hyperfine.
- :func:`export_json`, :func:`export_markdown`, :func:`export_csv` — hyperfine's formats:
  ``{"results": [{"command", "mean", "stddev", "median", "user", "system", "min", "max", "times",
  "exit_codes", "parameters"}]}`` in seconds (what hyperfine's own scripts read), its Markdown
  table and its CSV columns.

The measured command itself stays an argv list (no shell), as everywhere in the harness.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
from typing import Any, Sequence

from mobmem.errors import MobmemError


def parameter_values(
    parameter_list: tuple[str, str] | None, parameter_scan: tuple[str, float, float] | None, step: float | None
) -> tuple[str, list[str]] | None:
    """The parameter's name and its values (strings, in order), or None without one."""
    if parameter_list and parameter_scan:
        raise MobmemError("give either --parameter-list or --parameter-scan, not both")
    if step is not None and not parameter_scan:
        raise MobmemError("--parameter-step-size needs --parameter-scan")
    if parameter_list:
        name, vals = parameter_list
        values = [v for v in vals.split(",")]
        if not name or not values or any(v == "" for v in values):
            raise MobmemError(f"--parameter-list {name} {vals!r}: expected NAME V1,V2,… with no empty value")
        return name, values
    if parameter_scan:
        name, lo, hi = parameter_scan
        step = 1.0 if step is None else step
        if step <= 0 or not math.isfinite(step):
            raise MobmemError(f"--parameter-step-size must be positive, got {step}")
        if hi < lo:
            raise MobmemError(f"--parameter-scan {name} {lo} {hi}: MAX is below MIN")
        n = int(math.floor((hi - lo) / step + 1e-9)) + 1
        if n > 10_000:
            raise MobmemError(f"--parameter-scan {name}: {n} values (at most 10,000)")
        integral = float(lo).is_integer() and float(step).is_integer()
        vals = [lo + i * step for i in range(n)]
        return name, [str(int(v)) if integral else f"{v:.10g}" for v in vals]
    return None


def substitute(text: str, params: dict[str, Any]) -> str:
    """``{NAME}`` → the parameter's value (other braces are left alone)."""
    for k, v in params.items():
        text = text.replace("{" + k + "}", str(v))
    return text


class ShellCommands:
    """hyperfine's ``--setup``, ``--prepare`` and ``--cleanup`` shell commands."""

    def __init__(self, setup: str | None = None, prepare: str | None = None, cleanup: str | None = None) -> None:
        self.setup, self.prepare, self.cleanup = setup, prepare, cleanup

    def __bool__(self) -> bool:
        return bool(self.setup or self.prepare or self.cleanup)

    @staticmethod
    def run(option: str, cmd: str | None, params: dict[str, Any]) -> None:
        if not cmd:
            return
        text = substitute(cmd, params)
        r = subprocess.run(["/bin/sh", "-c", text], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0:
            tail = r.stderr.decode(errors="replace").strip().splitlines()
            raise MobmemError(f"{option} command {text!r} failed with exit code {r.returncode}" + (f": {tail[-1]}" if tail else ""))


# ------------------------------------------------------------------ exports


def _results(runner) -> list[dict]:
    """hyperfine's ``results`` entries from a finished runner (measured runs only)."""
    out = []
    for cfg in runner.configs:
        cr = runner.results[cfg.name]
        recs = [r for r in cr.records if r.get("phase") == "measure"]
        ok = [r for r in recs if r["status"] == "ok"]
        times = [float(r["metrics"]["wall_s"]) for r in ok if "wall_s" in (r.get("metrics") or {})]
        user = [float(r["metrics"].get("user_s", 0.0)) for r in ok]
        system = [float(r["metrics"].get("sys_s", 0.0)) for r in ok]
        argv = cfg.implementation.describe(cfg.parameters).get("argv") or []
        entry: dict[str, Any] = {
            "command": " ".join(argv) if argv else cfg.name,
            "mean": statistics.fmean(times) if times else None,
            "stddev": statistics.stdev(times) if len(times) > 1 else None,
            "median": statistics.median(times) if times else None,
            "user": statistics.fmean(user) if user else None,
            "system": statistics.fmean(system) if system else None,
            "min": min(times) if times else None,
            "max": max(times) if times else None,
            "times": times,
            "exit_codes": [r.get("exit_code") for r in ok],
        }
        params = cfg.parameters.to_dict()
        if params:
            entry["parameters"] = {k: str(v) for k, v in params.items()}
        out.append(entry)
    return out


def export_json(runner, path: str) -> None:
    from mobmem.files import atomic_write

    atomic_write(path, json.dumps({"results": _results(runner)}, indent=2) + "\n")


def _unit(values: Sequence[float]) -> tuple[str, float]:
    m = min(values) if values else 1.0
    return ("ms", 1e3) if m < 1.0 else ("s", 1.0)


def export_markdown(runner, path: str) -> None:
    """hyperfine's table: Command | Mean | Min | Max | Relative (to the fastest)."""
    from mobmem.files import atomic_write

    res = _results(runner)
    means = [r["mean"] for r in res if r["mean"] is not None]
    unit, f = _unit(means)
    fastest = min(means) if means else None
    lines = [f"| Command | Mean [{unit}] | Min [{unit}] | Max [{unit}] | Relative |", "|:---|---:|---:|---:|---:|"]
    for r in res:
        if r["mean"] is None:
            lines.append(f"| `{r['command']}` | — | — | — | — |")
            continue
        sd = f" ± {r['stddev'] * f:.1f}" if r["stddev"] is not None else ""
        rel = r["mean"] / fastest if fastest else float("nan")
        lines.append(f"| `{r['command']}` | {r['mean'] * f:.1f}{sd} | {r['min'] * f:.1f} | {r['max'] * f:.1f} | {rel:.2f} |")
    atomic_write(path, "\n".join(lines) + "\n")


def export_csv(runner, path: str) -> None:
    """hyperfine's CSV: command,mean,stddev,median,user,system,min,max[,parameter_NAME…]."""
    from mobmem.files import atomic_write, csv_text

    res = _results(runner)
    names = sorted({k for r in res for k in r.get("parameters", {})})
    rows = []
    for r in res:
        row = {k: r[k] for k in ("command", "mean", "stddev", "median", "user", "system", "min", "max")}
        for n in names:
            row[f"parameter_{n}"] = r.get("parameters", {}).get(n)
        rows.append(row)
    atomic_write(path, csv_text(rows, ["command", "mean", "stddev", "median", "user", "system", "min", "max", *[f"parameter_{n}" for n in names]]))
