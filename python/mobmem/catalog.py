"""The catalogue of named choices, from the Rust core's registries (``mobmem._core.catalog()``).

Every simulator name a command accepts — collectors and their aliases, runtime policies, kill
policies, madvise advice and hints, LRU modes, kernel semantics, setting keys — comes from here,
never from a list in Python, so a new registry entry in the core is known to every command.
"""

from __future__ import annotations

import json
from functools import lru_cache

from mobmem.errors import MobmemError


@lru_cache(maxsize=1)
def catalog() -> dict:
    """The whole catalogue (see the core's ``catalog`` module for its shape)."""
    from mobmem import _core

    return json.loads(_core.catalog())


def collector_names() -> list[str]:
    """The simulator's collectors, by canonical name, in catalogue order."""
    return [c["name"] for c in catalog()["collectors"]]


def collector(name: str, what: str = "collector") -> str:
    """The canonical name of collector ``name`` (a name or an alias); MobmemError (``unknown
    {what} …``) if unknown."""
    for c in catalog()["collectors"]:
        if name == c["name"] or name in c["aliases"]:
            return c["name"]
    raise MobmemError(f"unknown {what} {name!r}; expected one of {', '.join(collector_names())}")


def lmkd_names() -> list[str]:
    return [c["name"] for c in catalog()["lmkd"]]
