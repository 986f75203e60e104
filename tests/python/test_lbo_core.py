"""LBO arithmetic, heap spacing, minimum-heap bisection, back-end selection and CLI input checks."""

import math

import numpy as np
import pytest
from conftest_eval import load_cli
from mobmem.errors import MobmemError
from mobmem.lbo import analysis
from mobmem.lbo.backends import get_backend
from mobmem.lbo.heaps import find_min_heap, heap_multiples, heap_sizes_mb
from typer.testing import CliRunner


def test_spacing_rule_matches_the_formula():
    n, r, sf = 9, 6.0, 1.0
    s = lambda k: k + sf / (n - 1) * k * (k - 1) / 2  # noqa: E731
    expect = [1 + (r - 1) * s(k) / s(n) for k in range(1, n + 1)]
    got = heap_multiples(n, r, sf)
    assert got == pytest.approx(expect)
    assert got[-1] == pytest.approx(6.0) and got[0] == pytest.approx(1.37037, rel=1e-4)
    gaps = np.diff(got)
    assert np.all(np.diff(gaps) > 0)  # closer together at the small end
    assert np.allclose(np.diff(heap_multiples(5, 3, 0)), 0.4)  # sf = 0: even spacing
    assert heap_sizes_mb(27, [1.37037, 6.0]) == [37, 162]


@pytest.mark.parametrize("bad", [(0, 6, 1), (9, 0.5, 1), (9, 6, -1), (9, float("nan"), 1), (9, float("inf"), 1), (9, 6, float("nan")), (9, 6, float("inf"))])
def test_spacing_rejects_bad_input(bad):
    with pytest.raises(MobmemError):
        heap_multiples(*bad)


@pytest.mark.parametrize("true_min,start", [(37, 64), (300, 64), (5, 64), (1, 8)])
def test_min_heap_bisection_finds_the_threshold(true_min, start):
    r = find_min_heap(lambda h: "ok" if h >= true_min else "oom", start_mb=start, tolerance=0.0)
    assert r.min_heap_mb == true_min


def test_min_heap_retries_crashes_and_treats_timeouts_as_too_small():
    calls = {}

    def probe(h):
        calls[h] = calls.get(h, 0) + 1
        if h == 48 and calls[h] == 1:
            return "crash"  # transient crash: retried
        if h < 40:
            return "timeout"
        return "ok"

    r = find_min_heap(probe, start_mb=64, tolerance=0.0)
    assert r.min_heap_mb == 40
    assert (48, "crash") in r.probes and calls[48] == 2


def _rec(w, c, m, inv, total, stw, heap=100, status="ok", failure=None):
    return {
        "params": {"workload": w, "collector": c, "heap_mb": heap, "multiple": m},
        "status": status,
        "info": {"heap_mb": heap, **({"failure": failure} if failure else {})},
        "metrics": {"wall_s": total, "wall_stw_s": stw} if status == "ok" else {},
        "run_id": f"{w}{c}{m}{inv}",
    }


def test_lbo_against_hand_computation():
    recs = []
    for i in range(4):
        e = 0.001 * (i - 1.5)
        recs += [_rec("w", "A", 2.0, i, 12.0 + e, 3.0), _rec("w", "B", 2.0, i, 11.0 + e, 0.5), _rec("w", "NoGC", None, i, 10.5 + e, 0.0)]
    recs.append(_rec("w", "A", 2.0, 9, 0, 0, status="failed", failure="oom"))
    res = analysis.compute(recs, [("wall_s", "wall_stw_s", "wall")], n_boot=500)
    cells = {c.collector: c for c in res["cells"]}
    # distilled: A 9.0, B 10.5, NoGC 10.5 -> MDC 9.0 (from A)
    assert cells["A"].mdc == pytest.approx(9.0) and cells["A"].mdc_collector == "A"
    assert cells["A"].lbo == pytest.approx(12.0 / 9.0)
    assert cells["B"].lbo == pytest.approx(11.0 / 9.0)
    assert cells["NoGC"].lbo == pytest.approx(10.5 / 9.0)
    assert cells["A"].abs_overhead == pytest.approx(3.0)
    assert cells["A"].n_failed == 1 and cells["A"].failures == {"oom": 1}
    for c in cells.values():
        assert c.ci_low <= c.lbo * 1.0001 and c.ci_high >= c.lbo * 0.9999
    assert analysis.fmt_lbo(1.169, 1.169 * (1 - 0.0258), 1.169 * (1 + 0.0258)) == "1.169 ±2.58 %"
    assert analysis.fmt_lbo(float("nan"), None, None) == "—"


