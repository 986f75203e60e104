"""`mobmem report --study`: a study's experiments, its tables and report page, and bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mobmem.session import studies

ROOT = Path(__file__).resolve().parents[2]
MOBMEM = [sys.executable, "-m", "mobmem"]


def run(*args):
    return subprocess.run([*MOBMEM, *args], capture_output=True, text=True, cwd=ROOT)


def test_fleet_study_quick_experiment_writes_its_report(tmp_path):
    page = tmp_path / "docs" / "fleet.md"
    p = run("report", "--study", "fleet", "--quick", "--only", "caching-large", "--out", str(tmp_path / "runs"), "--report", str(page), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["quick"] and doc["systems"] == ["stock", "fleet", "marvin"] and [e["id"] for e in doc["experiments"]] == ["caching-large"]
    rows = doc["experiments"][0]["rows"]
    # Numbers come from the runs: a cached-apps maximum per system, and the runs are on disk.
    for s in ("stock", "fleet"):
        assert rows["cached_max"][s]["n"] == 1 and rows["cached_max"][s]["mean"] >= 1
        assert (tmp_path / "runs" / "caching-large" / "runs" / s / "seed-1" / "summary.json").is_file()
    text = page.read_text()
    assert "mobmem report --study fleet --quick --only caching-large" in text and "A quick run" in text
    assert "caching-small" in text and "were not run" in text
    assert (page.parent / "fleet" / "caching-large.png").is_file() and (page.parent / "fleet" / "caching-large.svg").is_file()
    # --resume reuses the runs: same numbers, no new simulation.
    p2 = run("report", "--study", "fleet", "--quick", "--only", "caching-large", "--out", str(tmp_path / "runs"), "--resume", "--json")
    assert p2.returncode == 0, p2.stderr
    doc2 = json.loads(p2.stdout)
    assert doc2["experiments"][0]["rows"] == rows
    assert doc2["reused_runs"] == doc2["runs"] == len(doc2["systems"]) and doc["reused_runs"] == 0


def test_bad_study_arguments_get_one_line_errors(tmp_path):
    for args, want in (
        (["--study", "nope"], "unknown study 'nope'"),
        (["--study", "fleet", "--only", "bogus", "--quick"], "unknown experiment(s) bogus"),
        (["--study", "fleet", "--resume"], "--resume needs --out"),
        (["--study", "fleet", "--seeds", "0"], "--seeds must be at least 1"),
        (["--study", "fleet", "--jobs", "0"], "--jobs must be at least 1"),
        (["--study", "fleet", "--quick", "--report", str(tmp_path)], "is a directory"),
    ):
        p = run("report", *args)
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        assert p.returncode != 0 and len(lines) == 1 and want in lines[0] and "Traceback" not in p.stderr, (args, p.stderr)


def test_every_study_experiment_names_a_shipped_scenario_and_systems():
    from mobmem import session
    from mobmem.session import systems

    for st in studies.registry().values():
        for e in st.experiments:
            assert session.resolve_scenario(e.scenario).is_file()
        for s in {*st.systems, *st.quick_systems}:
            systems.get(s)


def test_acclaim_study_quick_experiment_compares_every_launch(tmp_path):
    page = tmp_path / "acclaim.md"
    p = run("report", "--study", "acclaim", "--quick", "--only", "fg-refault-3B-A", "--out", str(tmp_path / "runs"), "--report", str(page), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["systems"] == ["stock", "acclaim"] and [e["id"] for e in doc["experiments"]] == ["fg-refault-3B-A"]
    rows = doc["experiments"][0]["rows"]
    # The foreground app is found from the run (its last launch) and drew frames.
    assert rows["fg_ttid"]["stock"]["mean"] > 0 and rows["fg_fps"]["stock"]["mean"] > 0
    # The paper's own refault counts: activating file refaults (the foreground app's are a part
    # of all of them, and the ratio is one of file pages).
    for s in ("stock", "acclaim"):
        assert 0.0 <= rows["activate_ratio"][s]["mean"] <= 1.0
        assert rows["fg_activations"][s]["mean"] >= 0
    text = page.read_text()
    assert "Every launch, TTID in ms" in text and "median change" in text and "| 3 | facebook | cold |" in text
    # The study's summary record (runs/record/EXPERIMENT/SYSTEM/seed-N.json.gz) alone carries
    # every run to a new --out directory: resumed there, nothing runs again and the rows agree.
    import shutil

    moved = tmp_path / "moved"
    shutil.copytree(tmp_path / "runs" / "record", moved / "record")
    assert sorted(p.name for p in (moved / "record" / "fg-refault-3B-A").iterdir()) == ["acclaim", "stock"]
    again = run("report", "--study", "acclaim", "--quick", "--only", "fg-refault-3B-A", "--out", str(moved), "--resume", "--json")
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("reused") == 2 and not (moved / "fg-refault-3B-A").exists(), again.stderr
    assert json.loads(again.stdout)["experiments"][0]["rows"] == rows


def test_thesis_study_quick_experiment_measures_energy_and_mmu(tmp_path):
    page = tmp_path / "thesis.md"
    p = run("report", "--study", "thesis", "--quick", "--only", "cms", "--out", str(tmp_path / "runs"), "--report", str(page), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    # The thesis's baseline: the board's ondemand governor; the GC-aware governor is ondemand + a cap.
    assert doc["systems"] == ["ondemand", "gc-aware", "ondemand+gc-service"]
    rows = doc["experiments"][0]["rows"]
    mean = lambda key, s: rows[key][s]["mean"]  # noqa: E731
    # ondemand scales the frequency below the top (2,266 MHz on the sd800); the GC-aware cap lowers
    # the GC threads' energy below the governor it is built on and makes their work take longer.
    assert mean("mhz", "ondemand") < 2266
    assert mean("gc_energy", "gc-aware") < mean("gc_energy", "ondemand")
    assert mean("gc_cpu", "gc-aware") / mean("gcs", "gc-aware") > mean("gc_cpu", "ondemand") / mean("gcs", "ondemand")
    assert 0.0 <= mean("mmu_1000", "ondemand") <= 1.0
    text = page.read_text()
    assert "CPU energy, J" in text and "MMU at 1000 ms" in text and "`gc-service`" in text
    # An experiment may run a subset of the study's systems: the utilisation sweep.
    p = run("report", "--study", "thesis", "--quick", "--only", "utilization-10", "--out", str(tmp_path / "runs"), "--report", str(page), "--json")
    assert p.returncode == 0, p.stderr
    exp = json.loads(p.stdout)["experiments"][0]
    assert exp["systems"] == ["ondemand", "gc-aware"] and set(exp["rows"]["energy"]) == {"ondemand", "gc-aware"}
    assert exp["rows"]["java_heap_mean"]["ondemand"]["mean"] > 0
    assert "| 10 % | `gc-aware` |" in page.read_text()


def test_thesis_benchmarks_leave_out_frame_rows():
    """Benchmarks are batches of work with no UI: frame rate and jank would describe the workload."""
    from mobmem.session.studies import thesis

    keys = {e.id: {r.key for r in e.rows} for e in thesis.EXPERIMENTS}
    assert not keys["benchmarks"] & {"fps", "jank"}
    assert {"fps", "jank"} <= keys["cms"]


def test_report_help_lists_every_registered_study():
    """The help and the message for a missing --study name the studies of the registry (each
    registered name is its module's STUDY), not a list written into the command."""
    reg = studies.registry()
    assert list(reg) == list(studies.NAMES) and len(reg) >= 3
    h = run("report", "--help")
    assert h.returncode == 0, h.stderr
    text = " ".join(h.stdout.replace("│", " ").split())
    names = list(reg)
    assert f"The study: {', '.join(names[:-1])} or {names[-1]}." in text, text
    r = run("report")
    assert r.returncode == 2 and f"({', '.join(names)})" in r.stderr, r.stderr


def test_thesis_utilisation_table_says_when_two_utilisations_give_the_same_runs():
    from mobmem.session.studies import thesis

    keys = ["energy", "gc_energy", "gcs", "gc_cpu", "ttid", "java_heap_mean"]

    def exp(u: int, v: float) -> dict:
        return {"id": f"utilization-{u}", "systems": ["ondemand"], "rows": {k: {"ondemand": {"mean": v}} for k in keys}}

    same = "\n".join(thesis.utilization_lines({"experiments": [exp(10, 1.0), exp(30, 1.0), exp(50, 2.0)]}))
    assert "The rows at 10 % and 30 % are the same" in same
    assert "50 %" not in same.split("The rows at")[1]
    apart = "\n".join(thesis.utilization_lines({"experiments": [exp(10, 1.0), exp(30, 1.5), exp(50, 2.0)]}))
    assert "are the same" not in apart


def test_fleet_caching_page_says_who_ended_the_apps_from_the_kill_records():
    from mobmem.session.studies import fleet

    def run(*kills):
        """A result with these kills: (t_s, app or None for a system process, reason, killer, swap MiB, free MiB)."""
        recs = [
            {"t_s": t, "name": a or "launcher", "reason": r, "killer": k, **({"swap_used_kb": sw * 1024, "free_kb": fr * 1024} if sw is not None else {})}
            for t, a, r, k, sw, fr in kills
        ]
        return {"kill_records": recs, "kills": [{"t_s": t, "app": a or "launcher", "is_app": a is not None} for t, a, *_ in kills]}

    exp = {
        "results": {
            # The less frequent reason first: the table sorts by count.
            "stock/1": run((1.0, "twitter", "cached #17", "am", 100, 500), (2.0, "facebook", "oom (global)", "kernel", 2000, 30)),
            "stock/2": run((3.0, "maps", "oom (global)", "kernel", 1900, 40), (4.0, None, "oom (global)", "kernel", 5, 900)),
            "fleet/1": run(),
            "fleet/2": run((5.0, "maps", "oom (global)", "kernel", None, None)),
        }
    }
    text = "\n".join(fleet.kill_lines(exp, ["stock", "fleet"], [1, 2]))
    # Apps' kills only (the launcher's is left out), by reason, most frequent first; the median and
    # range of what each kill saw.
    assert "| `stock` | 3 | oom (global) (kernel): 2, cached #17 (am): 1 | 1,900 [100–2,000] | 40 [30–500] |" in text
    # Records without the measurements (older runs) are counted but give no spread.
    assert "| `fleet` | 1 | oom (global) (kernel): 1 | — | — |" in text
