"""The simulator back end for LBO: the runtime model's collectors on the simulated GCBench and
on simulated apps.

One invocation runs a workload with a collector and a heap size on the kernel model and takes its
costs from the runtime's attribution, which knows the GC's cost exactly: the distilled wall time is
the simulated time minus the time the mutator was stopped by collections (pauses while it ran,
waits for blocking collections — not pauses while it was idle), the distilled CPU is all CPU minus
the GC thread's and the mutator's GC work (read-barrier slow paths, copies). The heap is fixed at
that size (``runtime.heap_sizing = fixed``: collections trigger relative to it, no growth from the
live size), so a larger heap means fewer collections — ART's own sizing would make the heap size no
input at all.

Workloads: the simulated GCBench (binary trees as in design/evaluation.md), and `app:SPEC` — an
app profile of the runtime or a `synthetic:…` spec used in the foreground for `APP_SECONDS`;
``app:all`` stands for every app profile. An
app's run is a fixed amount of work: one unit of work per frame period, each with a fixed
allocation volume, reads and CPU, and a late frame does not drop work. Its wall time includes the
idle time between frames, so for apps the CPU metric is the informative one.

The simulator is deterministic: each invocation uses its own runtime seed, so repeated invocations
are independent draws of the model's randomness (an app's object graph; GCBench draws none, so its
invocations agree exactly — a zero-width CI there is the truth, not a measurement artefact).
`nogc` is the no-GC baseline (its heap is sized to hold everything, like Epsilon).
"""

from __future__ import annotations

from typing import Any, Callable

from mobmem.errors import MobmemError
from mobmem.harness.implementation import Implementation, Parameters, RunContext, RunOutcome
from mobmem.lbo.backend import Backend

# Workloads: name -> (gcbench parameters, description). "gcbench" is the full benchmark of
# design/evaluation.md; the smaller ones keep CI and quick looks fast.
WORKLOADS: dict[str, tuple[dict[str, int], str]] = {
    "gcbench": ({}, "simulated GCBench: stretch depth 18, long-lived depth 16, depths 4..16 step 2"),
    "gcbench-small": (
        {"stretch_depth": 14, "long_lived_depth": 12, "array_doubles": 50_000, "min_depth": 4, "max_depth": 12},
        "simulated GCBench at depth 14 (quick runs and CI)",
    ),
}

NOGC_HEAP_MB = 4096
APP_SECONDS = 10.0


def is_app(workload: str) -> bool:
    return workload.startswith("app:")


class SimRun(Implementation):
    name = "sim"

    def __init__(self, device: str | None = None, app_seconds: float = APP_SECONDS) -> None:
        self.device = device
        self.app_seconds = app_seconds

    def run(self, params: Parameters, ctx: RunContext) -> RunOutcome:
        from mobmem import runtime as rtm

        wl = params["workload"]
        collector = params["collector"]
        heap_mb = NOGC_HEAP_MB if collector == "nogc" else int(params["heap_mb"])
        seed = int(params.get("invocation", ctx.index)) + 1
        try:
            if is_app(wl):
                # The app's object graph comes from the workload's own seeded stream (app.seed).
                res = rtm.run(
                    wl[4:],
                    collector=collector,
                    heap=f"{heap_mb}m",
                    seconds=self.app_seconds,
                    state="fg",
                    device=self.device,
                    settings=[f"seed={seed}", f"app.seed={seed}", "heap_sizing=fixed"],
                )
            else:
                gparams, _ = WORKLOADS[wl]
                res = rtm.gcbench(collector=collector, heap=f"{heap_mb}m", device=self.device, settings=[f"seed={seed}", "heap_sizing=fixed"], params=gparams)
        except MobmemError as e:
            return RunOutcome(status="failed", error=str(e), info={"failure": "error"})
        s = res["summary"]
        if res.get("oom"):
            return RunOutcome(status="failed", error="out of memory", info={"failure": "oom", "summary": s})
        metrics = {
            "wall_s": s["sim_time_ms"] / 1e3,
            # The time the mutator was stopped by collections: pauses while it ran (a pause while
            # it idled between frames costs it nothing) and waits for blocking collections, whose
            # pauses are inside the wait (their sum would count those twice).
            "wall_gc_s": s["mutator_wait_ms"] / 1e3,
            "task_clock_s": s["total_cpu_ms"] / 1e3,
            # All GC CPU: the GC thread's (pauses and concurrent phases) and the mutator's GC work
            # (read-barrier slow paths, its copies).
            "task_clock_gc_s": (s["gc_cpu_ms"] + s["mutator_gc_work_ms"]) / 1e3,
            "gc_count": float(s["gc_count"]),
        }
        return RunOutcome(status="ok", metrics=metrics, info={"collector": s["collector"], "heap_mb": heap_mb})

    def describe(self, params: Parameters) -> dict[str, Any]:
        return {"implementation": "sim", "device": self.device}


class SimBackend(Backend):
    deterministic = True  # simulated time and exact GC cost: the same on any machine, in any order
    name = "sim"
    reference_collector = "cc"

    @property
    def default_collectors(self) -> list[str]:  # every collector of the runtime model
        return self.collectors()

    metric_pairs = [("wall_s", "wall_gc_s", "simulated wall time"), ("task_clock_s", "task_clock_gc_s", "simulated CPU")]
    distillation = (
        "the simulator's exact GC cost: for wall time, the time the mutator was stopped by collections"
        " (pauses while it ran, waits for blocking collections); for CPU, the GC thread's CPU and the"
        " mutator's GC work (read-barrier slow paths, its copies)"
    )

    def __init__(self, device: str | None = None, log: Callable[[str], None] | None = None, **_: Any) -> None:
        self.impl = SimRun(device)
        self.log = log

    def collectors(self) -> list[str]:
        from mobmem import catalog

        return catalog.collector_names()

    def workloads(self) -> list[str]:
        return list(WORKLOADS)

    def check(self, workloads, collectors):
        from mobmem import catalog

        apps = catalog.names("apps")
        # app:all: every app profile of the data directory.
        workloads = [x for w in workloads for x in (["app:" + a for a in apps] if w == "app:all" else [w])]
        for w in workloads:
            if is_app(w):
                spec = w[4:]
                if not spec.startswith("synthetic:") and spec not in apps:
                    raise MobmemError(f"unknown simulated app {spec!r}; known: {', '.join(apps)} or synthetic:…")
            elif w not in WORKLOADS:
                raise MobmemError(f"unknown simulator workload {w!r}; expected one of {', '.join(WORKLOADS)} or app:SPEC")

        collectors = [catalog.collector(c, "simulator collector") for c in collectors]
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

        return {
            "simulator": "mobmem runtime model",
            "device": self.impl.device,
            "debug_build": _core.debug_build(),
            "workloads": {n: d for n, (_, d) in WORKLOADS.items()},
            "app_workloads": f"app:SPEC, {self.impl.app_seconds:g} s in the foreground (fixed work: one unit per frame); app:all for every app profile",
        }
