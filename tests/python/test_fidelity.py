"""`mobmem fidelity`: facts file checks, metric definitions, and a short run cross-checked against
separate `mobmem run` sessions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from mobmem.errors import MobmemError
from mobmem.session import fidelity as fid

MOBMEM = [sys.executable, "-m", "mobmem"]

GOOD = """
[[fact]]
id = "a"
claim = "c"
published = 10
unit = "apps"
source = "s"
scenario = "demo_caching"
system = "stock"
metric = "cached_max"
set = "held-out"
"""


def _mobmem(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, timeout=600)


def test_shipped_facts_load_and_name_real_scenarios_systems_and_metrics():
    facts = fid.load()
    assert len({f.id for f in facts}) == len(facts) >= 7
    for f in facts:
        assert f.metric in fid.METRICS and set(f.params) == set(fid.METRICS[f.metric].params)
        assert (f.published > 0 or (f.published == 0 and f.full_scale > 0)) and f.source and f.set in fid.SETS
    # Every device with a calibration plan has facts in both sets: the held-out ones check its fit.
    from mobmem.session import calibrate as cal

    for device in cal.devices_table():
        sets = {f.set for f in fid.for_device(facts, device)}
        assert sets == {"fit", "held-out"}, (device, sets)


def _res(alive: list[int]) -> dict:
    return {"cached_apps": {"alive_after_launch": alive}}


def test_curve_metrics_read_the_count_after_each_launch():
    assert fid.first_drop(_res([1, 2, 3, 3, 2, 4])) == 5
    # A curve that never drops: one past the last launch (the run ended before a drop).
    assert fid.first_drop(_res([1, 2, 3])) == 4
    assert fid.first_drop(_res([])) is None
    assert fid.curve_level(_res([1, 2, 3, 5]), 3) == 4
    assert fid.curve_level(_res([1, 2]), 5) is None


def test_share_metrics():
    res = {
        "launches": [
            {"app": "a", "kind": "hot", "objects": {"near_root": 5, "foreground_young": 3, "other": 2}},
            {"app": "a", "kind": "hot", "warmup": True, "objects": {"near_root": 100, "foreground_young": 0, "other": 0}},
            {"app": "b", "kind": "cold", "objects": {"near_root": 0, "foreground_young": 0, "other": 0}},
        ],
        "refaults": {"total": 40, "by_app": {"a": 4, "b": 10}, "activate_file": 20, "activate_file_by_app": {"a": 4, "b": 3}},
        "ratios": {"refault_ratio": 0.25},
        "per_app": {"a": {"java_share_fg": 12.5}, "b": {"java_share_fg": None}},
    }
    assert fid.launch_objects_share(res, "near_root+foreground_young") == 80.0
    assert fid.launch_objects_share(res, "near_root") == 50.0
    assert fid.fg_refault_share(res) == 25.0  # the last launch's app (b): 10 of 40
    assert fid.fg_activation_share(res) == 15.0  # b's activating file refaults: 3 of 20
    assert fid.fg_activation_share({"launches": res["launches"], "refaults": {"total": 40}}) is None
    # No activating refault at all: the foreground app's share of none reads 0 (a miss, not "not measured").
    assert fid.fg_activation_share({"launches": res["launches"], "refaults": {"activate_file": 0}}) == 0.0
    assert fid.fg_activation_share({"launches": [], "refaults": {"activate_file": 0}}) is None
    # The case (from the first launch): its own counts, not the whole run's.
    case = {"ratios": {"direct_reclaim_ratio": 0.02}, "refaults": {"activate_file": 6, "activate_file_by_app": {"b": 3}}}
    assert fid.case_ratio({**res, "case": case}, "direct_reclaim_ratio") == 2.0 and fid.case_ratio(res, "direct_reclaim_ratio") is None
    assert fid.case_fg_activation_share({**res, "case": case}) == 50.0 and fid.case_fg_activation_share(res) is None
    assert fid.ratio(res, "refault_ratio") == 25.0 and fid.ratio(res, "nope") is None
    # Nothing evicted: the simulator writes the ratios over evicted pages as 0 (0 of 0), read as 0 %.
    assert fid.case_ratio({"case": {"ratios": {"direct_reclaim_ratio": 0.0}}}, "direct_reclaim_ratio") == 0.0
    assert fid.case_ratio({"case": {"ratios": {"refault_ratio": None}}}, "refault_ratio") is None
    assert fid.java_share(res, "a") == 12.5 and fid.java_share(res, "b") is None


@pytest.mark.parametrize(
    "edit, says",
    [
        (('metric = "cached_max"', 'metric = "cached_min"'), "unknown metric 'cached_min'"),
        (('scenario = "demo_caching"', 'scenario = "nope"'), "unknown scenario 'nope'"),
        (('system = "stock"', 'system = "stonk"'), "unknown system 'stonk'"),
        (("published = 10", "published = -3"), "published: expected a positive number"),
        (("published = 10", "published = 0"), "published: expected a positive number (or 0 with a full_scale), got 0"),
        (("published = 10", "published = 0\nfull_scale = -1"), "full_scale: expected a positive number, got -1"),
        (("published = 10", "published = 10\nfull_scale = 20"), "full_scale: only a fact published as 0 takes one"),
        (('unit = "apps"\n', ""), "missing field(s) unit"),
        (('metric = "cached_max"', 'metric = "cached_max"\napp = "twitter"'), "takes no parameters; got app"),
        (('metric = "cached_max"', 'metric = "launch"\napp = "twitter"'), "takes app, kind, stat; got app"),
        (('metric = "cached_max"', 'metric = "cold_io_share"\nquantile = 1.5'), "quantile: 1.5 is not a number from 0 to 1"),
        (('set = "held-out"', 'set = "training"'), "set: expected one of fit, held-out, got 'training'"),
        (('set = "held-out"\n', ""), "missing field(s) set"),
        (('metric = "cached_max"', 'metric = "curve_level"\nfrom_launch = 0'), "from_launch: expected a launch number from 1, got 0"),
    ],
)
def test_a_bad_fact_is_named_with_file_and_line(tmp_path, edit, says):
    p = tmp_path / "facts.toml"
    p.write_text(GOOD.replace(*edit))
    with pytest.raises(MobmemError) as e:
        fid.load(p)
    assert f"{p}:2: fact a" in str(e.value) and says in str(e.value), str(e.value)


def test_a_fact_published_as_zero_is_scored_against_its_full_scale(tmp_path):
    p = tmp_path / "facts.toml"
    p.write_text(GOOD.replace("published = 10", "published = 0\nfull_scale = 20"))
    (f,) = fid.load(p)
    key = (f.scenario, f.system)
    res = {"cached_apps": {"alive_after_launch": [1, 5, 4], "alive_after_launch_max": 5}}
    (row,) = fid.evaluate([f], {(*key, 1): res, (*key, 2): {"cached_apps": {"alive_after_launch": [1, 1], "alive_after_launch_max": 1}}})
    # Mean 3 against 0: 3 / 20 of the full scale, within the held-out ±30 %; the row says the scale.
    assert row["mean"] == 3.0 and row["rel_error"] == pytest.approx(0.15) and row["within"] is True and row["full_scale"] == 20
    assert fid.case_count({"case": {"direct_reclaims": 7}}, "direct_reclaims") == 7.0 and fid.case_count({}, "direct_reclaims") is None


def test_duplicate_ids_and_empty_files_are_refused(tmp_path):
    p = tmp_path / "facts.toml"
    p.write_text(GOOD + GOOD)
    with pytest.raises(MobmemError, match=r"facts.toml:13: fact a: id: 'a' is used twice"):
        fid.load(p)
    p.write_text("# nothing\n")
    with pytest.raises(MobmemError, match="no \\[\\[fact\\]\\] entries"):
        fid.load(p)


def test_metrics_read_the_result_and_report_missing_values_as_missing():
    res = {
        "cached_apps": {"alive_after_launch": [1, 2, 3, 3, 2], "alive_after_launch_max": 3, "first_kill_launch": 2},
        "launch_stats": {"hot": {"twitter": {"n": 2, "mean": 250.0, "p90": 300.0}}, "cold": {}},
        "gcs": [
            {"app": "x", "state": "bg", "type": "full", "objects_touched": 100},
            {"app": "x", "state": "bg", "type": "full", "objects_touched": 300},
            {"app": "x", "state": "fg", "type": "full", "objects_touched": 9999},
        ],
    }
    m = fid.METRICS
    assert m["cached_at_first_kill"].fn(res) == 3.0  # alive after the last launch before the first kill
    assert m["cached_max"].fn(res) == 3.0
    assert m["launch"].fn(res, app="twitter", kind="hot", stat="p90") == 300.0
    assert m["launch"].fn(res, app="twitter", kind="cold", stat="mean") is None
    assert m["gc_objects"].fn(res, app="x", state="bg", type="full") == 200.0
    assert m["gc_objects"].fn(res, app="x", state="bg", type="sticky") is None
    res["cached_apps"]["first_kill_launch"] = None
    assert m["cached_at_first_kill"].fn(res) is None


def test_cold_io_share_is_a_quantile_across_apps_of_each_apps_mean_share():
    def launch(app, kind, ttid, file_ms=0.0, wait_ms=0.0, swap_ms=0.0, zram_ms=0.0):
        bd = {"file_read_wait_ms": wait_ms, "major_fault_file_ms": file_ms, "major_fault_flash_swap_ms": swap_ms, "major_fault_zram_ms": zram_ms}
        return {"app": app, "kind": kind, "ttid_ms": ttid, "breakdown": bd}

    res = {
        "launches": [
            launch("a", "cold", 1000.0, file_ms=100.0),  # a: 10 %, then 30 %: mean 20 %
            launch("a", "cold", 1000.0, file_ms=200.0, wait_ms=100.0),
            launch("a", "hot", 100.0, file_ms=100.0),  # hot launches do not count
            launch("b", "cold", 500.0, swap_ms=200.0, zram_ms=300.0),  # b: 40 % (zram is not I/O)
            launch("c", "cold", 2000.0),  # c: 0 %
            {**launch("c", "cold", 1000.0, file_ms=900.0), "warmup": True},  # a warm-up launch does not count
        ]
    }
    f = fid.METRICS["cold_io_share"].fn
    assert f(res, quantile=0.5) == pytest.approx(20.0)
    assert f(res, quantile=0.0) == pytest.approx(0.0)
    assert f(res, quantile=1.0) == pytest.approx(40.0)
    assert f(res, quantile=0.25) == pytest.approx(10.0)
    assert f({"launches": [launch("a", "hot", 100.0)]}, quantile=0.5) is None


def test_bad_arguments_get_one_line_errors():
    for args, says in [
        (["bogus-fact"], "unknown fact 'bogus-fact'"),
        (["--seeds", "0"], "--seeds must be at least 1"),
        (["--seeds", "-2"], "--seeds must be at least 1"),
        (["--time-scale", "0"], "--time-scale must be a positive number"),
        (["--jobs", "0"], "--jobs must be at least 1"),
        (["--resume"], "--resume needs --out"),
    ]:
        r = _mobmem("fidelity", *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and says in lines[0], (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_list_names_every_fact():
    r = _mobmem("fidelity", "--list")
    assert r.returncode == 0, r.stderr
    assert [ln.split(":")[0] for ln in r.stdout.splitlines()] == [f"{f.id} ({f.set})" for f in fid.load()]


def test_a_short_run_reports_what_separate_sessions_measure(tmp_path):
    """The cheapest fact, --quick: the table's values are the metric of the same sessions run
    with `mobmem run`, and the report page carries the command and every value."""
    report, out = tmp_path / "fidelity.md", tmp_path / "runs"
    r = _mobmem("fidelity", "background-gc-objects", "--quick", "--json", "--report", str(report), "--out", str(out), "--jobs", "auto")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    # The runs were kept; resumed, the command reuses them all and says the same.
    report2 = tmp_path / "again.md"
    again = _mobmem("fidelity", "background-gc-objects", "--quick", "--json", "--out", str(out), "--resume", "--report", str(report2))
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("reused") == fid.QUICK_SEEDS, again.stderr
    doc2 = json.loads(again.stdout)
    assert doc2["facts"] == doc["facts"]
    # The page says its runs were reused (its own wall time is not theirs).
    assert (doc["reused_runs"], doc2["reused_runs"]) == (0, fid.QUICK_SEEDS) and all(r["reused"] for r in doc2["runs"])
    assert f"{fid.QUICK_SEEDS} of {fid.QUICK_SEEDS} runs were reused" in report2.read_text()
    assert "were reused" not in report.read_text()
    (row,) = doc["facts"]
    assert doc["seeds"] == fid.QUICK_SEEDS and doc["time_scale"] == fid.QUICK_TIME_SCALE
    fact = fid.select(fid.load(), ["background-gc-objects"])[0]
    from mobmem import session

    first = session.scenario_seed(session.resolve_scenario(fact.scenario))
    expected = []
    for k in range(fid.QUICK_SEEDS):
        s = _mobmem("run", fact.scenario, "--system", fact.system, "--seed", str(first + k), "--set", f"session.time_scale={fid.QUICK_TIME_SCALE}", "--json")
        assert s.returncode == 0, s.stderr
        expected.append(fact.measure(json.loads(s.stdout)))
    assert row["values"] == expected and None not in expected
    assert row["mean"] == pytest.approx(sum(expected) / len(expected))
    assert row["rel_error"] == pytest.approx((row["mean"] - fact.published) / fact.published)
    assert row["within"] == (abs(row["rel_error"]) <= fact.tolerance)
    text = report.read_text()
    assert "mobmem fidelity background-gc-objects --quick --json --report" in text and "--jobs auto" in text
    assert f"{row['mean']:,.0f}" in text and "shortened run" in text


def test_interrupted_run_keeps_its_finished_runs_and_resumes(tmp_path):
    """Ctrl-C after the first of the quick runs: exit 130, one line naming what was kept; the same
    command with --resume reuses that run and does the other."""
    import signal

    out = tmp_path / "runs"
    args = [*MOBMEM, "fidelity", "background-gc-objects", "--quick", "--jobs", "1", "--out", str(out)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stderr.readline()
        assert first.startswith(f"[1/{fid.QUICK_SEEDS}] "), first
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)
        stderr = p.stderr.read()
    finally:
        p.kill()
    assert p.returncode == 130 and "Traceback" not in stderr, stderr
    assert f"interrupted: fidelity after 1 of {fid.QUICK_SEEDS} runs; the finished ones are in {out}/" in stderr, stderr
    r = _mobmem(*args[len(MOBMEM) :], "--resume")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("reused") == 1, r.stderr
    # The run record alone (runs.jsonl, a line per run) carries both runs to another directory.
    import shutil

    moved = tmp_path / "moved"
    moved.mkdir()
    shutil.copy(out / "runs.jsonl", moved / "runs.jsonl")
    again = _mobmem(*args[len(MOBMEM) : -1], str(moved), "--resume", "--json")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("reused") == fid.QUICK_SEEDS, again.stderr
    assert not list(moved.glob("*/runs")), "no run was redone"


def test_every_fact_the_page_finds_off_has_its_explanation():
    """The committed report page links each fact outside its tolerance to the section of
    fidelity-gaps.md that says why; every such section exists (a heading named by the fact id)."""
    import re
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    page, gaps = (docs / "fidelity.md").read_text(), (docs / "fidelity-gaps.md").read_text()
    headings = {re.sub(r"[`*]", "", h).strip().lower() for h in re.findall(r"^#+ (.+)$", gaps, flags=re.M)}
    missing = [i for i in re.findall(r"\(fidelity-gaps\.md#([\w.-]+)\)", page) if i.lower() not in headings]
    assert not missing, f"docs/fidelity-gaps.md has no section for: {', '.join(missing)}"


def test_a_setting_for_every_run_is_applied_and_said(tmp_path):
    """`--set` reaches every run (its result records it) and the page says the check is not the
    stock baseline; a resumed run with another setting does not reuse the first's runs."""
    report, out = tmp_path / "fidelity.md", tmp_path / "runs"
    args = ["background-gc-objects", "--quick", "--json", "--out", str(out), "--jobs", "auto"]
    r = _mobmem("fidelity", *args, "--set", "heapmaxfree=16m", "--report", str(report))
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["settings"] == ["heapmaxfree=16m"]
    assert "- added to every run: `heapmaxfree=16m`" in report.read_text()
    summaries = sorted(out.glob("*/runs/*/seed-*/summary.json"))
    assert summaries and all(["heapmaxfree", "16m"] in json.loads(p.read_text())["parameters"] for p in summaries)
    again = _mobmem("fidelity", *args, "--resume")
    assert again.returncode == 0, again.stderr
    assert "reused" not in again.stderr and json.loads(again.stdout)["settings"] == []


