"""A session's timeline as a trace file for Perfetto UI (ui.perfetto.dev) or chrome://tracing.

The format follows the file name (:func:`trace_format`): ``*.json`` is the Chrome JSON
trace-event format (an array of events, which Perfetto also opens); ``*.perfetto-trace``,
``*.pftrace`` and ``*.pb`` are Perfetto's protobuf format, a stream of ``TracePacket`` messages
built with the trace schema the ``perfetto`` package ships; any other name is an error before
anything runs. What is in it, from the session's result:

- one process per app (the pid of its first incarnation) with a ``main`` thread (launch slices,
  TTID long, the launch breakdown as arguments; kills, OOMs, compactions and file I/O as instant
  events), a ``HeapTaskDaemon`` thread (each collection, its phases as child slices, pauses named
  as such), a ``janky frames`` track (each frame that missed its vsync; on-time frames are only
  counted in the result) and counter tracks of its RSS, PSS and swap (``session.app_sample_ms``);
- a ``phone`` process with counter tracks of the memory time series (free, anon, file, swap,
  zram pool, PSI, alive and cached apps) and of reclaim rates per second (kswapd and direct
  scans, direct reclaims, refaults), and kills of system processes.

What it leaves out: the kernel's threads have no slices (kswapd's work shows as its scan rate),
and fault and reclaim stalls appear as sums in the launch breakdown, not as their own slices (the
simulator does not record each stall).

Writing streams: one event (JSON) or one packet (protobuf) at a time, never the whole trace in
memory. The output is deterministic (the same run gives the same bytes) and written to a temporary
name, then renamed (:func:`mobmem.files.atomic_file`): an interrupted export leaves nothing behind.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Iterator

from mobmem.errors import MobmemError

#: Counter tracks of the phone's time series: (result key, track name).
PHONE_COUNTERS = [
    ("free_mib", "free MiB"),
    ("anon_mib", "anon LRU MiB"),
    ("file_mib", "file LRU MiB"),
    ("swap_used_mib", "swap used MiB"),
    ("zram_pool_mib", "zram pool MiB"),
    ("psi_some_avg10", "PSI memory some avg10 %"),
    ("psi_full_avg10", "PSI memory full avg10 %"),
    ("alive_apps", "alive apps"),
    ("cached_apps", "cached apps"),
]
#: Cumulative counters of the time series shown as rates per second.
PHONE_RATES = [
    ("pgscan_kswapd", "kswapd pages scanned/s"),
    ("pgscan_direct", "direct reclaim pages scanned/s"),
    ("allocstall", "direct reclaims/s"),
    ("workingset_refault", "refaults/s"),
]
APP_COUNTERS = [("rss_mib", "RSS MiB"), ("pss_mib", "PSS MiB"), ("swap_mib", "swap MiB")]
#: Event-log kinds shown as instant events (launches and collections are slices).
INSTANT_KINDS = ("oom", "compact", "launch-failed", "file_io", "restart", "trim")

PHONE_PID = 1


def _ns(t_s: float) -> int:
    return int(round(float(t_s) * 1e9))


def _ms_ns(ms: float) -> int:
    return max(0, int(round(float(ms) * 1e6)))


class _Layout:
    """A process per app of the result: its first incarnation's pid where the memory series has
    it, else a free number from 10,000 up (deterministic, in the apps' order)."""

    def __init__(self, res: dict):
        self.pids: dict[str, int] = {}
        for row in res.get("app_memory", []):
            self.pids.setdefault(row["app"], int(row["pid"]))
        self.names = [a for a in res.get("per_app", {})]
        used = set(self.pids.values()) | {PHONE_PID}
        nxt = 10_000
        for a in self.names:
            if a not in self.pids:
                while nxt in used:
                    nxt += 1
                self.pids[a] = nxt
                used.add(nxt)

    def pid(self, app: str) -> int:
        return self.pids[app]


# Thread ids inside a process: main thread = pid, then fixed offsets.
GC_TID, FRAMES_TID, KILLS_TID = 1, 2, 3


class _Event:
    """A writer-independent event: slice (dur ≥ 0), instant (dur None) or counter (value)."""

    __slots__ = ("ts", "pid", "tid", "name", "dur", "args", "counter", "value", "children")

    def __init__(self, ts, pid, tid, name, dur=None, args=None, counter=False, value=0.0, children=()):
        self.ts, self.pid, self.tid, self.name, self.dur, self.args, self.counter, self.value = ts, pid, tid, name, dur, args, counter, value
        #: Slices nested in this one, in order, none overlapping (the phases of a collection).
        self.children = children


def _events(res: dict, lay: _Layout) -> Iterator[_Event]:
    """Every event of the trace, from the result (launches, GCs, frames, instants, counters)."""
    for l in res.get("launches", []):
        pid = lay.pid(l["app"])
        args = {"ttid_ms": l.get("ttid_ms"), "relaunch": l.get("relaunch")}
        args.update({k: v for k, v in (l.get("breakdown") or {}).items()})
        yield _Event(_ns(l["t_s"]), pid, pid, f"{l['kind']} launch", _ms_ns(l.get("ttid_ms") or 0.0), args)
    phases: dict[int, list[dict]] = {}
    for p in res.get("gc_phases", []):
        phases.setdefault(int(p["gc"]), []).append(p)
    for i, g in enumerate(res.get("gcs", [])):
        pid = lay.pid(g["app"])
        args = {
            k: g.get(k)
            for k in ("collector", "type", "cause", "state", "pause_ms", "gc_cpu_ms", "freed_bytes", "objects_touched", "pages_touched", "major_faults")
        }
        start, dur = _ns(g["t_s"]), _ms_ns(g["duration_ms"])
        kids, at = [], start
        for p in phases.get(i, []):
            # Phases nest in the collection and follow each other (clamped: rounding to ns).
            ps = min(max(at, _ns(p["t_s"])), start + dur)
            pe = min(ps + _ms_ns(p["duration_ms"]), start + dur)
            kind = p.get("kind")
            name = f"{p['name']} (pause)" if kind == "Pause" else p["name"]
            kids.append(_Event(ps, pid, pid + GC_TID, name, pe - ps, {"kind": kind, "gc_cpu_ms": p.get("gc_cpu_ms")}))
            at = pe
        yield _Event(start, pid, pid + GC_TID, f"{g['type']} GC ({g['cause']})", dur, args, children=kids)
    for f in res.get("janky_frames", []):
        pid = lay.pid(f["app"])
        yield _Event(_ns(f["t_s"]), pid, pid + FRAMES_TID, "janky frame", _ms_ns(f["dur_ms"]), {"dur_ms": f["dur_ms"]})
    for e in res.get("events", []):
        if e.get("kind") in INSTANT_KINDS:
            pid = lay.pids.get(e.get("app"), PHONE_PID)  # a system process's event: the phone's
            yield _Event(_ns(e["t_s"]), pid, pid, e["kind"], None, {"detail": e.get("detail")})
    from mobmem.session.output import kill_rows

    for k in kill_rows(res):
        pid = lay.pid(k["app"]) if k.get("is_app") else PHONE_PID
        tid = pid if k.get("is_app") else PHONE_PID + KILLS_TID
        args = {x: k.get(x) for x in ("process", "reason", "killer", "oom_score_adj", "rss_kb", "swap_kb", "swap_used_kb", "free_kb")}
        yield _Event(_ns(k["t_s"]), pid, tid, f"kill ({k.get('killer')})", None, args)
    samples = res.get("timeline", [])
    prev = None
    for s in samples:
        ts = _ns(s["t_s"])
        for key, name in PHONE_COUNTERS:
            if key in s:
                yield _Event(ts, PHONE_PID, 0, name, counter=True, value=float(s[key]))
        if prev is not None and s["t_s"] > prev["t_s"]:
            dt = s["t_s"] - prev["t_s"]
            for key, name in PHONE_RATES:
                if key in s:
                    yield _Event(ts, PHONE_PID, 0, name, counter=True, value=(float(s[key]) - float(prev[key])) / dt)
        prev = s
    for row in res.get("app_memory", []):
        pid = lay.pid(row["app"])
        for key, name in APP_COUNTERS:
            yield _Event(_ns(row["t_s"]), pid, 0, name, counter=True, value=float(row[key]))


def _thread_names(lay: _Layout) -> Iterator[tuple[int, int, str]]:
    for app in lay.names:
        pid = lay.pids[app]
        yield pid, pid, "main"
        yield pid, pid + GC_TID, "HeapTaskDaemon"
        yield pid, pid + FRAMES_TID, "janky frames"
    yield PHONE_PID, PHONE_PID, "system events"
    yield PHONE_PID, PHONE_PID + KILLS_TID, "kills"


# ------------------------------------------------------------------ Chrome JSON


def _write_json(res: dict, out: IO[str]) -> None:
    lay = _Layout(res)
    first = True

    def emit(ev: dict) -> None:
        nonlocal first
        out.write(("[\n" if first else ",\n") + json.dumps(ev, sort_keys=True, separators=(",", ":")))
        first = False

    emit({"ph": "M", "name": "process_name", "pid": PHONE_PID, "tid": 0, "args": {"name": "phone"}})
    for app in lay.names:
        emit({"ph": "M", "name": "process_name", "pid": lay.pids[app], "tid": 0, "args": {"name": app}})
    for pid, tid, name in _thread_names(lay):
        emit({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}})
    for e in _events(res, lay):
        us = e.ts / 1e3
        if e.counter:
            emit({"ph": "C", "name": e.name, "pid": e.pid, "ts": us, "args": {"value": e.value}})
        elif e.dur is None:
            emit({"ph": "i", "s": "t", "name": e.name, "pid": e.pid, "tid": e.tid, "ts": us, "args": e.args or {}})
        else:
            for x in (e, *e.children):
                emit({"ph": "X", "name": x.name, "pid": x.pid, "tid": x.tid, "ts": x.ts / 1e3, "dur": x.dur / 1e3, "args": x.args or {}})
    out.write("[\n]\n" if first else "\n]\n")


