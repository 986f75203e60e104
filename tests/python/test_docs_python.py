"""docs/python.md runs as written: its Python blocks, saved in order as one plain script (no
``if __name__ == "__main__":`` guard, as a reader would save them), run with ``python`` in a
temporary directory; the files they write are checked. The sessions in worker processes
(``jobs=2``) must not re-run the script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_python_page_runs_as_a_script(tmp_path):
    text = (ROOT / "docs/python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) >= 4
    script = tmp_path / "example.py"
    script.write_text("\n".join(blocks) + "\nprint('example done', len(df), len(sweep))\n")
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    assert p.stdout.count("example done") == 1 and p.stdout.strip().endswith("example done 2 2"), p.stdout[-2000:]
    for f in ("session.png", "session.perfetto-trace", "run-dir/summary.json", "sweep-dir/sweep.csv"):
        assert (tmp_path / f).is_file(), f
