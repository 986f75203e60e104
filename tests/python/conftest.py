"""Test-session set-up shared by every test module."""

from __future__ import annotations

import signal

# A suite started as a background job of a non-interactive shell (`make test &` in a script)
# inherits SIGINT ignored, and so would every mobmem process the tests start: a program started
# with SIGINT ignored keeps it ignored, as mobmem does. The interrupt tests send SIGINT on
# purpose, so the session restores Python's default handler; processes it starts then begin with
# SIGINT at its default, as they do from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
