"""User-facing errors: bad input is reported as ``file:line: field: problem``, never a traceback."""

from __future__ import annotations


class MobmemError(Exception):
    """An error caused by the user's input or environment; the CLI prints it and exits 2."""

    exit_code = 2


class Interrupted(Exception):
    """A run stopped by Ctrl-C or SIGTERM (a KeyboardInterrupt), with what it had got to and what
    was kept; the CLI prints ``interrupted: <message>`` and exits 130, without a traceback."""

    exit_code = 130
