"""The trace parser/validator (mobmem.kernel.trace): errors name file and line; round-trips."""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mobmem.errors import MobmemError
from mobmem.kernel import trace as tr

GOOD = """\
# a comment
ram 64   # trailing comment
swap zram 128 ratio=2.5

proc 1 app adj=900
map 1 heap anon 100
map 1 code file lib.so 80 exec
map 1 res file res.apk 10
proc 2 other
map 2 code file lib.so 80
touch 1 heap 0 100 w
touch 1 heap 5
touch 1 heap 6 r
touch 1 heap 7 3
touch 1 code 0 50 r
touch 2 code 79
madvise 1 heap 0 10 pageout
madvise 1 heap 10 10 cold
madvise 1 heap 20 10 dontneed
madvise 1 res 0 10 willneed
adj 1 0
tick 1000
exit 1
tick 0
"""


def test_good_trace_parses():
    t = tr.parse_trace("good.trace", GOOD)
    assert t.ram_mib == 64 and t.swap_kind == "zram" and t.swap_mib == 128 and t.zram_ratio == 2.5
    assert [(p.pid, p.name, p.adj) for p in t.procs] == [(1, "app", 900), (2, "other", 0)]
    assert [v.name for v in t.vmas] == ["heap", "code", "res", "code"]
    assert t.files == {"lib.so": 80, "res.apk": 10}  # a shared file: every mapping has its size
    assert t.vmas[1].exec and not t.vmas[3].exec
    touches = t.op == tr.OP_TOUCH
    assert t.b[touches].tolist() == [100, 1, 1, 3, 50, 1]
    assert t.flag[touches].tolist() == [1, 0, 0, 0, 0, 0]
    assert t.n_touch_pages == 156
    assert t.total_tick_us == 1000
    assert t.line[0] == 5  # the first event is on line 5
    s = t.summary()
    assert s["procs"] == 2 and s["touch_events"] == 6 and s["madvise_events"] == 4


def test_file_path_and_read_errors(tmp_path):
    p = tmp_path / "t.trace"
    p.write_text("proc 1 a\nbogus\n")
    with pytest.raises(MobmemError, match=rf'^{p}:2: unknown keyword "bogus"$'):
        tr.parse_trace(p)
    with pytest.raises(MobmemError, match="cannot read trace"):
        tr.parse_trace(tmp_path / "missing.trace")
    b = tmp_path / "bin.trace"
    b.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(MobmemError, match="not a text trace"):
        tr.parse_trace(b)


BASE = "proc 1 a\nmap 1 h anon 10\n"  # lines 1-2


