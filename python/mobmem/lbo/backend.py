"""The LBO back-end interface.

A back end knows its collectors and workloads, prepares them (builds, caches), gives the harness
an :class:`~mobmem.harness.implementation.Implementation` that runs one invocation from parameters
``{workload, collector, heap_mb}``, says which metrics it reports as (total, stop-the-world)
pairs, and can probe a heap size for the minimum-heap search. The back ends themselves and
:func:`~mobmem.lbo.backends.get_backend` live in :mod:`mobmem.lbo.backends`. Left out: remote
back ends.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Callable

from mobmem.harness.implementation import Implementation


class Backend(ABC):
    name = "backend"
    #: (total metric, GC-cost metric, label) — distilled cost = total − the GC-cost metric
    metric_pairs: list[tuple[str, str, str]] = []
    #: (metric, label, unit) of what the back end reports besides its costs — how many collections
    #: ran, frame statistics — tabulated as means per collector and heap multiple, not as LBOs;
    #: unit "%" for ratios.
    side_metrics: list[tuple[str, str, str]] = []
    #: What the GC-cost metrics subtract, for reports.
    distillation: str = "the cost of all threads during stop-the-world pauses"

    #: Results that do not depend on the machine or on what else runs (a simulator's): its
    #: invocations may run in parallel (``--jobs``, ``--executor ray``). A back end that measures
    #: time runs them one at a time.
    deterministic: bool = False

    #: the collector that finds minimum heaps unless --reference says otherwise
    reference_collector: str = "G1"
    #: the collectors a study compares unless --collectors says otherwise
    default_collectors: list[str] = ["Serial", "Parallel", "G1", "ZGC", "Shenandoah", "Epsilon"]

    @abstractmethod
    def collectors(self) -> list[str]:
        """Collectors available here (probed, not assumed)."""

    @abstractmethod
    def workloads(self) -> list[str]: ...

    @abstractmethod
    def check(self, workloads: list[str], collectors: list[str]) -> tuple[list[str], list[str]]:
        """Validates names (MobmemError on unknown ones) and returns canonical names."""

    @abstractmethod
    def prepare(self, workloads: list[str], log: Callable[[str], None] | None = None) -> None: ...

    @abstractmethod
    def implementation(self) -> Implementation: ...

    @abstractmethod
    def is_nogc(self, collector: str) -> bool:
        """True for a no-GC baseline whose heap size is not the independent variable (run once per
        workload and invocation, used at every heap size)."""

    @abstractmethod
    def probe_heap(self, workload: str, collector: str, heap_mb: int) -> str:
        """Runs once and returns "ok", "oom", "timeout" or "crash"."""

    def start_heap_mb(self, workload: str) -> int:
        return 64

    def environment(self) -> dict[str, Any]:
        return {}

    def code_version(self) -> str | None:
        """What this back end's results depend on besides their parameters (a simulator's code and
        data), or None. Records and cached minimum heaps made by other code are not resumed: a study
        resumed after the code changed runs again instead of mixing results of two models."""
        return None
