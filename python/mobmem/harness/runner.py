"""The runner: executes runs of one or more configurations until their stop conditions say stop.

Order of work: environment record and warnings → ``before_benchmark`` actions (in order) → rounds;
in each round every configuration that has not stopped yet runs once (interleaved, in a seeded
shuffled order when asked, so that drift hits all configurations alike), with ``before_run`` and
``after_run`` actions and meters started in order and stopped in reverse → ``after_benchmark``
actions (in reverse) → environment drift check. Every run is recorded, whatever its status, in the
JSONL store when one is given; a store that already has runs of the same configurations resumes
them (their values count towards the stop conditions and their run ids are not repeated).
Interrupting (Ctrl-C) leaves a consistent store. Left out: parallel runs (they would perturb each
other on a small machine).
"""

from __future__ import annotations

import copy
import random
import shutil
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Sequence

from mobmem.harness import environment, processors, stats
from mobmem.harness.actions import Action, Warmup
from mobmem.harness.implementation import Configuration, RunContext, RunOutcome, scratch_dir
from mobmem.harness.loggers import Logger
from mobmem.harness.meters import Meter, default_meters
from mobmem.harness.stop import Bounded, RunState
from mobmem.harness.store import ResultStore


@dataclass
class ConfigResult:
    config: Configuration
    state: RunState
    stop: Bounded
    records: list[dict[str, Any]] = field(default_factory=list)
    resumed_runs: int = 0


class Runner:
    def __init__(
        self,
        configs: Sequence[Configuration],
        stop: Bounded,
        *,
        meters: Sequence[Meter] | None = None,
        actions: Sequence[Action] = (),
        loggers: Sequence[Logger] = (),
        store: ResultStore | None = None,
        primary: str = "wall_s",
        shuffle_seed: int | None = None,
        env: dict | None = None,
        command: list[str] | None = None,
    ) -> None:
        if not configs:
            raise ValueError("no configurations")
        names = [c.name for c in configs]
        if len(set(names)) != len(names):
            raise ValueError(f"configuration names must be distinct: {names}")
        self.configs = list(configs)
        self.meters = list(meters) if meters is not None else default_meters()
        self.actions = list(actions)
        self.loggers = list(loggers)
        self.store = store
        self.primary = primary
        self.shuffle_seed = shuffle_seed
        self.command = command
        self.env = env if env is not None else environment.collect(command)
        self.warnings: list[str] = list(self.env.get("warnings", []))
        self.session = uuid.uuid4().hex[:8]
        self.results = {c.name: ConfigResult(c, RunState(primary=primary), copy.deepcopy(stop)) for c in self.configs}
        self._workdir = scratch_dir()
        self._t0 = 0.0

    # -------------------------------------------------------------------------------- hooks
    def warn(self, message: str) -> None:
        self.warnings.append(message)
        for lg in self.loggers:
            lg.on_warning(message)

    def _resume(self) -> None:
        if not self.store or not self.store.exists():
            return
        runs = self.store.runs()
        for cr in self.results.values():
            key = cr.config.key
            mine = [r for r in runs if r.get("config_key") == key and r.get("phase") == "measure"]
            seen: dict[str, dict] = {}
            for r in mine:
                seen[r["run_id"]] = r
            for r in sorted(seen.values(), key=lambda r: r["index"]):
                self._account(cr, r)
                cr.records.append(r)
            cr.resumed_runs = len(seen)

    def _account(self, cr: ConfigResult, rec: dict) -> None:
        s = cr.state
        s.runs += 1
        s.elapsed_s += rec.get("duration_s", 0.0)
        if rec["status"] == "ok":
            for k, v in (rec.get("metrics") or {}).items():
                if isinstance(v, (int, float)):
                    s.values.setdefault(k, []).append(float(v))
        else:
            s.failures += 1

    def _one(self, cfg: Configuration, phase: str, index: int) -> dict[str, Any]:
        ctx = RunContext(index=index, phase=phase, workdir=self._workdir)
        for a in self.actions:
            a.before_run(self)
        cfg.implementation.prepare_run(cfg.parameters, ctx)
        for m in self.meters:
            m.start(ctx)
        t0 = time.time()
        tp = time.perf_counter()
        try:
            outcome = cfg.implementation.run(cfg.parameters, ctx)
        except Exception as e:  # an implementation bug or environment error is recorded, not hidden
            outcome = RunOutcome("error", error=f"{type(e).__name__}: {e}")
        dur = time.perf_counter() - tp
        metrics: dict[str, float] = {}
        for m in reversed(self.meters):
            try:
                metrics.update(m.stop(ctx, outcome))
            except Exception as e:  # noqa: BLE001
                outcome.info.setdefault("meter_errors", {})[m.name] = f"{type(e).__name__}: {e}"
        metrics.update(outcome.metrics)
        for a in reversed(self.actions):
            a.after_run(self)
        rec = run_record(cfg, phase, index, self.session, outcome, metrics, t0, dur)
        if self.store:
            self.store.append(rec)
        return rec

    def warmup(self, n: int) -> None:
        for cfg in self.configs:
            for i in range(n):
                rec = self._one(cfg, "warmup", i)
                cr = self.results[cfg.name]
                for lg in self.loggers:
                    lg.on_run(self, cfg, rec, cr.state)

    # -------------------------------------------------------------------------------- main loop
    def run(self) -> dict[str, Any]:
        before = self.env.get("snapshot") or environment.snapshot()
        self._resume()
        if self.store:
            self.store.append(
                {
                    "type": "meta",
                    "session": self.session,
                    "time": time.time(),
                    "env": self.env,
                    "configs": [
                        {"name": c.name, "key": c.key, "describe": c.implementation.describe(c.parameters), "params": c.parameters.to_dict()}
                        for c in self.configs
                    ],
                    "stop": str(next(iter(self.results.values())).stop),
                    "resumed": {n: cr.resumed_runs for n, cr in self.results.items() if cr.resumed_runs},
                }
            )
        for lg in self.loggers:
            lg.on_start(self)
        for c in self.configs:
            c.implementation.setup(c.parameters)
        rng = random.Random(self.shuffle_seed) if self.shuffle_seed is not None else None
        interrupted = False
        started = []
        try:
            for a in self.actions:
                a.before_benchmark(self)
                started.append(a)
            self._t0 = time.perf_counter()
            base_elapsed = {n: cr.state.elapsed_s for n, cr in self.results.items()}
            rnd = 0
            while True:
                active = [c for c in self.configs if not self.results[c.name].stop.should_stop(self.results[c.name].state)]
                if not active:
                    break
                order = list(active)
                if rng is not None:
                    rng.shuffle(order)
                elif rnd % 2 == 1:
                    order.reverse()  # ABBA: alternate the order between rounds
                for cfg in order:
                    cr = self.results[cfg.name]
                    rec = self._one(cfg, "measure", cr.state.runs)
                    cr.records.append(rec)
                    self._account(cr, rec)
                    cr.state.elapsed_s = base_elapsed[cfg.name] + (time.perf_counter() - self._t0)
                    for lg in self.loggers:
                        lg.on_run(self, cfg, rec, cr.state)
                rnd += 1
        except KeyboardInterrupt:
            interrupted = True
        finally:
            for a in reversed(started):
                try:
                    a.after_benchmark(self)
                except Exception as e:  # noqa: BLE001
                    self.warn(f"action {a} failed after the benchmark: {e}")
            for c in self.configs:
                c.implementation.teardown(c.parameters)
            shutil.rmtree(self._workdir, ignore_errors=True)
        for w in environment.drift(before, environment.snapshot()):
            self.warn(w)
        result = self.result(interrupted)
        if self.store:
            self.store.append(
                {"type": "end", "session": self.session, "interrupted": interrupted, "reasons": {n: cr.stop.reason for n, cr in self.results.items()}}
            )
            self.store.close()
        for lg in self.loggers:
            lg.on_finish(self, result)
        if interrupted:
            raise KeyboardInterrupt
        return result

    def result(self, interrupted: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "environment": self.env,
            "warnings": self.warnings,
            "interrupted": interrupted,
            "meters": [m.describe() for m in self.meters],
            "actions": [str(a) for a in self.actions],
            "primary_metric": self.primary,
            "configurations": {},
        }
        for name, cr in self.results.items():
            out["configurations"][name] = {
                "describe": cr.config.implementation.describe(cr.config.parameters),
                "params": cr.config.parameters.to_dict(),
                "stop_condition": str(cr.stop),
                "stop_reason": cr.stop.reason or ("interrupted" if interrupted else ""),
                "resumed_runs": cr.resumed_runs,
                "stats": processors.process(cr.records),
            }
        if len(self.configs) == 2:
            a, b = (self.results[c.name] for c in self.configs)
            out["comparison"] = compare_results(a, b, self.primary)
        return out


