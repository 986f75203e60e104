"""User-facing errors: bad input is reported as ``file:line: field: problem``, never a traceback."""

from __future__ import annotations


class MobmemError(Exception):
    """An error caused by the user's input or environment; the CLI prints it and exits 2."""

    exit_code = 2
