"""`mobmem runtime gclog`: ART GC logs read back. The simulator writes ART's summary lines, so a
run's own log, wrapped in logcat's formats, must give back the run's heap sizes and allocation."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mobmem import runtime as rtm
from mobmem.errors import MobmemError
from mobmem.runtime import gclog as gl

MOBMEM = [sys.executable, "-m", "mobmem"]
MIB = 1024 * 1024


def _mobmem(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, timeout=600)


def _stamp(ns: int) -> str:
    s = ns / 1e9
    return f"03-04 {int(s // 3600):02d}:{int(s % 3600 // 60):02d}:{s % 60:06.3f}"


@pytest.fixture(scope="module")
def run():
    return rtm.run("twitch", seconds=90.0)


def _logcat(run, tmp_path, fmt="threadtime"):
    """The run's GC lines as a logcat capture, among other processes' lines and other messages."""
    lines = ["--------- beginning of main", "03-04 00:00:00.001  1000  1001 I ActivityManager: Start proc 4242:tv.twitch.android.app"]
    for g in run["gcs"]:
        ts = _stamp(g["end_ns"])
        if fmt == "threadtime":
            lines.append(f"{ts}  4242  4250 I tv.twitch.android.app: {g['log']}")
            lines.append(f"{ts}  4242  4242 D OkHttp  : <-- 200 https://example.invalid (12ms)")
        else:
            lines.append(f"{ts} I/art     ( 4242): {g['log']}")
    # Another process collecting at the same time, which --process must leave out.
    lines.append(
        f"{_stamp(run['gcs'][-1]['end_ns'])}  5151  5160 I com.other.app: Background concurrent copying GC freed 1(1MB) AllocSpace objects, 0(0B) LOS objects, 50% free, 9MB/18MB, paused 1ms total 9ms"
    )
    p = tmp_path / f"logcat-{fmt}.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("fmt", ["threadtime", "time"])
def test_a_runs_own_log_gives_back_its_heap_and_allocation(run, tmp_path, fmt):
    gcs = run["gcs"]
    assert len(gcs) >= 10
    path = _logcat(run, tmp_path, fmt)
    with pytest.raises(MobmemError, match="2 processes"):
        gl.read(path)
    cs = gl.read(path, "4242")
    assert [c.cause for c in cs] == [g["cause"] for g in gcs]
    (w,) = gl.windows(cs, [])
    s = w.summary()
    # Exact from the run: allocation between the ends of the first and last collections.
    exact = sum(g["freed_bytes"] + g["freed_los_bytes"] for g in gcs[1:]) + gcs[-1]["bytes_allocated_after"] - gcs[0]["bytes_allocated_after"]
    span = (gcs[-1]["end_ns"] - gcs[0]["end_ns"]) / 1e9
    assert s["span_s"] == pytest.approx(span, abs=2e-3)
    # The log rounds sizes (PrettySize) and times to the millisecond.
    assert s["alloc_mib_per_s"] == pytest.approx(exact / MIB / span, rel=0.03)
    # ... and it is the app's allocation rate: the run allocated at its profile's rate.
    total = run["summary"]["bytes_allocated_total"] / MIB / (run["summary"]["sim_time_ms"] / 1e3)
    assert s["alloc_mib_per_s"] == pytest.approx(total, rel=0.1)
    heap = statistics.median(g["bytes_allocated_after"] / MIB for g in gcs)
    assert s["heap_after_gc_mib"]["median"] == pytest.approx(heap, abs=1.0)
    assert s["young_collections"] == sum(g["gc_type"] == "sticky" for g in gcs)


def test_windows_split_the_log_by_time(run, tmp_path):
    cs = gl.read(_logcat(run, tmp_path), "twitch")
    half = (cs[-1].t - cs[0].t) / 2
    a, b = gl.windows(cs, [gl.parse_window(f"0-{half}"), gl.parse_window(f"{half}-")])
    assert len(a.collections) + len(b.collections) == len(cs) and a.collections and b.collections
    assert max(c.t for c in a.collections) <= min(c.t for c in b.collections)


def test_art_lines_as_a_phone_prints_them():
    """Hand-made lines in ART's format (a Fleet build's debug prefix included): the allocation is
    what the second and third collections freed plus the heap's growth, over 20 s."""
    text = "\n".join(
        [
            "11-29 01:34:50.000  3631  3644 I tch.android.ap: jiacheng LogGC() Background concurrent copying GC freed 193283(17MB) AllocSpace objects, 357(8792KB) LOS objects, 49% free, 22MB/45MB, paused 160us total 975.579ms",
            "11-29 01:35:00.000  3631  3644 I tch.android.ap: Background young concurrent copying GC freed 1000(3MB) AllocSpace objects, 2(1024KB) LOS objects, 40% free, 24MB/45MB, paused 1ms total 10ms",
            "11-29 01:35:10.000  3631  3644 I tch.android.ap: Explicit concurrent copying GC freed 5(512KB) AllocSpace objects, 0(0B) LOS objects, 60% free, 20MB/50MB, paused 2ms,1ms total 1.2s",
        ]
    )
    assert gl.parse("Background concurrent sticky mark sweep GC freed 1(1KB) AllocSpace objects, 0(0B) LOS objects, 9% free, 9MB/10MB, paused 1ms total 5ms")[
        0
    ].young
    cs = gl.parse(text)
    assert [c.cause for c in cs] == ["Background", "Background", "Explicit"] and [c.young for c in cs] == [False, True, False]
    s = gl.windows(cs, [])[0].summary()
    assert s["span_s"] == pytest.approx(20.0)
    assert s["alloc_mib_per_s"] == pytest.approx((3 + 1 + 0.5 + 0 + (20 - 22)) / 20)
    assert s["heap_after_gc_mib"] == {"median": 22.0, "min": 20.0, "max": 24.0}
    assert s["footprint_mib_median"] == 45.0


