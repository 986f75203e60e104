"""`mobmem plot RUN_DIR` and `mobmem report RUN_DIR --html`: figures and one self-contained HTML
page from a run directory (and a comparison's), checked for content and, where Chromium is
installed, rendered in a headless browser driven by Playwright (no page errors, every figure
drawn with a non-zero size)."""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TINY = str(ROOT / "tests/python/data/session_tiny.toml")
MOBMEM = [sys.executable, "-m", "mobmem"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("run") / "r"
    subprocess.run([*MOBMEM, "run", TINY, "--set", "session.app_sample_ms=500", "--out", str(d)], check=True, capture_output=True, cwd=ROOT)
    return d


@pytest.fixture(scope="module")
def compare_dir(tmp_path_factory) -> Path:
    """Two systems × two seeds; the baseline (stock) sorts after the other by name."""
    d = tmp_path_factory.mktemp("cmp") / "c"
    subprocess.run([*MOBMEM, "compare", TINY, "--systems", "stock,noswap", "--seeds", "2", "--out", str(d)], check=True, capture_output=True, cwd=ROOT)
    return d


class _Tables(HTMLParser):
    """The page's tables with an id: id → rows of cell texts (the header row first)."""

    def __init__(self):
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._id = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "table" and dict(attrs).get("id"):
            self._id = dict(attrs)["id"]
            self.tables[self._id] = []
        elif self._id and tag == "tr":
            self.tables[self._id].append([])
        elif self._id and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table":
            self._id = None
        elif self._id and tag in ("td", "th") and self._cell is not None:
            self.tables[self._id][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables_of(page: str) -> dict[str, list[dict[str, str]]]:
    p = _Tables()
    p.feed(page)
    return {k: [dict(zip(rows[0], r)) for r in rows[1:]] for k, rows in p.tables.items()}


def _num(cell: str) -> float:
    return float(cell.replace(",", ""))


def test_html_report_of_a_comparison_has_its_statistics(compare_dir):
    r = subprocess.run([*MOBMEM, "report", str(compare_dir), "--html"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = (compare_dir / "report.html").read_text()
    t = tables_of(page)
    stats, per_app, runs = t["statistics"], t["statistics-per-app"], t["runs"]
    # Systems in the comparison's order: stock, its first system, is the baseline.
    assert list(stats[0]) == ["metric", "stock mean", "stock 95 % CI", "noswap mean", "noswap 95 % CI", "noswap vs stock"]
    assert list(runs[0]) == ["metric", "stock seed 1", "stock seed 2", "noswap seed 1", "noswap seed 2"]
    assert len(stats) == len(runs) and per_app
    # Every interval is of two seeds: flagged, and none has a negative bound.
    intervals = [row[c] for row in stats + per_app for c in row if c.endswith("95 % CI") and row[c]]
    assert intervals and all(ci.endswith("†") and not re.search(r"[-−]\s*\d", ci) for ci in intervals), intervals
    assert "fewer than 3 seeds" in page
    # Against the baseline: the ratio with its interval and Welch's p-value.
    vs = [row["noswap vs stock"] for row in stats + per_app]
    assert any(re.fullmatch(r"×[\d.]+ \[[^\]]+\]†? \((n\.s\., )?p [=<] [\d.e-]+\)", v) for v in vs), vs
    assert all(v == "—" or v.startswith("×") for v in vs)
    # Every run's value, the same as compare_runs.csv; each mean is the mean of its runs.
    by_run = {(x["system"], x["seed"]): x for x in csv.DictReader((compare_dir / "compare_runs.csv").open())}
    gcs = next(row for row in runs if row["metric"] == "GCs")
    for (system, seed), x in by_run.items():
        assert _num(gcs[f"{system} seed {seed}"]) == round(float(x["gc_count"]))
    energy = next(row for row in runs if row["metric"] == "CPU energy J")
    mean = next(row for row in stats if row["metric"] == "CPU energy J")
    for s in ("stock", "noswap"):
        assert abs(_num(mean[f"{s} mean"]) - (_num(energy[f"{s} seed 1"]) + _num(energy[f"{s} seed 2"])) / 2) <= 0.1


def test_html_report_of_a_comparison_stopped_part_way(compare_dir, tmp_path):
    # No compare.json and a run missing: the page still has the statistics of the runs there,
    # the systems in name order with that said.
    part = tmp_path / "part"
    shutil.copytree(compare_dir / "runs", part / "runs")
    shutil.rmtree(part / "runs" / "noswap" / "seed-2")
    r = subprocess.run([*MOBMEM, "report", str(part), "--html"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = (part / "report.html").read_text()
    stats = tables_of(page)["statistics"]
    assert "stock vs noswap" in stats[0] and "name order" in page
    one = next(row for row in stats if row["metric"] == "GCs")
    assert one["noswap 95 % CI"] == "" and one["stock 95 % CI"].endswith("†") and one["stock vs noswap"] == "—"


def _labelled(ax) -> bool:
    """An axis label that names its unit in parentheses at its end: ``time to initial display (ms)``."""
    return bool(re.search(r"\([^()]+\)$", ax.get_ylabel()))


def _axes_with_data(fig):
    return [ax for ax in fig.axes if ax.get_visible() and (ax.lines or ax.collections or ax.patches)]


@pytest.mark.parametrize("which", ["run", "compare"])
def test_every_panel_has_axis_labels_with_units(which, run_dir, compare_dir):
    from mobmem.session import plots

    runs = plots.load_runs(run_dir if which == "run" else compare_dir)
    figs = plots.figures(runs)
    plt = plots._plt()
    try:
        assert len(figs["memory"].axes) == 1 + len(set(runs[next(iter(runs))][0].app_memory["app"]))
        for name, fig in figs.items():
            for ax in _axes_with_data(fig):
                assert _labelled(ax), (name, ax.get_title(), ax.get_ylabel())
                # x: labelled here, or shared with a labelled panel (a stack of panels on one time axis)
                xlabels = [a.get_xlabel() for a in ax.get_shared_x_axes().get_siblings(ax)]
                assert any(xlabels), (name, ax.get_title())
                unit = any(re.search(r"\([^()]+\)$", x) for x in xlabels)
                assert unit or (name == "launches" and ax.get_xlabel() == "app"), (name, ax.get_title(), xlabels)
        # Counts get whole-number ticks.
        ticks = figs["cached_apps"].axes[0].get_yticks()
        assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)
    finally:
        for f in figs.values():
            plt.close(f)


def test_launches_are_points_named_by_system(compare_dir):
    from matplotlib.patches import PathPatch
    from mobmem.session import plots

    runs = plots.load_runs(compare_dir)
    fig = plots.fig_launches(runs)
    try:
        launches = plots.launches_frame(runs)
        counts = launches.groupby(["kind", "app", "system"]).size()
        drawn = 0
        for ax in fig.axes:
            points = sum(len(c.get_offsets()) for c in ax.collections)
            drawn += points
            # a box only for a group of at least MIN_BOX launches (none here: two seeds, a launch or two each)
            assert sum(isinstance(p, PathPatch) for p in ax.patches) == 0 and (counts < plots.MIN_BOX).all()
            legend = [t.get_text() for t in ax.get_legend().get_texts()]
            assert legend == ["stock", "noswap"], legend
            assert not re.search(r"\bC\d=", ax.get_title()), ax.get_title()
        assert drawn == len(launches)  # every launch a point, the one-launch groups too
    finally:
        plots._plt().close(fig)


def test_every_app_has_its_own_colour_in_every_figure(compare_dir):
    import itertools
    import math

    from matplotlib.colors import to_rgb
    from mobmem.session import plots

    for n in (1, 10, 18, 25, 60, 70):
        apps = [f"app{i}" for i in range(n)]
        colors = plots.app_colors(apps)
        assert len(set(colors.values())) == n and colors == plots.app_colors(apps)
        if 1 < n <= 25:  # well apart, not shades a reader cannot tell apart
            assert min(math.dist(a, b) for a, b in itertools.combinations(colors.values(), 2)) > 0.2
    runs = plots.load_runs(compare_dir)
    figs = plots.figures(runs)
    try:
        colors = plots.app_colors(plots._apps(runs))
        scatters = [c for c in figs["activity"].axes[0].collections if not c.get_label().startswith("_")]
        assert scatters, "one labelled scatter per app"
        for c in scatters:
            label = c.get_label()  # the app's name, shortened with "…" when long
            app = next(a for a in colors if a == label or (label.endswith("…") and a.startswith(label[:-1])))
            assert tuple(to_rgb(c.get_facecolor()[0])) == pytest.approx(colors[app]), label
        assert len({tuple(c.get_facecolor()[0]) for c in scatters}) == len(scatters)
    finally:
        for f in figs.values():
            plots._plt().close(f)


def test_fleet_curve_counts_apps_on_whole_numbers():
    from mobmem.session.plots import _plt
    from mobmem.session.studies import fleet

    # Curves of one to three apps: matplotlib's own ticks would fall on halves.
    exp = {
        "title": "t",
        "results": {"stock/1": {"cached_apps": {"alive_after_launch": [1, 2, 2, 3]}}, "fleet/1": {"cached_apps": {"alive_after_launch": [1, 2, 3, 3]}}},
    }
    fig = fleet.curve_figure(exp, ["stock", "fleet"], [1])
    try:
        ax = fig.axes[0]
        assert all(float(t).is_integer() for t in ax.get_yticks()) and all(float(t).is_integer() for t in ax.get_xticks())
        assert _labelled(ax) and ax.get_xlabel()
    finally:
        _plt().close(fig)


def test_plot_writes_every_figure(run_dir):
    r = subprocess.run([*MOBMEM, "plot", str(run_dir)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in ("cached_apps", "memory", "launches", "activity", "mmu"):
        png, svg = run_dir / "plots" / f"{name}.png", run_dir / "plots" / f"{name}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000, name
        assert "<svg" in svg.read_text()[:2000], name
    # the per-app memory figure names the meminfo categories and every app
    svg = (run_dir / "plots" / "memory.svg").read_text()
    assert "Java heap" in svg and "native heap" in svg and "twitter" in svg


def test_plot_of_a_comparison_and_bad_input(compare_dir, tmp_path):
    out = compare_dir
    r = subprocess.run([*MOBMEM, "plot", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "noswap" in (out / "plots" / "launches.svg").read_text()
    for args, msg in (([str(tmp_path / "nothing")], "not a run or compare directory"), ([str(out), "--format", "gif"], "--format")):
        r = subprocess.run([*MOBMEM, "plot", *args], capture_output=True, text=True)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and msg in r.stderr, r.stderr


def test_html_report_is_self_contained(run_dir):
    r = subprocess.run([*MOBMEM, "report", str(run_dir), "--html"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = (run_dir / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 5
    # nothing to fetch: no script, no source, links only to the page's own SVG elements
    assert "src=" not in page and "<script" not in page and not re.search(r'href="(?!#)', page)
    assert "cold" in page and "twitter" in page and "mobmem report" in page
    r = subprocess.run([*MOBMEM, "report", str(run_dir)], capture_output=True, text=True)
    assert r.returncode == 2 and "--html" in r.stderr


def _chromium() -> str | None:
    return os.environ.get("MOBMEM_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def test_html_report_renders_in_a_headless_browser(run_dir):
    browser = _chromium()
    if not browser:
        pytest.skip("no Chromium here (apt-get install chromium); the page's content is checked above")
    playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
    page_path = run_dir / "report.html"
    if not page_path.exists():
        subprocess.run([*MOBMEM, "report", str(run_dir), "--html"], check=True, capture_output=True)
    flags = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=browser, headless=True, args=flags)
        try:
            pg = b.new_page()
            errors: list[str] = []
            pg.on("pageerror", lambda e: errors.append(str(e)))
            pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            pg.goto(page_path.as_uri())
            sizes = pg.eval_on_selector_all("figure svg", "els => els.map(e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height])")
            assert len(sizes) == 5 and all(w > 100 and h > 100 for w, h in sizes), sizes
            assert pg.eval_on_selector_all("table.t", "els => els.length") >= 2
            assert errors == []
        finally:
            b.close()
