"""The benchmark harness: measure any implementation rigorously.

Structure (after the Rancid framework): an :class:`~mobmem.harness.implementation.Implementation`
(what is measured) with :class:`~mobmem.harness.implementation.Parameters`, paired into a
:class:`~mobmem.harness.implementation.Configuration`; a :class:`~mobmem.harness.runner.Runner`
that repeats runs under a stop condition (:mod:`~mobmem.harness.stop`), with ordered actions
(:mod:`~mobmem.harness.actions`), meters (:mod:`~mobmem.harness.meters`), loggers
(:mod:`~mobmem.harness.loggers`), a resumable JSONL store (:mod:`~mobmem.harness.store`), results
processors (:mod:`~mobmem.harness.processors`), statistics (:mod:`~mobmem.harness.stats`) and an
environment record (:mod:`~mobmem.harness.environment`). The command line is ``mobmem bench``.

This package does not import the Rust extension; simulator implementations plug in as
:class:`Implementation` subclasses elsewhere.
"""

from mobmem.harness.implementation import CommandImplementation, Configuration, Implementation, Parameters
from mobmem.harness.runner import Runner, make_stop
from mobmem.harness.stop import parse_stop

__all__ = ["CommandImplementation", "Configuration", "Implementation", "Parameters", "Runner", "make_stop", "parse_stop"]
