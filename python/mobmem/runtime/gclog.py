"""ART's GC log, read back: what a phone's `logcat` says about an app's Java heap.

ART logs one summary line per collection it considers worth logging (``Heap::LogGC``)::

    Background concurrent copying GC freed 193283(17MB) AllocSpace objects, 357(8792KB) LOS objects,
    49% free, 22MB/45MB, paused 160us total 975.579ms

that is: the cause, the collector, objects and bytes freed outside and inside the large-object
space, and the heap after the collection — bytes allocated (the live heap plus what was allocated
during a concurrent collection) over the footprint. Sizes are ART's ``PrettySize``: B, KB, MB, GB
in powers of 1024. The simulator writes the same lines (``mobmem runtime run``).

From a series of them this module derives the inputs of an app profile's ``[java_heap]``: the
live heap after collections, the footprint, and the allocation rate. Between the ends of two
collections *a* < *b* the app allocated exactly what the collections after *a* freed plus what the
heap grew::

    allocated(a, b] = Σ_{a<k≤b} (freed_k + freed_los_k) + (heap_after_b − heap_after_a)

which needs the time of each line: logcat's ``threadtime`` (the default) and ``time`` formats
carry it. Lines of other processes are kept apart by process id (``--process`` picks one by id
or by a part of its tag). What it leaves out: collections ART does not log (it logs only the
slow or explicit ones on some builds; a rate over a window with unlogged collections is too
low, and the summary says how many lines it used), and the rounding of ``PrettySize`` (a few
per cent on small collections).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mobmem.errors import MobmemError

MIB = 1024 * 1024
_UNIT = {"B": 1, "KB": 1024, "MB": MIB, "GB": 1024 * MIB}

_SIZE = r"(\d+(?:\.\d+)?)([KMG]?B)"
_GC = re.compile(
    r"(?P<cause>[A-Z][A-Za-z]*) (?P<name>[a-z][a-z -]*?) GC freed (?P<fo>\d+)\(" + _SIZE + r"\) AllocSpace objects, "
    r"(?P<lo>\d+)\(" + _SIZE + r"\) LOS objects, (?P<free>\d+)% free, " + _SIZE + "/" + _SIZE + r", paused (?P<paused>.*?) total (?P<total>\S+)"
)
# logcat -v threadtime: "11-29 01:34:55.555  3631  3644 I tch.android.ap: message"
_THREADTIME = re.compile(r"^(?P<md>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d(?:\.\d+)?)\s+(?P<pid>\d+)\s+\d+\s+[VDIWEF]\s+(?P<tag>.*?)\s*: (?P<msg>.*)$")
# logcat -v time: "11-29 01:34:55.555 I/art     ( 3631): message"
_TIME = re.compile(r"^(?P<md>\d\d-\d\d) (?P<hms>\d\d:\d\d:\d\d(?:\.\d+)?)\s+[VDIWEF]/(?P<tag>[^(]*?)\s*\(\s*(?P<pid>\d+)\): (?P<msg>.*)$")
_DAYS_BEFORE_MONTH = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]


@dataclass
class Collection:
    """One logged collection."""

    line: int
    t: float | None  # seconds (logcat's clock; None without a timestamp)
    process: str  # "PID TAG", or "" without a logcat prefix
    cause: str
    name: str
    freed_objects: int
    freed_bytes: float
    freed_los_objects: int
    freed_los_bytes: float
    heap_bytes: float  # bytes allocated after the collection
    footprint_bytes: float

    @property
    def young(self) -> bool:
        # "young concurrent copying" (CC), "concurrent sticky mark sweep" (CMS)
        return any(w in ("young", "sticky") for w in self.name.split())


@dataclass
class Window:
    """What a span of the log says (``start``/``end`` in seconds from the first collection)."""

    start: float | None
    end: float | None
    collections: list[Collection] = field(default_factory=list)

    def summary(self) -> dict:
        c = self.collections
        live = [x.heap_bytes / MIB for x in c]
        out: dict = {
            "window_s": [self.start, self.end],
            "collections": len(c),
            "young_collections": sum(x.young for x in c),
            "causes": {k: sum(x.cause == k for x in c) for k in sorted({x.cause for x in c})},
            "heap_after_gc_mib": {"median": statistics.median(live), "min": min(live), "max": max(live)} if c else None,
            "footprint_mib_median": statistics.median(x.footprint_bytes / MIB for x in c) if c else None,
            "span_s": None,
            "alloc_mib_per_s": None,
            "los_share_of_freed": None,
        }
        freed = sum(x.freed_bytes + x.freed_los_bytes for x in c[1:])
        if freed > 0:
            out["los_share_of_freed"] = sum(x.freed_los_bytes for x in c[1:]) / freed
        if len(c) >= 2 and c[0].t is not None and c[-1].t is not None and c[-1].t > c[0].t:
            span = c[-1].t - c[0].t
            out["span_s"] = span
            out["alloc_mib_per_s"] = (freed + c[-1].heap_bytes - c[0].heap_bytes) / MIB / span
        return out


def _bytes(num: str, unit: str) -> float:
    return float(num) * _UNIT[unit]


def _seconds(md: str, hms: str) -> float:
    month, day = (int(x) for x in md.split("-"))
    h, m, s = hms.split(":")
    days = _DAYS_BEFORE_MONTH[min(max(month, 1), 12) - 1] + day
    return days * 86400 + int(h) * 3600 + int(m) * 60 + float(s)


def parse(text: str) -> list[Collection]:
    """Every ART GC summary line of ``text`` (a logcat capture, or bare log lines)."""
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        m = _GC.search(raw)
        if not m:
            continue
        t, process = None, ""
        p = _THREADTIME.match(raw) or _TIME.match(raw)
        if p:
            t = _seconds(p["md"], p["hms"])
            process = f"{p['pid']} {p['tag'].strip()}"
        g = m.groups()
        # groups: cause, name, fo, fb, fu, lo, lb, lu, free, hb, hu, tb, tu, paused, total
        out.append(
            Collection(
                line=n,
                t=t,
                process=process,
                cause=g[0],
                name=g[1],
                freed_objects=int(g[2]),
                freed_bytes=_bytes(g[3], g[4]),
                freed_los_objects=int(g[5]),
                freed_los_bytes=_bytes(g[6], g[7]),
                heap_bytes=_bytes(g[9], g[10]),
                footprint_bytes=_bytes(g[11], g[12]),
            )
        )
    return out


def parse_window(spec: str) -> tuple[float | None, float | None]:
    """``START-END`` in seconds from the first collection (either side may be empty)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)?\s*-\s*(\d+(?:\.\d+)?)?\s*", spec)
    if not m or (m[1] is None and m[2] is None):
        raise MobmemError(f"--window: expected START-END in seconds from the first collection (e.g. 0-180, 220-), got {spec!r}")
    a = float(m[1]) if m[1] is not None else None
    b = float(m[2]) if m[2] is not None else None
    if a is not None and b is not None and b <= a:
        raise MobmemError(f"--window {spec!r}: the end must come after the start")
    return a, b


