"""`mobmem run|compare|demo|bench session`: the session simulator's command line (issue 4).

Runs on tests/python/data/session_tiny.toml (two apps, ~8 simulated seconds, ~1–2 s wall)."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mobmem import cli, session
from mobmem.cli.session import header_line
from mobmem.errors import MobmemError
from mobmem.session import systems
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
TINY = "tests/python/data/session_tiny.toml"
MOBMEM = [sys.executable, "-m", "mobmem"]

# A minimal scenario for checking every shipped system (one synthetic app, about two seconds).
MINI = """name = "mini"
description = "test: one synthetic app"
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
action = "use"
seconds = 1.0
"""


def run(*args, check=False):
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, cwd=ROOT, check=check)


def jrun(*args):
    p = run(*args, "--json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def strip_wall(d: dict) -> dict:
    return {k: v for k, v in d.items() if k not in ("wall_seconds", "sim_speed")}


def test_run_json_contract_and_determinism():
    a = jrun("run", TINY, "--seed", "7")
    b = jrun("run", TINY, "--seed", "7")
    for k in (
        "scenario",
        "scenario_file",
        "device",
        "seed",
        "parameters",
        "system",
        "sim_seconds",
        "wall_seconds",
        "sim_speed",
        "launches",
        "launch_stats",
        "cached_apps",
        "kills",
        "kill_records",
        "kills_by_reason",
        "vmstat",
        "ratios",
        "direct_reclaims",
        "kswapd_cpu_ms",
        "swap",
        "gc",
        "frames",
        "per_app",
        "system_name",
    ):
        assert k in a, k
    assert "timeline" not in a and "events" not in a  # those go to files with --out
    assert a["seed"] == 7 and a["scenario"] == "tiny" and a["device"] == "pixel3"
    kinds = [(l["app"].split(":")[0], l["kind"]) for l in a["launches"]]
    assert kinds == [("synthetic", "cold"), ("twitter", "cold"), ("synthetic", "hot")]
    for k in ("system_ms", "cpu_ms", "cpu_wait_ms", "major_faults_zram", "major_fault_file_ms", "reclaim_stall_ms", "gc_wait_ms", "idle_ms"):
        assert k in a["launches"][0]["breakdown"], k
    # the time parts of a launch sum to its TTID (to the nanosecond, up to float rounding)
    parts = (
        "system",
        "cpu",
        "cpu_wait",
        "cpu_slow",
        "minor_fault",
        "major_fault_zram",
        "major_fault_flash_swap",
        "major_fault_file",
        "file_read_wait",
        "reclaim_stall",
        "gc_wait",
        "idle",
    )
    for l in a["launches"]:
        assert abs(sum(l["breakdown"][f"{p}_ms"] for p in parts) - l["ttid_ms"]) < 1e-6, l
    assert a["launch_stats"]["hot"]["*"]["n"] == 1
    for k in ("max", "mean", "alive_after_launch", "first_kill_s"):
        assert k in a["cached_apps"], k
    assert a["cached_apps"]["alive_after_launch"] == [1, 2, 2]
    # Allocation counters: summed over apps, and each app's mean object size follows its profile
    # (the synthetic app allocates 512-byte objects, twitter the Android size mix, mean ≈ 35 B).
    apps = a["per_app"]
    assert a["gc"]["objects_allocated"] == sum(x["objects_allocated"] for x in apps.values()) > 0
    mean = {n.split(":")[0]: x["bytes_allocated"] / x["objects_allocated"] for n, x in apps.items()}
    assert 400 <= mean["synthetic"] <= 600 and 16 <= mean["twitter"] <= 128, mean
    assert strip_wall(a) == strip_wall(b)
    c = jrun("run", TINY, "--seed", "8")
    assert strip_wall(c) != strip_wall(a)  # the seed matters


def test_human_tables_and_out_files(tmp_path):
    out = tmp_path / "o"
    p = run("run", TINY, "--set", "kernel.swappiness=60", "--out", str(out))
    assert p.returncode == 0, p.stderr
    for needle in (
        "launches",
        "TTID",
        "reclaim stall",
        "gc wait",
        "maj zram",
        "launch time (TTID ms)",
        "all apps",
        "cached apps: max",
        "apps alive after each launch: 1 2 2",
        "kills: none",
        "refault ratio",
        "direct reclaims",
        "GCs (sticky / full)",
        "jank ratio",
        "per app",
    ):
        assert needle in p.stdout, needle
    s = json.loads((out / "summary.json").read_text())
    assert s["parameters"] == [["kernel.swappiness", "60"]] and s["seed"] == 1 and s["scenario_file"] == TINY
    assert "timeline" not in s and "events" not in s
    rows = list(csv.DictReader((out / "launches.csv").open()))
    assert len(rows) == len(s["launches"]) == 3
    assert {"app", "kind", "ttid_ms", "major_faults_zram", "reclaim_stall_ms", "gc_wait_ms"} <= set(rows[0])
    assert float(rows[2]["ttid_ms"]) == pytest.approx(s["launches"][2]["ttid_ms"])
    tl = list(csv.DictReader((out / "timeline.csv").open()))
    assert len(tl) >= 5 and {"t_s", "free_mib", "anon_mib", "swap_used_mib", "cached_apps"} <= set(tl[0])
    ev = list(csv.DictReader((out / "events.csv").open()))
    assert [e["kind"] for e in ev].count("launch") == 3
    per_app = list(csv.DictReader((out / "per_app.csv").open()))
    assert per_app[0]["app"].startswith("synthetic") and "memory_at_end" not in per_app[0]
    # Per-mapping memory at the end (smaps): the Java heap's main space, native heap and APK.
    mem = {m["name"]: m for m in s["per_app"]["twitter"]["memory_at_end"]}
    assert {"dalvik-main space", "[anon:libc_malloc]", "base.apk"} <= set(mem), sorted(mem)
    assert all(0 <= m["rss_pages"] + m["swap_pages"] + m["cow_shared_pages"] <= m["pages"] for m in mem.values())
    assert mem["dalvik-main space"]["rss_pages"] > 0 and mem["base.apk"]["rss_pages"] > 0
    assert (out / "kills.csv").read_text().startswith("t_s,app,")
    assert not list(out.glob("*.tmp")) and not list(out.glob(".*tmp"))


def test_refaults_say_when_the_kernel_counts_file_pages_only():
    """kernel.semantics 4.19 (the Pixel 3's; before Linux 5.9 only file pages leave shadow
    entries): run and compare say next to the refault numbers that anon refaults are not counted;
    a 5.10 kernel shows anon and file refaults."""
    old = run("run", TINY)
    assert old.returncode == 0, old.stderr
    assert "refaults (file only before 5.9)" in old.stdout and "refaults (anon / file)" not in old.stdout
    assert "kernel.semantics 4.19 follows the rules before Linux 5.9" in " ".join(old.stdout.split())
    new = run("run", TINY, "--set", "kernel.semantics=5.10")
    assert new.returncode == 0, new.stderr
    assert "refaults (anon / file)" in new.stdout and "before 5.9" not in new.stdout
    cmp = run("compare", TINY, "--systems", "stock,zram", "--seeds", "1")
    assert cmp.returncode == 0, cmp.stderr
    text = " ".join(cmp.stdout.split())
    assert "kernel.semantics 4.19 follows the rules before Linux 5.9" in text and "(systems stock, zram:" in text


def test_buddy_allocator_shows_compaction_and_fragmentation():
    """With kernel.buddy the run's tables show compaction, high-order OOM kills and the free lists
    the apps' thread stacks met, and the JSON has the fragmentation record; without it, neither."""
    on = run("run", TINY, "--set", "kernel.buddy=true")
    assert on.returncode == 0, on.stderr
    text = " ".join(on.stdout.split())
    assert "compaction stalls / pages migrated" in text and "at thread starts: least free MiB" in text
    f = jrun("run", TINY, "--set", "kernel.buddy=true")["fragmentation"]
    assert f["stack_batches"] >= 1 and f["min_free_pages"] > 0 and 0 <= f["min_share_in_order2"] <= 1
    off = run("run", TINY)
    assert off.returncode == 0 and "compaction stalls" not in off.stdout
    assert "fragmentation" not in jrun("run", TINY)


