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
    assert set(c["settings"]) == {"kernel", "runtime", "app", "session", "calibration", "fleet", "marvin"}


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


# Every option that takes a simulator name, with the catalogue entry kind its values come from. An
# unknown value must be refused (exit 2, one line) with exactly the catalogue's names, so the
# accepted set is the catalogue and nothing else.
NAMED_OPTIONS = [
    (["run", "no-such-scenario"], "scenarios"),
    (["run", TINY, "--system", "bogus"], "systems"),
    (["compare", TINY, "--systems", "bogus"], "systems"),
    (["run", TINY, "--set", "system.collector=bogus"], "collectors"),
    (["run", TINY, "--set", "collector=bogus"], "collectors"),
    (["run", TINY, "--set", "system.lmkd=bogus"], "lmkd"),
    (["run", TINY, "--set", "system.policies=bogus"], "runtime_policies"),
    (["runtime", "run", "--app", "bogus", "--seconds", "0"], "apps"),
    (["runtime", "run", "--app", "synthetic:footprint=8m", "--collector", "bogus", "--seconds", "0"], "collectors"),
    (["runtime", "gcbench", "--collector", "bogus"], "collectors"),
    (["runtime", "run", "--app", "synthetic:footprint=8m", "--device", "bogus", "--seconds", "0"], "devices"),
    (["runtime", "run", "--app", "synthetic:footprint=8m", "--policy", "bogus", "--seconds", "0"], "runtime_policies"),
    (["kernel", "replay", "traces/app_switch.trace", "--device", "bogus"], "devices"),
    (["lbo", "--backend", "sim", "--workloads", "gcbench", "--collectors", "bogus", "--out", "/nonexistent/x"], "collectors"),
    (["lbo", "--backend", "sim", "--workloads", "app:bogus", "--collectors", "cc,nogc", "--out", "/nonexistent/x"], "apps"),
]


@pytest.mark.parametrize("args,kind", NAMED_OPTIONS, ids=[" ".join(a[:3]) + " " + k for a, k in NAMED_OPTIONS])
def test_every_named_option_takes_exactly_the_catalogue(args, kind):
    p = subprocess.run([sys.executable, "-m", "mobmem", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert ", ".join(catalog.names(kind)) in p.stderr, p.stderr


def test_setting_layers_come_from_the_catalogue():
    p = subprocess.run([sys.executable, "-m", "mobmem", "keys", "bogus"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 2 and ", ".join(catalog.catalog()["settings"]) in p.stderr
    p = subprocess.run([sys.executable, "-m", "mobmem", "keys", "--json"], capture_output=True, text=True, cwd=ROOT)
    assert json.loads(p.stdout) == catalog.catalog()["settings"]


def _catalogue_names() -> dict[str, str]:
    c = catalog.catalog()
    out = {}
    for kind in ("collectors", "runtime_policies", "lmkd", "devices", "apps", "scenarios", "systems"):
        for e in c[kind]:
            for n in (e["name"], *e.get("aliases", [])):
                out[n] = kind
    return out


# Fixed experiment definitions that name entries on purpose (they are inputs, not choices; a
# study is a paper's set, and tests check that every name it uses exists).
EXPERIMENT_SETS = {
    "session/identity.py",
    "session/grain.py",
    "cli/demo.py",
    "session/studies/fleet.py",
    "session/studies/acclaim.py",
    "session/studies/thesis.py",
}


def test_no_module_lists_catalogue_names():
    """No Python module spells out a list of simulator names of one kind (it would go stale when a
    registry or data directory changes): a list, tuple or set literal of two or more strings that
    are all catalogue names of the same kind is refused, outside the fixed experiment sets."""
    import ast

    names = _catalogue_names()
    pkg = ROOT / "python" / "mobmem"
    found = []
    for path in sorted(pkg.rglob("*.py")):
        rel = path.relative_to(pkg).as_posix()
        if rel in EXPERIMENT_SETS:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and len(node.elts) >= 2:
                vals = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
                kinds = {names.get(v) for v in vals}
                if len(vals) == len(node.elts) and len(kinds) == 1 and None not in kinds:
                    found.append(f"{rel}:{node.lineno}: {vals}")
    assert not found, "hand-written lists of catalogue names:\n" + "\n".join(found)
