"""Writing results safely: atomic files, CSV text, an output directory checked before a long
run, and signals held while a set of files is written (so an interrupted command leaves either
no files or all of them). Shared by every command that writes results."""

from __future__ import annotations

import contextlib
import csv
import io
import os
import signal
import threading
from pathlib import Path

from mobmem.errors import MobmemError


def check_out_dir(out: Path) -> None:
    """Fail before a long run if ``out`` cannot be a directory."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise MobmemError(f"--out {out}: exists and is not a directory")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise MobmemError(f"--out {out}: {parent} is not writable")


@contextlib.contextmanager
def out_dir_lock(out: Path | None):
    """Hold an exclusive ``flock`` on the output directory ``out`` itself for the block, so that
    two commands writing into one directory cannot mix their files: the second gets a one-line
    error at once. The lock goes with the process (nothing stale after a crash) and leaves no
    file behind. ``None``: nothing to lock."""
    if out is None:
        yield
        return
    import fcntl

    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as e:
        raise MobmemError(f"--out {out}: {e.strerror or e}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise MobmemError(f"--out {out} is in use by another mobmem command; wait for it or choose another directory") from None
        yield
    finally:
        os.close(fd)  # releases the lock


_DEFERRING: list[bool] = []  # non-empty while a deferred_interrupts block is open


def check_out_file(path: str | Path, option: str) -> None:
    """Fail before a long run if the file ``path`` (an output option's value) cannot be written:
    its directories are created, and opening it for appending is tried (a file created by the
    try is removed again). The error names the option."""
    p = Path(path)
    if p.is_dir():
        raise MobmemError(f"{option} {path}: is a directory")
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if anc.exists() and not anc.is_dir():
        raise MobmemError(f"{option} {path}: {anc} is not a directory")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        existed = p.exists()
        with open(p, "a"):
            pass
        if not existed:
            p.unlink()
    except OSError as e:
        raise MobmemError(f"{option} {path}: {e.strerror or e}") from None


@contextlib.contextmanager
def deferred_interrupts():
    """Hold SIGINT and SIGTERM until the block is done, then hand the first one that came to the
    handler it would have met (which raises KeyboardInterrupt; with no Python handler, raise it
    here) — only in the main thread, where signal handlers live; elsewhere the block runs as is.
    Nested blocks hold the signal until the outermost one ends, so everything inside it happens
    or none of it starts."""
    if threading.current_thread() is not threading.main_thread() or _DEFERRING:
        yield
        return
    got: list[int] = []
    old = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        prev = signal.getsignal(sig)
        if prev is None or prev == signal.SIG_IGN:  # not installed from Python, or ignored: leave it alone
            continue
        old[sig] = prev
        signal.signal(sig, lambda signum, frame: got.append(signum))
    _DEFERRING.append(True)
    try:
        yield
    finally:
        _DEFERRING.pop()
        for sig, prev in old.items():
            signal.signal(sig, prev)
        if got:
            prev = old.get(got[0])
            if callable(prev):  # the handler the signal would have met (it may raise, or not)
                prev(got[0], None)
            else:
                raise KeyboardInterrupt


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike, encoding: str = "utf-8", binary: bool = False):
    """Open a temporary file beside ``path`` (named after this process and thread, so concurrent
    writers never share one) for writing (text, or bytes with ``binary``); when the block ends
    normally it is flushed to disk and renamed over ``path``, otherwise removed — ``path`` never
    holds a partial file."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "wb") if binary else open(tmp, "w", encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text or bytes) to ``path`` atomically (:func:`atomic_file`); errors name
    the file."""
    try:
        with atomic_file(path, binary=isinstance(data, bytes)) as f:
            f.write(data)
    except OSError as e:
        raise MobmemError(f"{path}: {e.strerror}") from None


def csv_text(rows: list[dict], fields: list[str] | None = None) -> str:
    buf = io.StringIO()
    if fields is None:
        fields = []
        for r in rows:
            for k in r:
                if k not in fields:
                    fields.append(k)
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()
