"""Named system configurations (``python/mobmem/data/systems.toml``).

A system is a name, a one-line description of what it models, and a list of ``key=value``
settings in ``--set`` form. They apply after the device profile and the scenario's ``[system]``
table and before the user's own ``--set`` values. Values may use ``${ram_mib}`` and
``${zram_mib}``, resolved against the scenario's device (see the file's header).

Systems combine with ``+``: ``fleet-rgs+zram`` applies the settings of each part in order, the
runtime policies of all parts together (``system.policies`` is a list, not overridden).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from mobmem.errors import MobmemError
from mobmem.paths import DATA, SYSTEMS_FILE


@dataclass(frozen=True)
class System:
    name: str
    description: str
    settings: tuple[str, ...]
    line: int  # of its [name] header in the file


def load(path: Path | None = None) -> dict[str, System]:
    """All systems of the file, in file order; bad entries raise ``FILE:LINE:COL: name: field: problem``
    (the core parses and checks the file)."""
    from mobmem import _core

    try:
        entries = json.loads(_core.systems(str(path or SYSTEMS_FILE)))
    except ValueError as e:
        raise MobmemError(str(e)) from None
    return {e["name"]: System(e["name"], e["description"], tuple(e["settings"]), e["line"]) for e in entries}


def parts(name: str) -> list[str]:
    """The systems a (possibly combined) name is made of: ``"fleet-rgs+zram"`` → both."""
    return [p.strip() for p in name.split("+")]


def get(name: str, path: Path | None = None) -> System:
    """A named system, or the combination of ``+``-joined names."""
    systems = load(path)
    found = []
    for part in parts(name):
        if part not in systems:
            raise MobmemError(f"--system: unknown system {part!r}; known (in {path or SYSTEMS_FILE}): {', '.join(systems)} (combine them with +)")
        found.append(systems[part])
    if len(found) == 1:
        return found[0]
    if len({s.name for s in found}) != len(found):
        raise MobmemError(f"--system: {name!r} names a system twice")
    return System(name, "; ".join(s.description for s in found), tuple(x for s in found for x in s.settings), found[0].line)


def parse_names(spec: str, path: Path | None = None) -> list[str]:
    """``"stock,zram"`` → checked, de-duplicated names in order."""
    names = [n.strip() for n in (spec or "").split(",") if n.strip()]
    if not names:
        raise MobmemError("--systems: expected a comma-separated list of system names, e.g. stock,zram")
    systems = load(path)
    for n in names:
        for part in parts(n):
            if part not in systems:
                raise MobmemError(f"--systems: unknown system {part!r}; known: {', '.join(systems)} (combine them with +)")
        if len(set(parts(n))) != len(parts(n)):
            raise MobmemError(f"--systems: {n!r} names a system twice")
    if len(set(names)) != len(names):
        raise MobmemError(f"--systems: {spec!r} names a system twice")
    return names


def settings_for(name: str, scenario: Path, user: list[tuple[str, str]], path: Path | None = None) -> list[tuple[str, str]]:
    """The named system's settings as pairs, ``${ram_mib}``/``${zram_mib}`` resolved for
    ``scenario`` with the user's kernel settings (by the core, as a session would boot)."""
    from mobmem import _core

    get(name, path)  # unknown names: the --system message
    pairs: list[tuple[str, str]] = []
    for part in parts(name):
        try:
            pairs += [tuple(p) for p in _core.system_settings(str(path or SYSTEMS_FILE), part, str(scenario), str(DATA), list(user))]
        except ValueError as e:
            raise MobmemError(str(e)) from None
    return _merge_policies(pairs)


def _merge_policies(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One ``system.policies`` setting holding every part's policies, in order, where the first
    one was (a later part must not drop an earlier part's policy)."""
    keys = [i for i, (k, _) in enumerate(pairs) if k == "system.policies"]
    if len(keys) < 2:
        return pairs
    names: list[str] = []
    for i in keys:
        for n in pairs[i][1].split(","):
            if n.strip() and n.strip() not in names:
                names.append(n.strip())
    out = [p for i, p in enumerate(pairs) if i not in keys[1:]]
    out[keys[0]] = ("system.policies", ",".join(names))
    return out
