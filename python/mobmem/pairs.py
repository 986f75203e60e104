"""``key=value`` strings as the command line gives them (``--set``) → ``(key, value)`` pairs.

Only the shape is checked here; the core checks every key and value against the catalogue.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from mobmem.errors import MobmemError

Pair = tuple[str, str]


def parse(items: Iterable[str] | None, what: str = "--set") -> list[Pair]:
    """``["kernel.swappiness=60", …]`` → ``[("kernel.swappiness", "60"), …]``."""
    out: list[Pair] = []
    for it in items or []:
        k, sep, v = str(it).partition("=")
        if not sep or not k.strip() or not v.strip():
            raise MobmemError(f"{what} {it!r}: expected key=value (e.g. kernel.swappiness=60, system.collector=cmc, heapgrowthlimit=256m)")
        out.append((k.strip(), v.strip()))
    return out


def strings(settings: Mapping[str, object] | Iterable[str] | str | None) -> list[str]:
    """Settings as the Python API takes them — ``{"kernel.swappiness": 100}`` or
    ``["kernel.swappiness=100"]`` — as ``key=value`` strings (booleans as ``true``/``false``)."""
    if settings is None:
        return []
    if isinstance(settings, Mapping):
        out = []
        for k, v in settings.items():
            if isinstance(v, bool):
                v = "true" if v else "false"
            out.append(f"{k}={v}")
        return out
    if isinstance(settings, str):
        return [settings]
    return [str(s) for s in settings]
