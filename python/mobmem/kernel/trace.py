"""Parser, validator and writer of "mobmem page trace v1", the page-access trace contract.

The format (one event a line; ``#`` starts a comment, blank lines are ignored)::

    ram <MiB>                                   # optional header lines, before any event
    swap zram <MiB> [ratio=<float>] | swap file <MiB> | swap none
    proc <pid> <name> [adj=<int>]               # create a process
    map <pid> <vma> anon <pages>                # private anonymous mapping
    map <pid> <vma> file <file-name> <pages> [exec]   # shared file mapping
    touch <pid> <vma> <first-page> [<count>] [r|w]    # access pages [first, first+count)
    madvise <pid> <vma> <first-page> <count> dontneed|cold|pageout|willneed
    adj <pid> <int>                             # change oom_score_adj
    tick <microseconds>                         # let simulated time pass
    exit <pid>

:func:`parse_trace` turns a file into a :class:`Trace`: the header, the process and mapping
tables, and a compact op list held in numpy arrays (one row per event). Every problem is
reported as ``MobmemError("FILE:LINE: problem")``; nothing here raises anything else on bad
input. :func:`write_trace` is the inverse (parse → write → parse gives the same ``Trace``).

The Rust model has its own parser; this one serves the real-kernel replayer, the trace
generators and the validation. Both accept the same language; the stricter rules here
(documented on :func:`parse_trace`) are ones a trace generator never breaks.
"""

from __future__ import annotations

import array
import math
import os
from dataclasses import dataclass, field
from typing import Iterator, TextIO

import numpy as np

from mobmem.errors import MobmemError

PAGE_SIZE = 4096

# op codes (column ``op``)
OP_PROC = 0
OP_MAP = 1
OP_TOUCH = 2
OP_MADVISE = 3
OP_ADJ = 4
OP_TICK = 5
OP_EXIT = 6
OP_NAMES = ("proc", "map", "touch", "madvise", "adj", "tick", "exit")

# column ``flag``: touch → 0 read / 1 write; madvise → advice code; map → bit0 file, bit1 exec
FLAG_WRITE = 1
ADVICE = {"dontneed": 0, "cold": 1, "pageout": 2, "willneed": 3}
ADVICE_NAMES = {v: k for k, v in ADVICE.items()}
MAP_FILE = 1
MAP_EXEC = 2

ADJ_MIN, ADJ_MAX = -1000, 1000
SWAP_KINDS = ("zram", "file", "none")

_HEADER_KEYWORDS = ("ram", "swap")
_EVENT_KEYWORDS = ("proc", "map", "touch", "madvise", "adj", "tick", "exit")


@dataclass
class Proc:
    """One ``proc`` line: a process the trace creates."""

    index: int  # position in Trace.procs (dense 0..)
    pid: int
    name: str
    adj: int
    line: int


@dataclass
class Vma:
    """One ``map`` line: a mapping of one process."""

    index: int  # position in Trace.vmas (dense 0..)
    proc: int  # Proc.index
    pid: int
    name: str
    kind: str  # "anon" | "file"
    pages: int
    file: str | None = None  # file-name for kind == "file"
    exec: bool = False
    line: int = 0


