"""Trace generators (mobmem.kernel.tracegen), the pure-LRU reference, and the shipped traces."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    import mobmem  # noqa: F401
except ImportError:  # running from a checkout without the package installed
    sys.path.insert(0, os.path.join(ROOT, "python"))

from mobmem.errors import MobmemError  # noqa: E402
from mobmem.kernel import trace as tr  # noqa: E402
from mobmem.kernel import tracegen as tg  # noqa: E402
from mobmem.kernel import validation as val  # noqa: E402


def _sha(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


SMALL = {
    "seq-scan": {"ram_mib": 4, "size_mib": 6, "passes": 2},
    "seq-scan-anon": {"ram_mib": 4, "size_mib": 6, "passes": 2},
    "zipf": {"ram_mib": 4, "wss_mib": 6, "touches": 5000},
    "app-switch": {
        "ram_mib": 16,
        "swap_mib": 32,
        "apps": 3,
        "switches": 8,
        "touches": 6000,
        "heap_mib": (2, 4),
        "code_mib": (1, 2),
        "res_mib": (1, 1),
        "system_mib": 2,
    },
    "bench": {"touches": 20_000, "ram_mib": 4, "wss_mib": 8, "swap_mib": 16, "switch_every": 3000},
}


@pytest.mark.parametrize("kind", list(tg.GENERATORS))
def test_generators_are_deterministic_and_valid(kind, tmp_path):
    a, b, c = tmp_path / "a.trace", tmp_path / "b.trace", tmp_path / "c.trace"
    sa = tg.GENERATORS[kind](a, seed=3, **SMALL[kind])
    tg.GENERATORS[kind](b, seed=3, **SMALL[kind])
    tg.GENERATORS[kind](c, seed=4, **SMALL[kind])
    assert _sha(a) == _sha(b)
    if kind not in ("seq-scan", "seq-scan-anon"):  # the scans have no randomness
        assert _sha(a) != _sha(c)
    t = tr.parse_trace(a)
    assert t.n_touch_pages == sa["touched_pages"]
    assert sa["lines"] == sum(1 for ln in open(a) if ln.strip() and not ln.startswith("#"))
    assert t.ram_mib is not None and t.swap_kind is not None


@pytest.mark.parametrize("kind", list(tg.GENERATORS))
def test_anon_pages_are_written_before_read(kind, tmp_path):
    """A real read of a never-written anon page maps the zero page: generators never do that."""
    p = tmp_path / "t.trace"
    tg.GENERATORS[kind](p, **SMALL[kind])
    t = tr.parse_trace(p)
    written = [np.zeros(v.pages, bool) for v in t.vmas]
    for i in np.flatnonzero(t.op == tr.OP_TOUCH).tolist():
        v = t.vmas[int(t.vma[i])]
        if v.kind != "anon":
            continue
        a, n = int(t.a[i]), int(t.b[i])
        if t.flag[i] == tr.FLAG_WRITE:
            written[v.index][a : a + n] = True
        else:
            assert written[v.index][a : a + n].all(), f"line {int(t.line[i])} reads unwritten anon pages"


def test_seq_scan_shapes(tmp_path):
    s = tg.seq_scan(tmp_path / "f.trace", kind="file", ram_mib=4, size_mib=6, passes=3, chunk_pages=64)
    t = tr.parse_trace(s["path"])
    assert t.swap_kind == "none" and t.files == {"scan.dat": 6 * 256}
    assert t.n_touch_pages == 3 * 6 * 256
    refs = t.page_references()
    # three identical front-to-back passes
    one = refs[: 6 * 256]
    assert (np.diff(one) == 1).all()
    assert np.array_equal(refs, np.tile(one, 3))
    s = tg.seq_scan(tmp_path / "a.trace", kind="anon", ram_mib=4, size_mib=6)
    t = tr.parse_trace(s["path"])
    assert t.swap_kind == "zram" and t.swap_mib == 12
    with pytest.raises(ValueError):
        tg.seq_scan(tmp_path / "x.trace", ram_mib=8, size_mib=8)


def test_zipf_is_skewed(tmp_path):
    s = tg.zipf_hot(tmp_path / "z.trace", ram_mib=4, wss_mib=8, touches=40_000, alpha=1.0, write_frac=0.25)
    t = tr.parse_trace(s["path"])
    m = (t.op == tr.OP_TOUCH) & (t.b == 1)
    pages = t.a[m]
    counts = np.sort(np.bincount(pages, minlength=8 * 256))[::-1]
    top = counts[: len(counts) // 100].sum() / counts.sum()
    assert top > 0.3  # the hottest 1 % of pages take a large share
    wr = t.flag[m].mean()
    assert 0.22 < wr < 0.28
    # hot pages are scattered, not the first pages
    hottest = np.argsort(np.bincount(pages, minlength=8 * 256))[::-1][:20]
    assert hottest.max() > 256


def test_app_switch_structure(tmp_path):
    s = tg.app_switch(tmp_path / "a.trace", **SMALL["app-switch"])
    t = tr.parse_trace(s["path"])
    assert len(t.procs) == 1 + s["launched"]
    assert t.procs[0].name == "system_server" and t.procs[0].adj == -900
    adj_vals = set(t.a[t.op == tr.OP_ADJ].tolist())
    assert 700 in adj_vals and 0 in adj_vals
    assert any(x >= 900 for x in adj_vals)
    kinds = {(v.kind, v.exec) for v in t.vmas}
    assert ("file", True) in kinds and ("file", False) in kinds and ("anon", False) in kinds
    assert t.total_tick_us > 0
    # pageout of cached apps when asked
    s2 = tg.app_switch(tmp_path / "b.trace", pageout_cached=True, **SMALL["app-switch"])
    t2 = tr.parse_trace(s2["path"])
    assert (t2.op == tr.OP_MADVISE).any()


def test_bench_reaches_touch_count(tmp_path):
    s = tg.bench_large(tmp_path / "b.trace", touches=50_000, ram_mib=4, wss_mib=8, swap_mib=16, procs=3, switch_every=5000)
    t = tr.parse_trace(s["path"])
    assert t.n_touch_pages >= 50_000
    assert t.summary()["anon_pages"] > t.ram_mib * 256  # pressure
    assert len(t.procs) == 3
    assert s["lines"] < t.n_touch_pages / 4  # runs keep the file short


def test_shipped_traces_parse():
    d = os.path.join(ROOT, "traces")
    files = sorted(f for f in os.listdir(d) if f.endswith(".trace")) if os.path.isdir(d) else []
    assert "app_switch.trace" in files
    for f in files:
        t = tr.parse_trace(os.path.join(d, f))
        assert t.n_touch_pages > 0
    t = tr.parse_trace(os.path.join(d, "app_switch.trace"))
    assert t.ram_mib == 256 and t.swap_kind == "zram"
    assert 100_000 <= t.n_touch_pages <= 1_000_000


# ------------------------------------------------------------------------------------------
# the pure-LRU reference used by the validation
# ------------------------------------------------------------------------------------------
def _events(text):
    return val.lru_events(tr.parse_trace("l.trace", text))


def test_reference_lru_textbook():
    text = "ram 1\nproc 1 a\nmap 1 h anon 10\n" + "".join(f"touch 1 h {p}\n" for p in [1, 2, 3, 1, 4, 2, 5, 1, 2, 3])
    ev = _events(text)
    assert val.lru_misses_reference(ev, 3) == 8


def test_libcachesim_matches_reference_on_generated_traces(tmp_path):
    pytest.importorskip("libcachesim")
    for kind in ("zipf", "app-switch", "seq-scan-anon"):
        p = tmp_path / f"{kind}.trace"
        tg.GENERATORS[kind](p, **SMALL[kind])
        t = tr.parse_trace(p)
        ev = val.lru_events(t)
        for cap in (64, t.ram_mib * 256):
            assert val.lru_misses_libcachesim(ev, cap) == val.lru_misses_reference(ev, cap)


def test_lru_events_removals():
    text = (
        "ram 1\nproc 1 a\nmap 1 h anon 4\nmap 1 f file x 4\ntouch 1 h 0 4 w\ntouch 1 f 0 4\n"
        "madvise 1 h 0 2 pageout\nmadvise 1 f 0 4 dontneed\ntouch 1 h 0 4\ntouch 1 f 0 4\n"
        "proc 2 b\nmap 2 f file x 4\nexit 1\ntouch 2 f 0 4\n"
    )
    ev = _events(text)
    # pageout removed h0,h1 (2 misses on retouch); dontneed of a file mapping keeps the page cache;
    # exit of pid 1 removes its anon pages only, so pid 2 hits the file pages.
    assert val.lru_misses_reference(ev, 100) == 8 + 2
    pytest.importorskip("libcachesim")
    assert val.lru_misses_libcachesim(ev, 100) == 10
    with pytest.raises(val.UnsupportedForLRU):
        _events("proc 1 a\nmap 1 h anon 4\ntouch 1 h 0 w\nmadvise 1 h 0 1 cold\n")


def test_pure_lru_check_with_fake_model(tmp_path):
    pytest.importorskip("libcachesim")
    p = tmp_path / "z.trace"
    tg.zipf_hot(p, **SMALL["zipf"])
    t = tr.parse_trace(p)
    truth = val.lru_misses_reference(val.lru_events(t), t.ram_mib * 256)

    def good_model(path, settings):
        assert settings == {"kernel.lru": "pure"}
        return {"vmstat": {"pgfault": truth}}, None

    r = val.pure_lru_check(t, good_model)
    assert r["match"] is True and r["libcachesim"] == truth
    r = val.pure_lru_check(t, lambda p, s: ({"vmstat": {"pgfault": truth + 1}}, None))
    assert r["match"] is False
    r = val.pure_lru_check(t, lambda p, s: (None, "not yet"))
    assert r["match"] is None and r["why"] == "not yet"


def test_markdown_without_model_or_real(tmp_path):
    res = val.run_validation(str(tmp_path), real=False, quick=True, shapes=["zipf", "seq-scan"], model_fn=lambda p, s: (None, "the model is not available yet"))
    md = val.render_markdown(res)
    assert "⟨pending⟩" in md and "## Calibrated inputs" in md and "### Gaps and why" in md
    assert "not requested" in md
    fake = {"vmstat": {"pgfault": 123, "pswpout": 5}, "kills": []}
    res = val.run_validation(str(tmp_path), real=False, quick=True, shapes=["zipf"], model_fn=lambda p, s: (fake, None))
    md = val.render_markdown(res)
    assert "| `pgfault` | 123 |" in md


def _load_cli():
    spec = importlib.util.spec_from_file_location(
        "mobmem_cli_kernel_validation_t", os.path.join(os.path.dirname(tg.__file__), "..", "cli", "kernel_validation.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cli_gen_trace(tmp_path):
    import typer
    from typer.testing import CliRunner

    kv = _load_cli()
    app = typer.Typer()

    @app.callback()
    def _cb() -> None:
        pass

    kv.register(app)
    out = tmp_path / "z.trace"
    r = CliRunner().invoke(app, ["gen-trace", "zipf", str(out), "--seed", "2", "--set", "ram_mib=4", "--set", "wss_mib=6", "--set", "touches=1000"])
    assert r.exit_code == 0, r.output
    assert tr.parse_trace(out).n_touch_pages == 6 * 256 + 1000
    r = CliRunner().invoke(app, ["gen-trace", "nope", str(out)])
    assert isinstance(r.exception, MobmemError)
    r = CliRunner().invoke(app, ["gen-trace", "zipf", str(out), "--set", "colour=blue"])
    assert isinstance(r.exception, MobmemError) and "unknown parameter" in str(r.exception)
    assert kv.parse_sets(["heap_mib=2,4", "x=1.5", "flag=true", "name=abc"]) == {"heap_mib": (2, 4), "x": 1.5, "flag": True, "name": "abc"}
