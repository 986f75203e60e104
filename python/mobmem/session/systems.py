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


def get(name: str, path: Path | None = None) -> System:
    """A named system, or the combination of ``+``-joined names (resolved by the core)."""
    from mobmem import _core

    try:
        e = json.loads(_core.system(str(path or SYSTEMS_FILE), name))
    except ValueError as err:
        raise MobmemError(f"--system: {err}") from None
    return System(e["name"], e["description"], tuple(e["settings"]), e["line"])


def parse_names(spec: str, path: Path | None = None) -> list[str]:
    """``"stock,zram"`` → checked, de-duplicated names in order."""
    names = [n.strip() for n in (spec or "").split(",") if n.strip()]
    if not names:
        raise MobmemError("--systems: expected a comma-separated list of system names, e.g. stock,zram")
    for n in names:
        try:
            get(n, path)
        except MobmemError as e:
            raise MobmemError(str(e).replace("--system:", "--systems:", 1)) from None
    if len(set(names)) != len(names):
        raise MobmemError(f"--systems: {spec!r} names a system twice")
    return names


def settings_for(name: str, scenario: Path, user: list[tuple[str, str]], path: Path | None = None) -> list[tuple[str, str]]:
    """The named (or combined) system's settings as pairs, ``${ram_mib}``/``${zram_mib}``
    resolved for ``scenario`` with the user's kernel settings and the parts' runtime policies
    merged (by the core, as a session would boot). An unknown name raises the core's message;
    commands that take the name from an option check it first with :func:`get`, which names
    the option."""
    from mobmem import _core

    try:
        return [tuple(p) for p in _core.system_settings(str(path or SYSTEMS_FILE), name, str(scenario), str(DATA), list(user))]
    except ValueError as e:
        raise MobmemError(str(e)) from None
