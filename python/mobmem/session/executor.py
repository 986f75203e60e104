"""Where independent runs execute: local worker processes (the default) or a Ray cluster.

- ``local`` — :func:`mobmem.session.pool.run_all`: ``jobs`` spawned worker processes on this
  machine (one process, in order, for one job);
- ``ray`` — each run is a Ray task (one CPU each) on the cluster at ``address`` (``ray://HOST:PORT``
  or ``auto`` for a cluster already running here), or on a local Ray started for the command and
  stopped after it when no address is given. Results come back in the order they finish. The
  tasks import mobmem on the workers: a remote cluster needs the same mobmem installed there.

:func:`auto_jobs` picks ``--jobs auto``: as many runs at once as there are CPUs and as fit in the
memory available now at :data:`RUN_PEAK_RSS_BYTES` each.

Ctrl-C stops both: local workers are terminated, Ray tasks cancelled (finished runs were already
handed over).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Iterable

from mobmem.errors import MobmemError

#: Peak RSS of one session on the largest shipped experiment (the full hot-launch scenario:
#: 2.0 GB measured with `/usr/bin/time -v mobmem bench session`, see docs/benchmarks.md).
RUN_PEAK_RSS_BYTES = 2_000_000_000

EXECUTORS = ("local", "ray")


def mem_available() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (None where there is none)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def auto_jobs(per_run: int = RUN_PEAK_RSS_BYTES) -> int:
    """Runs at once for ``--jobs auto``: min(CPUs, available memory ÷ ``per_run``), at least 1."""
    cpus = os.cpu_count() or 1
    avail = mem_available()
    by_mem = cpus if avail is None else avail // max(1, per_run)
    return max(1, min(cpus, by_mem))


def parse_jobs(text: str | int) -> int:
    """``--jobs N`` or ``--jobs auto`` → a job count (one-line error otherwise)."""
    if isinstance(text, int):
        n = text
    elif str(text).strip().lower() == "auto":
        return auto_jobs()
    else:
        try:
            n = int(str(text))
        except ValueError:
            raise MobmemError(f"--jobs must be a positive integer or 'auto', got {text!r}") from None
    if n < 1:
        raise MobmemError(f"--jobs must be at least 1, got {n}")
    return n


def check(jobs_text: str | int, executor: str) -> int:
    """``--jobs`` and ``--executor`` checked before anything runs; returns the job count."""
    n = parse_jobs(jobs_text)
    if executor not in EXECUTORS:
        raise MobmemError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    return n


def run_jobs(
    fn: Callable[[Any], Any],
    items: Iterable[Any],
    on_result: Callable[[Any], None],
    jobs: int = 1,
    executor: str = "local",
    address: str | None = None,
) -> None:
    """``on_result(fn(item))`` for every item, on the chosen executor (``fn`` importable)."""
    items = list(items)
    if executor not in EXECUTORS:
        raise MobmemError(f"--executor must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "local":
        if address:
            raise MobmemError("--address is for --executor ray")
        from mobmem.session.pool import run_all

        run_all(fn, items, jobs, on_result)
        return
    _run_ray(fn, items, on_result, address)


def _ray():
    try:
        import ray
    except ImportError:
        raise MobmemError("--executor ray: Ray is not installed (pip install 'ray>=2.9')") from None
    return ray


def _check_reachable(address: str, timeout: float = 3.0) -> None:
    """A ``ray://HOST:PORT`` address must accept a TCP connection within ``timeout`` seconds (Ray
    Client would otherwise retry for half a minute before it gives up)."""
    import socket
    from urllib.parse import urlsplit

    u = urlsplit(address)
    try:
        host, port = u.hostname, u.port or 10001
    except ValueError:
        raise MobmemError(f"--address {address}: not a ray://HOST:PORT address") from None
    if not host:
        raise MobmemError(f"--address {address}: not a ray://HOST:PORT address")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        raise MobmemError(f"--executor ray: {address} does not answer ({e.strerror or e})") from None


def _run_ray(fn, items, on_result, address: str | None) -> None:
    if not items:
        return
    ray = _ray()
    if address and address.startswith("ray://"):
        _check_reachable(address)
    started = False
    if not ray.is_initialized():
        import warnings

        try:
            with warnings.catch_warnings():  # Ray's connection warnings: the error says it in one line
                warnings.filterwarnings("ignore", module=r"ray\..*")
                if address:
                    ray.init(address=address, log_to_driver=False, logging_level="ERROR")
                else:
                    ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        except Exception as e:  # noqa: BLE001 — Ray raises many kinds on a cluster that does not answer
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise MobmemError(f"--executor ray: cannot connect to {address or 'a local Ray'}: {first}") from None
        started = True
    task = ray.remote(num_cpus=1, max_retries=0)(fn)
    pending = {}
    try:
        for item in items:
            pending[task.remote(item)] = item
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                pending.pop(ref)
                try:
                    r = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    cause = e.cause if getattr(e, "cause", None) is not None else e
                    if isinstance(cause, MobmemError):
                        raise MobmemError(str(cause)) from None
                    raise
                on_result(r)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
