"""mobmem: a laboratory for memory management on mobile devices.

The simulation core is Rust (``mobmem._core``); this package holds the command line, the
Python-side views of the model, and the evaluation framework (harness, LBO, JVM back end).
"""

__version__ = "0.1.0"