def _bad(tmp_path, old: str, new: str) -> Path:
    text = (ROOT / TINY).read_text()
    assert old in text
    p = tmp_path / "bad.toml"
    p.write_text(text.replace(old, new, 1))
    return p


def test_bad_input_is_one_line_exit_2_and_keeps_existing_files(tmp_path):
    out = tmp_path / "o"
    out.mkdir()
    (out / "summary.json").write_text("earlier results\n")
    unknown_app = _bad(tmp_path, 'name = "twitter"', 'name = "nosuchapp"')
    p = run("run", str(unknown_app), "--out", str(out))
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and "Traceback" not in p.stderr and p.stderr.count("\n") == 1
    line = unknown_app.read_text().splitlines().index('name = "nosuchapp"') + 1
    assert f"{unknown_app}:{line}:" in p.stderr and "apps.name" in p.stderr and "nosuchapp" in p.stderr
    assert (out / "summary.json").read_text() == "earlier results\n" and sorted(x.name for x in out.iterdir()) == ["summary.json"]

    negative = tmp_path / "neg.toml"
    negative.write_text((ROOT / TINY).read_text().replace("seconds = 2.0\n", "seconds = -2.0\n"))
    huge = tmp_path / "huge.toml"
    huge.write_text((ROOT / TINY).read_text().replace("seconds = 2.0\n", "seconds = 1e300\n"))
    # A bad value in the scenario's own [system.kernel] table is blamed on its place in the file.
    bad_kernel = tmp_path / "badk.toml"
    bad_kernel.write_text((ROOT / TINY).read_text().replace('lmkd = "psi"\n', 'lmkd = "psi"\n\n[system.kernel]\nswappiness = "lots"\n'))
    kline = bad_kernel.read_text().splitlines().index('swappiness = "lots"') + 1
    cases = [
        ([str(negative)], ["neg.toml:", "seconds", "positive"]),
        ([str(huge)], ["huge.toml:", "seconds", "at most", "1e300"]),
        ([str(bad_kernel)], [f"badk.toml:{kline}:", "system.kernel.swappiness", "lots"]),
        ([TINY, "--set", "foo"], ["--set", "key=value"]),
        ([TINY, "--set", "kernel.nosuch=1"], ["--set", "kernel.nosuch", "unknown"]),
        ([TINY, "--set", "system.collector=g1"], ["--set", "system.collector", "g1"]),
        ([TINY, "--set", "heapgrowthlimit=lots"], ["--set", "heapgrowthlimit"]),
        ([TINY, "--system", "nope"], ["--system", "nope", "stock"]),
        (["no_such_scenario"], ["no_such_scenario", "hot_launch"]),
        ([TINY, "--seed", "-1"], ["--seed"]),
        # Sizes the host could not hold are refused before anything is allocated.
        ([TINY, "--set", "kernel.swap_mib=100000000000"], ["kernel.swap_mib", "65536"]),
        ([TINY, "--set", "kernel.ram_mib=72057594037927937"], ["kernel.ram_mib", "65536"]),
        ([TINY, "--set", "kernel.min_free_kbytes=100000000000"], ["kernel.min_free_kbytes"]),
        ([TINY, "--set", "kernel.min_free_kbytes=3100000"], ["kernel.min_free_kbytes", "min watermark"]),
        ([TINY, "--set", "heapsize=100000g"], ["--set", "heapsize", "4g"]),
        ([TINY, "--set", "system.max_cached_processes=-1"], ["--set", "system.max_cached_processes"]),
    ]
    for args, needles in cases:
        res = CliRunner().invoke(cli.app, ["run", *args, "--out", str(out)])
        assert isinstance(res.exception, MobmemError), (args, res.output, res.exception)
        msg = str(res.exception)
        assert "\n" not in msg, msg
        for n in needles:
            assert n in msg, (args, n, msg)
    assert (out / "summary.json").read_text() == "earlier results\n"
    res = CliRunner().invoke(cli.app, ["compare", TINY, "--systems", "stock,nope"])
    assert isinstance(res.exception, MobmemError) and "nope" in str(res.exception)
    p = run("run", TINY, "--set", "system.collector=g1")
    assert p.returncode == 2 and p.stderr.startswith("error: --set") and "Traceback" not in p.stderr


