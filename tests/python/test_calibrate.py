"""`mobmem calibrate`: the plan each device fits, the loss and the knob grid, bad input, and a quick
fit end to end — resumed, it reuses every run and writes the same file."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
from mobmem.errors import MobmemError
from mobmem.session import calibrate as cal
from mobmem.session import fidelity as fid

MOBMEM = [sys.executable, "-m", "mobmem"]


def _mobmem(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, timeout=900)


def test_every_plan_fits_known_knobs_to_fit_facts_of_its_own_device():
    knobs = cal.knobs()
    for k in knobs.values():
        assert k.low < k.high and k.low <= k.default <= k.high and k.source, k
    for device in cal.devices_table():
        p = cal.plan(device)
        assert p.knobs and p.split
        assert all(f.set == "fit" and fid.scenario_device(f.scenario) == device for f in p.facts)
        # The held-out facts of the device are never among the facts the fit sees.
        held = {f.id for f in fid.for_device(fid.load(), device) if f.set == "held-out"}
        assert held and not held & {f.id for f in p.facts}


def test_a_trial_sets_every_knob_so_no_earlier_calibration_leaks_in():
    s = cal.settings_of({"app_native_scale": 2.0})
    keys = [x.split("=")[0] for x in s]
    assert sorted(keys) == sorted(f"calibration.{k}" for k in cal.knobs())
    assert "calibration.app_native_scale=2" in s


def test_loss_weighs_groups_equally_and_missing_facts_as_full_errors():
    rows = [
        {"group": "a", "rel_error": 0.1},
        {"group": "a", "rel_error": -0.3},
        {"group": "b", "rel_error": None},
    ]
    assert cal.loss(rows) == pytest.approx((0.01 + 0.09) / 2 + cal.MISSING_ERROR**2)


def test_loss_caps_each_facts_error():
    over = [{"group": "a", "rel_error": 1.64}, {"group": "a", "rel_error": -3.0}]
    assert cal.loss(over) == pytest.approx(cal.ERROR_CAP**2)
    assert cal.loss([{"group": "a", "rel_error": -0.5}]) == pytest.approx(0.25)


def test_knob_values_lie_on_the_grid_and_in_the_range():
    k = cal.Knob("x", 0.05, 0.8, 0.35, "", "", "")
    assert cal._grid(k, 0.3333333) == 0.33
    assert cal._grid(k, 0.001) == 0.05 and cal._grid(k, 9) == 0.8


def test_bad_requests_are_one_line_errors(tmp_path):
    with pytest.raises(MobmemError, match=r"unknown device 'pixel7pro' .*for calibration"):
        cal.plan("pixel7pro")
    r = _mobmem("calibrate", "--device", "p9", "--quick")
    assert r.returncode == 2 and "--quick writes no shipped calibration" in r.stderr and "Traceback" not in r.stderr
    r = _mobmem("calibrate")
    assert r.returncode == 2 and "--device is required" in r.stderr
    r = _mobmem("calibrate", "--device", "p9", "--trials", "0", "--out", str(tmp_path / "o"), "--quick")
    assert r.returncode == 2 and "--trials must be at least 1" in r.stderr


def test_a_quick_fit_writes_its_file_and_a_resumed_one_the_same(tmp_path):
    out = tmp_path / "cal"
    r = _mobmem("calibrate", "--device", "p9", "--quick", "--trials", "2", "--out", str(out), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    first = (out / "p9.toml").read_text()
    doc = tomllib.loads(first)
    p = cal.plan("p9")
    # The file records the knobs it fitted (on the grid, in range), every fit fact and the command.
    assert set(doc["knobs"]) == {k.name for k in p.knobs}
    for k in p.knobs:
        v = doc["knobs"][k.name]
        assert k.low <= v <= k.high and abs(v / cal.STEP - round(v / cal.STEP)) < 1e-6
    assert [t["fact"] for t in doc["target"]] == [f.id for f in p.facts]
    assert doc["command"] == "mobmem calibrate --device p9 --seed 1 --trials 2 --quick"
    assert "trial 1/2" in r.stderr and "trial 2/2" in r.stderr
    # The first trial is the defaults.
    import json

    rec = json.loads((out / "calibration.json").read_text())
    assert rec["history"][0]["knobs"] == {k.name: cal._grid(k, k.default) for k in p.knobs}
    assert rec["reused_runs"] == 0
    # Resumed (another --jobs): every run reused, the same trials, the same file.
    again = _mobmem("calibrate", "--device", "p9", "--quick", "--trials", "2", "--out", str(out), "--resume", "--jobs", "1")
    assert again.returncode == 0, again.stderr
    assert (out / "p9.toml").read_text() == first
    rec2 = json.loads((out / "calibration.json").read_text())
    assert rec2["history"] == rec["history"] and rec2["reused_runs"] > 0
    # Carried elsewhere by its run record alone (a line per run, not the runs' directories): the
    # same trials and the same file, no run redone.
    import shutil

    lines = (out / "runs.jsonl").read_text().splitlines()
    # One line per distinct run: two trials' runs (the check of the best trial ran its own again).
    assert len(lines) == len({json.dumps(json.loads(x)["key"], sort_keys=True) for x in lines}) == 2 * len(fid.runs_needed(p.facts))
    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy(out / "runs.jsonl", moved / "runs.jsonl")
    third = _mobmem("calibrate", "--device", "p9", "--quick", "--trials", "2", "--out", str(moved), "--resume", "--jobs", "1")
    assert third.returncode == 0, third.stderr
    assert (moved / "p9.toml").read_text() == first
    rec3 = json.loads((moved / "calibration.json").read_text())
    assert rec3["history"] == rec["history"] and rec3["reused_runs"] == rec2["reused_runs"]
    assert not [ln for ln in third.stderr.splitlines() if ln.strip().startswith("trial") and ln.endswith(" done")]
    # A last line cut short (a killed process) is dropped, its run redone; the record stays valid.
    (moved / "runs.jsonl").write_text("\n".join(lines) + "\n" + lines[0][:40])
    cut = _mobmem("calibrate", "--device", "p9", "--quick", "--trials", "2", "--out", str(moved), "--resume", "--jobs", "1")
    assert cut.returncode == 0, cut.stderr
    assert (moved / "p9.toml").read_text() == first and (moved / "runs.jsonl").read_text().endswith("\n")
    # A record that is not one names its file and line.
    (moved / "runs.jsonl").write_text(lines[0] + "\n{not json\n")
    bad = _mobmem("calibrate", "--device", "p9", "--quick", "--trials", "2", "--out", str(moved), "--resume")
    assert bad.returncode != 0 and "runs.jsonl:2: not a run record" in bad.stderr and "Traceback" not in bad.stderr
    # A session on the device reads a calibration file's knobs: the result records them.
    from mobmem import session

    res = session.run("fg_refault_A", [f"calibration.{k}={v}" for k, v in doc["knobs"].items()] + ["session.time_scale=0.01"])
    for k, v in doc["knobs"].items():
        assert res["system"]["calibration"][k] == pytest.approx(v)