def run_record(
    cfg: Configuration, phase: str, index: int, session: str, outcome: RunOutcome, metrics: dict, t_start: float, duration_s: float
) -> dict[str, Any]:
    """One run as the results store keeps it (what resuming, reports and analyses read)."""
    p = outcome.process
    return {
        "type": "run",
        "run_id": f"{cfg.key}:{phase}:{index}" if phase == "measure" else f"{cfg.key}:{phase}:{session}:{index}",
        "config": cfg.name,
        "config_key": cfg.key,
        "params": cfg.parameters.to_dict(),
        "phase": phase,
        "index": index,
        "status": outcome.status,
        "exit_code": p.exit_code if p else None,
        "signal": p.signal if p else None,
        "error": outcome.error,
        "metrics": metrics,
        "info": outcome.info,
        "t_start": t_start,
        "duration_s": duration_s,
        "session": session,
    }


def compare_results(a: ConfigResult, b: ConfigResult, metric: str, confidence: float = 0.95) -> dict[str, Any]:
    va, vb = a.state.ok(metric), b.state.ok(metric)
    r = stats.compare(va, vb, confidence)
    return {"metric": metric, "a": a.config.name, "b": b.config.name, **r.to_dict(), "verdict": r.verdict(a.config.name, b.config.name)}


def make_stop(inner, max_runs: int = 1000, max_time_s: float | None = None, max_failures: int | None = 5) -> Bounded:
    return inner if isinstance(inner, Bounded) else Bounded(inner, max_runs, max_time_s, max_failures)


__all__ = ["Runner", "make_stop", "Warmup", "compare_results"]
