"""Helpers for the evaluation-framework tests (harness, LBO, JVM). Not a pytest conftest: import it.

``load_cli("bench")`` returns the ``mobmem.cli.bench`` module through the package, so a CLI that
fails to import fails these tests too."""

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
    return importlib.import_module(f"mobmem.cli.{name}")
