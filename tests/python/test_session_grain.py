"""`mobmem bench grain`: the two simulation grains compared (agreement rules and the command).

The command runs on tests/python/data/session_tiny.toml (two apps, a few simulated seconds); the
rules are checked on made-up per-run numbers, where a disagreement can be planted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mobmem.session import grain

ROOT = Path(__file__).resolve().parents[2]
TINY = "tests/python/data/session_tiny.toml"


def fake_run(scale: float = 1.0, ttids=(500.0, 300.0), curve=(1.0, 2.0), counts=(100, 50, 20), digest="d") -> dict:
    m = {k: 1000.0 * scale for k, _ in grain.METRICS}
    return {
        "metrics": m,
        "counts": dict(zip([k for k, _ in grain.COUNTS], counts)),
        "ttids": [t * scale for t in ttids],
        "cached_curve": list(curve),
        "digest": digest,
        "sim_seconds": 10.0,
        "wall_seconds": 1.0,
    }


def results(unit_runs: list[dict], object_runs: list[dict] | None = None) -> dict:
    object_runs = object_runs or [fake_run() for _ in unit_runs]
    r = {}
    for i, (o, u) in enumerate(zip(object_runs, unit_runs)):
        r[(i, "object")] = o
        r[(i, "unit")] = u
    return {"s": r}


def test_identical_runs_agree():
    c = grain.compare(results([fake_run() for _ in range(3)]))["s"]
    assert c["ok"] and c["identical_runs"] == 3
    assert all(r["rel_diff"] == 0.0 for r in c["metrics"])


def test_a_mean_off_by_more_than_the_tolerance_disagrees():
    # The reference has no spread (no CI wider than the tolerance): 5 % off fails, 2 % passes.
    assert not grain.compare(results([fake_run(1.05) for _ in range(3)]))["s"]["ok"]
    ok = grain.compare(results([fake_run(1.02, digest="x") for _ in range(3)]))["s"]
    assert ok["ok"] and ok["identical_runs"] == 0


def test_the_reference_ci_admits_a_larger_difference():
    ref = [fake_run(s) for s in (0.8, 1.0, 1.2)]
    new = [fake_run(s * 1.06) for s in (0.8, 1.0, 1.2)]  # 6 % off, inside the reference's wide CI
    c = grain.compare(results(new, ref))["s"]
    assert c["ok"], c["metrics"]


def test_counts_must_be_identical_run_by_run():
    c = grain.compare(results([fake_run(counts=(100, 50, 21))]))["s"]
    assert not c["ok"] and [x["identical"] for x in c["counts"]] == [True, True, False]


def test_per_launch_and_cached_curves():
    # Same mean TTID over all launches, different launches: the per-launch check catches it.
    c = grain.compare(results([fake_run(ttids=(300.0, 500.0))]))["s"]
    assert c["metrics"] and not c["ttid_per_launch_ok"] and not c["ok"]
    # A different number of launches or curve points is a disagreement.
    c = grain.compare(results([fake_run(curve=(1.0, 2.0, 3.0))]))["s"]
    assert not c["cached_curve_ok"] and not c["ok"]


def test_the_command_on_a_tiny_scenario(tmp_path):
    md = tmp_path / "grain.md"
    p = subprocess.run(
        [sys.executable, "-m", "mobmem", "bench", "grain", "--scenario", TINY, "--seeds", "2", "--jobs", "1", "--markdown", str(md), "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    per = d["scenarios"]["session_tiny"]
    assert d["ok"] and per["runs"] == 2 and per["identical_runs"] == 2, per
    assert all(c["identical"] and c["object"] > 0 for c in per["counts"] if c["count"] == "objects_allocated")
    text = md.read_text()
    assert text.startswith("`mobmem bench grain --scenario") and "| session_tiny | GCs |" in text


def test_the_grain_cannot_be_set():
    p = subprocess.run(
        [sys.executable, "-m", "mobmem", "bench", "grain", "--scenario", TINY, "--set", "runtime.grain=unit"], capture_output=True, text=True, cwd=ROOT
    )
    assert p.returncode != 0 and "the grain is what this command varies" in p.stderr and "Traceback" not in p.stderr


def test_metrics_are_read_from_a_real_result():
    """Every compared number comes from the result's own fields (none defaults to zero)."""
    import pytest
    from mobmem import session

    res = session.run(TINY, ["kernel.ram_mib=1024", "session.time_scale=0.2"])
    m = grain.metrics(res)["metrics"]
    assert m["refault_anon"] == res["refaults"]["anon"] and m["refault_file"] == res["refaults"]["file"]
    assert m["pgmajfault"] == res["vmstat"]["pgmajfault"] > 0
    assert m["gc_count"] == res["gc"]["count"] > 0
    assert set(m) == {k for k, _ in grain.METRICS}
    broken = dict(res)
    del broken["refaults"]
    with pytest.raises(KeyError):
        grain.metrics(broken)
