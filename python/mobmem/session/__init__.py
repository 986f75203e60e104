"""User sessions on the simulated phone seen from Python.

A *session* runs a scenario script (``python/mobmem/data/scenarios/*.toml``; schema in
``crates/device/src/scenario.rs``) on a device model from boot to the last step, in the Rust core
(``mobmem._core.session_run``), and returns one JSON object: launches with their breakdowns,
launch statistics, cached apps, kills, vmstat and ratios, GC, frames, per-app totals, a memory
timeline and an event log.

- :func:`resolve_scenario` — a path, or the stem of a shipped scenario (``hot_launch``).
- :func:`parse_settings` — ``--set key=value`` strings → pairs (the core validates the keys).
- :func:`scenario_seed` — a scenario file's seed (where a seed sequence of several runs starts).
- :func:`run` — one session; settings are layered device ← scenario ``[system]`` ← the named
  system of ``data/systems.toml`` (:mod:`mobmem.session.systems`) ← the user's ``--set`` values.
- :func:`check` — a run's inputs checked without running it.
- :func:`summary` — the result without its series (``mobmem.session.output.SERIES``: each goes to
  its own CSV file).
- :func:`mobmem.session.compare.compare` — several named systems × seeds → the comparison
  document (means, confidence intervals, tests against the first system), optionally as files.
- :func:`mobmem.session.output.write_outputs` — the result as files in a directory.

Bad input raises :class:`mobmem.errors.MobmemError` with a one-line ``FILE:LINE:COL: field:
problem`` (or ``--set: …``) message.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Callable, Sequence

from mobmem.errors import MobmemError, did_you_mean
from mobmem.pairs import Pair
from mobmem.pairs import parse as parse_settings  # noqa: F401  (part of this module's API)
from mobmem.paths import DATA, SCENARIOS
from mobmem.session.output import summary  # noqa: F401  (part of this module's API)

#: Keys of a result that vary from run to run of the same inputs (everything else is deterministic).
NONDETERMINISTIC = ("wall_seconds", "sim_speed")


def scenario_names() -> list[str]:
    """Stems of the shipped scenarios (from the catalogue)."""
    from mobmem import catalog

    return catalog.names("scenarios")


def scenario_description(name: str) -> str:
    """The ``description`` of a shipped scenario."""
    from mobmem import catalog

    return next(s["description"] for s in catalog.catalog()["scenarios"] if s["name"] == name)


def _display(p: Path) -> str:
    """A path relative to the working directory when it is below it (shorter error messages)."""
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


def resolve_scenario(scenario: str | os.PathLike) -> Path:
    """A scenario file: an existing path, or a shipped scenario's stem (``hot_launch``, also
    ``hot-launch`` or ``hot_launch.toml``)."""
    s = str(scenario)
    if not s.strip():
        raise MobmemError("scenario: empty name; shipped scenarios: " + ", ".join(scenario_names()))
    p = Path(s)
    if p.is_file():
        return p
    if p.is_dir():
        raise MobmemError(f"{s}: is a directory, not a scenario file")
    stem = p.name[:-5] if p.name.endswith(".toml") else p.name
    if len(p.parts) == 1:
        for cand in (stem, stem.replace("-", "_")):
            q = SCENARIOS / f"{cand}.toml"
            if q.is_file():
                return q
    hint = did_you_mean(stem.replace("-", "_"), scenario_names()) if len(p.parts) == 1 else ""
    raise MobmemError(f"{s}: no such scenario file, and not a shipped scenario{hint}; shipped: {', '.join(scenario_names())}")


_LOC = re.compile(r"^(?P<file>.+?):0:0: ")


def _clean_error(msg: str) -> str:
    """The core's messages as one line: ``FILE:0:0: x`` → ``FILE: x``; settings errors get ``--set: ``."""
    msg = " ".join(str(msg).split("\n")).strip()
    msg = _LOC.sub(lambda m: f"{m.group('file')}: ", msg, count=1)
    if msg.startswith("setting "):
        msg = "--set: " + msg
    return msg


def scenario_seed(path: str | os.PathLike) -> int:
    """The seed of the scenario file at ``path`` (read by the core, like a run)."""
    from mobmem import _core

    try:
        return int(_core.scenario_seed(str(path)))
    except ValueError as e:
        raise MobmemError(_clean_error(str(e))) from None


def check_seed(seed: int | None) -> None:
    if seed is not None and not (0 <= int(seed) < 2**64):
        raise MobmemError(f"--seed must be within [0, 2^64), got {seed}")


def run(
    scenario: str | os.PathLike,
    settings: Sequence[str] | Sequence[Pair] = (),
    seed: int | None = None,
    system: str | None = None,
    systems_file: Path | None = None,
    progress: Callable[[float, float], None] | None = None,
) -> dict:
    """Run one session and return the result dict (see the module docstring).

    ``settings`` are ``key=value`` strings or pairs (the user's ``--set``); ``system`` a name from
    ``data/systems.toml`` whose settings apply before them; ``seed`` replaces the scenario's seed.
    The result records the scenario, every override (``parameters``), the seed and
    ``system_name``.

    ``progress(done_s, estimated_s)`` is called every ~0.1 s of wall time with the simulated
    seconds done and an estimate of the total (boot plus the script's use and wait time; launches
    add to it, so ``done_s`` can pass it). Ctrl-C stops the session within ~0.1 s with
    KeyboardInterrupt (as does an exception raised by ``progress``)."""
    from mobmem.session import systems as systems_mod

    path = resolve_scenario(scenario)
    pairs: list[Pair] = []
    for s in settings:
        pairs += [(str(s[0]), str(s[1]))] if isinstance(s, (tuple, list)) else parse_settings([s])
    check_seed(seed)
    sys_pairs: list[Pair] = []
    if system:
        sys_pairs = systems_mod.settings_for(system, path, pairs, systems_file)
    res = run_pairs(path, [*sys_pairs, *pairs], seed, progress)
    res["system_name"] = system
    return res


def run_pairs(path: Path, overrides: list[Pair], seed: int | None, progress: Callable[[float, float], None] | None = None) -> dict:
    """The core call: ``overrides`` in order (later wins); ValueError → MobmemError."""
    from mobmem import _core

    try:
        text = _core.session_run(_display(Path(path)), str(DATA), [(str(k), str(v)) for k, v in overrides], seed, progress=progress)
    except ValueError as e:
        raise MobmemError(_clean_error(str(e))) from None
    except OverflowError:
        raise MobmemError(f"--seed must be within [0, 2^64), got {seed}") from None
    return json.loads(text)


def check(path: Path, overrides: list[Pair], seed: int | None = None) -> None:
    """Check a run's inputs without running it (MobmemError as :func:`run_pairs` would raise)."""
    from mobmem import _core

    try:
        _core.session_check(_display(Path(path)), str(DATA), [(str(k), str(v)) for k, v in overrides], seed)
    except ValueError as e:
        raise MobmemError(_clean_error(str(e))) from None


def deterministic_view(res: dict) -> dict:
    """The result without the keys that depend on the machine's speed (for equality checks)."""
    return {k: v for k, v in res.items() if k not in NONDETERMINISTIC}
