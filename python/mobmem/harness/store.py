"""Append-only JSONL results files, so an interrupted sweep can be resumed.

Each line is one JSON object: ``{"type": "meta", …}`` when a session starts (environment record,
plan), ``{"type": "run", "run_id": …, …}`` for every run whatever its status, ``{"type": "end", …}``
when a session finishes. A run id is stable across sessions (configuration key, phase, index), so a
resumed session skips what is already recorded. Lines are flushed one by one; a torn last line
(the process was killed mid-write) is ignored on load. Left out: concurrent writers, compaction.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterator

from mobmem.errors import MobmemError


class ResultStore:
    def __init__(self, path: str) -> None:
        self.path = path
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self._f = None

    def exists(self) -> bool:
        return os.path.exists(self.path) and os.path.getsize(self.path) > 0

    def records(self) -> Iterator[dict[str, Any]]:
        if not os.path.exists(self.path):
            return
        with open(self.path, encoding="utf-8") as f:
            lines = f.readlines()
        for i, line in enumerate(lines):
            line = line.strip()
            if not line:
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError:
                if i == len(lines) - 1:
                    continue  # torn final line from an interrupted write
                raise MobmemError(f"{self.path}:{i + 1}: corrupt results line (not JSON)") from None

    def runs(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("type") == "run"]

    def metas(self) -> list[dict[str, Any]]:
        return [r for r in self.records() if r.get("type") == "meta"]

    def done(self) -> dict[str, dict[str, Any]]:
        """run_id -> record (the last one, if a run id was written twice)."""
        return {r["run_id"]: r for r in self.runs()}

    def append(self, rec: dict[str, Any]) -> None:
        if self._f is None:
            # drop a torn last line (killed mid-write) so the next record starts cleanly
            if os.path.exists(self.path) and os.path.getsize(self.path) > 0:
                with open(self.path, "rb+") as f:
                    data = f.read()
                    if not data.endswith(b"\n"):
                        f.truncate(data.rfind(b"\n") + 1)
            self._f = open(self.path, "a", encoding="utf-8")
        self._f.write(json.dumps(rec, separators=(",", ":"), default=_default) + "\n")
        self._f.flush()

    def close(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None


def _default(o: Any) -> Any:
    if hasattr(o, "to_dict"):
        return o.to_dict()
    if isinstance(o, (set, tuple)):
        return list(o)
    try:
        import numpy as np

        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    return str(o)