@dataclass
class Trace:
    """A parsed trace: header, tables, and the op columns (all numpy arrays of equal length).

    Op columns: ``op`` (OP_*), ``flag`` (see FLAG_*/ADVICE/MAP_*), ``proc`` (Proc.index),
    ``vma`` (Vma.index or -1), ``a`` (first page | adj | microseconds | Vma pages), ``b``
    (page count, 0 where unused) and ``line`` (1-based source line).
    """

    path: str
    ram_mib: int | None = None
    swap_kind: str | None = None  # None: no swap header
    swap_mib: int = 0
    zram_ratio: float | None = None
    procs: list[Proc] = field(default_factory=list)
    vmas: list[Vma] = field(default_factory=list)
    files: dict[str, int] = field(default_factory=dict)  # file-name → pages (largest map)
    op: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    flag: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    proc: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    vma: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int32))
    a: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    b: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    line: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __len__(self) -> int:
        return int(self.op.shape[0])

    # -- summaries -------------------------------------------------------------------------
    @property
    def n_touch_pages(self) -> int:
        """Pages touched in all (a ``touch`` of count N counts N)."""
        m = self.op == OP_TOUCH
        return int(self.b[m].sum())

    @property
    def total_tick_us(self) -> int:
        return int(self.a[self.op == OP_TICK].sum())

    def summary(self) -> dict:
        counts = np.bincount(self.op, minlength=len(OP_NAMES)) if len(self) else np.zeros(7, int)
        return {
            "events": len(self),
            **{f"{OP_NAMES[i]}_events": int(counts[i]) for i in range(len(OP_NAMES))},
            "touched_pages": self.n_touch_pages,
            "written_pages": int(self.b[(self.op == OP_TOUCH) & (self.flag == FLAG_WRITE)].sum()),
            "mapped_pages": int(sum(v.pages for v in self.vmas)),
            "anon_pages": int(sum(v.pages for v in self.vmas if v.kind == "anon")),
            "file_pages": int(sum(self.files.values())),
            "procs": len(self.procs),
            "tick_us": self.total_tick_us,
        }

    def proc_by_pid(self, pid: int) -> Proc:
        for p in self.procs:
            if p.pid == pid:
                return p
        raise KeyError(pid)

    def page_references(self) -> np.ndarray:
        """The page-reference sequence of all touches, one int64 key per page touched.

        Anonymous pages are private to their mapping: key = ``vma_index << 32 | page``. Pages of
        a shared file mapping are the file's pages, the same whoever maps them: key =
        ``(1 << 62) | file_index << 32 | page`` (file_index = position in ``files``).
        """
        file_idx = {name: i for i, name in enumerate(self.files)}
        base = np.zeros(len(self.vmas), dtype=np.int64)
        for v in self.vmas:
            if v.kind == "anon":
                base[v.index] = np.int64(v.index) << np.int64(32)
            else:
                base[v.index] = (np.int64(1) << np.int64(62)) | (np.int64(file_idx[v.file]) << np.int64(32))
        m = self.op == OP_TOUCH
        vm, first, cnt = self.vma[m], self.a[m], self.b[m]
        total = int(cnt.sum())
        if total == 0:
            return np.zeros(0, np.int64)
        # expand ranges: page = first[i] + (0..cnt[i]-1)
        starts = np.repeat(first - np.concatenate(([0], np.cumsum(cnt)[:-1])), cnt)
        pages = starts + np.arange(total, dtype=np.int64)
        return np.repeat(base[vm], cnt) + pages


def _err(path: str, lineno: int, msg: str) -> MobmemError:
    return MobmemError(f"{path}:{lineno}: {msg}")


def _int(tok: str, path: str, lineno: int, what: str) -> int:
    digits = tok[1:] if tok[:1] in ("-", "+") else tok
    if not (digits.isascii() and digits.isdigit()):
        raise _err(path, lineno, f"{what}: '{tok}' is not an integer")
    return int(tok)


def _pos(tok: str, path: str, lineno: int, what: str) -> int:
    v = _int(tok, path, lineno, what)
    if v <= 0:
        raise _err(path, lineno, f"{what}: must be positive, got {v}")
    return v


def _nonneg(tok: str, path: str, lineno: int, what: str) -> int:
    v = _int(tok, path, lineno, what)
    if v < 0:
        raise _err(path, lineno, f"{what}: must not be negative, got {v}")
    return v


def _adj(tok: str, path: str, lineno: int) -> int:
    v = _int(tok, path, lineno, "oom_score_adj")
    if not ADJ_MIN <= v <= ADJ_MAX:
        raise _err(path, lineno, f"oom_score_adj: {v} is outside [{ADJ_MIN}, {ADJ_MAX}]")
    return v


