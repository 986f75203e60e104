"""docs/python.md runs as written: its Python blocks are executed in order, in one namespace, in a
temporary directory (the files they write are checked)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_python_page_runs(tmp_path, monkeypatch):
    text = (ROOT / "docs/python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    monkeypatch.chdir(tmp_path)
    ns: dict = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"docs/python.md block {i + 1}", "exec"), ns)
    for f in ("session.png", "session.perfetto-trace", "run-dir/summary.json", "sweep-dir/sweep.csv"):
        assert (tmp_path / f).is_file(), f
    assert len(ns["df"]) == 2 and len(ns["sweep"]) == 2