def test_geomean_over_workloads():
    recs = []
    for w, (ta, tb) in {"x": (2.0, 1.0), "y": (8.0, 1.0)}.items():
        for i in range(3):
            recs += [_rec(w, "A", 1.5, i, ta + 0.001 * i, 0.0), _rec(w, "B", 1.5, i, tb + 0.001 * i, 0.0)]
    res = analysis.compute(recs, [("wall_s", "wall_stw_s", "wall")], n_boot=300)
    g = next(x for x in res["geomean"] if x["collector"] == "A")
    assert g["lbo"] == pytest.approx(math.sqrt(2.0 / 1.001 * 8.0 / 1.001), rel=1e-3) and g["complete"]


def test_backends_by_name():
    assert get_backend("sim").name == "sim"
    with pytest.raises(MobmemError, match="unknown LBO back end"):
        get_backend("qemu")


lbo = load_cli("lbo")


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--backend", "sim", "--collectors", "G1"], "unknown simulator collector 'G1'"),
        (["--backend", "quantum"], "unknown LBO back end"),
        (["--collectors", "G1,Bogus"], "unknown collector 'Bogus'"),
        (["--heaps", "-3"], "--heaps must be"),
        (["--invocations", "0"], "--invocations must be"),
        (["--workloads", "nope"], "unknown JVM workload"),
        (["--min-heap", "gcbench=-5"], "heap size must be positive"),
        (["--range", "0.5"], "heap range"),
        (["--range", "nan"], "heap range"),
        (["--spacing", "nan"], "spacing factor"),
    ],
)
def test_lbo_cli_bad_input_exits_2(args, msg, tmp_path):
    r = CliRunner().invoke(lbo.app, args + ["--out", str(tmp_path / "o")])
    assert r.exit_code == 2, r.output
    assert msg in r.output and "Traceback" not in r.output


def test_lbo_cli_malformed_option_exits_2():
    r = CliRunner().invoke(lbo.app, ["--heaps", "nine"])
    assert r.exit_code == 2 and "Traceback" not in r.output


def test_a_torn_minheap_record_is_a_clear_error(tmp_path):
    """A minheap.json cut short (a crash mid-write of an older version) or of the wrong shape is
    reported with its file and position, not a traceback; the record is written atomically now."""
    (tmp_path / "minheap.json").write_text('{\n "gcbench/cc": {\n')
    r = CliRunner().invoke(lbo.app, ["--backend", "sim", "--workloads", "gcbench", "--collectors", "cc", "--out", str(tmp_path)])
    assert r.exit_code == 2, r.output
    assert f"{tmp_path / 'minheap.json'}:3:" in r.output and "delete" in r.output and "Traceback" not in r.output
    (tmp_path / "minheap.json").write_text('{"gcbench/cc": 12}')
    r = CliRunner().invoke(lbo.app, ["--backend", "sim", "--workloads", "gcbench", "--collectors", "cc", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "not a minimum-heap record" in r.output, r.output


def test_lbo_at_a_multiple_is_measured_or_interpolated_in_log_log():
    from mobmem.lbo.report import lbo_at

    pts = [(1.37, 1.5), (1.0, 2.0), (4.0, 1.0), (6.0, 1.1)]
    assert lbo_at(pts, 6.0) == (1.1, False)  # a measured multiple is its own value
    # Between 1× (2.0) and 4× (1.0) a power law through both: 2.0 · (x/1)^(−1/2) — at 2×, √2.
    v, approx = lbo_at([(1.0, 2.0), (4.0, 1.0)], 2.0)
    assert approx and v == pytest.approx(math.sqrt(2.0))
    assert lbo_at(pts, 7.0) == (None, False) and lbo_at(pts, 0.5) == (None, False)
    assert lbo_at([(1.0, None), (2.0, float("nan"))], 1.5) == (None, False)