def test_a_runs_code_version_counts_its_own_devices_calibration_only(tmp_path, monkeypatch):
    """A run reads the calibration file of its device only, so refitting one device keeps the
    other devices' runs (and committed records) reusable; without a device every file counts, and
    a run's device is its last ``session.device`` setting, else its scenario's."""
    from mobmem.session import provenance

    (tmp_path / "calibration").mkdir()
    (tmp_path / "devices").mkdir()
    for name, text in [("calibration/pixel3.toml", "a = 1\n"), ("calibration/p9.toml", "a = 1\n"), ("devices/p9.toml", "x = 1\n")]:
        (tmp_path / name).write_text(text)
    monkeypatch.setattr(provenance, "DATA", tmp_path)

    def versions():
        provenance.code_version.cache_clear()
        return provenance.code_version("pixel3"), provenance.code_version("p9"), provenance.code_version()

    assert {p.name for p in provenance.run_data_files("pixel3")} == {"pixel3.toml", "p9.toml"}  # devices/p9.toml, calibration/pixel3.toml
    assert [p.parent.name for p in provenance.run_data_files("pixel3") if p.name == "p9.toml"] == ["devices"]
    before = versions()
    (tmp_path / "calibration/p9.toml").write_text("a = 2\n")  # the P9 refitted
    after = versions()
    assert after[0] == before[0], "a P9 refit changed the version of Pixel 3 runs"
    assert after[1] != before[1] and after[2] != before[2]
    (tmp_path / "devices/p9.toml").write_text("x = 2\n")  # a device profile is shared data
    assert versions()[0] != after[0]
    provenance.code_version.cache_clear()

    scen = tmp_path / "s.toml"
    scen.write_text('name = "s"\ndevice = "p9"\n')
    assert provenance.run_device(scen) == "p9"
    assert provenance.run_device(scen, [("session.device", "pixel3")]) == "pixel3"
    assert provenance.run_device(scen, [("session.device", "pixel3"), ("session.device", "sd800"), ("seed", "2")]) == "sd800"
    scen.write_text("device = [\n")  # unreadable: counted against every device's files
    assert provenance.run_device(scen) is None
    assert provenance.run_device(tmp_path / "missing.toml") is None


