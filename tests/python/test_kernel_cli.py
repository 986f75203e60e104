"""The `mobmem kernel replay` command: output contract, determinism, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MOBMEM = [sys.executable, "-m", "mobmem"]


def run(*args, check=False):
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, cwd=ROOT, check=check)


def write(tmp_path, text, name="t.trace"):
    p = tmp_path / name
    p.write_text(text)
    return p


SMALL = """ram 32
swap zram 96 ratio=3
proc 1 app adj=0
map 1 heap anon 12000
map 1 code file app.so 1000 exec
touch 1 heap 0 12000 w
touch 1 code 0 1000
adj 1 900
proc 2 other
map 2 heap anon 6000
touch 2 heap 0 6000 w
touch 1 heap 0 4000
tick 20000
"""


def test_json_has_documented_keys_and_is_deterministic(tmp_path):
    p = write(tmp_path, SMALL)
    # lmkd off: with it on, the cached app is (rightly) killed before it refaults.
    a = run("kernel", "replay", str(p), "--json", "--set", "lmkd=off", check=True)
    b = run("kernel", "replay", str(p), "--json", "--set", "lmkd=off", check=True)
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    for k in ("vmstat", "meminfo", "kills", "per_process"):
        assert k in ja
    assert ja["vmstat"]["pswpout"] > 0 and ja["vmstat"]["workingset_refault_anon"] > 0
    ja.pop("wall"), jb.pop("wall")
    assert ja == jb
    assert {p["pid"] for p in ja["per_process"]} == {1, 2}
    with_lmkd = json.loads(run("kernel", "replay", str(p), "--json", check=True).stdout)
    assert [k["name"] for k in with_lmkd["kills"]] == ["app"]  # the cached (adj 900) one


def test_settings_change_results(tmp_path):
    p = write(tmp_path, SMALL)
    lo = json.loads(run("kernel", "replay", str(p), "--json", "--set", "kernel.swappiness=0", check=True).stdout)
    hi = json.loads(run("kernel", "replay", str(p), "--json", "--set", "kernel.swappiness=200", check=True).stdout)
    assert lo["config"]["swappiness"] == 0 and hi["config"]["swappiness"] == 200
    assert hi["vmstat"]["pgsteal_anon"] >= lo["vmstat"]["pgsteal_anon"]


def test_human_output_shows_counters(tmp_path):
    p = write(tmp_path, SMALL)
    r = run("kernel", "replay", str(p), check=True)
    assert "pswpout" in r.stdout and "MemFree" in r.stdout


@pytest.mark.parametrize(
    "text,needle",
    [
        ("proc 1 a\nfrobnicate 1\n", "t.trace:2: unknown keyword"),
        ("proc 1 a\nmap 1 h anon 4\ntouch 1 h 3 2\n", "t.trace:3: touch of pages [3, 5) beyond mapping"),
        ("touch 7 h 0\n", "t.trace:1: pid 7 used before its `proc` line"),
        ("ram many\n", "t.trace:1: ram size (MiB) must be a non-negative integer"),
        ("ram -4\n", "must not be negative"),
    ],
)
def test_bad_trace_is_a_clear_error_with_exit_2(tmp_path, text, needle):
    p = write(tmp_path, text)
    r = run("kernel", "replay", str(p))
    assert r.returncode == 2, r
    assert needle in r.stderr
    assert "Traceback" not in r.stderr + r.stdout


def test_bad_setting_and_device_and_missing_file(tmp_path):
    p = write(tmp_path, SMALL)
    r = run("kernel", "replay", str(p), "--set", "kernel.swappiness=300")
    assert r.returncode == 2 and "swappiness" in r.stderr and "Traceback" not in r.stderr
    r = run("kernel", "replay", str(p), "--set", "kernel.nonsense=1")
    assert r.returncode == 2 and "unknown setting" in r.stderr
    r = run("kernel", "replay", str(p), "--device", "nokia3310")
    assert r.returncode == 2 and "unknown device" in r.stderr and "pixel3" in r.stderr
    r = run("kernel", "replay", str(tmp_path / "missing.trace"))
    assert r.returncode == 2 and "no such trace file" in r.stderr


def test_device_profiles_load_and_apply(tmp_path):
    from mobmem.kernel import model

    p = write(tmp_path, SMALL)
    for name in model.device_names():
        res = model.replay(p, device=name)
        # The trace header wins over the device for RAM; the device's other settings apply.
        assert res["meminfo"]["MemTotal"] == 32 * 1024
    assert model.replay(p, device="pixel3")["config"]["semantics"] == "V4_19"
    assert model.replay(p, device="pixel7pro")["config"]["semantics"] == "V5_10"


def test_shipped_traces_parse():
    from mobmem import _core

    for t in sorted((ROOT / "traces").glob("*.trace")):
        ops, touches = _core.check_trace(str(t))
        assert ops > 0 and touches > 0, t


def test_out_dir_gets_json_and_csv(tmp_path):
    import csv

    p = write(tmp_path, SMALL)
    out = tmp_path / "res"
    run("kernel", "replay", str(p), "--out", str(out), "--set", "sample_interval_ms=10", check=True)
    res = json.loads((out / "result.json").read_text())
    rows = list(csv.DictReader((out / "timeseries.csv").open()))
    assert len(rows) == len(res["timeseries"]["time_ms"]) >= 5
    assert float(rows[-1]["time_ms"]) >= float(rows[0]["time_ms"])
    procs = list(csv.DictReader((out / "per_process.csv").open()))
    assert {r["pid"] for r in procs} == {"1", "2"}
    assert not list(out.glob("*.tmp"))
