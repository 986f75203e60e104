"""The command line starts without the heavy libraries, reports progress, and stops cleanly on
Ctrl-C (SIGINT) and SIGTERM: exit 130, one line saying what was interrupted, no traceback, no
partial files; an interrupted ``mobmem compare`` keeps its finished runs for ``--resume``.

Nothing here is timed: the subprocess bounds are generous correctness bounds."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mobmem import session

ROOT = Path(__file__).resolve().parents[2]
TINY = "tests/python/data/session_tiny.toml"
HEAVY = ("numpy", "scipy", "pandas", "matplotlib")

# One synthetic app used for `seconds` simulated seconds, `times` times (a huge `times`: a
# session that would run for ever).
SCENARIO = """name = "{name}"
description = "test: one synthetic app used for a long time"
device = "pixel3"
seed = 1

[system]
collector = "cc"

[[apps]]
name = "synthetic:footprint=16m,objsize=512"

[[script]]
action = "launch"
app = "synthetic:footprint=16m,objsize=512"

[[script]]
action = "repeat"
times = {times}
steps = [{{ action = "use", seconds = {seconds} }}]
"""

# Runs the real entry point (`mobmem …`) and says "started" on stderr at the session's first
# progress report, or when the first run is handed to a worker process, so that the test signals
# a command that is under way.
DRIVER = """
import sys
from mobmem.cli import main, progress
from mobmem.session import pool

def tell():
    if not getattr(tell, "done", False):
        tell.done = True
        print("started", file=sys.stderr, flush=True)

update, give = progress.SimProgress.update, pool._Worker.give

def first_report(self, *args):
    update(self, *args)
    tell()

def first_run(self, *args):
    give(self, *args)
    tell()

