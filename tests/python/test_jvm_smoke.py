"""JVM back end: GC-log parsing, and the smoke LBO CI runs (GCBench, two collectors, two heap sizes,
two invocations — about a minute). Heavier checks (library workloads) run only with MOBMEM_HEAVY=1."""

import json
import os
import shutil

import pytest
from conftest_eval import load_cli
from mobmem.jvm.gclog import parse_gc_log
from typer.testing import CliRunner

HAVE_JVM = shutil.which("java") is not None and shutil.which("cc") is not None
needs_jvm = pytest.mark.skipif(not HAVE_JVM, reason="needs java and a C compiler")

LOG = """[100ns] Using G1
[5000000ns] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 6M->6M(64M) 2.500ms
[6000000ns] GC(0)   Pre Evacuate Collection Set: 0.1ms
[9000000ns] GC(1) Pause Mark Start 0.009ms
[9100000ns] GC(1) Y: Pause Relocate Start 0.011ms
[9200000ns] GC(2) Pause Init Mark (unload classes) 0.014ms
[9300000ns] Allocation Stall (main) 17.534ms
[20000000ns] GC(3) Pause Full (System.gc()) 10M->1M(64M) 4.000ms
"""


def test_gc_log_pauses_of_every_collector_and_window(tmp_path):
    p = tmp_path / "gc.log"
    p.write_text(LOG)
    s = parse_gc_log(str(p))
    assert s.count == 5 and s.total_s == pytest.approx((2.5 + 0.009 + 0.011 + 0.014 + 4.0) / 1000)
    assert s.max_s == pytest.approx(0.004) and s.stalls == 1 and s.stall_total_s == pytest.approx(0.017534)
    w = parse_gc_log(str(p), (8_000_000, 10_000_000))
    assert w.count == 3 and w.stalls == 1


@needs_jvm
def test_one_invocation_in_proc_fallback_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("MOBMEM_CACHE", os.environ.get("MOBMEM_CACHE", os.path.expanduser("~/.cache/mobmem")))
    from mobmem.harness.implementation import Parameters, RunContext
    from mobmem.jvm import jdk
    from mobmem.jvm.workload import JvmWorkloadRun

    impl = JvmWorkloadRun(jdk.select(), measure="proc")
    impl.prepare(["gcbench"])
    o = impl.run(Parameters(workload="gcbench", collector="Serial", heap_mb=64), RunContext(0, "measure", str(tmp_path)))
    assert o.status == "ok", o.info
    m = o.metrics
    assert o.info["measure"] == "proc"
    assert 0 < m["wall_stw_s"] < m["wall_s"] and m["gc_pauses"] > 0
    assert 0 < m["task_clock_stw_s"] < m["task_clock_s"]
    # the agent's own pause clock agrees with the GC log within a few ms per pause
    assert abs(m["agent_stw_wall_s"] - m["wall_stw_s"]) < 0.005 * m["gc_pauses"] + 0.01


@needs_jvm
def test_smoke_lbo_gcbench_two_collectors_two_heaps(tmp_path):
    lbo = load_cli("lbo")
    out = tmp_path / "lbo"
    r = CliRunner().invoke(
        lbo.app,
        [
            "--backend",
            "jvm",
            "--workloads",
            "gcbench",
            "--collectors",
            "Serial,G1",
            "--heaps",
            "2",
            "--range",
            "3",
            "--invocations",
            "2",
            "--out",
            str(out),
            "--json",
            "-q",
        ],
    )
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    assert d["min_heaps"]["gcbench"]["min_heap_mb"] > 4
    cells = [c for c in d["cells"] if c["metric"] == "wall_s"]
    assert len(cells) == 4 and {c["collector"] for c in cells} == {"Serial", "G1"}
    for c in cells:
        assert c["n_ok"] + c["n_failed"] == 2
        if c["n_ok"]:
            assert c["lbo"] >= 1.0 - 1e-9  # nothing can beat the minimum distilled cost by its own total
    assert any(c["lbo"] for c in cells)
    assert {"task_clock_s", "wall_s"} <= set(d["metrics"])
    for f in ("report.md", "results.jsonl", "lbo.json", "minheap.json", "lbo_wall.png", "lbo_wall.svg"):
        assert (out / f).exists(), f
    text = (out / "report.md").read_text()
    assert "Exact command" in text and "Environment record" in text
    # resuming a finished study runs nothing new
    n_lines = len((out / "results.jsonl").read_text().splitlines())
    r2 = CliRunner().invoke(
        lbo.app,
        [
            "--backend",
            "jvm",
            "--workloads",
            "gcbench",
            "--collectors",
            "Serial,G1",
            "--heaps",
            "2",
            "--range",
            "3",
            "--invocations",
            "2",
            "--out",
            str(out),
            "--json",
            "-q",
        ],
    )
    assert r2.exit_code == 0
    runs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if '"type":"run"' in x]
    assert len(runs) == 8 and len((out / "results.jsonl").read_text().splitlines()) == n_lines + 2  # meta + end only


@needs_jvm
@pytest.mark.skipif(not os.environ.get("MOBMEM_HEAVY"), reason="heavy: set MOBMEM_HEAVY=1 (builds Lucene/Xalan/PMD with Maven)")
@pytest.mark.parametrize("workload", ["lusearch", "xalan", "pmd"])
def test_library_workload_runs_and_validates(tmp_path, workload):
    from mobmem.harness.implementation import Parameters, RunContext
    from mobmem.jvm import jdk
    from mobmem.jvm.workload import JvmWorkloadRun

    impl = JvmWorkloadRun(jdk.select())
    impl.prepare([workload])
    o = impl.run(Parameters(workload=workload, collector="G1", heap_mb=512), RunContext(0, "measure", str(tmp_path)))
    assert o.status == "ok", o.info
    assert o.metrics["wall_s"] > 0 and o.metrics["task_clock_s"] > 0
