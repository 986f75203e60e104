"""Which code made a result: a hash of the simulator's compiled core and of the package's data
files that runs read (devices, apps, systems, scenarios, calibration). Saved runs record it, so that a resumed
comparison, sweep or study never takes a run made by other code or inputs as its own. A run on one
device reads that device's calibration file only, so another device's refit keeps its runs. Left
out: the package's Python code (a change there that alters how a run's settings are assembled is
not seen by the hash)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from mobmem.paths import DATA


def file_hash(h, path: Path) -> None:
    """Feed the bytes of ``path`` into the hash ``h``."""
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)


@lru_cache(maxsize=None)
def code_version(device: str | None = None) -> str:
    """A hash of the simulator's code (the Rust sources, lock file and compiler the core was built
    from, embedded at build time) and of the package's data files that runs read (devices, apps,
    systems, scenarios, calibration): results of other code or data never match it, and the same
    code built on another machine or in another checkout does. With ``device``, the version of a
    run on that device: other devices' calibration files are left out (the run never reads them);
    without, every file counts."""
    from mobmem import _core

    h = hashlib.sha256()
    h.update(_core.SOURCE_HASH.encode())
    for p in run_data_files(device):
        h.update(str(p.relative_to(DATA)).encode() + b"\0")
        file_hash(h, p)
    return h.hexdigest()[:16]


#: Data files no run reads: the published facts (``fidelity.toml``) only measure finished runs,
#: so a new fact or a corrected source keeps every run (a run record checks each value's
#: definition instead, see :class:`mobmem.session.fidelity.RunRecord`).
NOT_READ_BY_RUNS = ("fidelity.toml",)


#: Where the devices' calibration files are (``DEVICE.toml``): a run reads its own device's only.
CALIBRATION_DIR = "calibration"


def run_data_files(device: str | None = None) -> list[Path]:
    """The package's data files a run may read (on ``device``, if given), in a fixed order."""

    def read(p: Path) -> bool:
        rel = p.relative_to(DATA)
        if not p.is_file() or p.name.endswith((".pyc", ".md")) or str(rel) in NOT_READ_BY_RUNS:
            return False
        return device is None or rel.parts[0] != CALIBRATION_DIR or p.stem == device

    return [p for p in sorted(Path(DATA).rglob("*")) if read(p)]


def run_device(scenario: Path, pairs: Sequence[tuple[str, str]] = ()) -> str | None:
    """The device a run of ``scenario`` with the settings ``pairs`` will use: the last
    ``session.device`` setting, else the scenario's ``device``; None if that cannot be read (then
    :func:`code_version` counts every device's files)."""
    import tomllib

    device = next((v for k, v in reversed(pairs) if k == "session.device"), None)
    if device is not None:
        return device
    try:
        with open(scenario, "rb") as f:
            d = tomllib.load(f).get("device")
    except (OSError, ValueError):
        return None
    return d if isinstance(d, str) else None


def reused_runs_line(reused: int, total: int) -> str:
    """A report's line saying how many of its runs a resumed invocation took from disk."""
    return (
        f"- {reused} of {total} runs were reused from an earlier invocation (`--resume`, same scenario, system, seed and"
        " settings): their numbers come from the code that ran them"
    )
