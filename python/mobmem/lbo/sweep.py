"""Running an LBO study: minimum heaps, the heap sweep, and interleaved invocations.

:func:`min_heaps` bisects each workload's minimum heap with a reference collector (cached in
``minheap.json`` in the output directory, so a resumed study does not redo it).
:func:`plan` lists the configurations: every collector × heap size, plus one configuration per
workload for a no-GC baseline (its heap is fixed; its cost serves every heap size).
:func:`run_sweep` executes them with the harness runner: invocations are the outer loop and the
configurations the inner loop, shuffled each round with a seed, every run appended to
``results.jsonl`` — an interrupted study resumes where it stopped. Failed runs (out of memory,
time-outs, crashes) are recorded and shown, never retried away. A deterministic back end (the
simulator: its results do not depend on the machine) may run its invocations in parallel, on local
workers or Ray (:mod:`mobmem.session.executor`); a back end that measures time never does.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Callable

from mobmem.errors import MobmemError
from mobmem.files import atomic_write
from mobmem.harness import environment
from mobmem.harness.implementation import Configuration, Parameters
from mobmem.harness.loggers import Logger
from mobmem.harness.meters import Meter
from mobmem.harness.runner import Runner
from mobmem.harness.stop import Bounded, Fixed
from mobmem.harness.store import ResultStore
from mobmem.lbo.backend import Backend
from mobmem.lbo.heaps import find_min_heap, heap_multiples, heap_sizes_mb


def min_heaps(
    backend: Backend,
    workloads: list[str],
    reference: str,
    out_dir: str | None,
    given: dict[str, int] | None = None,
    log: Callable[[str], None] = print,
    jobs: int = 1,
    any_code: bool = False,
) -> dict[str, dict]:
    """The minimum heap of each workload (given, cached in ``minheap.json``, or bisected). A
    deterministic back end searches up to ``jobs`` workloads at a time (on threads: its runs
    release the GIL); the cache is written after each search, so an interrupted study keeps them.
    A cached minimum found by other code is searched again unless ``any_code`` (re-analysing a
    finished study runs nothing)."""
    path = os.path.join(out_dir, "minheap.json") if out_dir else None
    cached: dict[str, dict] = {}
    if path and os.path.exists(path):
        try:
            with open(path) as f:
                cached = json.load(f)
        except json.JSONDecodeError as e:
            raise MobmemError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg}); delete the file to search the minimum heaps again") from None
        except (OSError, UnicodeDecodeError) as e:
            raise MobmemError(f"{path}: cannot read: {e}") from None
        if not isinstance(cached, dict) or not all(isinstance(v, dict) and isinstance(v.get("min_heap_mb"), int) for v in cached.values()):
            raise MobmemError(f'{path}: not a minimum-heap record (expected {{"WORKLOAD/COLLECTOR": {{"min_heap_mb": N, …}}}}); delete it to search again')
    out: dict[str, dict] = {}
    todo = []
    code = backend.code_version()
    for w in workloads:
        key = f"{w}/{reference}"
        if given and w in given:
            out[w] = {"min_heap_mb": given[w], "source": "given"}
        elif key in cached and (any_code or cached[key].get("code") == code):
            out[w] = cached[key]
        else:
            if key in cached:
                log(f"minimum heap of {w} with {reference}: the cached one was found with other code; searching again")
            todo.append(w)

    def search(w: str) -> dict:
        t0 = time.monotonic()
        log(f"minimum heap of {w} with {reference}: bisecting…")
        r = find_min_heap(lambda h: backend.probe_heap(w, reference, h), start_mb=backend.start_heap_mb(w))
        log(f"minimum heap of {w} with {reference}: {r.min_heap_mb} MB ({len(r.probes)} probes)")
        found = {**r.to_dict(), "reference": reference, "source": "bisection", "seconds": round(time.monotonic() - t0, 1)}
        return {**found, "code": code} if code else found

    parallel = jobs > 1 and backend.deterministic and len(todo) > 1
    for w, found in _threaded(search, todo, jobs) if parallel else ((w, search(w)) for w in todo):
        out[w] = cached[f"{w}/{reference}"] = found
        if path:
            os.makedirs(out_dir, exist_ok=True)
            atomic_write(Path(path), json.dumps(cached, indent=2))
    return {w: out[w] for w in workloads}


def _threaded(fn: Callable, items: list, jobs: int):
    """Yield (item, fn(item)) as they finish, ``jobs`` at a time on daemon threads (so Ctrl-C in
    the waiting main thread ends the command at once instead of waiting for them)."""
    import queue
    import threading

    pending, done = queue.Queue(), queue.Queue()
    for x in items:
        pending.put(x)

    def worker() -> None:
        while True:
            try:
                x = pending.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((x, fn(x), None))
            except BaseException as e:  # re-raised in the main thread
                done.put((x, None, e))

    for _ in range(min(jobs, len(items))):
        threading.Thread(target=worker, daemon=True).start()
    for _ in items:
        while True:
            try:
                x, r, err = done.get(timeout=0.2)
                break
            except queue.Empty:
                continue
        if err is not None:
            raise err
        yield x, r


def plan(backend: Backend, workloads: list[str], collectors: list[str], minheap: dict[str, dict], n: int, r: float, sf: float = 1.0) -> list[Configuration]:
    mults = heap_multiples(n, r, sf)
    impl = backend.implementation()
    configs = []
    for w in workloads:
        sizes = heap_sizes_mb(minheap[w]["min_heap_mb"], mults)
        for c in collectors:
            if backend.is_nogc(c):
                configs.append(Configuration(f"{w}/{c}", impl, Parameters(workload=w, collector=c, heap_mb=0, multiple=None)))
                continue
            for m, h in zip(mults, sizes):
                configs.append(Configuration(f"{w}/{c}/{m:.3f}", impl, Parameters(workload=w, collector=c, heap_mb=h, multiple=round(m, 4))))
    return configs


class _Quiet(Logger):
    def __init__(self, total: int, log: Callable[[str], None]) -> None:
        self.total, self.done, self.log, self.t0 = total, 0, log, time.monotonic()
        self.last = 0.0

    def on_run(self, runner, config, record, state):
        self.note(config.name, record)

    def note(self, name: str, record: dict) -> None:
        """One invocation done: its failure, and the progress every 30 s."""
        self.done += 1
        now = time.monotonic()
        if record["status"] != "ok":
            self.log(f"  {name} invocation {record['index'] + 1}: {record['status']} ({record['info'].get('failure', record.get('error') or '')})")
        if now - self.last > 30 or self.done == self.total:
            self.last = now
            el = now - self.t0
            eta = el / self.done * (self.total - self.done)
            self.log(f"  {self.done}/{self.total} invocations, {el / 60:.1f} min elapsed, ~{eta / 60:.1f} min left")


def check_parallel(backend: Backend, jobs: int, executor: str) -> bool:
    """Whether the invocations run in parallel (``--jobs`` > 1 or an executor other than local);
    MobmemError for a back end that measures time."""
    parallel = jobs > 1 or executor != "local"
    if parallel and not backend.deterministic:
        raise MobmemError(f"the {backend.name} back end measures time: its invocations run one at a time on this machine (no --jobs, no --executor)")
    return parallel


def run_sweep(
    backend: Backend,
    configs: list[Configuration],
    invocations: int,
    out_dir: str,
    *,
    seed: int = 1,
    command: list[str] | None = None,
    log: Callable[[str], None] = print,
    extra_env: dict | None = None,
    jobs: int = 1,
    executor: str = "local",
    address: str | None = None,
) -> tuple[list[dict], dict]:
    if invocations < 1:
        raise MobmemError(f"--invocations must be ≥ 1, got {invocations}")
    parallel = check_parallel(backend, jobs, executor)
    os.makedirs(out_dir, exist_ok=True)
    store = ResultStore(os.path.join(out_dir, "results.jsonl"))
    env = environment.collect(command, extra={"backend": backend.name, **backend.environment(), **(extra_env or {})})
    for w in env["warnings"]:
        log(f"warning: {w}")
    recorded = [r for r in store.runs() if r.get("phase") == "measure"] if store.exists() else []
    keys = {c.key for c in configs}
    done_before = sum(r["config_key"] in keys for r in recorded)
    if done_before:
        log(f"resuming: {done_before} invocations already recorded in {store.path}")
    if len(recorded) > done_before:
        log(
            f"note: {len(recorded) - done_before} invocations in {store.path} are of other configurations"
            + (" or of other code (a changed simulator runs again)" if backend.code_version() else "")
            + "; they stay in the file and are not used"
        )
    if parallel:
        result = _run_parallel(configs, invocations, store, env, seed, log, jobs, executor, address)
        recs = [r for r in ResultStore(store.path).runs() if r.get("phase") == "measure"]
        # In the order the sequential runner would have run them (the store has arrival order).
        pos = {(c.key, i): n for n, (c, i) in enumerate(_sequential_order(configs, invocations, seed))}
        recs = sorted((r for r in recs if r["config_key"] in keys), key=lambda r: pos.get((r["config_key"], int(r["index"])), len(pos)))
        return recs, {"environment": env, "warnings": result}
    stop = Bounded(Fixed(invocations), max_runs=invocations, max_failures=None)
    runner = Runner(
        configs,
        stop,
        meters=[Meter()],
        loggers=[_Quiet(len(configs) * invocations - done_before, log)],
        store=store,
        shuffle_seed=seed,
        env=env,
        command=command,
    )
    result = runner.run()
    recs = [r for r in ResultStore(store.path).runs() if r.get("phase") == "measure"]
    return [r for r in recs if r["config_key"] in keys], {"environment": env, "warnings": result["warnings"]}


def load_sweep(backend: Backend, configs: list[Configuration], out_dir: str, command: list[str] | None = None) -> tuple[list[dict], dict]:
    """The invocations already recorded for ``configs`` (for a report on a partial or finished sweep);
    the environment record is the one of the first session that ran them."""
    store = ResultStore(os.path.join(out_dir, "results.jsonl"))
    by_name: dict[str, dict[str, list[dict]]] = {}
    for r in store.runs():
        if r.get("phase") == "measure":
            by_name.setdefault(r["config"], {}).setdefault(r["config_key"], []).append(r)
    recs = []
    for c in configs:
        # This code's runs of the configuration; else the runs an earlier revision made of it
        # (re-analysing a finished study), as long as one version of the code made them all.
        made = by_name.get(c.name, {})
        if c.key in made:
            recs += made[c.key]
        elif len(made) == 1:
            recs += next(iter(made.values()))
        elif made:
            raise MobmemError(
                f"{store.path}: the runs of {c.name} were made by {len(made)} different versions of the code; run the study again into a new directory"
            )
    metas = store.metas()
    env = metas[0]["env"] if metas else environment.collect(command)
    warnings = sorted({w for m in metas for w in m["env"].get("warnings", [])})
    return recs, {"environment": env, "warnings": warnings}


def _invocation(item: tuple) -> dict:
    """One invocation in a worker (picklable): the run record the harness runner would write."""
    import shutil
    import tempfile

    from mobmem.harness.implementation import RunContext, RunOutcome
    from mobmem.harness.runner import run_record

    name, impl, params, index, session = item
    cfg = Configuration(name, impl, Parameters(params))  # (Parameters do not pickle; its key is recomputed)
    workdir = tempfile.mkdtemp(prefix="mobmem-lbo-")
    t0, tp = time.time(), time.perf_counter()
    try:
        outcome = cfg.implementation.run(cfg.parameters, RunContext(index=index, phase="measure", workdir=workdir))
    except Exception as e:  # recorded, as the runner does
        outcome = RunOutcome("error", error=f"{type(e).__name__}: {e}")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return run_record(cfg, "measure", index, session, outcome, dict(outcome.metrics), t0, time.perf_counter() - tp)


def _sequential_order(configs, invocations: int, seed: int) -> list:
    """(configuration, invocation) in the order the harness runner runs them: rounds, each a
    shuffle of every configuration with the seeded generator."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(invocations):
        order = list(configs)
        rng.shuffle(order)
        out += [(c, i) for c in order]
    return out


