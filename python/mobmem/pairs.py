"""``key=value`` strings as the command line gives them (``--set``) → ``(key, value)`` pairs.

Only the shape is checked here; the core checks every key and value against the catalogue.
"""

from __future__ import annotations

from typing import Iterable

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
