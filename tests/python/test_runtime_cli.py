"""`mobmem runtime …`: output contract, ART-style log lines, determinism, devices, bad input."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from mobmem import cli
from mobmem.errors import MobmemError
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
MOBMEM = [sys.executable, "-m", "mobmem"]
SMALL = "synthetic:footprint=6m,objsize=256,rate=4m"


def run(*args, check=False):
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, cwd=ROOT, check=check)


def jrun(*args):
    return json.loads(run(*args, "--json", check=True).stdout)


def test_run_json_contract_and_determinism():
    a = jrun("runtime", "run", "--app", SMALL, "--collector", "cc", "--heap", "32m", "--seconds", "4")
    b = jrun("runtime", "run", "--app", SMALL, "--collector", "cc", "--heap", "32m", "--seconds", "4")
    assert list(a)[:3] == ["gcs", "summary", "oom"]
    assert a["oom"] is False and isinstance(a["gcs"], list) and a["gcs"]
    s = a["summary"]
    for k in (
        "gc_count",
        "pause_total_ms",
        "pause_max_ms",
        "gc_cpu_ms",
        "mutator_cpu_ms",
        "total_cpu_ms",
        "peak_footprint_mib",
        "faults",
        "stw_cpu_ms",
        "other_cpu_ms",
    ):
        assert k in s, k
    assert s["gc_count"] == len(a["gcs"])
    g = a["gcs"][0]
    for k in ("phases", "pause_total_ns", "gc_cpu_ns", "mutator_wait_ns", "gc_faults", "gc_pages_touched", "gc_objects_touched", "log"):
        assert k in g, k
    a.pop("wall"), b.pop("wall")
    assert a == b


def test_log_lines_look_like_art():
    out = run("runtime", "run", "--app", SMALL, "--collector", "cc", "--heap", "32m", "--seconds", "4", check=True).stdout
    pat = re.compile(
        r"^(Background|Alloc|Explicit|CollectorTransition) (young )?concurrent copying GC freed \d+\(\d+[KM]?B\) AllocSpace objects, "
        r"\d+\(\d+[KM]?B\) LOS objects, \d+% free, \d+[KM]?B/\d+[KM]?B, paused [\d.]+(us|ms)(,[\d.]+(us|ms))* total [\d.]+(us|ms)$",
        re.M,
    )
    assert pat.search(out), out[:500]
    assert "collections" in out


def test_collectors_gcbench_and_oom():
    for c in ("cc", "cmc", "ss", "ms"):
        r = jrun("runtime", "gcbench", "--collector", c, "--heap", "16m", "--depth", "14")
        assert r["oom"] is False and r["summary"]["gc_count"] > 0, c
    assert jrun("runtime", "gcbench", "--collector", "nogc", "--heap", "256m", "--depth", "12")["summary"]["gc_count"] == 0
    assert jrun("runtime", "gcbench", "--collector", "nogc", "--heap", "4m", "--depth", "12")["oom"] is True
    r = jrun("runtime", "run", "--app", "synthetic:footprint=24m,objsize=512", "--collector", "ss", "--heap", "16m", "--seconds", "1")
    assert r["oom"] is True


def test_background_state_runs_the_transition_and_device_profiles_apply():
    r = jrun("runtime", "run", "--app", SMALL, "--state", "bg", "--seconds", "7", "--device", "pixel3")
    assert r["config"]["fg_collector"] == "cc" and r["config"]["heap"]["growth_limit"] == 256 << 20
    assert any(g["cause"] == "CollectorTransition" for g in r["gcs"])
    p9 = jrun("runtime", "run", "--app", SMALL, "--seconds", "1", "--device", "p9")
    assert p9["summary"]["collector"] == "ms"
    over = jrun("runtime", "run", "--app", SMALL, "--seconds", "1", "--device", "p9", "--heap", "100m", "--set", "heaptargetutilization=0.5")
    assert over["config"]["heap"]["growth_limit"] == 100 << 20 and over["config"]["heap"]["target_utilization"] == 0.5


def test_policy_and_bench_commands():
    r = jrun("runtime", "run", "--app", SMALL, "--seconds", "1", "--policy", "segregate-by-state")
    assert r["policies"] == ["segregate-by-state"]
    b = json.loads(run("bench", "runtime", "--objects", "20000", "--allocations", "50000", "--json", check=True).stdout)
    assert b["tracing"][0]["refs_per_s"] > 0 and b["allocation"][0]["objects_per_s"] > 0


def test_bad_input_exits_2_without_traceback():
    for args in (
        ["runtime", "run", "--app", SMALL, "--collector", "g1", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--heap", "lots", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--heap", "1000000g", "--seconds", "1"],  # above ART's 4 GiB
        ["runtime", "run", "--app", SMALL, "--set", "heapsize=5g", "--seconds", "1"],
        ["runtime", "run", "--app", "nosuchapp", "--seconds", "1"],
        ["runtime", "run", "--app", "synthetic:footprint=1m,wat=3", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--set", "app.live_heap=-1", "--seconds", "1"],
        ["runtime", "gcbench", "--set", "app.live_heap=1m"],
        ["runtime", "run", "--app", SMALL, "--set", "nonsense", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--set", "tlab_size=1", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--state", "sleeping", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--device", "nophone", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--policy", "no-such-policy", "--seconds", "1"],
        ["runtime", "gcbench", "--depth", "40"],
    ):
        # In-process (fast): each must raise MobmemError, which `mobmem` turns into exit 2.
        res = CliRunner().invoke(cli.app, args)
        assert isinstance(res.exception, MobmemError), (args, res.output, res.exception)
    for args in (
        ["runtime", "run", "--app", SMALL, "--collector", "g1", "--seconds", "1"],
        ["runtime", "run", "--app", SMALL, "--heap", "lots", "--seconds", "1"],
    ):
        p = run(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert p.stderr.startswith("error:") and "Traceback" not in p.stderr, (args, p.stderr)


def test_named_apps_are_the_session_app_profiles():
    """`--app NAME` is an app profile of data/apps (the sessions' catalogue), mapped by the core."""
    import tomllib

    from mobmem import catalog
    from mobmem.paths import DATA

    name = catalog.names("apps")[0]
    prof = tomllib.loads((DATA / "apps" / f"{name}.toml").read_text())
    r = jrun("runtime", "run", "--app", name, "--seconds", "0.5", "--set", "app.fanout=3")
    assert r["app"]["name"] == name
    assert r["app"]["live_heap"] == int(prof["java_heap"]["live_fg_mib"] * (1 << 20))
    assert r["app"]["fanout"] == 3.0
    listed = run("runtime", "apps", check=True).stdout
    assert all(n in listed for n in catalog.names("apps"))
