"""`mobmem bench run` speaks hyperfine: -L/-P parameters, --setup/--prepare/--cleanup, and
--export-json/--export-markdown/--export-csv in hyperfine's formats. Where hyperfine is installed,
its own export of the same benchmark is the reference for the JSON's field names."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys

import pytest

MOBMEM = [sys.executable, "-m", "mobmem", "bench", "run", "-q", "--perf-events", "", "--warmup", "1"]


def _bench(tmp_path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, cwd=tmp_path)


def test_parameter_list_hooks_and_exports(tmp_path):
    log = tmp_path / "hooks.log"
    r = _bench(
        tmp_path,
        "--stop", "fixed:3",
        "--setup", f"echo setup {{n}} >> {log}",
        "--prepare", f"echo prepare {{n}} >> {log}",
        "--cleanup", f"echo cleanup {{n}} >> {log}",
        "-L", "n", "1,5",
        "--export-json", "out.json", "--export-markdown", "out.md", "--export-csv", "out.csv",
        "--", "sleep", "0.0{n}",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    # what hyperfine's scripts (plot_whisker, plot_parametrized, advanced_statistics) read
    d = json.loads((tmp_path / "out.json").read_text())
    assert [x["command"] for x in d["results"]] == ["sleep 0.01", "sleep 0.05"]
    for x, n in zip(d["results"], ("1", "5")):
        assert x["parameters"] == {"n": n} and len(x["times"]) == 3 and x["exit_codes"] == [0, 0, 0]
        assert x["min"] <= x["median"] <= x["max"] and x["min"] <= x["mean"] <= x["max"] and x["stddev"] >= 0
        assert x["min"] >= 0.01 * int(n)  # sleep's time is measured, the hooks' is not
    assert d["results"][1]["mean"] > d["results"][0]["mean"]  # 40 ms apart: more than a busy host's noise
    lines = log.read_text().split("\n")
    for n in ("1", "5"):
        assert lines.count(f"setup {n}") == 1 and lines.count(f"cleanup {n}") == 1
        assert lines.count(f"prepare {n}") == 4  # one warm-up + three measured runs
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert [row["command"] for row in rows] == ["sleep 0.01", "sleep 0.05"] and rows[0]["parameter_n"] == "1"
    md = (tmp_path / "out.md").read_text().splitlines()
    assert md[0].startswith("| Command | Mean [ms]") and "`sleep 0.05`" in md[3]


def test_parameter_scan(tmp_path):
    r = _bench(tmp_path, "--stop", "fixed:1", "--warmup", "0", "-P", "k", "1", "3", "--export-json", "scan.json", "--", "true", "{k}")
    assert r.returncode == 0, r.stderr
    d = json.loads((tmp_path / "scan.json").read_text())
    assert [x["parameters"]["k"] for x in d["results"]] == ["1", "2", "3"]


@pytest.mark.parametrize(
    "args, msg",
    [
        (["--prepare", "exit 3", "--", "true"], "--prepare command 'exit 3' failed with exit code 3"),
        (["-L", "n", "1,2", "--", "true"], "does not use the parameter {n}"),
        (["-L", "n", "1", "-P", "m", "1", "2", "--", "true", "{n}"], "not both"),
        (["-P", "k", "3", "1", "--", "true", "{k}"], "MAX is below MIN"),
    ],
)
def test_bad_hyperfine_options_are_one_line(tmp_path, args, msg):
    r = _bench(tmp_path, "--stop", "fixed:1", *args)
    assert r.returncode == 2, r.stderr
    err = [line for line in r.stderr.strip().splitlines() if not line.startswith(("warning", " ", "system", "CPU"))]
    assert len(err) == 1 and msg in err[0], r.stderr


def test_json_fields_match_hyperfines_own_export(tmp_path):
    hf = shutil.which("hyperfine")
    if not hf:
        pytest.skip("hyperfine is not installed (apt-get install hyperfine): the field names are checked above")
    subprocess.run([hf, "-N", "--runs", "2", "-L", "n", "1,2", "sleep 0.00{n}", "--export-json", "ref.json"], check=True, capture_output=True, cwd=tmp_path)
    r = _bench(tmp_path, "--stop", "fixed:2", "-L", "n", "1,2", "--export-json", "ours.json", "--", "sleep", "0.00{n}")
    assert r.returncode == 0, r.stderr
    ref = json.loads((tmp_path / "ref.json").read_text())
    ours = json.loads((tmp_path / "ours.json").read_text())
    assert ref.keys() == ours.keys()
    for a, b in zip(ref["results"], ours["results"]):
        assert set(a) == set(b) and a["command"] == b["command"] and a["parameters"] == b["parameters"]