def _line(stamp: str) -> str:
    return f"{stamp}  1  2 I a: Alloc concurrent copying GC freed 1(1MB) AllocSpace objects, 0(0B) LOS objects, 1% free, 1MB/2MB, paused 1ms total 1ms"


def test_a_log_across_midnight_keeps_counting(tmp_path):
    p = tmp_path / "night.txt"
    p.write_text("\n".join(_line(s) for s in ("03-04 23:59:50.000", "03-04 23:59:55.000", "03-05 00:00:05.000")))
    cs = gl.read(p)
    assert [c.t - cs[0].t for c in cs] == [0.0, 5.0, 15.0]
    # logcat's timestamps have no year: a log across a year's end is refused, with the line.
    p.write_text("\n".join(_line(s) for s in ("12-31 23:59:50.000", "01-01 00:00:05.000")))
    with pytest.raises(MobmemError, match=r"night.txt:2: time goes backwards"):
        gl.read(p)


def test_bad_input_gets_one_line(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("03-04 00:00:01.000  1  2 I x: nothing about GC here\n")
    for args, msg in [
        ((str(tmp_path / "missing.txt"),), "no such file"),
        ((str(tmp_path),), "not a file"),
        ((str(empty),), "no ART GC summary lines"),
        ((str(empty), "--window", "abc"), "--window"),
        ((str(empty), "--window", "9-3"), "end must come after"),
    ]:
        r = _mobmem("runtime", "gclog", *args)
        assert r.returncode == 2, (args, r.stdout, r.stderr)
        assert msg in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_the_command_prints_a_table_and_json(run, tmp_path):
    path = _logcat(run, tmp_path)
    r = _mobmem("runtime", "gclog", str(path), "--process", "4242", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["collections"] == len(run["gcs"]) and doc["windows"][0]["alloc_mib_per_s"] > 0
    r = _mobmem("runtime", "gclog", str(path), "--process", "4242", "--window", "0-30", "--window", "30-")
    assert r.returncode == 0, r.stderr
    assert "0–30" in r.stdout and "30–" in r.stdout


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_parses_or_is_skipped(text):
    """Arbitrary text never breaks the reader: a line is a collection or is not, and each
    collection it finds names a line that holds an ART summary."""
    lines = text.splitlines()
    for c in gl.parse(text):
        assert 1 <= c.line <= len(lines) and " GC freed " in lines[c.line - 1]