def read(path: str | Path, process: str | None = None) -> list[Collection]:
    """The collections of one process in the log file at ``path``."""
    p = Path(path)
    if not p.is_file():
        raise MobmemError(f"{p}: no such file" if not p.exists() else f"{p}: not a file")
    text = p.read_bytes().decode("utf-8", errors="replace")
    cs = parse(text)
    if not cs:
        raise MobmemError(f"{p}: no ART GC summary lines ('… GC freed …(…) AllocSpace objects, …') in {len(text.splitlines()):,} lines")
    procs = Counter(c.process for c in cs)
    if process is not None:
        cs = [c for c in cs if c.process.split(" ", 1)[0] == process or (process and process in c.process.split(" ", 1)[-1])]
        if not cs:
            raise MobmemError(f"{p}: no GC lines of a process {process!r}; the log has {_describe(procs)}")
    elif len(procs) > 1:
        raise MobmemError(f"{p}: GC lines of {len(procs)} processes ({_describe(procs)}); choose one with --process PID or a part of its tag")
    # One process's lines all carry a timestamp or none do.
    bad = next((c for a, c in zip(cs, cs[1:]) if a.t is not None and c.t is not None and c.t < a.t), None)
    if bad is not None:
        raise MobmemError(f"{p}:{bad.line}: time goes backwards (a log spanning a year's end, or two captures joined?)")
    return cs


def _describe(procs: Counter) -> str:
    return ", ".join(f"{k or 'no logcat prefix'}: {v}" for k, v in procs.most_common(6))


def windows(cs: list[Collection], specs: list[tuple[float | None, float | None]]) -> list[Window]:
    """The collections in each window (the whole log when ``specs`` is empty)."""
    if not specs:
        return [Window(None, None, list(cs))]
    if cs[0].t is None:
        raise MobmemError("--window needs timestamps: capture with `adb logcat -v threadtime` (logcat's default) or `-v time`")
    t0 = cs[0].t
    out = []
    for a, b in specs:
        w = [c for c in cs if c.t is not None and (a is None or c.t - t0 >= a) and (b is None or c.t - t0 <= b)]
        out.append(Window(a, b, w))
    return out
