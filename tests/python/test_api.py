"""The Python API (`mobmem.run`, `load`, `compare`, `sweep`): results as pandas DataFrames with
stable, unit-named columns; sweeps keyed on content, resumable, on local workers or Ray.

Runs on tests/python/data/session_tiny.toml (two apps, ~9 simulated s, ~1 s wall per run)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import mobmem
import pandas as pd
import pytest
from mobmem.errors import MobmemError
from mobmem.session import sweep as sw

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests/python/data/session_tiny.toml")


@pytest.fixture(scope="module")
def r():
    return mobmem.run(TINY, set={"session.app_sample_ms": 500})


def test_tables_are_dataframes_with_unit_named_columns(r):
    assert isinstance(r.launches, pd.DataFrame)
    assert list(r.launches.columns[:6]) == ["index", "t_s", "app", "kind", "relaunch", "ttid_ms"]
    assert r.launches["ttid_ms"].tolist() == [l["ttid_ms"] for l in r.raw["launches"]]
    assert list(r.timeline.columns[:3]) == ["t_s", "free_mib", "anon_mib"] and len(r.timeline) == len(r.raw["timeline"])
    assert {"rss_mib", "pss_mib", "swap_mib"} <= set(r.app_memory.columns) and len(r.app_memory) > 0
    assert len(r.gc) == len(r.raw["gcs"]) and "pause_ms" in r.gc.columns
    assert set(r.gc_phases["gc"]) == set(range(len(r.gc)))
    assert set(r.frames["app"]) == set(r.raw["per_app"]) and (r.frames["frames"] > 0).any()
    assert len(r.apps) == len(r.raw["per_app"])


def test_empty_tables_keep_their_columns_and_zero_counters_are_present(r):
    assert len(r.kills) == 0 and list(r.kills.columns) == [
        "t_s",
        "app",
        "is_app",
        "process",
        "oom_score_adj",
        "reason",
        "killer",
        "rss_kb",
        "swap_kb",
        "swap_used_kb",
        "free_kb",
    ]
    assert list(r.janky_frames.columns) == ["t_s", "app", "dur_ms"]
    vm = dict(zip(r.vmstat["counter"], r.vmstat["value"]))
    assert vm["pswpin"] == 0 and vm["pgfault"] > 0  # zero counters are rows too


def test_load_gives_back_the_same_tables(r, tmp_path):
    r.write(tmp_path / "run")
    back = mobmem.load(tmp_path / "run")
    for name in ("launches", "timeline", "app_memory", "gc", "gc_phases", "kills", "events", "janky_frames"):
        pd.testing.assert_frame_equal(getattr(back, name), getattr(r, name), check_dtype=False, obj=name)
    with pytest.raises(MobmemError, match="no summary.json"):
        mobmem.load(tmp_path)


def test_bad_input_is_one_line():
    with pytest.raises(MobmemError, match="no such scenario"):
        mobmem.run("no_such_scenario")
    with pytest.raises(MobmemError) as e:
        mobmem.run(TINY, set={"kernel.swappiness": "lots"})
    assert "\n" not in str(e.value) and "kernel.swappiness" in str(e.value)


def test_compare_is_tidy():
    df = mobmem.compare(TINY, systems=["stock", "noswap"], seeds=2)
    assert list(df[["system", "seed"]].itertuples(index=False, name=None)) == [("stock", 1), ("noswap", 1), ("stock", 2), ("noswap", 2)]
    assert "cached_max" in df.columns and "aggregate" in df.attrs


def test_sweep_grid_resume_and_content_keys(tmp_path):
    grid = {"kernel.swappiness": [60, 160], "system.collector": ["cc", "cmc"]}
    seen = []
    df = mobmem.sweep(TINY, grid, seeds=1, jobs=2, out=tmp_path / "s", progress=lambda row, reused: seen.append(reused))
    assert len(df) == 4 and seen == [False] * 4
    assert list(df[["kernel.swappiness", "system.collector"]].itertuples(index=False, name=None)) == [
        ("60", "cc"),
        ("60", "cmc"),
        ("160", "cc"),
        ("160", "cmc"),
    ]
    assert df["key"].nunique() == 4 and (tmp_path / "s" / "sweep.csv").is_file()
    # The same scenario under another path and another output directory name: every run reused.
    moved = tmp_path / "elsewhere.toml"
    shutil.copy(TINY, moved)
    shutil.move(tmp_path / "s", tmp_path / "renamed")
    seen.clear()
    again = mobmem.sweep(moved, grid, seeds=1, out=tmp_path / "renamed", resume=True, progress=lambda row, reused: seen.append(reused))
    assert seen == [True] * 4
    pd.testing.assert_frame_equal(again.drop(columns=["scenario"]), df.drop(columns=["scenario"]))
    # Another seed is another run.
    assert sw.run_key(moved, [], "stock", 1) != sw.run_key(moved, [], "stock", 2)


def test_sweep_rejects_bad_grids_before_running(tmp_path):
    for grid, msg in (({"bogus.key": [1]}, "bogus.key"), ({"kernel.swappiness": ["x"]}, "kernel.swappiness=x")):
        with pytest.raises(MobmemError, match=msg):
            mobmem.sweep(TINY, grid, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()
    with pytest.raises(MobmemError, match="KEY=VALUE"):
        sw.parse_grid(["kernel.swappiness"])
    with pytest.raises(MobmemError, match="given twice"):
        sw.parse_grid(["kernel.swappiness=60,60"])
    r = subprocess.run(
        [sys.executable, "-m", "mobmem", "sweep", TINY, "--grid", "kernel.swappiness=60", "--devices", "pixel99"], capture_output=True, text=True
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "pixel99" in r.stderr


def test_sweep_on_ray_gives_the_local_results():
    pytest.importorskip("ray", reason="Ray is not installed here (make setup installs it where it can)")
    grid = {"kernel.swappiness": [60, 160]}
    local = mobmem.sweep(TINY, grid)
    on_ray = mobmem.sweep(TINY, grid, executor="ray")
    pd.testing.assert_frame_equal(on_ray, local)


def test_compare_on_ray_gives_the_local_results():
    pytest.importorskip("ray", reason="Ray is not installed here")
    local = mobmem.compare(TINY, systems=["stock", "noswap"], seeds=1)
    on_ray = mobmem.compare(TINY, systems=["stock", "noswap"], seeds=1, executor="ray")
    pd.testing.assert_frame_equal(on_ray, local)


def test_ray_address_that_does_not_answer_is_one_line():
    pytest.importorskip("ray", reason="Ray is not installed here")
    r = subprocess.run(
        [sys.executable, "-m", "mobmem", "sweep", TINY, "--grid", "kernel.swappiness=60", "--executor", "ray", "--address", "ray://127.0.0.1:1"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "does not answer" in r.stderr, r.stderr


def test_version():
    r = subprocess.run([sys.executable, "-m", "mobmem", "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == f"mobmem {mobmem.__version__}"


def test_every_table_row_has_exactly_the_columns_its_row_type_declares(r):
    from mobmem.session.output import TABLES

    assert set(TABLES) == {"timeline", "events", "gcs", "gc_phases", "janky_frames", "app_memory", "mutator_stops"}
    for table, cols in TABLES.items():
        rows = r.raw.get(table, [])
        assert rows or table == "janky_frames", f"{table}: the tiny run has rows"
        for row in rows:
            assert sorted(row) == sorted(cols), f"{table}: {sorted(row)} != {sorted(cols)}"