def test_a_run_record_reuses_a_value_only_for_the_same_fact_definition(tmp_path):
    """A record keeps each value with its fact's definition (metric and parameters): a fact whose
    definition changed, or that the record lacks, makes the run count as not recorded, while the
    facts' file itself is no part of the runs' code version (a new fact or a corrected source
    keeps every run)."""
    import dataclasses

    from mobmem.session import provenance

    assert "fidelity.toml" not in {p.name for p in provenance.run_data_files()}
    assert any(p.name.endswith(".toml") and "scenarios" in p.parts for p in provenance.run_data_files())
    f = fid.Fact(id="x", claim="c", published=3, unit="apps", source="s", scenario="demo_caching", system="stock", metric="cached_max", set="fit")
    key = {"code": "c0de", "scenario": "data/scenarios/demo_caching.toml", "system": "stock", "seed": 1, "parameters": []}
    rec = fid.RunRecord(tmp_path / "runs.jsonl")
    rec.add(key, [f], {"cached_apps": {"alive_after_launch": [1, 2], "alive_after_launch_max": 2}, "sim_seconds": 5.0})
    again = fid.RunRecord(tmp_path / "runs.jsonl")  # as read back by a later invocation
    got = again.get(key, [f])
    assert got is not None and f.measure(got) == 2.0 and got["sim_seconds"] == 5.0
    assert again.get(key, [dataclasses.replace(f, source="corrected", published=4)]) is not None
    assert again.get(key, [dataclasses.replace(f, metric="curve_level", params={"from_launch": 1})]) is None
    assert again.get(key, [f, dataclasses.replace(f, id="y")]) is None
    assert again.get({**key, "seed": 2}, [f]) is None
