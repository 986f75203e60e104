"""Loggers: a live human-readable progress line (stderr), CSV rows per run, a JSON summary.

The JSONL results file written by :mod:`mobmem.harness.store` is the durable per-run log; these
loggers are views. The progress line is throttled (≤ 10 updates/s on a terminal, one line per
5 s otherwise) so that logging does not add to the harness overhead. Left out: remote sinks.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path

from mobmem.harness import stats


class Logger:
    def on_start(self, runner) -> None:
        pass

    def on_run(self, runner, config, record: dict, state) -> None:
        pass

    def on_warning(self, message: str) -> None:
        pass

    def on_finish(self, runner, result) -> None:
        pass


class ProgressLogger(Logger):
    def __init__(self, stream=None, min_interval_s: float | None = None) -> None:
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.min_interval = min_interval_s if min_interval_s is not None else (0.1 if self.tty else 5.0)
        self._last = 0.0
        self._pending = ""

    def _emit(self, line: str, force: bool = False) -> None:
        now = time.monotonic()
        self._pending = line
        if not force and now - self._last < self.min_interval:
            return
        self._last = now
        if self.tty:
            self.stream.write("\r\x1b[2K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def on_start(self, runner):
        for w in runner.env.get("warnings", []):
            self.on_warning(w)

    def on_run(self, runner, config, record, state):
        v = state.ok()
        m = state.primary
        if v:
            mean = sum(v) / len(v)
            rel = stats.t_interval(v).relative_half_width(mean) if len(v) >= 2 else float("inf")
            ci = f" ±{rel * 100:.2f}%" if rel != float("inf") else ""
            val = f"{m} mean {_fmt(mean, m)}{ci}"
        else:
            val = "no successful run yet"
        st = record["status"]
        bad = f", {state.failures} unsuccessful" if state.failures else ""
        self._emit(f"[{config.name}] {record['phase']} {record['index'] + 1}: {st}; {state.runs} runs{bad}; {val}", force=st != "ok")

    def on_warning(self, message):
        if self.tty and self._last:
            self.stream.write("\n")
        self.stream.write(f"warning: {message}\n")
        self.stream.flush()

    def on_finish(self, runner, result):
        if self._pending and self.tty:
            self.stream.write("\r\x1b[2K" + self._pending + "\n")
        elif self._pending:
            self.stream.write(self._pending + "\n")
        self.stream.flush()


def _fmt(v: float, metric: str) -> str:
    if metric.endswith("_s"):
        if v < 1e-3:
            return f"{v * 1e6:.1f} µs"
        if v < 1:
            return f"{v * 1e3:.3f} ms"
        return f"{v:.3f} s"
    return f"{v:.6g}"


class CSVLogger(Logger):
    """One row per run: run id, configuration, phase, index, status, exit code, signal, metrics."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f = None
        self._w = None
        self._cols: list[str] | None = None

    def on_run(self, runner, config, record, state):
        if self._f is None:
            self._f = open(self.path, "w", newline="", encoding="utf-8")
        metrics = record.get("metrics") or {}
        if self._cols is None:
            self._cols = sorted(metrics)
            self._w = csv.writer(self._f)
            self._w.writerow(["run_id", "config", "phase", "index", "status", "exit_code", "signal"] + self._cols)
        self._w.writerow(
            [record["run_id"], config.name, record["phase"], record["index"], record["status"], record.get("exit_code"), record.get("signal")]
            + [metrics.get(c, "") for c in self._cols]
        )
        self._f.flush()

    def on_finish(self, runner, result):
        if self._f:
            self._f.close()


class JSONLogger(Logger):
    """Writes the final result (environment, per-configuration statistics, comparison) as JSON."""

    def __init__(self, path: str) -> None:
        self.path = path

    def on_finish(self, runner, result):
        from mobmem.files import atomic_write

        atomic_write(Path(self.path), json.dumps(result, indent=2, default=str))
