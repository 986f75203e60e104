"""The simulator LBO back end: runs the runtime model's collectors on the simulated GCBench."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mobmem.errors import MobmemError

ROOT = Path(__file__).resolve().parents[2]


def sim_lbo(*args: str) -> list[str]:
    """The command line of a simulator LBO study."""
    return [sys.executable, "-m", "mobmem", "lbo", "--backend", "sim", *args]


def run_study(out, *args: str) -> dict:
    """Run a simulator LBO study into ``out`` (quiet, JSON); its lbo.json."""
    r = subprocess.run(sim_lbo(*args, "--out", str(out), "--json", "-q"), capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads((out / "lbo.json").read_text())


def test_sim_lbo_small_study(tmp_path):
    out = tmp_path / "lbo"
    data = run_study(out, "--workloads", "gcbench-small", "--collectors", "ss,cc,nogc", "--heaps", "2", "--range", "4", "--invocations", "2")
    text = json.dumps(data)
    assert "gcbench-small" in text
    # Records: every invocation ran and succeeded.
    recs = [json.loads(l) for l in (out / "results.jsonl").read_text().splitlines() if l.strip()]
    measured = [x for x in recs if x.get("status")]
    assert measured and all(x["status"] == "ok" for x in measured), [x.get("status") for x in measured]
    # The simulator is deterministic: the same configuration gives the same cost in every invocation.
    by_cfg: dict[str, set] = {}
    for x in measured:
        key = json.dumps(x.get("params", x.get("config")), sort_keys=True)
        by_cfg.setdefault(key, set()).add(json.dumps(x.get("metrics"), sort_keys=True))
    assert by_cfg and all(len(v) == 1 for v in by_cfg.values())


def test_sim_backend_rejects_unknown_names():
    r = subprocess.run(
        sim_lbo("--workloads", "gcbench", "--collectors", "G1", "--heaps", "2"),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode == 2 and "unknown simulator collector 'G1'" in r.stderr and "Traceback" not in r.stderr


# a small app: a 12 MiB heap re-creating 2 MiB/s, run until it allocated 20 MiB (the LBO backend
# takes any `app:SPEC[@SIZE]`)
APP = "app:synthetic:footprint=12m,objsize=256,rate=2m@20m"


def test_sim_app_workload_is_fixed_work_and_seeded():
    from mobmem.harness.implementation import Parameters, RunContext
    from mobmem.lbo.backends.sim import SimRun

    r = SimRun()
    outs = [
        r.run(Parameters({"workload": APP, "collector": c, "heap_mb": 18, "invocation": i}), RunContext(i, "measure", "."))
        for c, i in (("cc", 0), ("cc", 1), ("nogc", 0))
    ]
    assert all(o.status == "ok" for o in outs), [o.error for o in outs]
    cc0, cc1, nogc = (o.metrics for o in outs)
    # Different seeds draw different object graphs; the same seed is bit-identical.
    assert cc0 != cc1
    again = r.run(Parameters({"workload": APP, "collector": "cc", "heap_mb": 18, "invocation": 0}), RunContext(0, "measure", "."))
    assert again.metrics == cc0
    # Fixed work: the collector changes the cost, not the amount of simulated time the frames span.
    assert abs(cc0["wall_s"] - nogc["wall_s"]) / nogc["wall_s"] < 0.05
    assert cc0["task_clock_gc_s"] > 0 and nogc["task_clock_gc_s"] == 0 and nogc["wall_gc_s"] == 0
    # Distilled, the collector's cost is gone: what is left is the app's own work, which a no-GC
    # run does too (so no-GC's LBO is close to 1 — its locality costs only).
    distilled = cc0["task_clock_s"] - cc0["task_clock_gc_s"]
    assert abs(distilled - nogc["task_clock_s"]) / nogc["task_clock_s"] < 0.01, (distilled, nogc)


def test_sim_backend_defaults_to_its_own_collectors():
    """Without --collectors a study compares the back end's collectors, not the JVM's names."""
    from mobmem import catalog
    from mobmem.lbo.backends.jvm import JvmBackend
    from mobmem.lbo.backends.sim import SimBackend

    be = SimBackend()
    assert be.default_collectors == catalog.collector_names() and "cc" in be.default_collectors
    assert be.check(["gcbench-small"], list(be.default_collectors))[1] == be.default_collectors
    assert "G1" in JvmBackend.default_collectors


def test_sim_lbo_stops_on_ctrl_c_within_a_second(tmp_path):
    """SIGINT during a simulator sweep stops it at once (the model's calls wait interruptibly),
    with one 'interrupted' line and exit 130."""
    import signal

    out = tmp_path / "lbo"
    args = sim_lbo(
        "--workloads",
        "gcbench",
        "--collectors",
        "cc,ss",
        "--heaps",
        "3",
        "--invocations",
        "3",
        "--out",
        str(out),
    )
    p = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()  # the first progress message: the sweep is under way
        assert line, "no progress line"
        p.send_signal(signal.SIGINT)
        p.wait(timeout=20)  # the whole sweep takes longer: a sweep that ignored the signal fails here
        stderr = p.stderr.read()
    finally:
        p.kill()
    assert p.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr


def test_app_all_stands_for_every_app_profile():
    from mobmem import catalog
    from mobmem.lbo.backends.sim import SimBackend

    ws, _ = SimBackend().check(["app:all", "gcbench-small"], ["cc"])
    assert ws == [f"app:{a}@12x" for a in catalog.names("apps")] + ["gcbench-small"]
    # The run length is part of the workload's name: --app-alloc sets it where the name does not.
    ws, _ = SimBackend(app_alloc="256M").check(["app:all", "app:twitter@2g"], ["cc"])
    assert ws[0] == f"app:{catalog.names('apps')[0]}@256m" and ws[-1] == "app:twitter@2g"


def test_parallel_invocations_give_the_sequential_study(tmp_path):
    """The simulator's invocations are deterministic: run two at a time (and on Ray, where it is
    installed) they give the study the sequential run gives; the JVM back end refuses --jobs."""
    import importlib.util

    args = ["--workloads", "gcbench-small", "--collectors", "ss,cc,nogc", "--heaps", "2", "--range", "4", "--invocations", "2", "-q", "--json"]
    docs = {}
    variants = {"seq": ["--jobs", "1"], "jobs2": ["--jobs", "2"]}
    if importlib.util.find_spec("ray") is not None:
        variants["ray"] = ["--executor", "ray"]
    for name, extra in variants.items():
        r = subprocess.run(sim_lbo(*args, "--out", str(tmp_path / name), *extra), capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 0, r.stderr[-2000:]
        d = json.loads((tmp_path / name / "lbo.json").read_text())
        for m in d["min_heaps"].values():
            m.pop("seconds", None)  # the search's wall time
        docs[name] = {k: v for k, v in d.items() if k not in ("command", "warnings")}
    for name in variants:
        assert docs[name] == docs["seq"], name
    r = subprocess.run(
        [sys.executable, "-m", "mobmem", "lbo", "--backend", "jvm", "--jobs", "2", "--out", str(tmp_path / "jvm")], capture_output=True, text=True
    )
    assert r.returncode == 2 and "one at a time" in r.stderr


def test_sim_app_study_reports_frames_and_runs_baseline_options(tmp_path):
    """An app study with the methodology's baseline options: the no-write-barrier baselines are
    tighter (every LBO stays ≥ 1, and the plain no-GC baseline pays for its barrier), the report
    has the frame tables, and the workload's name carries its allocation volume."""
    out = tmp_path / "lbo"
    args = ["--workloads", "app:telegram", "--app-alloc", "96m", "--collectors", "cc,ss,ss+nw,ss+ne,nogc,nogc+nw"]
    data = run_study(out, *args, "--heaps", "2", "--range", "3", "--invocations", "2", "--jobs", "2")
    assert data["workloads"] == ["app:telegram@96m"] and data["settings"]["allocation per app invocation"] == "96m"
    cells = [c for c in data["cells"] if c["metric"] == "task_clock_s"]
    assert cells and all(c["lbo"] >= 1.0 - 1e-12 for c in cells), cells
    lbo = {(c["collector"], c["multiple"]): c["lbo"] for c in cells}
    m = max(data["multiples"])
    # Wall time: a frame-paced run costs its collections only the delay they cause, so no
    # distilled run undercuts the no-GC runs (subtracting every pause inside a frame did, and
    # put the no-GC baselines above 1: 1.006 here; what remains is the barrier's cost at start-up).
    walls = [c for c in data["cells"] if c["metric"] == "wall_s"]
    assert walls and all(c["lbo"] >= 1.0 - 1e-12 for c in walls), walls
    assert all(c["lbo"] < 1.003 for c in walls if c["collector"].startswith("nogc")), walls
    assert lbo[("nogc", m)] > lbo[("nogc+nw", m)] and lbo[("ss", m)] > lbo[("ss+nw", m)], lbo
    # Frames: a jank ratio and frame-time percentiles per collector and heap multiple.
    side = {(x["metric"], x["collector"]): x["mean"] for x in data["side"]}
    assert ("jank_ratio", "cc") in side and ("frame_p99_ms", "nogc+nw") in side
    # Collections per invocation: fewer at the larger heap, none without a collector.
    small, large = min(data["multiples"]), max(data["multiples"])
    gcs = {(x["collector"], x["multiple"]): x["mean"] for x in data["side"] if x["metric"] == "gc_count"}
    assert gcs[("cc", small)] > gcs[("cc", large)] and gcs[("nogc", None)] == 0, gcs
    report = (out / "report.md").read_text()
    assert "Janky-frame ratio (%)" in report and "P99 frame time (ms)" in report and "Collections per invocation" in report
    # The summary at 2× and 6×: 2× lies between the two measured multiples (1.67×, 3×), so it is
    # interpolated between their geometric means; 6× is beyond the study's range.
    assert "Geometric-mean LBO at 2× and 6× the minimum heap" in report
    row = next(ln for ln in report.splitlines() if ln.startswith("| cc | ≈ "))
    wall2, wall6, cpu2, cpu6 = (c.strip() for c in row.strip("|").split("|")[1:])
    geo = {(g["metric"], g["multiple"]): g["lbo"] for g in data["geomean"] if g["collector"] == "cc"}
    lo, hi = sorted((geo[("task_clock_s", small)], geo[("task_clock_s", large)]))
    assert lo - 5e-4 <= float(cpu2.removeprefix("≈ ")) <= hi + 5e-4 and wall6 == cpu6 == "—", row


