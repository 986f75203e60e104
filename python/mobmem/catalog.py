"""The catalogue of named choices, from the Rust core's registries (``mobmem._core.catalog()``).

Every simulator name a command accepts — collectors and their aliases, runtime policies, kill
policies, madvise advice and hints, LRU modes, kernel semantics, every setting (type, default,
unit, range, help, source), and the shipped devices, apps, scenarios and systems — comes from
here, never from a list in Python, so a new registry entry or data file is known to every command.
"""

from __future__ import annotations

import json
from functools import lru_cache

from mobmem.errors import MobmemError


@lru_cache(maxsize=1)
def catalog() -> dict:
    """The whole catalogue (see the core's ``catalog`` module for its shape)."""
    from mobmem import _core
    from mobmem.paths import DATA

    try:
        return json.loads(_core.catalog(str(DATA)))
    except ValueError as e:  # a shipped data file that does not load
        raise MobmemError(str(e)) from None


def collector_names() -> list[str]:
    """The simulator's collectors, by canonical name, in catalogue order."""
    return names("collectors")


def collector(name: str, what: str = "collector") -> str:
    """The canonical name of collector ``name`` (a name or an alias); MobmemError (``unknown
    {what} …``) if unknown."""
    for c in catalog()["collectors"]:
        if name == c["name"] or name in c["aliases"]:
            return c["name"]
    raise MobmemError(f"unknown {what} {name!r}; expected one of {', '.join(collector_names())}")


def lmkd_names() -> list[str]:
    return names("lmkd")


def names(kind: str) -> list[str]:
    """Names of one kind of entry: collectors, runtime_policies, lmkd, devices, apps, scenarios, systems."""
    return [e["name"] for e in catalog()[kind]]


def settings(layer: str) -> list[dict]:
    """The settings of one layer (kernel, runtime, app, session): key, aliases, type, default,
    unit, range, help, source."""
    return catalog()["settings"][layer]["keys"]


def default(layer: str, key: str) -> str:
    """The default of a setting, as a user would write it."""
    for e in settings(layer):
        if e["key"] == key:
            return e["default"]
    raise KeyError(f"{layer}.{key}")
