"""The "mobmem page trace v1" (the page-access trace contract) as numpy columns, and its writer.

The format (one event a line; ``#`` starts a comment, blank lines are ignored)::

    ram <MiB>                                   # optional header lines, before any event
    swap zram <MiB> [ratio=<float>] | swap file <MiB> | swap none
    proc <pid> <name> [adj=<int>]               # create a process
    map <pid> <vma> anon <pages>                # private anonymous mapping
    map <pid> <vma> file <file-name> <pages> [exec]   # shared file mapping
    touch <pid> <vma> <first-page> [<count>] [r|w]    # access pages [first, first+count)
    madvise <pid> <vma> <first-page> <count> dontneed|cold|pageout|willneed|hint:<name>
    adj <pid> <int>                             # change oom_score_adj
    tick <microseconds>                         # let simulated time pass
    exit <pid>

:func:`parse_trace` has the Rust core parse and validate a file (the same parser the kernel
model replays with, so there is one language) and returns a :class:`Trace`: the header, the
process and mapping tables, and the ops as numpy columns (one row per event). Every problem is
reported as ``MobmemError("FILE:LINE: problem")``. :func:`write_trace` is the inverse (parse →
write → parse gives the same ``Trace``); it serves the real-kernel replayer, the trace generators
and the validation.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Iterator, TextIO

import numpy as np

from mobmem import _core
from mobmem.errors import MobmemError

PAGE_SIZE = 4096

#: Op kinds (column ``op`` holds the index), from the core's trace parser.
OP_NAMES: tuple[str, ...] = tuple(_core.TRACE_OPS)
OP_PROC, OP_MAP, OP_TOUCH, OP_MADVISE, OP_ADJ, OP_TICK, OP_EXIT, OP_HINT = (
    OP_NAMES.index(n) for n in ("proc", "map", "touch", "madvise", "adj", "tick", "exit", "hint")
)

# column ``flag``: touch → 0 read / 1 write; madvise → advice code; map → bit0 file, bit1 exec;
# hint → index in Trace.hints
FLAG_WRITE = 1
ADVICE_NAMES: dict[int, str] = dict(enumerate(_core.MADVISE_ADVICE))
ADVICE = {v: k for k, v in ADVICE_NAMES.items()}
MAP_FILE = 1
MAP_EXEC = 2


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
    files: dict[str, int] = field(default_factory=dict)  # file-name → pages
    hints: list[str] = field(default_factory=list)  # madvise hint:<name> names, by code
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
        counts = np.bincount(self.op, minlength=len(OP_NAMES)) if len(self) else np.zeros(len(OP_NAMES), int)
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


def parse_trace(path: str | os.PathLike, text: str | None = None) -> Trace:
    """Parse and validate a trace file (or ``text``, reported under the name ``path``) with the
    core's parser; bad input raises ``MobmemError("FILE:LINE: problem")``."""
    spath = os.fspath(path)
    try:
        d = _core.parse_trace(spath, text)
    except ValueError as e:
        raise MobmemError(str(e)) from None
    op = np.frombuffer(d["op"], np.uint8).copy()
    line = np.frombuffer(d["line"], np.int64).copy()
    t = Trace(path=spath, ram_mib=d["ram_mib"], hints=list(d["hints"]))
    if d["swap"] is not None:
        t.swap_kind, t.swap_mib, t.zram_ratio = d["swap"]
    first_line = {}  # (op, proc or vma index) → line of its proc/map event
    vma = np.frombuffer(d["vma"], np.int32).copy()
    proc = np.frombuffer(d["proc"], np.int32).copy()
    for k in np.flatnonzero((op == OP_PROC) | (op == OP_MAP)):
        first_line[(int(op[k]), int(vma[k] if op[k] == OP_MAP else proc[k]))] = int(line[k])
    t.procs = [Proc(i, pid, name, adj, first_line.get((OP_PROC, i), 0)) for i, (pid, name, adj) in enumerate(d["procs"])]
    for i, (pi, name, pages, file, exe) in enumerate(d["vmas"]):
        t.vmas.append(Vma(i, pi, t.procs[pi].pid, name, "file" if file is not None else "anon", pages, file, exe, first_line.get((OP_MAP, i), 0)))
        if file is not None:
            t.files[file] = pages
    t.op, t.flag, t.proc, t.vma, t.line = op, np.frombuffer(d["flag"], np.uint8).copy(), proc, vma, line
    t.a = np.frombuffer(d["a"], np.int64).copy()
    t.b = np.frombuffer(d["b"], np.int64).copy()
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
        elif o in (OP_MADVISE, OP_HINT):
            p, v = procs[t.proc[i]], vmas[t.vma[i]]
            advice = ADVICE_NAMES[int(t.flag[i])] if o == OP_MADVISE else f"hint:{t.hints[int(t.flag[i])]}"
            yield f"madvise {p.pid} {v.name} {int(t.a[i])} {int(t.b[i])} {advice}"
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
        from mobmem.files import atomic_file  # never a half trace under the real name

        with atomic_file(out) as f:
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
    if (x.ram_mib, x.swap_kind, x.swap_mib, x.zram_ratio, x.hints) != (y.ram_mib, y.swap_kind, y.swap_mib, y.zram_ratio, y.hints):
        return False
    if [(p.pid, p.name, p.adj) for p in x.procs] != [(p.pid, p.name, p.adj) for p in y.procs]:
        return False
    if [(v.proc, v.name, v.kind, v.pages, v.file, v.exec) for v in x.vmas] != [(v.proc, v.name, v.kind, v.pages, v.file, v.exec) for v in y.vmas]:
        return False
    return all(np.array_equal(getattr(x, c), getattr(y, c)) for c in ("op", "flag", "proc", "vma", "a", "b"))