# ------------------------------------------------------------------ Perfetto protobuf


def _pb():
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
    except ImportError as e:  # pragma: no cover - a declared dependency
        raise MobmemError(f"--trace: the Perfetto trace schema is not installed ({e}); reinstall mobmem") from None
    return perfetto_trace_pb2


def _varint(n: int) -> bytes:
    b = bytearray()
    while True:
        x = n & 0x7F
        n >>= 7
        if n:
            b.append(x | 0x80)
        else:
            b.append(x)
            return bytes(b)


def _annotate(pb, te, args: dict) -> None:
    for k, v in args.items():
        if v is None:
            continue
        a = te.debug_annotations.add()
        a.name = str(k)
        if isinstance(v, bool):
            a.bool_value = v
        elif isinstance(v, int):
            a.int_value = v
        elif isinstance(v, float):
            a.double_value = v
        else:
            a.string_value = str(v)


def _write_proto(res: dict, out: IO[bytes]) -> None:
    pb = _pb()
    lay = _Layout(res)
    seq = 1
    first = True

    def emit(pkt) -> None:
        nonlocal first
        pkt.trusted_packet_sequence_id = seq
        if first:
            pkt.sequence_flags = pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
            first = False
        body = pkt.SerializeToString(deterministic=True)
        out.write(b"\x0a" + _varint(len(body)) + body)  # Trace.packet (field 1, length-delimited)

    uuids: dict[tuple, int] = {}

    def uuid(key: tuple) -> int:
        if key not in uuids:
            uuids[key] = len(uuids) + 1
        return uuids[key]

    def process(pid: int, name: str) -> None:
        p = pb.TracePacket()
        p.track_descriptor.uuid = uuid(("p", pid))
        p.track_descriptor.process.pid = pid
        p.track_descriptor.process.process_name = name
        emit(p)

    def thread(pid: int, tid: int, name: str) -> None:
        p = pb.TracePacket()
        d = p.track_descriptor
        d.uuid = uuid(("t", pid, tid))
        d.parent_uuid = uuid(("p", pid))
        d.thread.pid, d.thread.tid, d.thread.thread_name = pid, tid, name
        emit(p)

    counters: set[tuple] = set()

    def counter(pid: int, name: str) -> int:
        key = ("c", pid, name)
        if key not in counters:
            counters.add(key)
            p = pb.TracePacket()
            d = p.track_descriptor
            d.uuid = uuid(key)
            d.parent_uuid = uuid(("p", pid))
            d.name = name
            d.counter.SetInParent()
            emit(p)
        return uuid(key)

    process(PHONE_PID, "phone")
    for app in lay.names:
        process(lay.pids[app], app)
    for pid, tid, name in _thread_names(lay):
        thread(pid, tid, name)
    for e in _events(res, lay):
        if e.counter:
            track = counter(e.pid, e.name)
            p = pb.TracePacket()
            p.timestamp = e.ts
            p.track_event.type = pb.TrackEvent.TYPE_COUNTER
            p.track_event.track_uuid = track
            p.track_event.double_counter_value = e.value
            emit(p)
            continue
        track = uuid(("t", e.pid, e.tid))

        def begin(x, kind, track=track) -> None:
            p = pb.TracePacket()
            p.timestamp = x.ts
            te = p.track_event
            te.track_uuid = track
            te.name = x.name
            te.type = kind
            _annotate(pb, te, x.args or {})
            emit(p)

        def end(ts: int, track=track) -> None:
            q = pb.TracePacket()
            q.timestamp = ts
            q.track_event.track_uuid = track
            q.track_event.type = pb.TrackEvent.TYPE_SLICE_END
            emit(q)

        if e.dur is None:
            begin(e, pb.TrackEvent.TYPE_INSTANT)
            continue
        # Parent begin, each child's begin and end, parent end: nesting holds in stream order
        # even where a child starts or ends at the parent's timestamp.
        begin(e, pb.TrackEvent.TYPE_SLICE_BEGIN)
        for c in e.children:
            begin(c, pb.TrackEvent.TYPE_SLICE_BEGIN)
            end(c.ts + c.dur)
        end(e.ts + e.dur)