@pytest.mark.parametrize(
    "text, line, fragment",
    [
        ("frobnicate 1", 1, 'unknown keyword "frobnicate"'),
        (BASE + "touch 1 h 5 6", 3, 'touch of pages [5, 11) beyond mapping "h" of 10 pages'),
        (BASE + "touch 1 h 10", 3, "touch of pages [10, 11) beyond mapping"),
        (BASE + "madvise 1 h 8 3 cold", 3, "madvise of pages [8, 11) beyond mapping"),
        ("touch 7 h 0", 1, "pid 7 used before its `proc` line"),
        ("map 7 h anon 1", 1, "pid 7 used before its `proc` line"),
        ("adj 7 0", 1, "pid 7 used before its `proc` line"),
        (BASE + "exit 1\ntouch 1 h 0", 4, "pid 1 used after its exit (line 3)"),
        (BASE + "exit 1\nproc 1 b", 4, "pid 1 already created (line 1)"),
        ("proc 1 a\nproc 1 b", 2, "pid 1 already created"),
        ("proc x a", 1, 'pid must be a non-negative integer, got "x"'),
        ("proc 0 a", 1, "pid must be positive"),
        ("proc 1 a\nmap 1 h anon 1_0", 2, 'pages must be a non-negative integer, got "1_0"'),
        ("proc 1 a\nmap 1 h anon 1.5", 2, 'pages must be a non-negative integer, got "1.5"'),
        ("proc 1 a\nmap 1 h anon 0", 2, "pages must be positive"),
        ("proc 1 a\nmap 1 h anon -3", 2, 'pages must not be negative, got "-3"'),
        ("proc 1 a\nmap 1 h file f 0", 2, "pages must be positive"),
        ("proc 1 a\nmap 1 f file x 4\nproc 2 b\nmap 2 f file x 5", 4, 'file "x" was mapped with 4 pages, now 5'),
        (BASE + "touch 1 h 0 0", 3, "count must be positive"),
        (BASE + "touch 1 h -1", 3, "first page must not be negative"),
        (BASE + "touch 1 h 0 2 x", 3, 'unexpected "x"; expected a page count, r or w'),
        (BASE + "touch 1 h", 3, "missing first page"),
        (BASE + "touch 1 nope 0", 3, 'pid 1 has no mapping named "nope"'),
        (BASE + "map 1 h anon 5", 3, 'vma "h" already mapped by pid 1 (line 2)'),
        ("proc 1 a\nmap 1 h heap 5", 2, 'expected `anon` or `file`, got "heap"'),
        ("proc 1 a\nmap 1 h file f 5 rw", 2, "expected `exec` or end of line"),
        ("proc 1 a\nmap 1 h anon 5 exec", 2, 'unexpected "exec" at end of line'),
        (BASE + "madvise 1 h 0 1 forget", 3, 'unknown advice "forget"'),
        (BASE + "madvise 1 h 0 0 cold", 3, "count must be positive"),
        ("proc 1 a\nadj 1 1001", 2, "adj must be within [-1000, 1000], got 1001"),
        ("proc 1 a adj=-1001", 1, "adj must be within [-1000, 1000]"),
        ("proc 1 a nice=3", 1, "expected adj=<int>"),
        ("tick -5", 1, "microseconds must not be negative"),
        ("tick 1.5", 1, 'microseconds must be a non-negative integer, got "1.5"'),
        ("tick", 1, "missing microseconds"),
        ("proc 1 a\nexit 1 2", 2, 'unexpected "2" at end of line'),
        ("ram 0", 1, "ram size (MiB) must be positive"),
        ("ram -1", 1, "ram size (MiB) must not be negative"),
        ("ram lots", 1, 'ram size (MiB) must be a non-negative integer, got "lots"'),
        ("ram 5\nram 6", 2, "duplicate `ram` header"),
        ("proc 1 a\nram 64", 2, "header line `ram` after the first event"),
        ("tick 5\nswap none", 2, "header line `swap` after the first event"),
        ("swap zram 0", 1, "swap size (MiB) must be positive"),
        ("swap zram", 1, "missing swap size"),
        ("swap disk 5", 1, "expected `swap zram|file|none`"),
        ("swap zram 64 ratio=abc", 1, 'ratio must be a number, got "abc"'),
        ("swap zram 64 ratio=0.5", 1, "ratio must be within [1, 64]"),
        ("swap zram 64 ratio=nan", 1, "ratio must be within [1, 64]"),
        ("swap zram 64 level=3", 1, "expected ratio=<float>"),
        ("swap file 64 ratio=2", 1, 'unexpected "ratio=2" at end of line'),
        ("swap none 5", 1, 'unexpected "5" at end of line'),
    ],
)
def test_errors_name_file_line_and_problem(text, line, fragment):
    with pytest.raises(MobmemError) as ei:
        tr.parse_trace("x.trace", text)
    msg = str(ei.value)
    assert msg.startswith(f"x.trace:{line}: "), msg
    assert fragment in msg, msg


def test_write_is_canonical_and_reparses():
    t = tr.parse_trace("good.trace", GOOD)
    buf = io.StringIO()
    tr.write_trace(t, buf)
    t2 = tr.parse_trace("again.trace", buf.getvalue())
    assert tr.same_trace(t, t2)
    assert buf.getvalue().startswith("# mobmem page trace v1\nram 64\nswap zram 128 ratio=2.5\n")


def test_page_references_keys():
    t = tr.parse_trace("good.trace", GOOD)
    refs = t.page_references()
    assert len(refs) == t.n_touch_pages
    # pid 1 heap pages are private: vma 0, pages 0..99 first
    assert refs[:100].tolist() == list(range(100))
    # lib.so is shared: pid 2's page 79 is the file's page 79, whoever touches it
    code1 = refs[105:155]
    code2 = refs[155]
    assert code1[0] == (1 << 62) | (0 << 32) | 0
    assert code2 == (1 << 62) | (0 << 32) | 79


def test_empty_and_header_only():
    t = tr.parse_trace("e.trace", "\n# nothing\n")
    assert len(t) == 0 and t.ram_mib is None and t.swap_kind is None
    assert t.page_references().shape == (0,)
    t = tr.parse_trace("h.trace", "ram 8\nswap none\n")
    assert t.ram_mib == 8 and t.swap_kind == "none" and t.swap_mib == 0


