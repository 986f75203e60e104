"""Minimum mutator utilisation: the exact candidate-point computation against brute force over
every integer window position (exact for integer stops and windows, where the stopped time in a
window is piecewise linear with integer breakpoints), and on a session."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from mobmem.session.mmu import merge, mmu

ROOT = Path(__file__).resolve().parents[2]


def brute(intervals, span, w):
    t0, t1 = span
    iv = merge(intervals)
    worst = 0
    for t in range(t0, t1 - w + 1):
        stopped = sum(max(0, min(b, t + w) - max(a, t)) for a, b in iv)
        worst = max(worst, stopped)
    return 1 - worst / w


stops = st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)).map(lambda p: (p[0], p[0] + p[1])), max_size=12)


@settings(max_examples=300, deadline=None)
@given(stops, st.integers(1, 120))
def test_mmu_equals_brute_force(intervals, w):
    span = (0, 240)
    got = mmu(intervals, span, [w])[0]
    assert abs(got - brute(intervals, span, w)) < 1e-9


def test_edges():
    assert mmu([], (0, 100), [10, 200]) == [1.0, None]
    assert mmu([(0, 100)], (0, 100), [10]) == [0.0]
    # one 5-unit pause: windows up to 5 can be fully stopped, a 10-unit window half
    assert mmu([(50, 55)], (0, 100), [1, 5, 10, 100]) == [0.0, 0.0, 0.5, 0.95]
    # overlapping stops count once
    assert mmu([(10, 20), (15, 25)], (0, 100), [100]) == [0.85]


def test_session_mmu_reaches_zero_at_its_pauses():
    import mobmem

    r = mobmem.run(str(ROOT / "tests/python/data/session_tiny.toml"))
    m = r.mmu
    stops = r.mutator_stops
    assert len(stops) > 0 and set(stops["kind"]) <= {"pause", "wait", "checkpoint"}
    for app, g in m.groupby("app"):
        vals = [v for v in g.sort_values("window_ms")["mmu"] if v is not None]
        assert all(0.0 <= v <= 1.0 for v in vals)
        longest = stops[stops["app"] == app]["dur_ms"].max()
        if longest == longest and longest >= 1.0:  # a stop of at least the smallest window
            assert vals[0] == 0.0, (app, vals)