def test_sim_lbo_bad_options_get_one_line_errors():
    for args, msg in (
        (["--collectors", "cc+nw"], "+nw (no write barrier) needs a collector that never reads the card table"),
        (["--collectors", "ss+xx"], "unknown option +xx"),
        (["--app-alloc", "-1"], "--app-alloc: expected a positive size"),
        (["--workloads", "app:telegram@lots"], "expected a positive size"),
        (["--workloads", "app:telegram@0x"], "or a multiple of the app's live heap such as 12x"),
        (["--device", "pixel33"], "--device: unknown device 'pixel33' (did you mean 'pixel3'?)"),
    ):
        base = ["--workloads", "app:telegram", "--collectors", "cc", "--heaps", "2"]
        for i in range(0, len(args), 2):
            j = base.index(args[i]) if args[i] in base else None
            if j is None:
                base += args[i : i + 2]
            else:
                base[j + 1] = args[i + 1]
        r = subprocess.run(sim_lbo(*base), capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)


def test_resumed_study_reuses_only_results_of_the_same_code(tmp_path, monkeypatch):
    """Re-running a study into the same directory resumes it; after the simulator changed, its
    records and cached minimum heap are not reused (a study never mixes two models' results)."""
    import mobmem.lbo.backends.sim as sim
    from mobmem.lbo import sweep

    def study(logs: list[str]) -> list[dict]:
        be = sim.SimBackend()
        ws, cs = be.check(["gcbench-small"], ["ss", "nogc"])
        mh = sweep.min_heaps(be, ws, "ss", str(tmp_path), None, logs.append)
        configs = sweep.plan(be, ws, cs, mh, 1, 2.0)
        records, _ = sweep.run_sweep(be, configs, 1, str(tmp_path), log=logs.append)
        return records

    first: list[str] = []
    a = study(first)
    assert len(a) == 2 and any("bisecting" in m for m in first)
    again: list[str] = []
    b = study(again)
    assert [r["run_id"] for r in b] == [r["run_id"] for r in a]
    assert not any("bisecting" in m for m in again) and any("resuming: 2 invocations" in m for m in again), again
    monkeypatch.setattr(sim, "code_version", lambda device=None: "another-model")
    changed: list[str] = []
    c = study(changed)
    assert len(c) == 2 and not {r["run_id"] for r in c} & {r["run_id"] for r in a}
    assert any("found with other code" in m for m in changed) and any("2 invocations" in m and "other code" in m for m in changed), changed
    assert not any(m.startswith("resuming") for m in changed)
    # Re-analysing (--report-only) runs nothing and reads this code's runs; with newer code it
    # reads the runs of the one version that made them, and refuses to mix two versions.
    be = sim.SimBackend()
    ws, cs = be.check(["gcbench-small"], ["ss", "nogc"])
    logs: list[str] = []
    mh = sweep.min_heaps(be, ws, "ss", str(tmp_path), None, logs.append, any_code=True)
    assert not any("bisecting" in m for m in logs)
    configs = sweep.plan(be, ws, cs, mh, 1, 2.0)
    assert {r["run_id"] for r in sweep.load_sweep(be, configs, str(tmp_path))[0]} == {r["run_id"] for r in c}
    monkeypatch.setattr(sim, "code_version", lambda device=None: "a-third-model")
    configs = sweep.plan(be, ws, cs, mh, 1, 2.0)
    with pytest.raises(MobmemError, match="different versions of the code"):
        sweep.load_sweep(be, configs, str(tmp_path))
