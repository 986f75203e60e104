"""The Python package's module graph has no import cycle: a module's imports (top-level or lazy,
inside functions) never lead back to it, so every module can be read and tested on its own."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "python"


def _modules() -> dict[str, Path]:
    mods = {}
    for p in PKG.joinpath("mobmem").rglob("*.py"):
        name = ".".join(p.relative_to(PKG).with_suffix("").parts)
        mods[name.removesuffix(".__init__")] = p
    return mods


def _extensions() -> set[str]:
    """Compiled modules of the package (``mobmem._core``): imports of them lead nowhere."""
    return {".".join(p.relative_to(PKG).parts).split(".so")[0].split(".abi3")[0].split(".cpython")[0] for p in PKG.joinpath("mobmem").rglob("*.so")}


def import_graph() -> dict[str, set[str]]:
    """module → the package's modules it imports (``from a import b`` counts as ``a.b`` when that
    is a module, else ``a``)."""
    mods = _modules()
    extensions = _extensions()
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rpartition(".")[0]
        for node in ast.walk(ast.parse(p.read_text(), str(p))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                for a in node.names:
                    if f"{base}.{a.name}" in extensions:
                        continue
                    target = f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base
                    if target in mods and target != m:
                        edges[m].add(target)
            elif isinstance(node, ast.Import):
                edges[m].update(a.name for a in node.names if a.name in mods and a.name != m)
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycle():
    g = import_graph()
    assert len(g) > 50 and g["mobmem.session"]  # the graph was read
    assert cycles(g) == []


# ------------------------------------------------------------------------------------ Rust crates

CRATES = PKG.parent / "crates"


def rust_module_graph(src: Path) -> dict[str, set[str]]:
    """module path (``gc::mark_sweep``) → the crate's modules it names (``crate::…``, ``super::…``,
    or a child module ``child::…`` of its own), tests and comments left out."""
    import re

    mods: dict[str, Path] = {}
    for p in src.rglob("*.rs"):
        parts = p.relative_to(src).with_suffix("").parts
        if parts[-1] == "mod":
            parts = parts[:-1]
        if parts in (("lib",), ("main",)):
            continue
        mods["::".join(parts)] = p
    ident = r"[a-z_][a-z0-9_]*"
    item = r"[A-Za-z_][A-Za-z0-9_]*"
    edges: dict[str, set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        text = p.read_text()
        text = text.split("#[cfg(test)]")[0]
        text = re.sub(r"//[^\n]*", "", text)
        parent = m.rpartition("::")[0]

        def add(path: list[str], m=m) -> None:
            for k in range(len(path), 0, -1):
                t = "::".join(path[:k])
                if t in mods:
                    if t != m:
                        edges[m].add(t)
                    return

        for base, rest in re.findall(rf"\b(crate|super|{ident})::((?:{ident}::)*{item}|\{{[^}}]*\}})", text):
            prefix = {"crate": [], "super": parent.split("::") if parent else []}.get(base)
            if prefix is None:
                prefix = (m.split("::") + [base]) if f"{m}::{base}" in mods else None  # a child module
                if prefix is None:
                    continue
            groups = [g.strip() for g in rest.strip("{}").split(",")] if rest.startswith("{") else [rest]
            for g in groups:
                if g:
                    add(prefix + [x for x in g.split("::") if x and x != "self"] if g != "self" else prefix)
    return edges


def test_rust_module_graph_sees_child_and_super_references(tmp_path):
    src = tmp_path / "src"
    (src / "gc").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod gc;\npub mod heap;\n")
    (src / "heap.rs").write_text("use crate::gc::record::GcType;\n")
    (src / "gc" / "mod.rs").write_text("pub mod ms;\npub mod record;\npub mod registry;\npub trait Collector {}\n")
    (src / "gc" / "registry.rs").write_text("fn create() { super::ms::MarkSweep; }\n")
    (src / "gc" / "ms.rs").write_text("use super::{record::GcType, Collector};\nuse crate::heap::Heap;\n")
    (src / "gc" / "record.rs").write_text("// crate::heap is only mentioned in a comment\n")
    g = rust_module_graph(src)
    assert g == {"heap": {"gc::record"}, "gc": set(), "gc::registry": {"gc::ms"}, "gc::ms": {"gc", "gc::record", "heap"}, "gc::record": set()}
    assert cycles(g) == []
    # a parent that names its child's items, and a child that uses its parent: a cycle
    (src / "gc" / "mod.rs").write_text("pub mod ms;\npub mod record;\npub mod registry;\npub trait Collector {}\nfn f() { ms::MarkSweep; }\n")
    (src / "gc" / "record.rs").write_text("use crate::heap::Heap;\n")
    assert sorted(cycles(rust_module_graph(src))) == [["gc", "gc::ms"], ["gc::record", "heap"]]


def test_no_crate_has_a_module_cycle():
    found = {c.name: cycles(rust_module_graph(c / "src")) for c in sorted(CRATES.iterdir()) if (c / "src").is_dir()}
    assert set(found) >= {"engine", "kernel", "runtime", "device"}
    assert {k: v for k, v in found.items() if v} == {}
