"""User-facing errors: bad input is reported as ``file:line: field: problem``, never a traceback.

A message that names an unknown name and lists the known ones — ``unknown system 'zarm'; known:
stock, zram, …``, the core's ``unknown collector "ccc"; expected one of cc, cmc, …`` or
``expected one of classic, pure-lru, got "purelru"`` — gets the closest known name suggested
(:func:`did_you_mean`), wherever the message was made."""

from __future__ import annotations

from typing import Iterable


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'zram'?)`` for the known name closest to ``name`` (difflib's ratio of at
    least 0.6, case ignored), or ``""`` when none is close."""
    import difflib

    names = [k for k in known if k and k != name]
    lower = {k.lower(): k for k in names}
    close = difflib.get_close_matches(name.lower(), list(lower), n=1, cutoff=0.6)
    return f" (did you mean '{lower[close[0]]}'?)" if close else ""


def _with_suggestion(message: str) -> str:
    """``message`` with :func:`did_you_mean` after the unknown name it quotes, when it also
    lists the known ones (a message that already suggests one is left as it is)."""
    import re

    if "did you mean" in message:
        return message
    m = re.search(
        r"unknown [\w .-]*?(['\"])(?P<name>[^'\"]+)\1[^;(]*?[;,]?\s*\(?(?:known[^:]*:|expected one of|one of)\s*(?P<known>[^;()\n]+)", message
    ) or re.search(r"expected one of (?P<known>[^;()\n]+?), got (['\"])(?P<name>[^'\"]+)\2", message)
    if m is None:
        return message
    known = [k.strip().removeprefix("or ").strip() for k in m.group("known").split(",")]
    hint = did_you_mean(m.group("name"), [k for k in known if k and " " not in k])
    if not hint:
        return message
    at = m.end("name") + 1  # after the closing quote
    return message[:at] + hint + message[at:]


class MobmemError(Exception):
    """An error caused by the user's input or environment; the CLI prints it and exits 2. An
    unknown name in the message gets the closest known one suggested (see the module)."""

    exit_code = 2

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(_with_suggestion(message) if isinstance(message, str) else message, *args)


class Interrupted(Exception):
    """A run stopped by Ctrl-C or SIGTERM (a KeyboardInterrupt), with what it had got to and what
    was kept; the CLI prints ``interrupted: <message>`` and exits 130, without a traceback."""

    exit_code = 130