def test_an_unknown_name_gets_the_closest_known_one_suggested(tmp_path):
    """A misspelt name, whether Python or the core refused it, is one line that suggests the
    closest known name; a name close to none suggests nothing."""
    app = _bad(tmp_path, 'name = "twitter"', 'name = "twiter"')
    cases = [
        (["run", TINY, "--system", "zarm"], "zram"),
        (["compare", TINY, "--systems", "stock,zarm"], "zram"),
        (["run", "demo_hot_lunch"], "demo_hot_launch"),
        (["run", str(app)], "twitter"),
        (["run", TINY, "--set", "system.collector=cmcc"], "cmc"),
        (["run", TINY, "--set", "session.device=pixle3"], "pixel3"),
        (["run", TINY, "--set", "kernel.cpufreq.governor=schedutl"], "schedutil"),
        (["report", "--study", "flet"], "fleet"),
        (["fidelity", "backgrund-gc-objects"], "background-gc-objects"),
        (["run", TINY, "--system", "qqqqqq"], None),
    ]
    for args, suggested in cases:
        res = CliRunner().invoke(cli.app, args)
        assert isinstance(res.exception, MobmemError), (args, res.output, res.exception)
        msg = str(res.exception)
        assert "\n" not in msg, msg
        if suggested is None:
            assert "did you mean" not in msg, msg
        else:
            assert f"(did you mean '{suggested}'?)" in msg, (args, msg)


