"""Ordered actions around a benchmark: before the benchmark, before/after each run, after it.

Provided: warm-up runs (run the implementation N times unrecorded), cool-down (wait until a thermal
zone reads below a threshold, bounded), sleep, a sysfs write (governor, frequency limits — done
only when permitted, restored afterwards, with a warning otherwise), CPU affinity (set on the
harness, inherited by every child) and its verification after each run. Actions run in the order
given; ``after_*`` hooks run in reverse order. Left out: IRQ steering, SMT/turbo switching.
"""

from __future__ import annotations

import glob
import os
import time
from typing import Callable

from mobmem.errors import MobmemError


class Action:
    name = "action"

    def before_benchmark(self, runner) -> None:
        pass

    def before_run(self, runner) -> None:
        pass

    def after_run(self, runner) -> None:
        pass

    def after_benchmark(self, runner) -> None:
        pass

    def __str__(self) -> str:
        return self.name


class Warmup(Action):
    """Runs each configuration ``n`` times before the benchmark; those runs are logged with phase
    ``warmup`` and excluded from statistics."""

    def __init__(self, n: int) -> None:
        if n < 0:
            raise MobmemError(f"warm-up count must be ≥ 0, got {n}")
        self.n = n
        self.name = f"warmup:{n}"

    def before_benchmark(self, runner):
        runner.warmup(self.n)


class Sleep(Action):
    """Sleeps ``seconds`` at one hook: before_benchmark, before_run, after_run or after_benchmark."""

    HOOKS = ("before_benchmark", "before_run", "after_run", "after_benchmark")

    def __init__(self, seconds: float, when: str = "before_run") -> None:
        if seconds < 0:
            raise MobmemError("sleep must be ≥ 0")
        if when not in self.HOOKS:
            raise MobmemError(f"sleep: unknown hook {when!r}; one of {self.HOOKS}")
        self.seconds, self.when = seconds, when
        self.name = f"sleep:{seconds:g}s@{when}"

    def _maybe(self, hook: str) -> None:
        if hook == self.when:
            time.sleep(self.seconds)

    def before_benchmark(self, runner):
        self._maybe("before_benchmark")

    def before_run(self, runner):
        self._maybe("before_run")

    def after_run(self, runner):
        self._maybe("after_run")

    def after_benchmark(self, runner):
        self._maybe("after_benchmark")


def read_zone(zone: str) -> float:
    path = zone if zone.startswith("/") else f"/sys/class/thermal/{zone}/temp"
    with open(path) as f:
        return int(f.read().strip()) / 1000.0


class CoolDown(Action):
    """Before each run, waits until ``zone`` reads below ``threshold_c`` (at most ``timeout_s``;
    a warning is logged if it never does). Zones: names under /sys/class/thermal or a path."""

    def __init__(self, zone: str, threshold_c: float, timeout_s: float = 60.0, poll_s: float = 0.5, reader: Callable[[str], float] = read_zone) -> None:
        self.zone, self.threshold, self.timeout, self.poll, self.reader = zone, threshold_c, timeout_s, poll_s, reader
        self.name = f"cooldown:{zone}<{threshold_c:g}C"
        self.waited_s = 0.0

    def before_benchmark(self, runner):
        try:
            self.reader(self.zone)
        except OSError as e:
            raise MobmemError(
                f"cool-down: cannot read thermal zone {self.zone!r}: {e.strerror or e}; "
                f"zones here: {sorted(os.path.basename(z) for z in glob.glob('/sys/class/thermal/thermal_zone*')) or 'none'}"
            ) from None

    def before_run(self, runner):
        t0 = time.monotonic()
        while self.reader(self.zone) >= self.threshold:
            if time.monotonic() - t0 >= self.timeout:
                runner.warn(f"cool-down: {self.zone} still ≥ {self.threshold:g} °C after {self.timeout:g} s")
                break
            time.sleep(self.poll)
        self.waited_s += time.monotonic() - t0


class SysfsWrite(Action):
    """Writes ``value`` to ``path`` before the benchmark and restores the old value after it.
    When the write is not permitted, warns and carries on (the environment record shows it)."""

    def __init__(self, path: str, value: str) -> None:
        self.path, self.value = path, value
        self.old: str | None = None
        self.name = f"sysfs:{path}={value}"

    def before_benchmark(self, runner):
        try:
            with open(self.path) as f:
                self.old = f.read().strip()
            with open(self.path, "w") as f:
                f.write(self.value)
        except OSError as e:
            self.old = None
            runner.warn(f"could not write {self.value!r} to {self.path}: {e.strerror or e}")

    def after_benchmark(self, runner):
        if self.old is not None:
            try:
                with open(self.path, "w") as f:
                    f.write(self.old)
            except OSError as e:
                runner.warn(f"could not restore {self.path}: {e.strerror or e}")


class SetAffinity(Action):
    """Pins the harness (and so every child it starts) to ``cpus``; verified after every run."""

    def __init__(self, cpus: set[int]) -> None:
        avail = os.sched_getaffinity(0)
        if not cpus or not cpus <= set(range(os.cpu_count() or 1)):
            raise MobmemError(f"CPU set {sorted(cpus)} is not valid here (CPUs 0..{(os.cpu_count() or 1) - 1}, allowed {sorted(avail)})")
        self.cpus = set(cpus)
        self.old: set[int] | None = None
        self.name = f"affinity:{','.join(map(str, sorted(cpus)))}"

    def before_benchmark(self, runner):
        self.old = os.sched_getaffinity(0)
        try:
            os.sched_setaffinity(0, self.cpus)
        except OSError as e:
            raise MobmemError(f"cannot set CPU affinity {sorted(self.cpus)}: {e.strerror}") from None
        got = os.sched_getaffinity(0)
        if got != self.cpus:
            raise MobmemError(f"CPU affinity set to {sorted(self.cpus)} but reads back as {sorted(got)}")

    def after_run(self, runner):
        got = os.sched_getaffinity(0)
        if got != self.cpus:
            runner.warn(f"CPU affinity changed during the benchmark: {sorted(got)} instead of {sorted(self.cpus)}")

    def after_benchmark(self, runner):
        if self.old is not None:
            os.sched_setaffinity(0, self.old)


def parse_cpus(text: str) -> set[int]:
    """'0-3,6' -> {0,1,2,3,6}."""
    out: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                a, b = part.split("-", 1)
                out.update(range(int(a), int(b) + 1))
            elif part:
                out.add(int(part))
    except ValueError:
        raise MobmemError(f"bad CPU list {text!r}: expected e.g. 0-3,6") from None
    if not out:
        raise MobmemError(f"empty CPU list {text!r}")
    return out