def parse_trace(path: str | os.PathLike, text: str | None = None) -> Trace:
    """Parse and validate a trace file (or ``text``, reported under the name ``path``).

    Checked, each with ``FILE:LINE: problem``: unknown keyword; wrong number of fields; a
    non-number where a number belongs; zero or negative sizes (ram, swap MiB, pages, count)
    and negative first pages or ticks; ``ratio`` < 1; a header line after the first event or
    given twice; a pid used before its ``proc``, after its ``exit``, or created twice; a vma
    name used twice by one process or used before its ``map``; a touch or madvise beyond the
    end of its mapping; an unknown access mode or advice; oom_score_adj outside
    [-1000, 1000]; a file mapped with two kinds (exec and not) is allowed, its size is the
    largest mapping of it.
    """
    spath = os.fspath(path)
    if text is None:
        try:
            with open(spath, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise MobmemError(f"{spath}: cannot read trace: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise MobmemError(f"{spath}: not a text trace (not UTF-8): {e.reason}") from None
    t = Trace(path=spath)
    ops = array.array("B")
    flags = array.array("B")
    procs_col = array.array("i")
    vmas_col = array.array("i")
    a_col = array.array("q")
    b_col = array.array("q")
    line_col = array.array("q")

    live: dict[int, Proc] = {}  # pid → proc (not exited)
    exited: dict[int, int] = {}  # pid → exit line
    vma_by: dict[tuple[int, str], Vma] = {}
    seen_event = False
    seen_header: dict[str, int] = {}

    def proc_of(tok: str, lineno: int) -> Proc:
        pid = _int(tok, spath, lineno, "pid")
        p = live.get(pid)
        if p is None:
            if pid in exited:
                raise _err(spath, lineno, f"pid {pid} has exited (line {exited[pid]})")
            raise _err(spath, lineno, f"pid {pid} is used before its 'proc' line")
        return p

    def vma_of(p: Proc, tok: str, lineno: int) -> Vma:
        v = vma_by.get((p.index, tok))
        if v is None:
            raise _err(spath, lineno, f"pid {p.pid} has no mapping '{tok}' (no 'map' line before)")
        return v

    # append helpers are inlined below for speed on large traces
    for lineno, raw in enumerate(text.splitlines(), start=1):
        hash_pos = raw.find("#")
        s = raw if hash_pos < 0 else raw[:hash_pos]
        tok = s.split()
        if not tok:
            continue
        kw = tok[0]
        n = len(tok)
        if kw == "touch":
            if not 4 <= n <= 6:
                raise _err(spath, lineno, "touch: expected 'touch <pid> <vma> <first-page> [<count>] [r|w]'")
            p = proc_of(tok[1], lineno)
            v = vma_of(p, tok[2], lineno)
            first = _nonneg(tok[3], spath, lineno, "first page")
            count = 1
            mode = 0
            rest = tok[4:]
            if rest and rest[-1] in ("r", "w"):
                mode = FLAG_WRITE if rest[-1] == "w" else 0
                rest = rest[:-1]
            if len(rest) == 1:
                count = _pos(rest[0], spath, lineno, "count")
            elif rest:
                raise _err(spath, lineno, f"touch: unexpected '{rest[-1]}' (access mode is r or w)")
            if first + count > v.pages:
                raise _err(
                    spath,
                    lineno,
                    f"touch beyond the mapping: pages [{first}, {first + count}) of '{v.name}' which has {v.pages} pages",
                )
            ops.append(OP_TOUCH)
            flags.append(mode)
            procs_col.append(p.index)
            vmas_col.append(v.index)
            a_col.append(first)
            b_col.append(count)
            line_col.append(lineno)
            seen_event = True
            continue
        if kw in _HEADER_KEYWORDS:
            if seen_event:
                raise _err(spath, lineno, f"header line '{kw}' after the first event (headers come first)")
            if kw in seen_header:
                raise _err(spath, lineno, f"'{kw}' given twice (first at line {seen_header[kw]})")
            seen_header[kw] = lineno
            if kw == "ram":
                if n != 2:
                    raise _err(spath, lineno, "ram: expected 'ram <MiB>'")
                t.ram_mib = _pos(tok[1], spath, lineno, "ram MiB")
            else:
                if n < 2 or tok[1] not in SWAP_KINDS:
                    raise _err(spath, lineno, "swap: expected 'swap zram <MiB> [ratio=<float>]', 'swap file <MiB>' or 'swap none'")
                kind = tok[1]
                if kind == "none":
                    if n != 2:
                        raise _err(spath, lineno, f"swap none: unexpected '{tok[2]}'")
                    t.swap_kind, t.swap_mib = "none", 0
                    continue
                if n < 3:
                    raise _err(spath, lineno, f"swap {kind}: missing size in MiB")
                t.swap_kind = kind
                t.swap_mib = _pos(tok[2], spath, lineno, "swap MiB")
                extra = tok[3:]
                if kind == "zram" and extra:
                    if len(extra) > 1 or not extra[0].startswith("ratio="):
                        raise _err(spath, lineno, f"swap zram: unexpected '{extra[-1]}' (only ratio=<float>)")
                    rtok = extra[0][len("ratio=") :]
                    try:
                        ratio = float(rtok)
                    except ValueError:
                        raise _err(spath, lineno, f"ratio: '{rtok}' is not a number") from None
                    if not math.isfinite(ratio) or ratio < 1.0:
                        raise _err(spath, lineno, f"ratio: must be a finite number >= 1, got {rtok}")
                    t.zram_ratio = ratio
                elif extra:
                    raise _err(spath, lineno, f"swap {kind}: unexpected '{extra[0]}'")
            continue
        if kw not in _EVENT_KEYWORDS:
            raise _err(spath, lineno, f"unknown keyword '{kw}'")
        seen_event = True
        if kw == "proc":
            if not 3 <= n <= 4:
                raise _err(spath, lineno, "proc: expected 'proc <pid> <name> [adj=<int>]'")
            pid = _int(tok[1], spath, lineno, "pid")
            if pid <= 0:
                raise _err(spath, lineno, f"pid: must be positive, got {pid}")
            if pid in live or pid in exited:
                first_line = live[pid].line if pid in live else t.procs[[q.pid for q in t.procs].index(pid)].line
                raise _err(spath, lineno, f"pid {pid} is created twice (first at line {first_line})")
            adj = 0
            if n == 4:
                if not tok[3].startswith("adj="):
                    raise _err(spath, lineno, f"proc: unexpected '{tok[3]}' (only adj=<int>)")
                adj = _adj(tok[3][4:], spath, lineno)
            p = Proc(index=len(t.procs), pid=pid, name=tok[2], adj=adj, line=lineno)
            t.procs.append(p)
            live[pid] = p
            ops.append(OP_PROC)
            flags.append(0)
            procs_col.append(p.index)
            vmas_col.append(-1)
            a_col.append(adj)
            b_col.append(0)
            line_col.append(lineno)
        elif kw == "map":
            if n < 5:
                raise _err(spath, lineno, "map: expected 'map <pid> <vma> anon <pages>' or 'map <pid> <vma> file <file-name> <pages> [exec]'")
            p = proc_of(tok[1], lineno)
            name = tok[2]
            if (p.index, name) in vma_by:
                raise _err(spath, lineno, f"duplicate mapping '{name}' of pid {p.pid} (first at line {vma_by[(p.index, name)].line})")
            kind = tok[3]
            if kind == "anon":
                if n != 5:
                    raise _err(spath, lineno, f"map anon: unexpected '{tok[5]}'")
                pages = _pos(tok[4], spath, lineno, "pages")
                v = Vma(len(t.vmas), p.index, p.pid, name, "anon", pages, None, False, lineno)
                fl = 0
            elif kind == "file":
                if n not in (6, 7):
                    raise _err(spath, lineno, "map file: expected 'map <pid> <vma> file <file-name> <pages> [exec]'")
                pages = _pos(tok[5], spath, lineno, "pages")
                ex = False
                if n == 7:
                    if tok[6] != "exec":
                        raise _err(spath, lineno, f"map file: unexpected '{tok[6]}' (only 'exec')")
                    ex = True
                v = Vma(len(t.vmas), p.index, p.pid, name, "file", pages, tok[4], ex, lineno)
                t.files[tok[4]] = max(t.files.get(tok[4], 0), pages)
                fl = MAP_FILE | (MAP_EXEC if ex else 0)
            else:
                raise _err(spath, lineno, f"map: unknown kind '{kind}' (anon or file)")
            t.vmas.append(v)
            vma_by[(p.index, name)] = v
            ops.append(OP_MAP)
            flags.append(fl)
            procs_col.append(p.index)
            vmas_col.append(v.index)
            a_col.append(v.pages)
            b_col.append(0)
            line_col.append(lineno)
        elif kw == "madvise":
            if n != 6:
                raise _err(spath, lineno, "madvise: expected 'madvise <pid> <vma> <first-page> <count> dontneed|cold|pageout|willneed'")
            p = proc_of(tok[1], lineno)
            v = vma_of(p, tok[2], lineno)
            first = _nonneg(tok[3], spath, lineno, "first page")
            count = _pos(tok[4], spath, lineno, "count")
            adv = ADVICE.get(tok[5])
            if adv is None:
                raise _err(spath, lineno, f"madvise: unknown advice '{tok[5]}' (dontneed, cold, pageout or willneed)")
            if first + count > v.pages:
                raise _err(
                    spath,
                    lineno,
                    f"madvise beyond the mapping: pages [{first}, {first + count}) of '{v.name}' which has {v.pages} pages",
                )
            ops.append(OP_MADVISE)
            flags.append(adv)
            procs_col.append(p.index)
            vmas_col.append(v.index)
            a_col.append(first)
            b_col.append(count)
            line_col.append(lineno)
        elif kw == "adj":
            if n != 3:
                raise _err(spath, lineno, "adj: expected 'adj <pid> <int>'")
            p = proc_of(tok[1], lineno)
            adj = _adj(tok[2], spath, lineno)
            ops.append(OP_ADJ)
            flags.append(0)
            procs_col.append(p.index)
            vmas_col.append(-1)
            a_col.append(adj)
            b_col.append(0)
            line_col.append(lineno)
        elif kw == "tick":
            if n != 2:
                raise _err(spath, lineno, "tick: expected 'tick <microseconds>'")
            us = _nonneg(tok[1], spath, lineno, "microseconds")
            ops.append(OP_TICK)
            flags.append(0)
            procs_col.append(-1)
            vmas_col.append(-1)
            a_col.append(us)
            b_col.append(0)
            line_col.append(lineno)
        else:  # exit
            if n != 2:
                raise _err(spath, lineno, "exit: expected 'exit <pid>'")
            p = proc_of(tok[1], lineno)
            del live[p.pid]
            exited[p.pid] = lineno
            ops.append(OP_EXIT)
            flags.append(0)
            procs_col.append(p.index)
            vmas_col.append(-1)
            a_col.append(0)
            b_col.append(0)
            line_col.append(lineno)

    t.op = np.frombuffer(ops, dtype=np.uint8).copy()
    t.flag = np.frombuffer(flags, dtype=np.uint8).copy()
    t.proc = np.frombuffer(procs_col, dtype=np.int32).copy()
    t.vma = np.frombuffer(vmas_col, dtype=np.int32).copy()
    t.a = np.frombuffer(a_col, dtype=np.int64).copy()
    t.b = np.frombuffer(b_col, dtype=np.int64).copy()
    t.line = np.frombuffer(line_col, dtype=np.int64).copy()
    return t


def _fmt_ratio(r: float) -> str:
    s = repr(float(r))
    return s


def iter_lines(t: Trace) -> Iterator[str]:
    """The trace as text lines (without newlines), in canonical form."""
    yield "# mobmem page trace v1"
    if t.ram_mib is not None:
        yield f"ram {t.ram_mib}"
    if t.swap_kind is not None:
        if t.swap_kind == "none":
            yield "swap none"
        elif t.swap_kind == "zram" and t.zram_ratio is not None:
            yield f"swap zram {t.swap_mib} ratio={_fmt_ratio(t.zram_ratio)}"
        else:
            yield f"swap {t.swap_kind} {t.swap_mib}"
    procs, vmas = t.procs, t.vmas
    for i in range(len(t)):
        o = int(t.op[i])
        if o == OP_TOUCH:
            p, v = procs[t.proc[i]], vmas[t.vma[i]]
            c = int(t.b[i])
            mode = "w" if t.flag[i] == FLAG_WRITE else "r"
            yield f"touch {p.pid} {v.name} {int(t.a[i])} {c} {mode}" if c != 1 else f"touch {p.pid} {v.name} {int(t.a[i])} {mode}"
        elif o == OP_PROC:
            p = procs[t.proc[i]]
            yield f"proc {p.pid} {p.name} adj={p.adj}" if p.adj else f"proc {p.pid} {p.name}"
        elif o == OP_MAP:
            p, v = procs[t.proc[i]], vmas[t.vma[i]]
            if v.kind == "anon":
                yield f"map {p.pid} {v.name} anon {v.pages}"
            else:
                yield f"map {p.pid} {v.name} file {v.file} {v.pages}" + (" exec" if v.exec else "")
        elif o == OP_MADVISE:
            p, v = procs[t.proc[i]], vmas[t.vma[i]]
            yield f"madvise {p.pid} {v.name} {int(t.a[i])} {int(t.b[i])} {ADVICE_NAMES[int(t.flag[i])]}"
        elif o == OP_ADJ:
            yield f"adj {procs[t.proc[i]].pid} {int(t.a[i])}"
        elif o == OP_TICK:
            yield f"tick {int(t.a[i])}"
        elif o == OP_EXIT:
            yield f"exit {procs[t.proc[i]].pid}"
        else:  # pragma: no cover - op codes come from parse_trace
            raise ValueError(f"bad op code {o}")


def write_trace(t: Trace, out: str | os.PathLike | TextIO) -> None:
    """Write ``t`` as text: to a path or an open text file."""
    if isinstance(out, (str, os.PathLike)):
        with open(out, "w", encoding="utf-8") as f:
            write_trace(t, f)
        return
    buf: list[str] = []
    for s in iter_lines(t):
        buf.append(s)
        if len(buf) >= 65536:
            out.write("\n".join(buf) + "\n")
            buf.clear()
    if buf:
        out.write("\n".join(buf) + "\n")


def same_trace(x: Trace, y: Trace) -> bool:
    """Equal content (ignoring path and line numbers): the round-trip criterion."""
    if (x.ram_mib, x.swap_kind, x.swap_mib, x.zram_ratio) != (y.ram_mib, y.swap_kind, y.swap_mib, y.zram_ratio):
        return False
    if [(p.pid, p.name, p.adj) for p in x.procs] != [(p.pid, p.name, p.adj) for p in y.procs]:
        return False
    if [(v.proc, v.name, v.kind, v.pages, v.file, v.exec) for v in x.vmas] != [(v.proc, v.name, v.kind, v.pages, v.file, v.exec) for v in y.vmas]:
        return False
    return all(np.array_equal(getattr(x, c), getattr(y, c)) for c in ("op", "flag", "proc", "vma", "a", "b"))
