"""Independent runs in worker processes, stopped at once by Ctrl-C.

:func:`run_parallel` hands each finished run to the caller in this process as soon as it is done
(so it can be written to disk right away). Ctrl-C, SIGTERM (as the command line installs it) or
an error in a run terminates the workers: runs not yet finished are dropped, runs already handed
over stay handed over. Workers ignore SIGINT — the Ctrl-C a terminal sends to the whole process
group is handled here, not by a traceback in each worker — and die on SIGTERM.

Workers can report progress: :func:`report` in a worker calls ``on_report(*args)`` in this
process (through a queue; dropped when there is no listener).
"""

from __future__ import annotations

import os
import signal
from typing import Any, Callable, Iterable

_QUEUE = None


def _init_worker(queue) -> None:
    global _QUEUE
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _QUEUE = queue


def report(*args: Any) -> None:
    """In a worker: send ``args`` to the parent's ``on_report`` (nothing when none listens)."""
    if _QUEUE is not None:
        try:
            _QUEUE.put_nowait(args)
        except Exception:  # noqa: BLE001 — progress is best-effort
            pass


def reporting() -> bool:
    """Whether this worker's parent listens to :func:`report`."""
    return _QUEUE is not None


def run_parallel(
    fn: Callable[[Any], Any], items: Iterable[Any], jobs: int, on_result: Callable[[Any], None], on_report: Callable[..., None] | None = None
) -> None:
    """``on_result(fn(item))`` for every item, ``fn`` in ``jobs`` spawned worker processes (``fn``
    must be importable), results in the order they finish."""
    import multiprocessing as mp
    import queue as queue_mod

    items = list(items)
    if not items:
        return
    ctx = mp.get_context("spawn")
    q = ctx.Queue() if on_report is not None else None

    def drain() -> None:
        if q is None:
            return
        while True:
            try:
                args = q.get_nowait()
            except (queue_mod.Empty, OSError, ValueError):
                return
            on_report(*args)

    pool = ctx.Pool(max(1, min(jobs, len(items))), initializer=_init_worker, initargs=(q,))
    try:
        it = pool.imap_unordered(fn, items)
        left = len(items)
        while left:
            try:
                r = it.next(timeout=0.1 if q is not None else None)
            except mp.TimeoutError:
                drain()
                continue
            left -= 1
            drain()
            on_result(r)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        if q is not None:
            q.close()
            q.cancel_join_thread()


def run_all(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int, on_result: Callable[[Any], None]) -> None:
    """``on_result(fn(item))`` for every item: in this process, in order, when at most one job is
    wanted (``jobs`` is capped by the items and the CPUs); else in worker processes
    (:func:`run_parallel`)."""
    items = list(items)
    jobs = max(1, min(jobs, len(items), os.cpu_count() or 1))
    if jobs == 1:
        for item in items:
            on_result(fn(item))
    else:
        run_parallel(fn, items, jobs, on_result)
