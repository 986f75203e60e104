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

The names below are loaded on first use, so that importing a light submodule (the command line
imports ``mobmem.harness.cliutil``) does not import numpy and scipy, which the statistics need.
"""

import importlib

_EXPORTS = {
    "CommandImplementation": "mobmem.harness.implementation",
    "Configuration": "mobmem.harness.implementation",
    "Implementation": "mobmem.harness.implementation",
    "Parameters": "mobmem.harness.implementation",
    "Runner": "mobmem.harness.runner",
    "make_stop": "mobmem.harness.runner",
    "parse_stop": "mobmem.harness.stop",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value