#: File name endings → trace format.
FORMATS = {".perfetto-trace": "protobuf", ".pftrace": "protobuf", ".pb": "protobuf", ".json": "json"}


def trace_format(path: str | os.PathLike, option: str = "--trace") -> str:
    """``"protobuf"`` or ``"json"``, from the file name's ending (:data:`FORMATS`); any other
    ending is a one-line :class:`MobmemError` naming ``option``."""
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        what = f"'{p.suffix}' is not a trace format" if p.suffix else "no file name ending to tell the format"
        raise MobmemError(f"{option} {path}: {what}; use FILE.perfetto-trace, FILE.pftrace or FILE.pb (Perfetto protobuf) or FILE.json (Chrome trace events)")
    return fmt


def write_trace(res: dict, path: str | os.PathLike) -> Path:
    """Write the session result ``res`` as a trace at ``path`` (format by the name's ending,
    :func:`trace_format`); returns the path. Raises :class:`MobmemError` if it cannot be
    written."""
    from mobmem.files import atomic_file

    path = Path(path)
    as_json = trace_format(path) == "json"
    if not as_json:
        _pb()
    try:
        with atomic_file(path, binary=not as_json) as f:
            (_write_json if as_json else _write_proto)(res, f)
    except OSError as e:
        raise MobmemError(f"--trace {path}: {e.strerror or e}") from None
    return path


