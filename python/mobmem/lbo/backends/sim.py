"""The simulator back end for LBO: the runtime model's collectors on the simulated GCBench.

One invocation runs the simulated GCBench (binary trees as in design/evaluation.md, a fixed
amount of work) with a collector and a heap size on the kernel model, and takes its costs from the
runtime's attribution: simulated elapsed time and the stop-the-world pause time (wall), and all
threads' CPU and the CPU spent during pauses (task clock). Distilled cost = total − STW, as for
the JVM back end. The simulator is deterministic: each invocation uses its own runtime seed so
repeated invocations are independent draws of the model's randomness (GCBench itself draws none,
so its invocations agree exactly — a zero-width CI here is the truth, not a measurement artefact).

`nogc` is the no-GC baseline (its heap is sized to hold everything, like Epsilon).
Left out: simulated *apps* as LBO workloads — they run for a fixed time, not a fixed amount of
work, so their cost is not comparable across collectors; they need a fixed-work mode first.
"""

from __future__ import annotations

from typing import Any, Callable

from mobmem.errors import MobmemError
from mobmem.harness.implementation import Implementation, Parameters, RunContext, RunOutcome
from mobmem.lbo.backend import Backend

COLLECTORS = ["ss", "cc", "cmc", "ms", "nogc"]

# Workloads: name -> (gcbench parameters, description). "gcbench" is the full benchmark of
# design/evaluation.md; the smaller ones keep CI and quick looks fast.
WORKLOADS: dict[str, tuple[dict[str, int], str]] = {
    "gcbench": ({}, "simulated GCBench: stretch depth 18, long-lived depth 16, depths 4..16 step 2"),
    "gcbench-small": ({"stretch_depth": 14, "long_lived_depth": 12, "array_doubles": 50_000, "min_depth": 4, "max_depth": 12},
                      "simulated GCBench at depth 14 (quick runs and CI)"),
}

NOGC_HEAP_MB = 4096


class SimRun(Implementation):
    name = "sim"

    def __init__(self, device: str | None = None) -> None:
        self.device = device

    def run(self, params: Parameters, ctx: RunContext) -> RunOutcome:
        from mobmem import runtime as rtm

        wl = params["workload"]
        collector = params["collector"]
        heap_mb = NOGC_HEAP_MB if collector == "nogc" else int(params["heap_mb"])
        gparams, _ = WORKLOADS[wl]
        seed = int(params.get("invocation", ctx.index)) + 1
        try:
            res = rtm.gcbench(collector=collector, heap=f"{heap_mb}m", device=self.device,
                              settings=[f"runtime.seed={seed}"], params=gparams)
        except MobmemError as e:
            return RunOutcome(status="failed", error=str(e), info={"failure": "error"})
        s = res["summary"]
        if res.get("oom"):
            return RunOutcome(status="failed", error="out of memory", info={"failure": "oom", "summary": s})
        metrics = {
            "wall_s": s["sim_time_ms"] / 1e3,
            "wall_stw_s": s["stw_ms"] / 1e3,
            "task_clock_s": s["total_cpu_ms"] / 1e3,
            "task_clock_stw_s": s["stw_cpu_ms"] / 1e3,
            "gc_count": float(s["gc_count"]),
        }
        return RunOutcome(status="ok", metrics=metrics, info={"collector": s["collector"], "heap_mb": heap_mb})

    def describe(self, params: Parameters) -> dict[str, Any]:
        return {"implementation": "sim", "device": self.device}


class SimBackend(Backend):
    name = "sim"
    reference_collector = "cc"
    metric_pairs = [("wall_s", "wall_stw_s", "simulated wall time"), ("task_clock_s", "task_clock_stw_s", "simulated CPU")]

    def __init__(self, device: str | None = None, log: Callable[[str], None] | None = None, **_: Any) -> None:
        self.impl = SimRun(device)
        self.log = log

    def collectors(self) -> list[str]:
        return list(COLLECTORS)

    def workloads(self) -> list[str]:
        return list(WORKLOADS)

    def check(self, workloads, collectors):
        for w in workloads:
            if w not in WORKLOADS:
                raise MobmemError(f"unknown simulator workload {w!r}; expected one of {', '.join(WORKLOADS)}")
        for c in collectors:
            if c not in COLLECTORS:
                raise MobmemError(f"unknown simulator collector {c!r}; expected one of {', '.join(COLLECTORS)}")
        if not workloads or not collectors:
            raise MobmemError("no workloads or no collectors given")
        return list(dict.fromkeys(workloads)), list(dict.fromkeys(collectors))

    def prepare(self, workloads, log=None):
        pass

    def implementation(self):
        return self.impl

    def is_nogc(self, collector):
        return collector == "nogc"

    def start_heap_mb(self, workload):
        return 64

    def probe_heap(self, workload, collector, heap_mb, timeout_s: float | None = None):
        o = self.impl.run(Parameters({"workload": workload, "collector": collector, "heap_mb": heap_mb}), RunContext(0, "probe", "."))
        if o.status == "ok":
            return "ok"
        return "oom" if o.info.get("failure") == "oom" else "crash"

    def environment(self) -> dict[str, Any]:
        from mobmem import _core

        return {"simulator": "mobmem runtime model", "device": self.impl.device, "debug_build": _core.debug_build(),
                "workloads": {n: d for n, (_, d) in WORKLOADS.items()}}
