"""Which code made a result: a hash of the simulator's compiled core and of the package's data
files that runs read (devices, apps, systems, scenarios, calibration). Saved runs record it, so that a resumed
comparison, sweep or study never takes a run made by other code or inputs as its own. Left out:
the package's Python code (a change there that alters how a run's settings are assembled is not
seen by the hash)."""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path

from mobmem.paths import DATA


def file_hash(h, path: Path) -> None:
    """Feed the bytes of ``path`` into the hash ``h``."""
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)


@lru_cache(maxsize=1)
def code_version() -> str:
    """A hash of the simulator's code (the Rust sources, lock file and compiler the core was built
    from, embedded at build time) and of the package's data files that runs read (devices, apps,
    systems, scenarios, calibration): results of other code or data never match it, and the same
    code built on another machine or in another checkout does."""
    from mobmem import _core

    h = hashlib.sha256()
    h.update(_core.SOURCE_HASH.encode())
    for p in run_data_files():
        h.update(str(p.relative_to(DATA)).encode() + b"\0")
        file_hash(h, p)
    return h.hexdigest()[:16]


#: Data files no run reads: the published facts (``fidelity.toml``) only measure finished runs,
#: so a new fact or a corrected source keeps every run (a run record checks each value's
#: definition instead, see :class:`mobmem.session.fidelity.RunRecord`).
NOT_READ_BY_RUNS = ("fidelity.toml",)


def run_data_files() -> list[Path]:
    """The package's data files a run may read, in a fixed order."""
    return [
        p for p in sorted(Path(DATA).rglob("*")) if p.is_file() and not p.name.endswith((".pyc", ".md")) and str(p.relative_to(DATA)) not in NOT_READ_BY_RUNS
    ]


def reused_runs_line(reused: int, total: int) -> str:
    """A report's line saying how many of its runs a resumed invocation took from disk."""
    return (
        f"- {reused} of {total} runs were reused from an earlier invocation (`--resume`, same scenario, system, seed and"
        " settings): their numbers come from the code that ran them"
    )