# ------------------------------------------------------------------ reading back (tests, checks)


def read_proto(path: str | os.PathLike) -> Iterator:
    """The ``TracePacket`` messages of a protobuf trace written by :func:`write_trace`."""
    pb = _pb()
    data = Path(path).read_bytes()
    i = 0
    while i < len(data):
        if data[i] != 0x0A:
            raise MobmemError(f"{path}: byte {i}: not a Trace.packet field")
        i += 1
        n = shift = 0
        while True:
            b = data[i]
            i += 1
            n |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        p = pb.TracePacket()
        p.ParseFromString(data[i : i + n])
        i += n
        yield p


def proto_slices(path: str | os.PathLike) -> list[dict]:
    """The slices of a protobuf trace (begin/end pairs matched per track): name, track name,
    process name, start and duration in ns, arguments."""
    pb = _pb()
    tracks: dict[int, tuple[str, str]] = {}
    procs: dict[int, str] = {}
    open_: dict[int, list[dict]] = {}
    out = []
    for p in read_proto(path):
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            if d.HasField("process"):
                procs[d.uuid] = d.process.process_name
                tracks[d.uuid] = (d.process.process_name, d.process.process_name)
            elif d.HasField("thread"):
                tracks[d.uuid] = (d.thread.thread_name, procs.get(d.parent_uuid, ""))
            else:
                tracks[d.uuid] = (d.name, procs.get(d.parent_uuid, ""))
            continue
        if not p.HasField("track_event"):
            continue
        te = p.track_event
        if te.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            args = {}
            for a in te.debug_annotations:
                kind = a.WhichOneof("value")
                args[a.name] = getattr(a, kind) if kind else None
            track, proc = tracks.get(te.track_uuid, ("", ""))
            open_.setdefault(te.track_uuid, []).append({"name": te.name, "track": track, "process": proc, "ts": p.timestamp, "args": args})
        elif te.type == pb.TrackEvent.TYPE_SLICE_END:
            s = open_[te.track_uuid].pop()
            s["dur"] = p.timestamp - s["ts"]
            out.append(s)
    return out
