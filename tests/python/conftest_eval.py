"""Helpers for the evaluation-framework tests (harness, LBO, JVM). Not a pytest conftest: import it.

``load_cli("bench")`` returns the ``mobmem.cli.bench`` module even while sibling CLI modules that
``mobmem/cli/__init__.py`` registers are still missing (they are written by other areas)."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
if PY not in sys.path:
    sys.path.insert(0, PY)


def load_cli(name: str):
    try:
        return importlib.import_module(f"mobmem.cli.{name}")
    except ImportError:
        key = f"_mobmem_cli_{name}"
        if key in sys.modules:
            return sys.modules[key]
        spec = importlib.util.spec_from_file_location(key, os.path.join(PY, "mobmem", "cli", f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
        return mod
