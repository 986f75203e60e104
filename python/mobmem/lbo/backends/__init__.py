"""LBO back ends: ``jvm`` (real HotSpot JVMs on the host) and ``sim`` (the simulated phone's
managed runtime), and :func:`get_backend`, the one place that maps a back-end name to its class."""

from __future__ import annotations

from typing import Callable

from mobmem.errors import MobmemError
from mobmem.lbo.backend import Backend


def _jvm(**kw) -> Backend:
    from mobmem.lbo.backends.jvm import JvmBackend

    return JvmBackend(**kw)


def _sim(**kw) -> Backend:
    from mobmem.lbo.backends.sim import SimBackend

    return SimBackend(**kw)


#: name → (one-line help, constructor). Back ends are imported on first use (the JVM one pulls in
#: the JDK tooling).
BACKENDS: dict[str, tuple[str, Callable[..., Backend]]] = {
    "jvm": ("real HotSpot JVMs on the host (DaCapo-style workloads)", _jvm),
    "sim": ("the simulated phone's managed runtime (GCBench and app workloads)", _sim),
}


def get_backend(name: str, **kw) -> Backend:
    n = name.strip().lower()
    if n not in BACKENDS:
        raise MobmemError(f"unknown LBO back end {name!r}: use one of {', '.join(BACKENDS)}")
    return BACKENDS[n][1](**kw)
