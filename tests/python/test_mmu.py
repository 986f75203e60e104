"""Minimum mutator utilisation of a session (the exact computation is tested against brute
force in the core, crates/device/src/session/mmu.rs): curves reach 0 at a run's pauses, and a
result saved without curves gets the same ones from its mutator stops."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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


def test_older_results_get_the_curves_the_run_recorded():
    import mobmem
    from mobmem.api import _older_mmu

    r = mobmem.run(str(ROOT / "tests/python/data/session_tiny.toml"))
    assert _older_mmu(r.raw) == r.raw["mmu"] and len(r.raw["mmu"]) > 0
