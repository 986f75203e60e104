"""The simulator back end for LBO: the runtime model's collectors on the simulated GCBench and
on simulated apps.

One invocation runs a workload with a collector and a heap size on the kernel model and takes its
costs from the runtime's attribution, which knows the GC's cost exactly: the distilled wall time is
the simulated time minus the time the mutator was stopped by collections (pauses while it ran,
waits for blocking collections — not pauses while it was idle); for an app's frames, only the delay
those stops caused (the runtime paces the same frames again without them: a pause inside a frame
that still ends before the next vsync costs no wall time). The distilled CPU is all CPU minus
the GC thread's and the mutator's GC work (read-barrier slow paths, copies). The heap is fixed at
that size (``runtime.heap_sizing = fixed``: collections trigger relative to it, no growth from the
live size), so a larger heap means fewer collections — ART's own sizing would make the heap size no
input at all.

Workloads: the simulated GCBench (Boehm's binary trees, crates/runtime/src/gcbench.rs), and
``app:SPEC[@SIZE]`` — an app profile of the runtime or a ``synthetic:…`` spec used in the foreground
until it has allocated SIZE after its start-up (``2g``, or ``12x``: twelve times the app's foreground
live heap; default ``APP_ALLOC``; ``--app-alloc`` changes it,
and the size is part of the workload's name, so studies of different lengths never mix);
``app:all`` stands for every app profile. An app's run is a fixed amount of work: one unit of work
per frame period, each with a fixed allocation volume, reads and CPU, and a late frame delays the
next instead of dropping work, so every collector and heap size runs the same frames. The run is
long by allocation volume, not by time, so that even the largest heap of a sweep fills several
times: a run shorter than that measures whether a collection happened at all, not its cost. Its
wall time includes the idle time between frames, so collections cost wall time only when they make
frames late, and the wall LBO of a frame-paced app stays near 1 where its CPU LBO does not. App
runs also report their frames (janky-frame ratio; p50/p90/p99 frame time from vsync to
the end of the frame's work), tabulated per collector and heap multiple.

Collectors are the runtime's, optionally with the methodology's baseline options as suffixes:
``+nw`` (no write barrier: no card marks and no barrier cost; only for ss and nogc, which never read
the card table) and ``+ne`` (freed regions zeroed by the collector and kept resident instead of
returned to the kernel, so reusing them takes no page fault). ``ss+nw`` and ``nogc+nw`` are tighter
baselines: their distilled costs lack costs every collector with a barrier pays.

The simulator is deterministic: each invocation uses its own runtime seed, so repeated invocations
are independent draws of the model's randomness (an app's object graph; GCBench draws none, so its
invocations agree exactly — a zero-width CI there is the truth, not a measurement artefact).
`nogc` is the no-GC baseline (its heap is sized to hold everything, like Epsilon).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from mobmem.errors import MobmemError
from mobmem.harness.implementation import Implementation, Parameters, RunContext, RunOutcome
from mobmem.lbo.backend import Backend

# Workloads: name -> (gcbench parameters, description). "gcbench" is the full benchmark (GCBench's
# own sizes, as the JVM back end runs it); the smaller ones keep CI and quick looks fast.
WORKLOADS: dict[str, tuple[dict[str, int], str]] = {
    "gcbench": ({}, "simulated GCBench: stretch depth 18, long-lived depth 16, depths 4..16 step 2"),
    "gcbench-small": (
        {"stretch_depth": 14, "long_lived_depth": 12, "array_doubles": 50_000, "min_depth": 4, "max_depth": 12},
        "simulated GCBench at depth 14 (quick runs and CI)",
    ),
}

NOGC_HEAP_MB = 4096
#: Allocation per app invocation unless --app-alloc says otherwise: twelve times the app's
#: foreground live heap, so a heap of 6× the minimum (≈ 1.2× the live heap) fills about twice in
#: every app, small or large (a fixed size would give a game allocating 1.5 MiB/s ten minutes of
#: use and a social app one). Roughly 1–2 minutes of foreground use of the shipped profiles.
APP_ALLOC = "12x"

_SIZE = re.compile(r"^[0-9]+(\.[0-9]+)?([kmg]?|x)$", re.IGNORECASE)


def is_app(workload: str) -> bool:
    return workload.startswith("app:")


def check_size(size: str, what: str) -> str:
    """A positive allocation size such as 512m or 2g, or a multiple of the app's live heap such as
    12x (lower-cased), or a one-line error."""
    t = size.strip().lower()
    if not _SIZE.match(t) or float(t.rstrip("kmgx")) <= 0:
        raise MobmemError(f"{what}: expected a positive size such as 512m or 2g, or a multiple of the app's live heap such as 12x, got {size!r}")
    return t


#: Baseline options a collector name may carry as ``+OPTION`` suffixes (``ss+nw``, ``nogc+nw+ne``):
#: the LBO methodology's ways of making a baseline's unavoidable costs smaller, so the minimum
#: distilled cost is tighter. Each is a runtime setting.
OPTIONS: dict[str, tuple[str, str]] = {
    "nw": ("write_barrier=false", "no write barrier: no card marks, no barrier cost; only collectors that never read the card table"),
    "ne": ("keep_free_pages=true", "freed memory zeroed by the collector and kept, never returned to the kernel"),
}


def collector_parts(name: str) -> tuple[str, list[str]]:
    """``BASE[+OPTION…]`` → (BASE, the options' runtime settings)."""
    base, *opts = name.split("+")
    return base, [OPTIONS[o][0] for o in opts]


def app_parts(workload: str) -> tuple[str, str | None]:
    """``app:SPEC[@SIZE]`` → (SPEC, SIZE or None)."""
    spec, at, size = workload[4:].partition("@")
    return spec, (size if at else None)


class SimRun(Implementation):
    name = "sim"

    def __init__(self, device: str | None = None) -> None:
        self.device = device

    def run(self, params: Parameters, ctx: RunContext) -> RunOutcome:
        from mobmem import runtime as rtm

        wl = params["workload"]
        collector, options = collector_parts(params["collector"])
        heap_mb = NOGC_HEAP_MB if collector == "nogc" else int(params["heap_mb"])
        seed = int(params.get("invocation", ctx.index)) + 1
        try:
            if is_app(wl):
                # The app's object graph comes from the workload's own seeded stream (app.seed).
                spec, alloc = app_parts(wl)
                res = rtm.run(
                    spec,
                    collector=collector,
                    heap=f"{heap_mb}m",
                    alloc=alloc or APP_ALLOC,
                    state="fg",
                    device=self.device,
                    settings=[f"seed={seed}", f"app.seed={seed}", "heap_sizing=fixed", *options],
                )
            else:
                gparams, _ = WORKLOADS[wl]
                res = rtm.gcbench(
                    collector=collector, heap=f"{heap_mb}m", device=self.device, settings=[f"seed={seed}", "heap_sizing=fixed", *options], params=gparams
                )
        except MobmemError as e:
            return RunOutcome(status="failed", error=str(e), info={"failure": "error"})
        s = res["summary"]
        if res.get("oom"):
            return RunOutcome(status="failed", error="out of memory", info={"failure": "oom", "summary": s})
        # The wall time collections cost: the time they stopped the mutator (pauses while it ran
        # — a pause while it idled between frames costs it nothing — and waits for blocking
        # collections, whose pauses are inside the wait). In an app's paced units of work only the
        # delay the stops caused counts: a pause inside a frame that still ends before the next
        # vsync costs the run no wall time (the runtime replays the units without the stops).
        wall_gc_ms = s["mutator_wait_ms"]
        pacing = res.get("pacing") or {}
        if pacing.get("units"):
            wall_gc_ms += pacing["gc_delay_ms"] - pacing["gc_stall_ms"]
        metrics = {
            "wall_s": s["sim_time_ms"] / 1e3,
            "wall_gc_s": max(wall_gc_ms, 0.0) / 1e3,
            "task_clock_s": s["total_cpu_ms"] / 1e3,
            # All GC CPU: the GC thread's (pauses and concurrent phases) and the mutator's GC work
            # (read-barrier slow paths, its copies).
            "task_clock_gc_s": (s["gc_cpu_ms"] + s["mutator_gc_work_ms"]) / 1e3,
            "gc_count": float(s["gc_count"]),
        }
        fr = res.get("frames") or {}
        if fr.get("frames"):
            metrics.update(jank_ratio=fr["jank_ratio"], frame_p50_ms=fr["p50_ms"], frame_p90_ms=fr["p90_ms"], frame_p99_ms=fr["p99_ms"])
        return RunOutcome(status="ok", metrics=metrics, info={"collector": s["collector"], "heap_mb": heap_mb})

    def describe(self, params: Parameters) -> dict[str, Any]:
        # The code is part of a configuration's identity (its key): runs of another model are
        # not resumed into this study.
        return {"implementation": "sim", "device": self.device, "code": code_version(self.device)}


@lru_cache(maxsize=None)
def code_version(device: str | None = None) -> str:
    """The simulator's code and data (as for sessions, on ``device``) and this module, which turns
    a run into the study's metrics."""
    from mobmem.session.provenance import code_version as simulator_version

    h = hashlib.sha256(simulator_version(device).encode())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()[:16]


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
        " (pauses while it ran, waits for blocking collections), and in an app's frames only the delay"
        " those stops caused (the frames paced again without them); for CPU, the GC thread's CPU and the"
        " mutator's GC work (read-barrier slow paths, its copies)"
    )

    #: Collections (a heap that never fills measures nothing: this table shows where) and the frame
    #: metrics of app workloads, tabulated (means, not LBOs) per collector and heap multiple.
    side_metrics = [
        ("gc_count", "collections per invocation", "count"),
        ("jank_ratio", "janky-frame ratio", "%"),
        ("frame_p50_ms", "p50 frame time", "ms"),
        ("frame_p90_ms", "p90 frame time", "ms"),
        ("frame_p99_ms", "p99 frame time", "ms"),
    ]

    def __init__(self, device: str | None = None, log: Callable[[str], None] | None = None, app_alloc: str = APP_ALLOC, **_: Any) -> None:
        self.impl = SimRun(device)
        self.log = log
        self.app_alloc = check_size(app_alloc, "--app-alloc")

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
        canonical = []
        for w in workloads:
            if is_app(w):
                spec, size = app_parts(w)
                if not spec.startswith("synthetic:") and spec not in apps:
                    raise MobmemError(f"unknown simulated app {spec!r}; known: {', '.join(apps)} or synthetic:…")
                # The run length is part of the workload: records and minimum heaps of different
                # lengths never mix.
                w = f"app:{spec}@{check_size(size, f'workload {w!r}') if size is not None else self.app_alloc}"
            elif w not in WORKLOADS:
                raise MobmemError(f"unknown simulator workload {w!r}; expected one of {', '.join(WORKLOADS)} or app:SPEC[@SIZE]")
            canonical.append(w)
        workloads = canonical
        entries = {e["name"]: e for e in catalog.catalog()["collectors"]}
        names = []
        for c in collectors:
            base, *opts = c.strip().split("+")
            opts = [o.strip().lower() for o in opts]
            for o in opts:
                if o not in OPTIONS:
                    known = "; ".join(f"+{k} ({help_})" for k, (_, help_) in OPTIONS.items())
                    raise MobmemError(f"collector {c!r}: unknown option +{o}; known: {known}")
            base = catalog.collector(base, "simulator collector")
            if "nw" in opts and entries[base]["reads_cards"]:
                free = ", ".join(n for n, e in entries.items() if not e["reads_cards"])
                raise MobmemError(f"collector {c!r}: +nw (no write barrier) needs a collector that never reads the card table ({free})")
            names.append("+".join([base, *dict.fromkeys(opts)]))
        collectors = names
        if not workloads or not collectors:
            raise MobmemError("no workloads or no collectors given")
        return list(dict.fromkeys(workloads)), list(dict.fromkeys(collectors))

    def prepare(self, workloads, log=None):
        pass

    def implementation(self):
        return self.impl

    def is_nogc(self, collector):
        return collector_parts(collector)[0] == "nogc"

    def start_heap_mb(self, workload):
        return 64

    def probe_heap(self, workload, collector, heap_mb, timeout_s: float | None = None):
        o = self.impl.run(Parameters({"workload": workload, "collector": collector, "heap_mb": heap_mb}), RunContext(0, "probe", "."))
        if o.status == "ok":
            return "ok"
        return "oom" if o.info.get("failure") == "oom" else "crash"

    def code_version(self) -> str | None:
        return code_version(self.impl.device)

    def environment(self) -> dict[str, Any]:
        from mobmem import _core

        return {
            "simulator": "mobmem runtime model",
            "device": self.impl.device,
            "debug_build": _core.debug_build(),
            "workloads": {n: d for n, (_, d) in WORKLOADS.items()},
            "app_workloads": "app:SPEC@SIZE: the app in the foreground until it has allocated SIZE after its start-up (fixed work: one unit per frame); app:all for every app profile",
        }