# ------------------------------------------------------------------------------------------
# property tests
# ------------------------------------------------------------------------------------------
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.-/", min_size=1, max_size=8)


@st.composite
def traces(draw):
    lines = []
    if draw(st.booleans()):
        lines.append(f"ram {draw(st.integers(1, 1 << 20))}")
    kind = draw(st.sampled_from(["zram", "file", "none", None]))
    if kind == "zram":
        r = draw(st.one_of(st.none(), st.floats(1.0, 20.0, allow_nan=False)))
        lines.append(f"swap zram {draw(st.integers(1, 4096))}" + (f" ratio={r!r}" if r is not None else ""))
    elif kind == "file":
        lines.append(f"swap file {draw(st.integers(1, 4096))}")
    elif kind == "none":
        lines.append("swap none")
    live: dict[int, dict[str, int]] = {}
    dead: set[int] = set()
    files: dict[str, int] = {}  # a shared file has one size in every mapping
    next_pid = draw(st.integers(1, 50))
    for _ in range(draw(st.integers(0, 40))):
        choice = draw(st.integers(0, 7))
        if choice == 0 or not live:
            pid = next_pid
            next_pid += draw(st.integers(1, 3))
            adj = draw(st.one_of(st.none(), st.integers(-1000, 1000)))
            lines.append(f"proc {pid} {draw(names)}" + (f" adj={adj}" if adj is not None else ""))
            live[pid] = {}
            continue
        pid = draw(st.sampled_from(sorted(live)))
        vmas = live[pid]
        if choice == 1 or not vmas:
            name = draw(names)
            if name in vmas:
                continue
            pages = draw(st.integers(1, 1 << 16))
            if draw(st.booleans()):
                lines.append(f"map {pid} {name} anon {pages}")
            else:
                f = draw(names)
                pages = files.setdefault(f, pages)
                lines.append(f"map {pid} {name} file {f} {pages}" + (" exec" if draw(st.booleans()) else ""))
            vmas[name] = pages
        elif choice in (2, 3):
            name = draw(st.sampled_from(sorted(vmas)))
            first = draw(st.integers(0, vmas[name] - 1))
            count = draw(st.integers(1, vmas[name] - first))
            mode = draw(st.sampled_from(["", " r", " w"]))
            cnt = "" if count == 1 and draw(st.booleans()) else f" {count}"
            lines.append(f"touch {pid} {name} {first}{cnt}{mode}")
        elif choice == 4:
            name = draw(st.sampled_from(sorted(vmas)))
            first = draw(st.integers(0, vmas[name] - 1))
            count = draw(st.integers(1, vmas[name] - first))
            adv = draw(st.sampled_from([*tr.ADVICE, "hint:hot", "hint:x.y"]))
            lines.append(f"madvise {pid} {name} {first} {count} {adv}")
        elif choice == 5:
            lines.append(f"adj {pid} {draw(st.integers(-1000, 1000))}")
        elif choice == 6:
            lines.append(f"tick {draw(st.integers(0, 10**9))}")
        else:
            lines.append(f"exit {pid}")
            del live[pid]
            dead.add(pid)
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_round_trip(text):
    t = tr.parse_trace("gen.trace", text)
    buf = io.StringIO()
    tr.write_trace(t, buf)
    t2 = tr.parse_trace("gen2.trace", buf.getvalue())
    assert tr.same_trace(t, t2)
    # canonical text is a fixed point
    buf2 = io.StringIO()
    tr.write_trace(t2, buf2)
    assert buf2.getvalue() == buf.getvalue()
    assert len(t2.page_references()) == t.n_touch_pages
    # columns are consistent
    assert len({len(getattr(t, c)) for c in ("op", "flag", "proc", "vma", "a", "b", "line")}) == 1
    touch = t.op == tr.OP_TOUCH
    if touch.any():
        pages = np.array([v.pages for v in t.vmas])
        assert (t.a[touch] + t.b[touch] <= pages[t.vma[touch]]).all()


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("proc map touch anon file 0123456789 -=#\n\tadjrwxé")), max_size=120))
def test_garbage_never_crashes(text):
    """Any input either parses or raises MobmemError naming the file and a line."""
    try:
        tr.parse_trace("junk.trace", text)
    except MobmemError as e:
        assert str(e).startswith("junk.trace:")
