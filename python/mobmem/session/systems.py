"""Named system configurations (``python/mobmem/data/systems.toml``).

A system is a name, a one-line description of what it models, and a list of ``key=value``
settings in ``--set`` form. They apply after the device profile and the scenario's ``[system]``
table and before the user's own ``--set`` values. Values may use ``${ram_mib}`` and
``${zram_mib}``, resolved against the scenario's device (see the file's header).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mobmem.errors import MobmemError
from mobmem.paths import SYSTEMS_FILE

_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_VAR = re.compile(r"\$\{([a-z_]+)\}")
VARIABLES = ("ram_mib", "zram_mib")


@dataclass(frozen=True)
class System:
    name: str
    description: str
    settings: tuple[str, ...]
    line: int  # of its [name] header in the file


def _line_of(text: str, name: str) -> int:
    pat = re.compile(r"^\s*\[\s*\"?" + re.escape(name) + r"\"?\s*\]\s*(#.*)?$")
    for i, ln in enumerate(text.splitlines(), 1):
        if pat.match(ln):
            return i
    return 1


def load(path: Path | None = None) -> dict[str, System]:
    """All systems of the file, in file order; bad entries raise ``FILE:LINE: name.field: problem``."""
    import tomllib

    path = Path(path or SYSTEMS_FILE)
    try:
        text = path.read_text()
    except OSError as e:
        raise MobmemError(f"{path}: {e.strerror}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        where = f"{path}:{m.group(1)}:{m.group(2)}" if m else str(path)
        raise MobmemError(f"{where}: {str(e).split(' (at line')[0]}") from None
    out: dict[str, System] = {}
    for name, entry in data.items():
        line = _line_of(text, name)
        where = f"{path}:{line}: {name}"
        if not _NAME.match(name):
            raise MobmemError(f"{where}: system names are lower-case words (letters, digits, '-', '_')")
        if not isinstance(entry, dict):
            raise MobmemError(f"{where}: expected a table with description and settings")
        unknown = sorted(set(entry) - {"description", "settings"})
        if unknown:
            raise MobmemError(f"{where}.{unknown[0]}: unknown field; expected description, settings")
        desc = entry.get("description")
        if not isinstance(desc, str) or not desc.strip():
            raise MobmemError(f"{where}.description: missing (one line saying what the system models)")
        settings = entry.get("settings", [])
        if not isinstance(settings, list) or not all(isinstance(s, str) for s in settings):
            raise MobmemError(f'{where}.settings: expected a list of "key=value" strings')
        for s in settings:
            k, sep, v = s.partition("=")
            if not sep or not k.strip() or not v.strip():
                raise MobmemError(f"{where}.settings: {s!r}: expected key=value")
            for var in _VAR.findall(v):
                if var not in VARIABLES:
                    raise MobmemError(f"{where}.settings: {s!r}: unknown variable ${{{var}}}; known: {', '.join(VARIABLES)}")
        out[name] = System(name, desc.strip(), tuple(settings), line)
    return out


def get(name: str, path: Path | None = None) -> System:
    systems = load(path)
    if name not in systems:
        raise MobmemError(f"--system: unknown system {name!r}; known (in {path or SYSTEMS_FILE}): {', '.join(systems)}")
    return systems[name]


def parse_names(spec: str, path: Path | None = None) -> list[str]:
    """``"stock,zram"`` → checked, de-duplicated names in order."""
    names = [n.strip() for n in (spec or "").split(",") if n.strip()]
    if not names:
        raise MobmemError("--systems: expected a comma-separated list of system names, e.g. stock,zram")
    systems = load(path)
    for n in names:
        if n not in systems:
            raise MobmemError(f"--systems: unknown system {n!r}; known: {', '.join(systems)}")
    if len(set(names)) != len(names):
        raise MobmemError(f"--systems: {spec!r} names a system twice")
    return names


def device_variables(scenario: Path, user: list[tuple[str, str]]) -> dict[str, str]:
    """``ram_mib`` and ``zram_mib`` of the scenario's device (device ← scenario [system.kernel]
    ← the user's kernel.* settings, layered by the core as a session would). ``zram_mib`` is the
    device's zram size, or half its RAM when it has none. Empty when the scenario or its device
    cannot be read: the core then reports what is wrong with them."""
    from mobmem import _core
    from mobmem.paths import DATA

    kernel = [(k, v) for k, v in user if k.startswith("kernel.")]
    try:
        ram, swap, swap_mib = _core.session_memory(str(scenario), str(DATA), kernel)
    except (ValueError, OSError):
        return {}
    zram = swap_mib if swap == "zram" and swap_mib else ram // 2
    return {"ram_mib": str(ram), "zram_mib": str(zram)}


def settings_for(name: str, scenario: Path, user: list[tuple[str, str]], path: Path | None = None) -> list[tuple[str, str]]:
    """The named system's settings as pairs, variables resolved for ``scenario``."""
    sysm = get(name, path)
    variables: dict[str, str] | None = None
    out = []
    for s in sysm.settings:
        k, _, v = s.partition("=")
        if _VAR.search(v):
            if variables is None:
                variables = device_variables(scenario, user)
            v = _VAR.sub(lambda m, variables=variables: variables.get(m.group(1), m.group(0)), v)
        out.append((k.strip(), v.strip()))
    return out