# Every command that runs more than one session, with arguments otherwise fine.
MANY_SESSIONS = {
    "compare": ["compare", TINY, "--systems", "stock"],
    "sweep": ["sweep", TINY, "--grid", "kernel.swappiness=60"],
    "report": ["report", "--study", "fleet"],
    "fidelity": ["fidelity"],
    "demo": ["demo"],
    "bench grain": ["bench", "grain"],
    "bench identical": ["bench", "identical", "--save", "{tmp}"],
    "lbo": ["lbo", "--backend", "sim"],
}


@pytest.mark.parametrize("command", sorted(MANY_SESSIONS))
def test_every_command_of_several_sessions_takes_the_same_jobs_option(tmp_path, command):
    """One --jobs for all of them: a number or 'auto', anything else the same one-line error
    before anything runs (`fidelity --jobs auto` runs in test_fidelity)."""
    args = [a.format(tmp=tmp_path / "ref") for a in MANY_SESSIONS[command]]
    r = subprocess.run([*MOBMEM, *args, "--jobs", "many"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip() == "error: --jobs must be a positive integer or 'auto', got 'many'", r.stderr
    h = subprocess.run([*MOBMEM, *args[: 2 if command.startswith("bench") else 1], "--help"], cwd=ROOT, capture_output=True, text=True)
    assert "N|auto" in h.stdout, h.stdout


def test_two_commands_cannot_write_into_one_out_dir(tmp_path):
    """While one command holds an output directory, a second one writing there is refused at
    once (one line), before it runs; the lock leaves no file behind."""
    from mobmem.files import out_dir_lock

    out = tmp_path / "shared"
    with out_dir_lock(out):
        for args in (["run", TINY, "--out", str(out)], ["compare", TINY, "--systems", "stock", "--seeds", "1", "--out", str(out)]):
            res = CliRunner().invoke(cli.app, args)
            assert isinstance(res.exception, MobmemError), (args, res.output, res.exception)
            assert "in use by another mobmem command" in str(res.exception) and "\n" not in str(res.exception)
    assert list(out.iterdir()) == []


def test_compare_two_systems_two_seeds(tmp_path):
    out = tmp_path / "c"
    a = jrun("compare", TINY, "--systems", "stock,cmc", "--seeds", "2", "--jobs", "2", "--out", str(out))
    assert a["seeds"] == [1, 2] and list(a["systems"]) == ["stock", "cmc"]
    assert [(r["system"], r["seed"]) for r in a["runs"]] == [("stock", 1), ("cmc", 1), ("stock", 2), ("cmc", 2)]
    assert a["runs"][1]["summary"]["system"]["collector"] == "cmc" and a["runs"][1]["summary"]["parameters"] == [["system.collector", "cmc"]]
    agg = a["aggregate"]
    for key in ("hot_p50_ms", "hot_p90_ms", "relaunches", "cached_max", "cached_mean", "app_kills", "refaults", "direct_reclaims", "jank_ratio"):
        for s in ("stock", "cmc"):
            st = agg["overall"][key][s]
            assert st["n"] == 2 and {"mean", "ci_low", "ci_high", "values"} <= set(st), (key, s)
    hot = agg["overall"]["hot_p50_ms"]["stock"]
    assert hot["ci_low"] <= hot["mean"] <= hot["ci_high"]
    assert "vs_base" in agg["overall"]["gc_count"]["cmc"]
    assert set(agg["per_app"]["synthetic:footprint=32m,objsize=512"]) == {"hot_p50_ms", "hot_p90_ms", "relaunches"}
    assert (out / "compare.json").is_file() and (out / "runs" / "cmc" / "seed-2" / "summary.json").is_file()
    # compare.csv: per metric, app and system the statistics, the test against the baseline and
    # every seed's value; no interval reaches below zero (every metric is a count, time or ratio),
    # and intervals of two seeds say so.
    rows = list(csv.DictReader((out / "compare.csv").open()))
    want = {"metric", "app", "system", "n", "mean", "sd", "ci_low", "ci_high", "ci_note", "ratio", "p_value", "significant", "seed_1", "seed_2"}
    assert rows[0].keys() >= want
    assert {r["system"] for r in rows} == {"stock", "cmc"} and any(r["app"] for r in rows)
    assert all(float(r["ci_low"]) >= 0 for r in rows if r["ci_low"])
    assert all("few-values" in r["ci_note"] for r in rows if r["ci_low"])
    tested = [r for r in rows if r["p_value"]]
    assert tested and all(r["system"] == "cmc" and r["baseline"] == "stock" and 0 <= float(r["p_value"]) <= 1 for r in tested)
    for r in rows:  # the mean is the mean of the seeds' values
        vals = [float(r[f"seed_{sd}"]) for sd in (1, 2) if r[f"seed_{sd}"]]
        assert (not vals and not r["mean"]) or abs(float(r["mean"]) - sum(vals) / len(vals)) <= 1e-9 * max(1.0, abs(float(r["mean"])))
    # compare_runs.csv: one row per run, as the Python API's frame.
    per_run = list(csv.DictReader((out / "compare_runs.csv").open()))
    assert [(r["system"], r["seed"]) for r in per_run] == [("stock", "1"), ("cmc", "1"), ("stock", "2"), ("cmc", "2")]
    assert float(per_run[1]["gc_count"]) == a["runs"][1]["summary"]["gc"]["count"]

    # Serial runs give the same results as parallel ones.
    b = jrun("compare", TINY, "--systems", "stock,cmc", "--seeds", "2", "--jobs", "1")
    assert [strip_wall(r["summary"]) for r in a["runs"]] == [strip_wall(r["summary"]) for r in b["runs"]]
    assert a["aggregate"] == b["aggregate"]

    # The human tables (finished runs reused from --out), with CI columns. A run made by other
    # simulator code is not reused: it runs again and its file records this code.
    made = out / "runs" / "cmc" / "seed-2" / "summary.json"
    this_code = json.loads(made.read_text())["code_version"]
    made.write_text(json.dumps({**json.loads(made.read_text()), "code_version": "another-model"}))
    p = run("compare", TINY, "--systems", "stock,cmc", "--seeds", "2", "--out", str(out), "--resume")
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("reused") == 3
    assert json.loads(made.read_text())["code_version"] == this_code
    for needle in (
        "95% CI",
        "vs stock",
        "hot launch p50 ms",
        "cold launches instead",
        "cached apps max",
        "refaults",
        "direct reclaims",
        "jank ratio",
        "Student-t",
        "† from fewer than 3 seeds",
    ):
        assert needle in p.stdout, needle
    assert re.search(r"×\d+\.\d\d .*\(.*p [=<] ", p.stdout), "Welch's p-value next to the ratio"

    one = jrun("compare", TINY, "--systems", "stock,noswap", "--seeds", "1")
    st = one["aggregate"]["overall"]["hot_p50_ms"]["noswap"]
    assert st["n"] == 1 and st["ci_low"] is None and st["vs_base"] is None


def test_shipped_systems_are_accepted(tmp_path):
    mini = tmp_path / "mini.toml"
    mini.write_text(MINI)
    names = list(systems.load())
    for n in ("stock", "zram", "noswap", "compaction", "freezer", "minfree", "cmc", "ms"):
        assert n in names and systems.get(n).description
    expect = {
        "zram": ("collector", "cc", "zram"),
        "noswap": ("collector", "cc", "none"),
        "cmc": ("collector", "cmc", "file"),
        "minfree": ("lmkd", "minfree", "file"),
    }
    for n in names:
        r = session.run(mini, [], system=n)
        assert r["system_name"] == n and r["launches"], n
        if n in expect:
            key, val, swap = expect[n]
            assert r["system"][key] == val and r["system"]["swap"] == swap, (n, r["system"])
        # The trim levels are on unless a system turns them off, and the result says which.
        assert r["system"]["trim_levels"] is (n != "no-trim-levels"), (n, r["system"])
        assert ("no trim levels" in header_line(r)) is (n == "no-trim-levels"), n
    # zram on a device with a file swap: half of RAM (pixel3: 3579 MiB → 1789).
    assert ("kernel.swap_mib", "1789") in systems.settings_for("zram", mini, [])
    assert ("kernel.swap_mib", "1000") in systems.settings_for("zram", mini, [("kernel.ram_mib", "2000")])


def test_systems_combine_with_plus(tmp_path):
    mini = tmp_path / "mini.toml"
    mini.write_text(MINI)
    pairs = systems.settings_for("fleet-rgs+zram", mini, [])
    assert ("system.policies", "fleet-rgs") in pairs and ("kernel.swap", "zram") in pairs
    # Two parts with runtime policies: one list holding both, in order.
    f = tmp_path / "systems.toml"
    f.write_text(
        '[a]\ndescription = "a"\nsettings = ["system.policies=fleet-rgs"]\n\n[b]\ndescription = "b"\nsettings = ["system.policies=grow-for-utilization", "kernel.swappiness=100"]\n'
    )
    assert systems.settings_for("a+b", mini, [], f) == [("system.policies", "fleet-rgs,grow-for-utilization"), ("kernel.swappiness", "100")]
    assert systems.parse_names("a,a+b", f) == ["a", "a+b"]
    with pytest.raises(MobmemError, match="unknown system 'nope'.*combine them with"):
        systems.parse_names("a+nope", f)
    with pytest.raises(MobmemError, match="names a system twice"):
        systems.get("a+a", f)
    r = session.run(mini, [], system="fleet-rgs+zram")
    assert r["system"]["swap"] == "zram" and r["system"]["policies"] == ["fleet-rgs"], r["system"]


def test_policy_settings_errors_name_the_key(tmp_path):
    mini = tmp_path / "mini.toml"
    mini.write_text(MINI)
    for key, value in (("fleet.depth", "-1"), ("fleet.t_b_ms", "abc"), ("fleet.nope", "1")):
        p = run("run", str(mini), "--system", "fleet-rgs", "--set", f"{key}={value}")
        assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and key in lines[0], p.stderr
    # fleet-rgs needs a region-space copying collector.
    p = run("run", str(mini), "--system", "fleet-rgs+ms")
    assert p.returncode != 0 and "fleet-rgs needs a copying collector" in p.stderr and "Traceback" not in p.stderr, p.stderr
    keys = jrun("keys", "fleet")
    assert {"t_b_ms", "t_f_ms", "depth", "depth_from_zero", "hot_once", "hot_period_ms"} <= {e["key"] for e in keys["fleet"]["keys"]}


def test_marvin_runs_combined_and_checks_its_settings(tmp_path):
    mini = tmp_path / "mini.toml"
    mini.write_text(MINI)
    r = session.run(mini, [], system="marvin+noswap")
    assert r["system"]["policies"] == ["marvin"] and r["system"]["swap"] == "none", r["system"]
    st = next(iter(r["per_app"].values()))["object_swap"]
    assert {"stubs_created", "objects_written", "objects_reclaimed", "bytes_reclaimed", "pages_reclaimed", "objects_swapped_in", "writes_refused"} <= set(st)
    assert all(v >= 0 for v in st.values())
    for key, value in (("marvin.threshold", "0"), ("marvin.threshold", "-5"), ("marvin.threshold", "abc"), ("marvin.cold_epochs", "x")):
        p = run("run", str(mini), "--system", "marvin", "--set", f"{key}={value}")
        assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and key in lines[0], p.stderr
    # On apps of large objects it makes stubs, releases objects and reads them back at launches
    # (hot ones: ActivityManager's limit raised above its 16 cached apps, which with 18 apps in a
    # cycle would make every second-pass launch cold). At a fiftieth of the scenario's time its
    # object writes and the kernel's swap writes queue on the flash device faster than reclaim
    # can wait for them, and the OOM killer ends most apps before their second launch; a
    # twentieth leaves hot launches.
    p = run("run", "caching_capacity_synthetic_large", "--system", "marvin", "--set", "session.time_scale=0.05", "--set", "system.max_cached_processes=64")
    assert p.returncode == 0, p.stderr
    assert "obj swap-in" in p.stdout and "object swap: stubs made" in p.stdout, p.stdout[-3000:]
    p = run("run", str(mini), "--system", "marvin+ms")
    assert p.returncode != 0 and "marvin makes stubs in a copying collector" in p.stderr and "Traceback" not in p.stderr, p.stderr
    keys = jrun("keys", "marvin")
    assert {"threshold", "cold_epochs", "count_reads", "write_task_fg_ms", "swap_in_on_foreground", "swap_file_mib"} <= {
        e["key"] for e in keys["marvin"]["keys"]
    }


def test_acclaim_runs_combined_and_checks_its_settings(tmp_path):
    mini = tmp_path / "mini.toml"
    mini.write_text(MINI)
    for name in ("acclaim", "acclaim-code", "fleet+acclaim"):
        r = session.run(mini, [], system=name)
        assert r["launches"], name
    pairs = systems.settings_for("fleet+acclaim", mini, [])
    assert ("kernel.eviction", "fae") in pairs and ("kernel.kswapd_sizing", "lwp") in pairs and ("system.policies", "fleet") in pairs
    for key, value in (("kernel.fae_exempt", "music"), ("kernel.lwp_p1", "0"), ("kernel.lwp_window_ms", "-5"), ("kernel.kswapd_sizing", "nope")):
        p = run("run", str(mini), "--system", "acclaim", "--set", f"{key}={value}")
        assert p.returncode != 0 and "Traceback" not in p.stderr, p.stderr
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and key.split(".")[1] in lines[0], p.stderr
    assert 'no app "music" in this scenario' in run("run", str(mini), "--set", "kernel.fae_exempt=music").stderr


def test_systems_file_errors(tmp_path):
    f = tmp_path / "systems.toml"
    f.write_text('[ok]\ndescription = "fine"\nsettings = []\n\n[broken]\ndescription = "x"\nsettings = ["nokey"]\n')
    with pytest.raises(MobmemError, match=r'systems.toml:7:13: broken: settings: "nokey": expected key=value'):
        systems.load(f)
    f.write_text("[nodesc]\nsettings = []\n")
    with pytest.raises(MobmemError, match=r"systems.toml:1:1: .*description"):
        systems.load(f)


def test_scenario_names_resolve():
    assert session.resolve_scenario("hot_launch").name == "hot_launch.toml"
    assert session.resolve_scenario("demo-caching").name == "demo_caching.toml"
    with pytest.raises(MobmemError, match="shipped: .*demo_hot_launch"):
        session.resolve_scenario("nope")
    res = CliRunner().invoke(cli.app, ["scenarios"])
    assert res.exit_code == 0 and "hot_launch" in res.output
    res = CliRunner().invoke(cli.app, ["systems"])
    assert res.exit_code == 0 and "zram" in res.output and "kernel.swap=zram" in res.output


def test_bench_session_json():
    b = jrun("bench", "session", "--scenario", TINY)
    assert b["sim_seconds"] > 5 and b["sim_seconds_per_wall_second"] > 0 and b["meets_goal"] is None
    assert b["objects_allocated"] > 0 and b["allocation_benchmark_objects_per_s"] > 0
    assert 0 < b["allocation_only_floor_wall_seconds"] < b["wall_seconds"]
    ops = b["objects_allocated"] + b["gc_objects_touched"] + b["objects_read"]
    assert b["objects_read"] > 0 and b["ns_per_object_op"] == pytest.approx(b["wall_seconds"] * 1e9 / ops)
    assert b["meets_ns_goal"] == (b["ns_per_object_op"] <= b["goal_ns_per_object_op"])


def test_demo_runs():
    p = run("demo")
    assert p.returncode == 0, p.stderr
    for needle in (
        "caching capacity",
        "apps alive after each launch",
        "cached apps: max",
        "hot launch time (TTID ms) per app",
        "cold launches instead of hot",
        "demo done in",
        "mobmem compare",
    ):
        assert needle in p.stdout, needle


def test_cpufreq_governors_run_and_their_settings_are_checked():
    """A governor changes frequencies and energy; an unknown governor, a cap that is not an
    operating point of the device and a share outside [0, 1] are one-line errors naming the key."""
    fast = ["--set", "session.time_scale=0.3"]
    res = {}
    for g in ("performance", "gc-aware"):
        p = run("run", TINY, "--json", "--set", f"kernel.cpufreq.governor={g}", *fast)
        assert p.returncode == 0, p.stderr
        res[g] = json.loads(p.stdout)["energy"]
        assert res[g]["governor"] == g
    assert res["performance"]["mean_mhz"]["big"] == 2803
    assert res["gc-aware"]["mean_mhz"]["big"] < 2803
    assert res["gc-aware"]["by_category_j"]["gc"] < res["performance"]["by_category_j"]["gc"]
    for setting, key in (
        ("kernel.cpufreq.governor=turbo", "kernel.cpufreq.governor"),
        ("kernel.cpufreq.gc_cap_mhz=1000", "kernel.cpufreq.gc_cap_mhz"),
        ("kernel.cpufreq.membound_gc=1.5", "kernel.cpufreq.membound_gc"),
    ):
        p = run("run", TINY, "--set", setting, *fast)
        assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
        assert key in p.stderr, p.stderr


def test_gc_concurrency_policies():
    """fg: collections run when an allocation needs them, with the mutator waiting (no
    background-triggered ones); pin: the GC daemon on the slowest core at a capped frequency takes
    longer and costs less energy; a cap that is not an operating point is refused by key."""
    fast = ["--set", "session.time_scale=0.3"]
    res = {}
    for pol in ("bg", "fg", "pin"):
        extra = ["--set", "runtime.gc_pin_mhz=826"] if pol == "pin" else []
        p = run("run", TINY, "--json", "--set", f"runtime.gc_concurrency={pol}", *extra, *fast)
        assert p.returncode == 0, p.stderr
        res[pol] = json.loads(p.stdout)
    causes = {g["cause"] for g in res["fg"]["gcs"]}
    assert "Background" not in causes and "Alloc" in causes, causes
    assert "Background" in {g["cause"] for g in res["bg"]["gcs"]}
    bg, pin = res["bg"], res["pin"]
    assert pin["gc"]["gc_cpu_ms"] / pin["gc"]["count"] > bg["gc"]["gc_cpu_ms"] / bg["gc"]["count"]
    assert pin["energy"]["by_category_j"]["gc"] < bg["energy"]["by_category_j"]["gc"]
    p = run("run", TINY, "--set", "runtime.gc_concurrency=pin", "--set", "runtime.gc_pin_mhz=1000", *fast)
    assert p.returncode == 2 and p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr
    assert "runtime.gc_pin_mhz" in p.stderr, p.stderr


def test_gc_service_decides_collections_and_trims():
    """With the GC service no runtime starts a concurrent collection or trims on its own: the
    service's collections replace them, and without scarce memory nothing is trimmed. (Memory is
    never "plentiful" here, so the service does not delay collections past the short run.)"""
    fast = ["--set", "session.time_scale=0.3"]
    p = run("run", TINY, "--json", "--set", "system.gc_service=true", "--set", "system.gc_service_plenty_mib=1000000")
    assert p.returncode == 0, p.stderr
    res = json.loads(p.stdout)
    svc = res["gc_service"]
    causes = [g["cause"] for g in res["gcs"]]
    assert svc["periods"] > 0 and svc["collections"] > 0 and causes.count("GcService") == svc["collections"]
    assert "Background" not in causes
    if svc["scarce_periods"] == 0:
        assert sum(a["trims"] for a in res["per_app"].values()) == 0 and svc["compactions"] == 0
    off = json.loads(run("run", TINY, "--json", *fast).stdout)
    assert off["gc_service"] is None and "Background" in {g["cause"] for g in off["gcs"]}
    p = run("run", TINY, "--set", "system.gc_service_period_ms=0", *fast)
    assert p.returncode == 2 and "system.gc_service_period_ms" in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_an_unknown_policy_and_an_incompatible_combination_fail_before_any_run(tmp_path):
    """In run, compare and sweep alike: one line, exit 2, no file written (the policies are
    installed on a throwaway runtime when the inputs are checked)."""
    for bad, why in (("system.policies=nosuch", 'unknown runtime policy "nosuch"'), ("system.collector=ms", "needs a copying collector")):
        for cmd in (
            ("run", TINY, "--system", "fleet", "--out", str(tmp_path / "r")),
            ("compare", TINY, "--systems", "stock,fleet", "--out", str(tmp_path / "c")),
            ("sweep", TINY, "--systems", "stock,fleet", "--grid", "kernel.swappiness=60,100", "--out", str(tmp_path / "s")),
        ):
            p = run(*cmd, "--set", bad)
            assert p.returncode == 2 and p.stderr.count("\n") == 1 and why in p.stderr, (cmd, p.stderr)
            assert not [f for f in tmp_path.rglob("*") if f.is_file()], cmd


def test_a_comparison_is_carried_by_its_summary_record_alone(tmp_path):
    """Each finished run's summary is also kept, gzipped, in DIR/record/SYSTEM/seed-N.json.gz:
    copied into a new --out directory, the record lets --resume reuse every run without its run
    directory, with the same results; a damaged record file is a run redone, not an error."""
    import gzip
    import shutil

    out = tmp_path / "a"
    a = jrun("compare", TINY, "--systems", "stock,cmc", "--seeds", "1", "--out", str(out))
    files = sorted(str(p.relative_to(out)) for p in (out / "record").rglob("*.json.gz"))
    assert files == ["record/cmc/seed-1.json.gz", "record/stock/seed-1.json.gz"]
    summary = (out / "runs" / "cmc" / "seed-1" / "summary.json").read_text()
    assert gzip.decompress((out / files[0]).read_bytes()).decode() == summary
    moved = tmp_path / "b"
    shutil.copytree(out / "record", moved / "record")
    p = run("compare", TINY, "--systems", "stock,cmc", "--seeds", "1", "--out", str(moved), "--resume", "--json")
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("reused") == 2 and not (moved / "runs").exists(), p.stderr
    b = json.loads(p.stdout)
    assert b["aggregate"] == a["aggregate"]
    assert [strip_wall(r["summary"]) for r in b["runs"]] == [strip_wall(r["summary"]) for r in a["runs"]]
    # A record file cut short: that run is made again (and kept again); the other is reused.
    (moved / files[0]).write_bytes((moved / files[0]).read_bytes()[:100])
    p = run("compare", TINY, "--systems", "stock,cmc", "--seeds", "1", "--out", str(moved), "--resume")
    assert p.returncode == 0 and p.stderr.count("reused") == 1, p.stderr
    assert gzip.decompress((moved / files[0]).read_bytes()).decode() == (moved / "runs" / "cmc" / "seed-1" / "summary.json").read_text()
