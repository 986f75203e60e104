"""`mobmem plot RUN_DIR` and `mobmem report RUN_DIR --html`: figures and one self-contained HTML
page from a run directory (and a comparison's), checked for content and, where Chromium is
installed, rendered in a headless browser driven by Playwright (no page errors, every figure
drawn with a non-zero size)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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


def test_plot_of_a_comparison_and_bad_input(tmp_path):
    out = tmp_path / "cmp"
    subprocess.run([*MOBMEM, "compare", TINY, "--systems", "stock,noswap", "--seeds", "1", "--out", str(out)], check=True, capture_output=True, cwd=ROOT)
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
