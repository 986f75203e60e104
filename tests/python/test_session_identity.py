"""`mobmem bench identical`: results before and after a change compared field by field."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mobmem.errors import MobmemError
from mobmem.session import identity

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests/python/data/session_tiny.toml")
RUNS = [("tiny", TINY, ("session.time_scale=0.2",)), ("tiny-ms", TINY, ("session.time_scale=0.2", "system.collector=ms"))]


def test_saved_results_compare_identical_and_a_changed_field_is_named(tmp_path):
    res = identity.record(RUNS)
    assert set(res) == {"tiny", "tiny-ms"} and "wall_seconds" not in res["tiny"]
    identity.save(tmp_path, res)
    assert identity.differences(tmp_path, identity.record(RUNS, jobs=2)) == {}
    saved = json.loads((tmp_path / "tiny-ms.json").read_text())
    saved["gc"]["count"] += 1
    (tmp_path / "tiny-ms.json").write_text(json.dumps(saved))
    d = identity.differences(tmp_path, res)
    assert list(d) == ["tiny-ms"] and d["tiny-ms"][0].startswith(".gc.count: ")
    (tmp_path / "tiny.json").unlink()
    with pytest.raises(MobmemError, match="tiny.json"):
        identity.differences(tmp_path, res)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mobmem", "bench", "identical", *args], capture_output=True, text=True, cwd=ROOT)


def test_command_saves_then_checks(tmp_path):
    ref = tmp_path / "ref"
    p = _cli("--scenario", TINY, "--save", str(ref), "--jobs", "1")
    assert p.returncode == 0, p.stderr
    p = _cli("--scenario", TINY, "--check", str(ref), "--jobs", "1")
    assert p.returncode == 0 and "1 of 1 runs identical" in p.stdout, p.stdout + p.stderr
    f = ref / "session_tiny.json"
    saved = json.loads(f.read_text())
    saved["seed"] += 1
    f.write_text(json.dumps(saved))
    p = _cli("--scenario", TINY, "--check", str(ref), "--jobs", "1")
    assert p.returncode == 1 and "DIFFERENT" in p.stdout and ".seed:" in p.stdout
    p = _cli("--scenario", TINY)
    assert p.returncode != 0 and "exactly one of --save" in p.stderr