progress.SimProgress.update = first_report
pool._Worker.give = first_run
sys.argv = ["mobmem", *sys.argv[1:]]
main()
"""


def scenario(tmp_path: Path, name: str, times: int, seconds: float) -> Path:
    p = tmp_path / f"{name}.toml"
    p.write_text(SCENARIO.format(name=name, times=times, seconds=seconds))
    return p


def modules_imported(code: str) -> set[str]:
    p = subprocess.run(
        [sys.executable, "-c", code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"], capture_output=True, text=True, cwd=ROOT, check=True
    )
    return {m.split(".")[0] for m in json.loads(p.stdout.splitlines()[-1])}


def test_importing_the_cli_loads_no_heavy_library():
    mods = modules_imported("import mobmem.cli")
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))


@pytest.mark.parametrize("args", [[], ["run"], ["compare"], ["demo"], ["bench", "session"], ["bench", "run"], ["lbo"], ["kernel", "replay"], ["runtime"]])
def test_help_loads_no_heavy_library(args):
    """What `mobmem … --help` imports (python -X importtime): none of the heavy libraries, and
    not pydantic (typer 0.29 imports it to parse any sub-command's arguments)."""
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "mobmem", *args, "--help"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Usage" in p.stdout
    imported = {line.split("|")[-1].strip().split(".")[0] for line in p.stderr.splitlines() if line.startswith("import time:")}
    assert imported, p.stderr[:500]
    heavy = imported & {*HEAVY, "pydantic"}
    assert not heavy, f"`mobmem {' '.join(args)} --help` imports {sorted(heavy)}"


def test_progress_reports_increasing_simulated_time():
    seen = []
    res = session.run(TINY, progress=lambda done, est: seen.append((done, est)))
    assert len(seen) >= 2, seen
    done = [d for d, _ in seen]
    assert all(a < b for a, b in zip(done, done[1:])), done
    assert 0 <= done[0] and done[-1] <= res["sim_seconds"]
    assert all(e > 0 for _, e in seen)
    # The estimate counts the script's use time (6 s here) and, once launches are done, theirs.
    assert seen[0][1] >= 6.0 and abs(seen[-1][1] - res["sim_seconds"]) < 0.25 * res["sim_seconds"], (seen[-1], res["sim_seconds"])


# The entry point with plain progress lines every 0.2 s instead of every PLAIN_EVERY_S.
PLAIN = """
import sys
from mobmem.cli import main, progress

progress.PLAIN_EVERY_S = 0.2
sys.argv = ["mobmem", *sys.argv[1:]]
main()
"""


def test_a_piped_run_prints_plain_progress_lines(tmp_path):
    """stderr not a terminal (`mobmem run X 2>&1 | cat`, a log file): plain lines, no bar, at a
    modest rate; --json output redirected: none."""
    from mobmem.cli import progress

    assert progress.PLAIN_EVERY_S >= 5  # a line every few seconds, not a flood
    sc = scenario(tmp_path, "medium", 1, 120.0)
    p = subprocess.run([sys.executable, "-c", PLAIN, "run", str(sc)], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    line = re.compile(r"^medium: ([\d,.]+) of ~([\d,]+) simulated s \((\d+)%\), ([\d,]+) s wall$")
    lines = p.stderr.splitlines()
    assert len(lines) >= 2 and all(line.match(x) for x in lines), p.stderr
    done = [float(line.match(x).group(1).replace(",", "")) for x in lines]
    assert all(a < b for a, b in zip(done, done[1:])), done
    assert "simulated" in p.stdout and "\x1b" not in p.stderr
    quiet = subprocess.run([sys.executable, "-c", PLAIN, "run", TINY, "--json"], cwd=ROOT, capture_output=True, text=True)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr


def test_run_lines_without_a_bar_are_printed_once_as_they_are(capsys):
    """No bar (stderr not a terminal): each finished run's line once, whole — not wrapped at 80
    columns as rich does for a file."""
    from mobmem.cli.progress import RunsProgress

    lines = [f"[{i}/3] caching_capacity_synthetic_large / stock seed {i}: 48 simulated s in 16.7 s (a line longer than 80)" for i in (1, 2, 3)]
    with RunsProgress("fidelity", 3, False) as bar:
        for ln in lines:
            bar.advance()
            bar.log(ln)
    out, err = capsys.readouterr()
    assert out == "" and err.splitlines() == lines


def test_an_exception_in_the_progress_callback_stops_the_run(tmp_path):
    calls = []

    class Stop(Exception):
        pass

    def progress(done, est):
        calls.append(done)
        raise Stop("enough")

    with pytest.raises(Stop, match="enough"):
        session.run(scenario(tmp_path, "forever", 1_000_000_000, 1.0), progress=progress)
    assert len(calls) == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_a_long_run_without_traceback_or_files(tmp_path, sig):
    long = scenario(tmp_path, "forever", 1_000_000_000, 1.0)
    out = tmp_path / "out"
    p = subprocess.Popen(
        [sys.executable, "-c", DRIVER, "run", str(long), "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert p.stderr.readline() == "started\n"
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=20)
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted: forever at "), stderr
    assert "simulated s" in lines[0] and f"nothing written to {out}" in lines[0]
    assert not out.exists() or not any(out.iterdir())


def test_compare_interrupted_then_resumed(tmp_path):
    sc = scenario(tmp_path, "medium", 1, 30.0)
    out = tmp_path / "c"
    args = [sys.executable, "-m", "mobmem", "compare", str(sc), "--systems", "stock,cmc", "--seeds", "2", "--jobs", "2", "--out", str(out)]
    p = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stderr.readline()
        assert first.startswith("[1/4] "), first
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)
        # Read through the pipe objects, not communicate(): readline() may already have buffered
        # a second progress line that arrived with the first, which communicate() would not see.
        stdout, stderr = p.stdout.read(), p.stderr.read()
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr and stdout == ""
    # The first line was read above; others may have finished before the signal arrived.
    finished = 1 + len(re.findall(r"^\[\d/4\] ", stderr, re.M))
    assert "interrupted: compare medium after" in stderr and "--resume" in stderr, stderr
    kept = sorted(out.glob("runs/*/seed-*/summary.json"))
    assert 1 <= len(kept) == finished < 4, (kept, stderr)
    assert not list(out.glob("compare.*")) and not list(out.rglob("*.tmp"))

    r = subprocess.run([*args, "--resume", "--json"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("reused") == len(kept)
    doc = json.loads(r.stdout)
    assert [(x["system"], x["seed"]) for x in doc["runs"]] == [("stock", 1), ("cmc", 1), ("stock", 2), ("cmc", 2)]
    assert len(list(out.glob("runs/*/seed-*/summary.json"))) == 4 and (out / "compare.json").is_file()


def test_nested_deferred_interrupts_hold_the_signal_until_the_outermost_block_ends():
    import os

    from mobmem.files import deferred_interrupts

    steps = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupts():
            with deferred_interrupts():  # e.g. writing a run's files inside "write and report"
                os.kill(os.getpid(), signal.SIGINT)
                steps.append("inner")
            steps.append("after inner")  # the report still happens
    assert steps == ["inner", "after inner"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def _aggregates(doc: dict) -> tuple:
    """What a comparison found, without wall-clock times."""
    runs = [
        (r["system"], r["seed"], json.dumps({k: v for k, v in r["summary"].items() if "wall" not in k and k != "sim_speed"}, sort_keys=True))
        for r in doc["runs"]
    ]
    return json.dumps(doc["aggregate"], sort_keys=True), runs


def test_compare_killed_outright_then_resumed_gives_the_uninterrupted_result(tmp_path):
    """kill -9 gives no chance to clean up: --resume must still reuse exactly the finished runs
    (written atomically, so never torn) and end with the same comparison as a run never killed."""
    sc = scenario(tmp_path, "medium", 1, 30.0)
    base = [sys.executable, "-m", "mobmem", "compare", str(sc), "--systems", "stock,cmc", "--seeds", "2", "--jobs", "1", "--json"]
    killed = tmp_path / "killed"
    p = subprocess.Popen([*base, "--out", str(killed)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stderr.readline().startswith("[1/4] ")
        p.kill()
        p.wait(timeout=20)
    finally:
        p.kill()
    assert 1 <= len(list(killed.glob("runs/*/seed-*/summary.json"))) < 4
    resumed = subprocess.run([*base, "--out", str(killed), "--resume"], cwd=ROOT, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    whole = subprocess.run([*base, "--out", str(tmp_path / "whole")], cwd=ROOT, capture_output=True, text=True)
    assert whole.returncode == 0, whole.stderr
    assert _aggregates(json.loads(resumed.stdout)) == _aggregates(json.loads(whole.stdout))


def _children(pid: int) -> set[int]:
    """The processes ``pid`` started (its worker processes), from /proc."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"  # a zombie: dead
    except OSError:
        return True


# Commands that run sessions, each with a short workload: (arguments, runs in worker processes).
# {sc} is a scenario of short runs.
DOUBLE = {
    "run": (["run", "{long}"], False),
    "compare": (["compare", "{sc}", "--systems", "stock,cmc", "--seeds", "2", "--jobs", "2"], True),
    "sweep": (["sweep", "{sc}", "--grid", "kernel.swappiness=60,100,140", "--jobs", "2"], True),
    "report": (["report", "--study", "thesis", "--quick", "--only", "cms", "--jobs", "2"], True),
    "fidelity": (["fidelity", "background-gc-objects", "--quick", "--jobs", "2"], True),
    "demo": (["demo"], True),
}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see the worker processes")
@pytest.mark.parametrize("gap", [0.0, 0.02], ids=["0ms", "20ms"])
@pytest.mark.parametrize("command", sorted(DOUBLE))
def test_two_quick_sigints_end_the_command_and_every_worker(tmp_path, command, gap):
    """A double Ctrl-C (or `timeout -s INT` after one): the second signal lands while the first
    is being handled — ending the workers, printing the line. The command still ends every worker
    process and exits 130 within a second, with the one line saying what was interrupted."""
    import time

    args, workers = DOUBLE[command]
    sc, long = scenario(tmp_path, "medium", 1, 600.0), scenario(tmp_path, "forever", 1_000_000_000, 1.0)
    argv = [a.format(sc=sc, long=long) for a in args]
    p = subprocess.Popen([sys.executable, "-c", DRIVER, *argv], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stderr.readline() == "started\n"
        if workers:
            time.sleep(1.0)  # the workers are into their runs
        children = _children(p.pid)
        assert len(children) == (2 if workers else 0), children
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        time.sleep(gap)
        p.send_signal(signal.SIGINT)
        p.wait(timeout=30)
        took = time.monotonic() - t0
        stderr = p.stderr.read()
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    assert stderr.strip().splitlines()[-1].startswith("interrupted"), stderr
    deadline = time.monotonic() + 1.0
    while not all(_gone(c) for c in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(c) for c in children), [c for c in children if not _gone(c)]
    assert took < 1.0, f"exited {took:.2f} s after the first signal"
