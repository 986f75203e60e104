"""The real-JVM LBO back end: HotSpot collectors on the host's JDKs, workloads from
:mod:`mobmem.jvm.workload`, measured by the JVMTI agent (perf_event, or the /proc + GC-log fallback).

Metrics reported as (total, stop-the-world) pairs: wall time and task clock always; cycles and
instructions when the PMU is available (not in most VMs). Collectors are probed on the chosen JDK
so an unsupported one (e.g. Shenandoah on a vendor build without it) is reported, not run.
"""

from __future__ import annotations

import os
from typing import Any, Callable

from mobmem.errors import MobmemError
from mobmem.harness.implementation import Parameters, RunContext, scratch_dir
from mobmem.jvm import collectors as C
from mobmem.jvm import jdk as J
from mobmem.jvm.workload import WORKLOADS, JvmWorkloadRun, get_workload
from mobmem.lbo.backend import Backend


class JvmBackend(Backend):
    name = "jvm"
    metric_pairs = [
        ("wall_s", "wall_stw_s", "wall time"),
        ("task_clock_s", "task_clock_stw_s", "task clock"),
        ("cycles", "cycles_stw", "cycles"),
        ("instructions", "instructions_stw", "instructions"),
    ]

    def __init__(
        self,
        jdk: str | None = None,
        measure: str = "auto",
        log: Callable[[str], None] | None = None,
        warmup: dict[str, int] | None = None,
        timeout_s: float | None = None,
    ) -> None:
        self.jdk = J.select(jdk)
        if self.jdk.major < 17:
            raise MobmemError(f"JDK {self.jdk.version} at {self.jdk.home} is too old: the workloads need JDK 17+")
        self.log = log
        self.impl = JvmWorkloadRun(self.jdk, measure=measure, log=log, warmup=warmup, timeout_s=timeout_s)
        self._scratch = scratch_dir()

    def collectors(self) -> list[str]:
        return [n for n, c in C.COLLECTORS.items() if J.supports(self.jdk.java, c.flags)[0]]

    def workloads(self) -> list[str]:
        return list(WORKLOADS)

    def check(self, workloads, collectors):
        ws = [get_workload(w).name for w in workloads]
        cs = [C.get(c).name for c in collectors]
        if not ws:
            raise MobmemError("no workloads given")
        if not cs:
            raise MobmemError("no collectors given")
        for c in cs:
            ok, msg = J.supports(self.jdk.java, C.COLLECTORS[c].flags)
            if not ok:
                raise MobmemError(f"collector {c} is not supported by JDK {self.jdk.version} ({self.jdk.home}): {msg}")
        return list(dict.fromkeys(ws)), list(dict.fromkeys(cs))

    def prepare(self, workloads, log=None):
        self.impl.log = log or self.log
        self.impl.prepare(workloads)

    def implementation(self):
        return self.impl

    def is_nogc(self, collector):
        return C.get(collector).nogc

    def start_heap_mb(self, workload):
        return get_workload(workload).start_heap_mb

    def probe_heap(self, workload, collector, heap_mb, timeout_s: float | None = None):
        p = {"workload": workload, "collector": collector, "heap_mb": heap_mb}
        if timeout_s:
            p["timeout_s"] = timeout_s
        o = self.impl.run(Parameters(p), RunContext(0, "probe", self._scratch))
        if o.status == "ok":
            return "ok"
        if o.status == "timeout":
            return "timeout"
        if o.status == "failed" and o.info.get("failure") == "oom":
            return "oom"
        if o.status == "failed" and o.info.get("failure") == "invalid":
            raise MobmemError(f"{workload} produced a wrong result with {collector} at {heap_mb} MB: {o.info.get('stderr_tail', '')[-300:]}")
        return "crash"

    def environment(self) -> dict[str, Any]:
        return {
            "jdk": self.jdk.to_dict(),
            "jdks_found": [j.to_dict() for j in J.discover()],
            "collectors_supported": self.collectors(),
            "measure_mode": self.impl.measure,
            "cache": os.environ.get("MOBMEM_CACHE") or "~/.cache/mobmem",
            "workloads": {
                n: {
                    "description": w.description,
                    "args": list(w.args),
                    "warmup": self.impl.warmup.get(n, w.warmup),
                    "epsilon_heap_mb": w.epsilon_heap_mb,
                    "reads_max_heap": w.reads_max_heap,
                }
                for n, w in WORKLOADS.items()
            },
        }
