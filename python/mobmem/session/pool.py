"""Independent runs in worker processes, stopped at once by Ctrl-C.

:func:`run_parallel` hands each finished run to the caller in this process as soon as it is done
(so it can be written to disk right away), in the order the runs finish.

Workers are fresh Python processes that import the function they run and nothing else of the
caller: unlike multiprocessing's ``spawn``, they never re-run the caller's main script, so a
plain script (``python example.py``) that calls mobmem at its top level needs no
``if __name__ == "__main__":`` guard. Each worker talks to this process over its own socket pair
(no lock is shared between processes), so ending them cannot wait on a lock a worker held:

- Ctrl-C, SIGTERM (as the command line installs it) or an error in a run end every worker at once
  (SIGTERM, then SIGKILL for any still there after half a second), with SIGINT and SIGTERM held
  meanwhile: a second Ctrl-C cannot cut the clean-up short. Runs not yet finished are dropped,
  runs already handed over stay handed over.
- Workers start with SIGINT blocked and then ignore it — the Ctrl-C a terminal sends to the whole
  process group is handled here, not by a traceback in each worker — and die on SIGTERM. On Linux
  they also die with this process, even when it is killed outright.
- A worker that ends unexpectedly (killed, out of memory, a broken installation) is a one-line
  error, not a wait for ever.

Workers can report progress: :func:`report` in a worker calls ``on_report(*args)`` in this process.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any, Callable, Iterable

_CONN = None  # in a worker: its connection to the parent
_REPORTING = False  # in a worker: whether the parent listens to report()
_LIVE: dict[int, Any] = {}  # in the parent: pid → the worker processes running now

# How a worker starts: the parent's import path first (so that it imports what the parent would),
# then the worker loop on the connection whose descriptor it inherited.
_BOOT = "import sys, json; sys.path[:] = json.loads(sys.argv[1]); from mobmem.session.pool import _serve; _serve(int(sys.argv[2]), int(sys.argv[3]))"

#: How long ending the workers waits for SIGTERM to work before SIGKILL.
TERM_GRACE_S = 0.5


def report(*args: Any) -> None:
    """In a worker: send ``args`` to the parent's ``on_report`` (nothing when none listens)."""
    if _CONN is not None and _REPORTING:
        try:
            _CONN.send(("report", args))
        except Exception:  # noqa: BLE001 — progress is best-effort
            pass


def reporting() -> bool:
    """Whether this worker's parent listens to :func:`report`."""
    return _CONN is not None and _REPORTING


# ---------------------------------------------------------------------------- in a worker


def _die_with_parent(parent: int) -> None:
    """SIGKILL this process when the parent dies (Linux), and exit now if it already has."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:
        os._exit(1)


def _sendable(exc: BaseException) -> BaseException:
    """``exc`` if it survives pickling both ways, else a RuntimeError that says what it was."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001 — any failure to pickle or unpickle
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _serve(fd: int, parent: int) -> None:
    """A worker's loop: receive ``(fn, reporting)``, then items; send back each result (or the
    error it raised) until the parent sends ``None`` or goes away."""
    global _CONN, _REPORTING
    import traceback
    from multiprocessing.connection import Connection

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a pending Ctrl-C (blocked since the start) is dropped
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _die_with_parent(parent)
    conn = Connection(fd)
    try:
        fn, reporting_ = conn.recv()
    except EOFError:
        return
    _CONN, _REPORTING = conn, reporting_
    while True:
        try:
            item = conn.recv()
        except EOFError:
            return
        if item is None:
            return
        try:
            msg = ("ok", item[0], fn(item[1]))
        except Exception as e:  # noqa: BLE001 — sent to the parent, which raises it
            msg = ("error", item[0], _sendable(e), traceback.format_exc())
        try:
            conn.send(msg)
        except (BrokenPipeError, ConnectionResetError):
            return
        except Exception as e:  # noqa: BLE001 — a result that cannot be pickled
            conn.send(("error", item[0], RuntimeError(f"the result of {fn.__name__} cannot be sent back: {e}"), ""))


# ---------------------------------------------------------------------------- in the parent


class _RemoteTraceback(Exception):
    """The traceback of an error raised in a worker (the ``__cause__`` of the error re-raised here)."""

    def __str__(self) -> str:
        return str(self.args[0])


