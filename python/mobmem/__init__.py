"""mobmem: a laboratory for memory management on mobile devices.

The simulation core is Rust (``mobmem._core``); this package holds the command line, the
Python-side views of the model, and the evaluation framework (harness, LBO, JVM back end).
``mobmem.run``, ``mobmem.load``, ``mobmem.compare`` and ``mobmem.sweep`` are the Python API
(:mod:`mobmem.api`): results as pandas DataFrames.
"""

__version__ = "0.1.0"

#: The Python API (:mod:`mobmem.api`), imported on first use so that ``import mobmem`` and the
#: command line stay fast.
_API = ("run", "load", "compare", "sweep", "Result")
__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        from mobmem import api

        return getattr(api, name)
    raise AttributeError(f"module 'mobmem' has no attribute {name!r}")
