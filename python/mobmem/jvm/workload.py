"""One measured invocation of a JVM workload, as a harness :class:`Implementation`.

Parameters: ``workload``, ``collector``, ``heap_mb`` (ignored for Epsilon, which gets its own large
fixed heap), optional ``measure`` ("auto" | "perf" | "proc"). The argv is
``java <collector flags> -Xms/-Xmx -XX:+ExitOnOutOfMemoryError -agentpath:…=out=F,mode=M
-Xlog:gc,gc+phases:file=G:timenanos -cp … mobmem.bench.Harness WORKLOAD --warmup N …``.

Metrics of the timed iteration (the window between Probe.begin and Probe.end):
``wall_s`` and ``wall_stw_s`` (the agent's clock at GC start/finish; in proc mode, pauses from the
GC log), ``task_clock_s`` and ``task_clock_stw_s`` (perf_event task-clock with inheritance; in proc
mode the process CPU clock and the per-thread CPU during pauses), ``cycles``/``instructions`` with
``_stw`` where the PMU allows, GC-log pause count/total, and whole-JVM rusage. Outcomes: ``ok``;
``failed`` with ``info.failure`` = ``oom`` (OutOfMemoryError or heap too small to start),
``invalid`` (wrong checksum) or ``exit``; ``crashed``; ``timeout``. Left out: JIT/compilation
accounting, per-thread categories.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from mobmem.errors import MobmemError
from mobmem.harness.implementation import Implementation, Parameters, RunContext, RunOutcome, _tail
from mobmem.harness.process import run_process
from mobmem.jvm import build, collectors
from mobmem.jvm.gclog import parse_gc_log
from mobmem.jvm.jdk import JDK


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    description: str
    libs: bool  # needs the Maven-built library workloads
    args: tuple[str, ...] = ()
    warmup: int = 2
    epsilon_heap_mb: int = 4096
    start_heap_mb: int = 256  # first guess for the minimum-heap search
    timeout_s: float = 120.0
    reads_max_heap: bool = False  # sizes caches from Runtime.maxMemory()? (heap-size feedback)
    extra: dict = field(default_factory=dict)


WORKLOADS: dict[str, WorkloadSpec] = {
    "gcbench": WorkloadSpec(
        "gcbench",
        "GCBench binary trees (stretch 18, long-lived 16, 500k doubles, depths 4..16)",
        False,
        (),
        warmup=3,
        epsilon_heap_mb=3072,
        start_heap_mb=64,
        timeout_s=60,
    ),
    "lusearch": WorkloadSpec(
        "lusearch",
        "Apache Lucene 9.12.1: 3,000-document on-heap index, 2×150 queries",
        True,
        ("--docs", "3000", "--queries", "150", "--threads", "2"),
        warmup=2,
        epsilon_heap_mb=4096,
        start_heap_mb=128,
        timeout_s=120,
    ),
    "xalan": WorkloadSpec(
        "xalan",
        "Apache Xalan-J 2.7.3 XSLT: 8 catalogues × 600 items, 2 threads",
        True,
        ("--docs", "8", "--items", "600", "--threads", "2"),
        warmup=2,
        epsilon_heap_mb=4096,
        start_heap_mb=128,
        timeout_s=120,
    ),
    "pmd": WorkloadSpec(
        "pmd",
        "PMD 7.7.0 bestpractices rules over 6 Commons Lang 3.14.0 sources, 2 threads",
        True,
        ("--files", "6", "--threads", "2"),
        warmup=1,
        epsilon_heap_mb=6144,
        start_heap_mb=256,
        timeout_s=180,
    ),
}


def get_workload(name: str) -> WorkloadSpec:
    w = WORKLOADS.get(name.strip().lower())
    if w is None:
        raise MobmemError(f"unknown JVM workload {name!r}; known: {', '.join(WORKLOADS)}")
    return w


_TIMED = re.compile(r"^MOBMEM timed start_ns=(\d+) end_ns=(\d+) checksum=(-?\d+)", re.M)
_OOM = re.compile(
    r"OutOfMemoryError|Too small (?:maximum|initial) heap|Could not reserve enough space|"
    r"Initial heap size set to a larger value|java heap space",
    re.I,
)


class JvmWorkloadRun(Implementation):
    name = "jvm-workload"

    def __init__(self, jdk: JDK, *, measure: str = "auto", log=None, warmup: dict[str, int] | None = None, timeout_s: float | None = None) -> None:
        if measure not in ("auto", "perf", "proc", "none"):
            raise MobmemError(f"measure must be auto, perf, proc or none, got {measure!r}")
        self.jdk = jdk
        self.measure = measure
        self.log = log
        self.warmup = warmup or {}
        self.timeout_s = timeout_s
        self._agent: str | None = None
        self._core: str | None = None
        self._libs = None

    def prepare(self, workloads: list[str]) -> None:
        """Builds (or finds in the cache) everything the given workloads need."""
        if self.measure != "none":
            self._agent = build.build_agent(self.jdk, self.log)
        self._core = build.build_core(self.jdk, self.log)
        if any(get_workload(w).libs for w in workloads):
            self._libs = build.build_libs(self.jdk, self.log)

    def heap_for(self, params: Parameters) -> int:
        c = collectors.get(params["collector"])
        w = get_workload(params["workload"])
        return int(params.get("epsilon_heap_mb") or w.epsilon_heap_mb) if c.nogc else int(params["heap_mb"])

    def argv(self, params: Parameters, workdir: str) -> list[str]:
        w = get_workload(params["workload"])
        c = collectors.get(params["collector"])
        heap = self.heap_for(params)
        if heap <= 0:
            raise MobmemError(f"heap size must be positive, got {heap} MB")
        if self._core is None:
            self.prepare([w.name])
        argv = [
            self.jdk.java,
            *c.flags,
            *c.heap_flags(heap),
            "-XX:+ExitOnOutOfMemoryError",
            f"-Xlog:gc,gc+phases:file={os.path.join(workdir, 'gc.log')}:timenanos",
        ]
        if self._agent:
            argv.append(f"-agentpath:{self._agent}=out={os.path.join(workdir, 'agent.json')},mode={self.measure}")
        if w.libs:
            if self._libs is None:
                self.prepare([w.name])
            cp = os.pathsep.join([self._core, self._libs.classpath])
        else:
            cp = self._core
        argv += ["-cp", cp, "mobmem.bench.Harness", w.name, "--warmup", str(self.warmup.get(w.name, w.warmup)), *w.args]
        if w.name == "pmd":
            argv += ["--sources", self._libs.sources_jar]
        return argv

    def describe(self, params: Parameters) -> dict:
        return {
            "implementation": self.name,
            "jdk": self.jdk.to_dict(),
            "measure": self.measure,
            "workload": params.get("workload"),
            "collector": params.get("collector"),
            "heap_mb": self.heap_for(params) if "collector" in params else None,
        }

    def run(self, params: Parameters, ctx: RunContext) -> RunOutcome:
        w = get_workload(params["workload"])
        for f in ("agent.json", "gc.log"):
            try:
                os.unlink(os.path.join(ctx.workdir, f))
            except FileNotFoundError:
                pass
        out_p, err_p = os.path.join(ctx.workdir, "stdout"), os.path.join(ctx.workdir, "stderr")
        argv = self.argv(params, ctx.workdir)
        timeout = float(params.get("timeout_s") or self.timeout_s or w.timeout_s)
        pr = run_process(argv, timeout=timeout, stdout=out_p, stderr=err_p)
        out = RunOutcome(pr.status, pr, error=pr.error)
        out.metrics.update({"jvm_wall_s": pr.wall_ns / 1e9, "jvm_task_clock_s": pr.task_clock_s, "jvm_peak_rss_kb": float(pr.maxrss_kb)})
        out.info["heap_mb"] = self.heap_for(params)
        stdout = open(out_p, encoding="utf-8", errors="replace").read() if os.path.exists(out_p) else ""
        if pr.status != "ok":
            tail = _tail(err_p) + _tail(out_p, 600)
            out.info["stderr_tail"] = tail[-1500:]
            if pr.status == "failed":
                if _OOM.search(tail):
                    out.info["failure"] = "oom"
                elif pr.exit_code == 4:
                    out.info["failure"] = "invalid"
                else:
                    out.info["failure"] = "exit"
            return out
        m = _TIMED.search(stdout)
        if not m:
            out.status = "failed"
            out.info["failure"] = "no-timed-iteration"
            out.info["stderr_tail"] = _tail(err_p)
            return out
        t0, t1 = int(m.group(1)), int(m.group(2))
        out.info["checksum"] = int(m.group(3))
        gcl = os.path.join(ctx.workdir, "gc.log")
        g = parse_gc_log(gcl, (t0, t1)) if os.path.exists(gcl) else None
        if g:
            out.metrics.update({"gc_pauses": float(g.count), "gc_pause_total_s": g.total_s, "gc_pause_max_s": g.max_s, "gc_alloc_stall_s": g.stall_total_s})
        agent = None
        ap = os.path.join(ctx.workdir, "agent.json")
        if os.path.exists(ap):
            with open(ap) as f:
                agent = json.load(f)
            if agent.get("window") != "iteration":
                agent = None
        if agent is None:
            # no agent (measure=none or it failed): Java's clock and the GC log only
            out.metrics["wall_s"] = (t1 - t0) / 1e9
            if g:
                out.metrics["wall_stw_s"] = g.total_s
            out.info["measure"] = "gc-log"
            return out
        out.info["measure"] = agent["mode"]
        out.info["measure_reason"] = agent.get("mode_reason")
        out.metrics["wall_s"] = agent["wall_ns"] / 1e9
        out.metrics["agent_pauses"] = float(agent["pauses"])
        if agent["mode"] == "perf":
            out.metrics["wall_stw_s"] = agent["stw_wall_ns"] / 1e9
            for ev, d in agent.get("events", {}).items():
                key = ev.replace("-", "_")
                if d.get("ok"):
                    scale = 1e-9 if ev == "task-clock" else 1.0
                    k = "task_clock_s" if ev == "task-clock" else key
                    out.metrics[k] = d["total"] * scale
                    out.metrics[k.replace("_s", "") + "_stw_s" if ev == "task-clock" else key + "_stw"] = d["stw"] * scale
                else:
                    out.info.setdefault("unavailable_events", {})[ev] = d.get("error")
        else:  # proc fallback: per-thread CPU from /proc at pauses, pause times from the GC log
            out.metrics["task_clock_s"] = agent["process_cpu_ns"] / 1e9
            out.metrics["task_clock_stw_s"] = agent.get("proc_stw_cpu_ns", 0) / 1e9
            out.metrics["wall_stw_s"] = g.total_s if g else agent["stw_wall_ns"] / 1e9
            out.metrics["agent_stw_wall_s"] = agent["stw_wall_ns"] / 1e9
        return out
