"""The worker processes of :mod:`mobmem.session.pool`: every result comes back once, progress
reports reach the parent, an error in a run is raised in the parent, and a worker that dies is a
one-line error at once — never a wait for ever — with no worker left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mobmem.errors import MobmemError
from mobmem.session import pool

ROOT = Path(__file__).resolve().parents[2]


def square(x: int) -> int:
    pool.report("ran", x, os.getpid())
    return x * x


def fail_on_three(x: int) -> int:
    if x == 3:
        raise MobmemError(f"bad input {x}")
    time.sleep(0.05)
    return x


def die_on_two(x: int) -> int:
    if x == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(30 if x == 1 else 0)  # the other worker is still running when it dies
    return x


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_every_result_once_and_progress_from_the_workers():
    got, reports = [], []
    pool.run_parallel(square, range(7), 2, got.append, on_report=lambda *a: reports.append(a))
    assert sorted(got) == [x * x for x in range(7)]
    assert sorted(r[1] for r in reports) == list(range(7))
    workers = {r[2] for r in reports}
    assert len(workers) == 2 and os.getpid() not in workers
    assert not any(_alive(w) for w in workers)


def test_an_error_in_a_run_is_raised_here_with_its_traceback():
    got = []
    with pytest.raises(MobmemError, match="bad input 3") as e:
        pool.run_parallel(fail_on_three, range(6), 2, got.append)
    assert "fail_on_three" in str(e.value.__cause__)  # the worker's traceback
    assert 3 not in got and not pool._LIVE


def test_a_worker_that_dies_is_an_error_not_a_wait():
    t0 = time.monotonic()
    with pytest.raises(MobmemError, match="killed by SIGKILL"):
        pool.run_parallel(die_on_two, [1, 2], 2, lambda r: None)
    assert time.monotonic() - t0 < 10  # the other worker (a 30 s run) was ended, not waited for
    assert not pool._LIVE


def test_a_function_of_the_main_script_is_refused():
    def local(x):
        return x

    local.__module__ = "__main__"
    with pytest.raises(TypeError, match="__main__"):
        pool.run_parallel(local, [1, 2], 2, lambda r: None)


SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from test_pool import square
from mobmem.session.pool import run_parallel

# At the top level, without `if __name__ == "__main__":`: the workers must not run this again.
out = []
run_parallel(square, range(4), 2, out.append)
print(sorted(out))
"""


def test_a_plain_script_without_a_main_guard(tmp_path):
    script = tmp_path / "plain.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    p = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[0, 1, 4, 9]" and p.stderr == ""
