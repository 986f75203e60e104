"""Meters: what is recorded about each run.

A meter is started before a run and stopped after it (started in order, stopped in reverse) and
returns named values. Provided: wall clock, task clock and user/sys CPU of the process tree (from
``wait4``), page faults and peak RSS (reported only when it exceeds the harness's own peak, which Linux
charges to a spawned child at exec), hardware/software counters through perf_event (cycles and
instructions where the kernel allows; the reason is recorded when it does not), and runtime GC
statistics parsed from a JVM unified GC log. Units are in the metric names (``_s``, ``_kb``).
Left out: energy (RAPL), per-thread breakdowns (see the JVM agent for those).
"""

from __future__ import annotations

import os
from typing import Any

from mobmem.harness.implementation import RunContext, RunOutcome
from mobmem.harness.process import PERF_EVENTS, perf_event_status


class Meter:
    name = "meter"

    def start(self, ctx: RunContext) -> None:
        pass

    def stop(self, ctx: RunContext, outcome: RunOutcome) -> dict[str, float]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {"meter": self.name}


class WallClockMeter(Meter):
    """Wall-clock time from just before the spawn to the return of wait4."""

    name = "wall"

    def stop(self, ctx, outcome):
        p = outcome.process
        return {"wall_s": p.wall_ns / 1e9} if p else {}


class RusageMeter(Meter):
    """Task clock (user+sys CPU), user and sys CPU, page faults, peak RSS, context switches of the
    waited-for process tree."""

    name = "rusage"

    def stop(self, ctx, outcome):
        p = outcome.process
        if not p:
            return {}
        out = {
            "task_clock_s": p.task_clock_s,
            "user_s": p.user_s,
            "sys_s": p.sys_s,
            "minor_faults": float(p.minflt),
            "major_faults": float(p.majflt),
            "voluntary_cs": float(p.nvcsw),
            "involuntary_cs": float(p.nivcsw),
        }
        # Linux charges the spawning process's peak RSS to a vfork/fork child at exec
        # (signal->maxrss), so ru_maxrss is only the command's own peak when it exceeds ours.
        own = _own_hwm_kb()
        if p.maxrss_kb > own:
            out["peak_rss_kb"] = float(p.maxrss_kb)
        else:
            outcome.info["peak_rss"] = f"not resolvable: ≤ the harness's own peak RSS ({own} KB)"
        return out


class PerfEventMeter(Meter):
    """Counters through perf_event, opened on the child with inheritance and enable-on-exec."""

    name = "perf"

    def __init__(self, events: tuple[str, ...] = ("cycles", "instructions")) -> None:
        bad = [e for e in events if e not in PERF_EVENTS]
        if bad:
            from mobmem.errors import MobmemError

            raise MobmemError(f"unknown perf event(s) {bad}; known: {sorted(PERF_EVENTS)}")
        self.events = events
        self.unavailable = {e: r for e in events if (r := perf_event_status(e)) is not None}

    def start(self, ctx):
        ctx.perf_events = tuple(e for e in self.events if e not in self.unavailable)

    def stop(self, ctx, outcome):
        p = outcome.process
        if not p:
            return {}
        return {e.replace("-", "_"): v for e, v in p.counters.items()}

    def describe(self):
        return {"meter": self.name, "events": list(self.events), "unavailable": self.unavailable}


class GCLogMeter(Meter):
    """Runtime GC statistics from a HotSpot unified GC log written by the command
    (``-Xlog:gc,gc+phases:file=PATH``): pause count, total and max pause. The file is removed
    before each run so a stale log is never parsed."""

    name = "gclog"

    def __init__(self, path: str) -> None:
        self.path = path

    def start(self, ctx):
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def stop(self, ctx, outcome):
        from mobmem.jvm.gclog import parse_gc_log

        if not os.path.exists(self.path):
            return {}
        s = parse_gc_log(self.path)
        return {"gc_pauses": float(s.count), "gc_pause_total_s": s.total_s, "gc_pause_max_s": s.max_s}

    def describe(self):
        return {"meter": self.name, "path": self.path}


def _own_hwm_kb() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def default_meters(perf_events: tuple[str, ...] = ("cycles", "instructions")) -> list[Meter]:
    return [WallClockMeter(), RusageMeter(), PerfEventMeter(perf_events)]
