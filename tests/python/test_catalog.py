"""The catalogue is the one list of simulator names: every command accepts exactly its entries
(names and aliases), reports unknown ones with its list, and `mobmem catalog` shows it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from mobmem import catalog, runtime, session
from mobmem.errors import MobmemError
from mobmem.lbo.backends.sim import SimBackend

ROOT = Path(__file__).resolve().parents[2]
TINY = "tests/python/data/session_tiny.toml"


def test_catalogue_shape():
    c = catalog.catalog()
    names = catalog.collector_names()
    assert len(names) == len(set(names)) >= 6
    aliases = [a for e in c["collectors"] for a in e["aliases"]]
    assert not set(aliases) & set(names) and len(aliases) == len(set(aliases))
    assert all(e["help"] for k in ("collectors", "runtime_policies", "lmkd") for e in c[k])
    assert set(c["settings"]) == {"kernel", "runtime", "app", "session"}


def test_every_collector_name_and_alias_is_accepted_everywhere():
    c = catalog.catalog()
    backend = SimBackend()
    assert backend.collectors() == catalog.collector_names()
    for e in c["collectors"]:
        for n in (e["name"], *e["aliases"]):
            assert catalog.collector(n) == e["name"]
            assert backend.check(["gcbench"], [n])[1] == [e["name"]]


def test_unknown_collector_error_lists_the_catalogue():
    with pytest.raises(MobmemError) as e:
        runtime.run("synthetic:footprint=16m,objsize=512", collector="g1", seconds=0.0)
    assert str(e.value).endswith(", ".join(catalog.collector_names()))
    # the session layer (Rust) names the same list
    with pytest.raises(MobmemError) as e:
        session.run(TINY, ["system.collector=g1"])
    assert ", ".join(catalog.collector_names()) in str(e.value)
    with pytest.raises(MobmemError) as e:
        session.run(TINY, ["system.lmkd=nope"])
    assert ", ".join(catalog.lmkd_names()) in str(e.value)


def test_an_alias_runs_the_collector_and_results_use_its_name():
    a = session.run(TINY, ["system.collector=cms", "session.time_scale=0.2"])
    b = session.run(TINY, ["system.collector=ms", "session.time_scale=0.2"])
    assert a["system"]["collector"] == "ms"
    assert session.deterministic_view(a)["gc"] == session.deterministic_view(b)["gc"]


def test_catalog_command():
    p = subprocess.run([sys.executable, "-m", "mobmem", "catalog", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == catalog.catalog()
    p = subprocess.run([sys.executable, "-m", "mobmem", "catalog"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0 and all(n in p.stdout for n in catalog.collector_names() + catalog.lmkd_names())