def _run_parallel(configs, invocations, store, env, seed, log, jobs, executor, address) -> list[str]:
    """The invocations not yet in ``store``, in parallel; each record appended as it arrives (the
    store's order is arrival order: results do not depend on it). Returns the warnings."""
    import uuid

    from mobmem.session.executor import run_jobs

    session = uuid.uuid4().hex[:8]
    done: dict[str, set[int]] = {}
    if store.exists():
        for r in store.runs():
            if r.get("phase") == "measure":
                done.setdefault(r["config_key"], set()).add(int(r["index"]))
    todo = [
        (c.name, c.implementation, c.parameters.to_dict(), i, session)
        for c, i in _sequential_order(configs, invocations, seed)
        if i not in done.get(c.key, set())
    ]
    store.append(
        {
            "type": "meta",
            "session": session,
            "time": time.time(),
            "env": env,
            "configs": [{"name": c.name, "key": c.key, "params": c.parameters.to_dict()} for c in configs],
            "parallel": {"jobs": jobs, "executor": executor},
        }
    )
    quiet = _Quiet(len(todo), log)

    def on_result(rec: dict) -> None:
        store.append(rec)
        quiet.note(rec["config"], rec)

    run_jobs(_invocation, todo, on_result, jobs=jobs, executor=executor, address=address)
    store.append({"type": "end", "session": session, "interrupted": False, "reasons": {}})
    store.close()
    return list(env.get("warnings", []))
