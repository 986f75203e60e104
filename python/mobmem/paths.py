"""Where the shipped input files live: one place for every path into ``mobmem/data``."""

from __future__ import annotations

from pathlib import Path

#: The package's data directory (devices, apps, scenarios, systems, runtime costs).
DATA = Path(__file__).resolve().parent / "data"
DEVICES = DATA / "devices"
SCENARIOS = DATA / "scenarios"
SYSTEMS_FILE = DATA / "systems.toml"