class _Worker:
    """One worker process and this side of its connection."""

    def __init__(self, fn: Callable[[Any], Any], reporting_: bool) -> None:
        import json
        import subprocess
        from multiprocessing.connection import Pipe

        ours, theirs = Pipe(duplex=True)
        args = [sys.executable, *_interpreter_flags(), "-c", _BOOT, json.dumps([str(p) for p in sys.path]), str(theirs.fileno()), str(os.getpid())]
        # SIGINT blocked across the start: the worker inherits the mask and ignores SIGINT before
        # unblocking it, so a Ctrl-C while it starts cannot print a traceback from it.
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc = subprocess.Popen(args, pass_fds=(theirs.fileno(),))
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
            theirs.close()
        _LIVE[self.proc.pid] = self.proc
        self.conn = ours
        self.item: int | None = None  # the index of the item it runs
        try:
            ours.send((fn, reporting_))
        except OSError:
            pass  # it died at once: the main loop sees the connection closed

    def give(self, index: int, item: Any) -> None:
        self.item = index
        try:
            self.conn.send((index, item))
        except OSError:
            pass  # the main loop sees it died

    def stop(self) -> None:
        """Ask it to exit (it has nothing left to run)."""
        self.item = None
        try:
            self.conn.send(None)
        except OSError:
            pass

    def died(self) -> Exception:
        """The error for a worker whose connection closed while it had work."""
        import subprocess

        from mobmem.errors import MobmemError

        try:
            code = self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        if code is not None and code < 0:
            how = f"was killed by {signal.Signals(-code).name}" + (" (out of memory?)" if code == -signal.SIGKILL else "")
        elif code is not None:
            how = f"exited with code {code}"
        else:
            how = "closed its connection"
        return MobmemError(f"a worker process {how} before it finished its run; the runs under way are lost")


def _interpreter_flags() -> list[str]:
    """The interpreter's own options (-X, -W, -O, -B …), as multiprocessing passes them on."""
    import subprocess

    flags = getattr(subprocess, "_args_from_interpreter_flags", None)
    try:
        return list(flags()) if flags else []
    except Exception:  # noqa: BLE001 — an interpreter without them
        return []


def _end(workers: list[_Worker], at_once: bool) -> None:
    """End every worker, whatever it is doing: the finished ones are asked to exit and given a
    moment; SIGTERM to the rest (all of them when ``at_once``), SIGKILL after
    :data:`TERM_GRACE_S`. SIGINT and SIGTERM are held meanwhile (a KeyboardInterrupt after, if
    one came), so a second Ctrl-C cannot leave a worker behind."""
    import subprocess
    import time

    from mobmem.files import deferred_interrupts

    with deferred_interrupts():
        if not at_once:
            for w in workers:
                if w.item is None:
                    w.stop()
            deadline = time.monotonic() + 2.0
            for w in workers:
                try:
                    w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass
        for w in workers:
            if w.proc.poll() is None:
                try:
                    w.proc.terminate()
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + TERM_GRACE_S
        for w in workers:
            try:
                w.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                w.proc.kill()
                w.proc.wait()
        for w in workers:
            _LIVE.pop(w.proc.pid, None)
            w.conn.close()


def kill_workers() -> None:
    """SIGKILL every worker process still running (a forced exit of the command line)."""
    for proc in list(_LIVE.values()):
        try:
            proc.kill()
        except (ProcessLookupError, OSError):
            pass


def run_parallel(
    fn: Callable[[Any], Any], items: Iterable[Any], jobs: int, on_result: Callable[[Any], None], on_report: Callable[..., None] | None = None
) -> None:
    """``on_result(fn(item))`` for every item, ``fn`` in ``jobs`` worker processes (``fn`` must
    be importable by its module's name, and items and results picklable), results in the order
    they finish. An error raised by ``fn`` is raised here (its traceback in the worker as its
    ``__cause__``); the other workers are ended first."""
    import time
    from multiprocessing.connection import wait

    from mobmem.files import deferred_interrupts

    items = list(items)
    if not items:
        return
    if getattr(fn, "__module__", None) == "__main__":
        raise TypeError(f"run_parallel: {fn.__name__} is defined in __main__; workers need a function they can import from a module")
    workers: list[_Worker] = []
    try:
        for _ in range(max(1, min(jobs, len(items)))):
            with deferred_interrupts():  # a started worker is always in the list the clean-up ends
                workers.append(_Worker(fn, on_report is not None))
        todo = iter(enumerate(items))

        def feed(w: _Worker) -> None:
            nxt = next(todo, None)
            if nxt is None:
                w.stop()
            else:
                w.give(*nxt)

        for w in workers:
            feed(w)
        by_conn = {w.conn: w for w in workers}
        left = len(items)
        while left:
            for conn in wait([w.conn for w in workers if w.item is not None]):
                w = by_conn[conn]
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    time.sleep(0.1)  # a signal that killed it may be on its way here too: that one first
                    raise w.died() from None
                if msg[0] == "report":
                    if on_report is not None:
                        on_report(*msg[1])
                    continue
                if msg[0] == "error":
                    exc, tb = msg[2], msg[3]
                    if tb:
                        exc.__cause__ = _RemoteTraceback(f'\n"""\n{tb}"""')
                    raise exc
                left -= 1
                feed(w)  # the next run starts before this one is handed over
                on_result(msg[2])
    except BaseException:
        _end(workers, at_once=True)
        raise
    _end(workers, at_once=False)


def run_all(fn: Callable[[Any], Any], items: Iterable[Any], jobs: int, on_result: Callable[[Any], None]) -> None:
    """``on_result(fn(item))`` for every item: in this process, in order, when at most one job is
    wanted (``jobs`` is capped by the items and the CPUs); else in worker processes
    (:func:`run_parallel`)."""
    items = list(items)
    jobs = max(1, min(jobs, len(items), os.cpu_count() or 1))
    if jobs == 1:
        for item in items:
            on_result(fn(item))
    else:
        run_parallel(fn, items, jobs, on_result)
