"""`mobmem run --trace`: the session's timeline as a Perfetto (protobuf) or Chrome JSON trace.

Runs tests/python/data/session_tiny.toml once (two apps, ~9 simulated s) and checks the trace
against the result it came from: every launch and collection is a slice with its duration, the
phases nest inside their collection, the counters carry the samples, the bytes are the same for
the same run, and a bad path is refused before the run. Where Perfetto's trace processor is
installed (``trace_processor_shell`` on PATH or ``MOBMEM_TRACE_PROCESSOR``), it loads the trace and
the slices are queried back through it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from mobmem import session
from mobmem.session import trace

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests/python/data/session_tiny.toml")


@pytest.fixture(scope="module")
def res() -> dict:
    # A small phone so that the tiny scenario also reclaims, and a fine per-app series.
    return session.run(TINY, ["session.app_sample_ms=500"])


def test_protobuf_trace_has_every_launch_and_gc(res, tmp_path):
    p = trace.write_trace(res, tmp_path / "t.perfetto-trace")
    slices = trace.proto_slices(p)
    launches = [s for s in slices if s["name"].endswith(" launch")]
    assert len(launches) == len(res["launches"]) > 0
    for s, l in zip(sorted(launches, key=lambda s: s["ts"]), res["launches"]):
        assert s["process"] == l["app"] and s["track"] == "main"
        assert abs(s["dur"] - l["ttid_ms"] * 1e6) <= 1
        assert s["args"]["ttid_ms"] == pytest.approx(l["ttid_ms"])
        assert s["args"]["cpu_ms"] == pytest.approx(l["breakdown"]["cpu_ms"])
    gcs = [s for s in slices if s["track"] == "HeapTaskDaemon" and " GC (" in s["name"]]
    assert len(gcs) == len(res["gcs"]) > 0
    assert Counter(s["process"] for s in gcs) == Counter(g["app"] for g in res["gcs"])
    phases = [s for s in slices if s["track"] == "HeapTaskDaemon" and " GC (" not in s["name"]]
    assert len(phases) == len(res["gc_phases"]) > 0
    # every phase lies inside a collection of its app
    spans = {}
    for g in gcs:
        spans.setdefault(g["process"], []).append((g["ts"], g["ts"] + g["dur"]))
    for ph in phases:
        assert any(a <= ph["ts"] and ph["ts"] + ph["dur"] <= b for a, b in spans[ph["process"]]), ph
    assert any(ph["name"].endswith("(pause)") for ph in phases)


def test_protobuf_counters_follow_the_series(res, tmp_path):
    p = trace.write_trace(res, tmp_path / "t.pftrace")
    names, values = {}, Counter()
    for pkt in trace.read_proto(p):
        if pkt.HasField("track_descriptor") and pkt.track_descriptor.HasField("counter"):
            names[pkt.track_descriptor.uuid] = pkt.track_descriptor.name
        elif pkt.HasField("track_event") and pkt.track_event.type == 4:  # TYPE_COUNTER
            values[names[pkt.track_event.track_uuid]] += 1
    assert values["free MiB"] == len(res["timeline"])
    assert values["kswapd pages scanned/s"] == len(res["timeline"]) - 1
    assert values["RSS MiB"] == len(res["app_memory"]) > 0


def test_trace_is_deterministic_and_json_matches(res, tmp_path):
    a = trace.write_trace(res, tmp_path / "a.perfetto-trace").read_bytes()
    b = trace.write_trace(res, tmp_path / "b.perfetto-trace").read_bytes()
    assert a == b
    assert trace.write_trace(res, tmp_path / "c.pftrace").read_bytes() == a == trace.write_trace(res, tmp_path / "c.PB").read_bytes()
    j1 = trace.write_trace(res, tmp_path / "a.json").read_bytes()
    assert j1 == trace.write_trace(res, tmp_path / "b.json").read_bytes()
    events = json.loads(j1)
    complete = [e for e in events if e["ph"] == "X"]
    assert len(complete) == len(res["launches"]) + len(res["gcs"]) + len(res["gc_phases"]) + len(res["janky_frames"])
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert set(res["per_app"]) <= names
    assert not list(tmp_path.glob(".*tmp*")), "temporary files left behind"


def test_cli_refuses_a_bad_trace_path_before_running(tmp_path):
    (tmp_path / "f").write_text("a file, not a directory")
    for bad, what in (
        (tmp_path / "f" / "t.json", "is not a directory"),
        (tmp_path, "is a directory"),
        (tmp_path / "t.txt", "'.txt' is not a trace format; use FILE.perfetto-trace"),
        (tmp_path / "t", "no file name ending to tell the format"),
    ):
        r = subprocess.run([sys.executable, "-m", "mobmem", "run", TINY, "--trace", str(bad)], capture_output=True, text=True, cwd=ROOT)
        assert r.returncode == 2, r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and "--trace" in lines[0] and what in lines[0], r.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["f"]


def test_python_api_refuses_an_unknown_trace_format(res, tmp_path):
    from mobmem.api import Result
    from mobmem.errors import MobmemError

    with pytest.raises(MobmemError, match=r"^trace .*t\.txt: '\.txt' is not a trace format"):
        Result(res).trace(tmp_path / "t.txt")
    assert list(tmp_path.iterdir()) == []


def _trace_processor() -> str | None:
    return os.environ.get("MOBMEM_TRACE_PROCESSOR") or shutil.which("trace_processor_shell")


def test_trace_processor_loads_the_trace(res, tmp_path):
    shell = _trace_processor()
    if not shell:
        pytest.skip("Perfetto's trace_processor_shell is not installed (set MOBMEM_TRACE_PROCESSOR); the protobuf is checked by the other tests")
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig

    p = trace.write_trace(res, tmp_path / "t.perfetto-trace")
    tp = TraceProcessor(trace=str(p), config=TraceProcessorConfig(bin_path=shell))
    try:
        n = tp.query("select count(*) as n from slice where name like '% launch'").as_pandas_dataframe()["n"][0]
        assert n == len(res["launches"])
        g = tp.query("select count(*) as n from slice where name like '% GC (%'").as_pandas_dataframe()["n"][0]
        assert g == len(res["gcs"])
    finally:
        tp.close()
