"""Progress of long commands on stderr, and what an interrupted one reports.

- :func:`wanted` — a progress bar is shown only when stderr is a terminal, and never while
  ``--json`` output goes to a file or a pipe; :func:`plain` — where stderr is not a terminal (a
  pipe, a log file), plain lines instead, at a modest rate (:data:`PLAIN_EVERY_S`);
- :class:`SimProgress` — one session: simulated seconds done of the estimated total, wall time,
  ETA (the callback of :func:`mobmem.session.run`); it remembers where the run got to, shown or
  not, for the line an interrupted command prints;
- :class:`RunsProgress` — runs done of a total (``mobmem compare``, ``mobmem demo``, LBO sweeps).

Importing this module is cheap: ``rich.progress`` is loaded only when a bar is shown.
"""

from __future__ import annotations

import sys

from mobmem.errors import Interrupted


def _tty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def wanted(as_json: bool = False) -> bool:
    """Show a progress bar? Only on a terminal's stderr, and not when ``--json`` output is redirected."""
    return _tty(sys.stderr) and not (as_json and not _tty(sys.stdout))


def plain(as_json: bool = False) -> bool:
    """Plain progress lines instead of a bar? When stderr is not a terminal (a pipe, a log file),
    and not when ``--json`` output is redirected."""
    return not _tty(sys.stderr) and not (as_json and not _tty(sys.stdout))


#: Wall seconds between two plain progress lines of a session.
PLAIN_EVERY_S = 10.0


def _bar(*columns):
    from rich.console import Console
    from rich.progress import Progress

    return Progress(*columns, console=Console(stderr=True), transient=True, refresh_per_second=5)


class SimProgress:
    """Sessions' progress bars (when ``show``), one per label, fed by :meth:`update` ``(label,
    done_s, estimated_s)`` or, for the first label, by calling the object ``(done_s, estimated_s)``
    (the ``progress`` callback of :func:`mobmem.session.run`). With ``lines`` (and no bar), a
    plain line on stderr every :data:`PLAIN_EVERY_S` wall seconds per label instead.

    The total is an estimate (the script's use and wait time; launches add to it), so a bar stays
    below 100 % until its run ends."""

    def __init__(self, label: str | list[str], show: bool, lines: bool = False) -> None:
        import time

        self.labels = [label] if isinstance(label, str) else list(label)
        self.show = show
        self.lines = lines and not show
        self._start = time.monotonic()
        self._said: dict[str, float] = {}  # label → when its last plain line was printed
        self.points: dict[str, tuple[float, float]] = {}
        self._progress = None
        self._tasks: dict[str, object] = {}
        self._totals: dict[str, float] = {}
        self.finished: set[str] = set()

    def __enter__(self) -> "SimProgress":
        if self.show:
            from rich.progress import BarColumn, TaskProgressColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._progress = _bar(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TextColumn("{task.fields[sim]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            self._progress.start()
            for label in self.labels:
                self._tasks[label] = self._progress.add_task(label, total=None, sim="")
        return self

    def __call__(self, done: float, estimate: float) -> None:
        self.update(self.labels[0], done, estimate)

    def update(self, label: str, done: float, estimate: float) -> None:
        done = float(done)
        total = max(float(estimate), done / 0.99, 1e-9)
        self.points[label] = (done, max(float(estimate), done))
        self._totals[label] = total
        if self._progress is not None and label in self._tasks:
            self._progress.update(self._tasks[label], total=total, completed=min(done, 0.99 * total), sim=f"{done:,.1f} / ~{total:,.0f} simulated s")
        elif self.lines:
            import time

            now = time.monotonic()
            if now - self._said.get(label, self._start) >= PLAIN_EVERY_S:
                self._said[label] = now
                print(f"{label}: {self.where(label)} ({min(done / total, 0.99):.0%}), {now - self._start:,.0f} s wall", file=sys.stderr, flush=True)

    def finish(self, label: str) -> None:
        """A run is over: its bar at 100 %."""
        self.finished.add(label)
        if self._progress is not None and label in self._tasks:
            total = self._totals.get(label, 1.0)
            self._progress.update(self._tasks[label], total=total, completed=total)

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def where(self, label: str | None = None) -> str:
        """``37.2 of ~132 simulated s`` (or ``the start`` before the first report)."""
        p = self.points.get(label or self.labels[0])
        if p is None:
            return "the start"
        return f"{p[0]:,.1f} of ~{p[1]:,.0f} simulated s"

    def interrupted(self, what: str, out=None) -> Interrupted:
        """The exception for an interrupted run of ``what``; nothing was written to ``out``."""
        tail = f"; nothing written to {out}" if out is not None else ""
        return Interrupted(f"{what} at {self.where()}{tail}")


class RunsProgress:
    """Runs done of ``total`` (a bar when ``show``); :meth:`log` prints a line above the bar."""

    def __init__(self, label: str, total: int, show: bool) -> None:
        self.label, self.total, self.show = label, total, show
        self.done = 0
        self._progress = None
        self._task = None

    def __enter__(self) -> "RunsProgress":
        if self.show:
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._progress = _bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("runs"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
            )
            self._progress.start()
            self._task = self._progress.add_task(self.label, total=self.total, completed=self.done)
        return self

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._progress is not None:
            self._progress.update(self._task, completed=self.done)

    def log(self, message: str, style: str | None = "dim") -> None:
        """One line above the bar (the style is the line's, not the bar's); without a bar, the
        line as it is on stderr (not wrapped at 80 columns as rich would for a file)."""
        if self._progress is not None:
            from rich.text import Text

            self._progress.console.print(Text(message, style=style or ""))
        else:
            print(message, file=sys.stderr, flush=True)

    def __exit__(self, *exc) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def runs_interrupted(what: str, done: int, total: int, out, kept_in: str) -> Interrupted:
    """The error for Ctrl-C during a set of runs: how far it got and what was kept (``kept_in``:
    where under ``out`` the finished runs are), with the --resume hint."""
    if out is None:
        kept = " (no --out: nothing kept)"
    elif done:
        kept = f"; the finished ones are in {kept_in} (the same command with --resume runs the rest)"
    else:
        kept = f"; nothing written to {out}"
    return Interrupted(f"{what} after {done} of {total} runs{kept}")


def run_done(res: dict, reused: bool) -> str:
    """How a run of a set ended, for its progress line: reused from --out, or its simulated and
    wall seconds."""
    return "reused" if reused else f"{res.get('sim_seconds', 0):.0f} simulated s in {res.get('wall_seconds', 0):.1f} s"
