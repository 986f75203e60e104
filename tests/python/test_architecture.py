"""The Python package's module graph has no import cycle: a module's imports (top-level or lazy,
inside functions) never lead back to it, so every module can be read and tested on its own; nor has
any crate's. And every file, folder and module ARCHITECTURE.md's map of the code names exists."""

from __future__ import annotations

import ast
import os
import re
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


# ------------------------------------------------------------------------- ARCHITECTURE.md's map

ROOT = PKG.parent
#: Source folders of Linux and AOSP that the map names as what a crate models: not in this repository.
EXTERNAL = {"mm/", "art/runtime/gc/"}
#: Folders that hold no source: build output, caches (hidden folders are skipped too).
NOT_SOURCE = {"target", "node_modules", "__pycache__"}
#: A file or folder name as the map writes one: ``vmscan.rs``, ``gc/``, ``data/system.toml``.
PATH_NAME = r"(?<![\w./`$-])[A-Za-z_][\w.-]*(?:/[\w.-]+)*(?:/|\.(?:rs|py|md|toml))(?![\w/])"
RUST_PATH = re.compile(r"[a-z_][a-z0-9_]*(?:::[a-z_][a-z0-9_]*)*::\w+")


def _placeholder(name: str) -> bool:
    """``data/calibration/DEVICE.toml``: a name that stands for any file of a kind, not for one."""
    return any(part.split(".")[0].isupper() for part in name.strip("/").split("/"))


def _candidates(base: str, name: str) -> list[str]:
    """Where a name written under the folder ``base`` may be: in that folder, or in its ``src/`` (a
    crate's modules are listed under the crate); a name with a folder in it may also be from the
    root (``docs/runtime.md``) or from the package (``data/system.toml``)."""
    out = [f"{base}/{name}", f"{base}/src/{name}"] if base else [name]
    if "/" in name.rstrip("/"):
        out += [name, f"python/mobmem/{name}"]
    return list(dict.fromkeys(out))


def _code_map(lines: list[str]) -> tuple[int, int]:
    """The code map: the first fenced block, as (index of its first line, index of its closing fence)."""
    start = next(i for i, line in enumerate(lines) if line.startswith("```")) + 1
    return start, next(i for i in range(start, len(lines)) if lines[i].startswith("```"))


def _exists(root: Path, path: str) -> bool:
    p = root / path.rstrip("/")
    return p.is_dir() if path.endswith("/") else p.is_file()


def map_paths(text: str, root: Path = ROOT) -> list[tuple[int, str, list[str], bool]]:
    """Every file and folder the code map of ARCHITECTURE.md (its first fenced block) names, as
    (line, the name as written, the paths it may stand for, whether one exists). An entry is in the
    last folder entry indented less than it, and ``fae.rs, lwp.rs`` names two files. Names in an
    entry's description (``trace.rs is the shared tracer``) are in the entry's folder (the entry
    itself if it is a folder), and names in the parentheses right after a folder name
    (``fleet/ (config.rs, rgs.rs)``) are in that folder."""
    lines = text.split("\n")
    start, end = _code_map(lines)
    block = lines[start:end]
    # The description column: where most entries' descriptions start, after a run of spaces.
    cols = [m.end() for line in block if (m := re.match(r"\s*\S+(?:, \S+)*\s{2,}", line))]
    col = max(set(cols), key=cols.count)
    out: list[tuple[int, str, list[str], bool]] = []

    def name(line: int, base: str, n: str) -> str:
        """Records the name; returns the path it stands for (the first one that exists)."""
        where = _candidates(base, n)
        found = [p for p in where if _exists(root, p)]
        out.append((line, n, where, bool(found)))
        return (found or where)[0].rstrip("/")

    folders: list[tuple[int, str]] = []  # (indent, folder) of the entries above
    described: list[tuple[int, str, str]] = []  # (line, the folder its names are in, description)
    for i, line in enumerate(block, start=start + 1):
        entry, desc = line[:col].rstrip(), line[col:].strip()
        if not entry.strip():  # a description's next line
            if described:
                j, base, d = described[-1]
                described[-1] = (j, base, f"{d} {desc}")
            continue
        indent = len(entry) - len(entry.lstrip())
        while folders and folders[-1][0] >= indent:
            folders.pop()
        base = folders[-1][1] if folders else ""
        names = [n.strip() for n in entry.split(",")]
        resolved = [name(i, base, n) for n in names]
        if len(names) == 1 and names[0].endswith("/"):
            folders.append((indent, resolved[0]))
            base = resolved[0]
        described.append((i, base, desc))

    for i, base, desc in described:
        bases = [base]
        folder_before: tuple[int, str] | None = None  # where the last folder name ended, and its folder
        for m in re.finditer(r"[()]|" + PATH_NAME, desc):
            tok = m.group(0)
            if tok == "(":
                right_after = folder_before is not None and not desc[folder_before[0] : m.start()].strip()
                bases.append(folder_before[1] if right_after else bases[-1])
            elif tok == ")":
                if len(bases) > 1:
                    bases.pop()
            elif tok not in EXTERNAL and not _placeholder(tok):
                folder = name(i, bases[-1], tok)
                if tok.endswith("/"):
                    folder_before = (m.end(), folder)
    return out


def _source_tree(root: Path) -> list[str]:
    """Every file and folder (``name/``) of the repository's source, relative to the root."""
    out = []
    for d, subdirs, files in os.walk(root):
        subdirs[:] = sorted(s for s in subdirs if not s.startswith(".") and s not in NOT_SOURCE)
        rel = Path(d).relative_to(root).as_posix()
        prefix = "" if rel == "." else f"{rel}/"
        out += [f"{prefix}{s}/" for s in subdirs] + [f"{prefix}{f}" for f in files]
    return out


def prose_paths(text: str, root: Path = ROOT) -> list[tuple[int, str, list[str], bool]]:
    """Every path the text after the code map names in backquotes, as :func:`map_paths` gives them:
    a file or folder (``policies/segregate.rs``, ``gc/record``: any path that ends so) or a Rust
    module (``lmkd::KillPolicy``: the module ``lmkd`` of any crate, ``kernel::config::SETTINGS``:
    ``config`` of the crate ``kernel``)."""
    lines = text.split("\n")
    end = _code_map(lines)[1]
    tree = _source_tree(root)
    crates = sorted(c.name for c in (root / "crates").glob("*") if (c / "src").is_dir())
    out = []
    for i, line in enumerate(lines[end + 1 :], start=end + 2):
        for tok in re.findall(r"`([^`\s]+)`", line):
            if RUST_PATH.fullmatch(tok):
                mods = tok.split("::")[:-1]  # the last part is an item
                in_crates = [mods[0]] if mods[0] in crates else crates
                mods = mods[1:] if mods[0] in crates else mods
                if not mods:  # `kernel::Kernel`: the crate itself
                    out.append((i, tok, [f"crates/{c}/" for c in in_crates], True))
                    continue
                where = [f"crates/{c}/src/{'/'.join(mods)}{suffix}" for c in in_crates for suffix in (".rs", "/mod.rs")]
                out.append((i, tok, where, any(_exists(root, p) for p in where)))
            elif re.fullmatch(PATH_NAME, tok) or re.fullmatch(r"[\w.-]+(?:/[\w.-]+)+", tok):
                if tok in EXTERNAL or _placeholder(tok):
                    continue
                ends = [tok] if tok.endswith("/") or re.fullmatch(PATH_NAME, tok) else [f"{tok}.rs", f"{tok}.py", f"{tok}/"]
                found = any(p == e or p.endswith(f"/{e}") for p in tree for e in ends)
                out.append((i, tok, [f"…/{e}" for e in ends], found))
    return out


def _fake_repo(root: Path) -> str:
    for f in ("Cargo.toml", "crates/k/src/a.rs", "crates/k/src/gc/mod.rs", "crates/k/src/gc/trace.rs", "crates/k/tests/t.rs", "python/pkg/x.py", "docs/k.md"):
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("")
    return (
        "# Map\n\n```\n"
        "Cargo.toml                  workspace\n"
        "crates/\n"
        "  k/                        a crate modelling Linux (mm/); docs/k.md\n"
        "    a.rs, b.rs              two modules\n"
        "    gc/                     collectors over trace.rs, gone.rs; fleet/ (rgs.rs),\n"
        "                            written to data/calibration/DEVICE.toml\n"
        "    tests/                  tests\n"
        "python/pkg/\n"
        "  x.py                      x\n"
        "```\n\n"
        "See `crates/k/src/a.rs`, `gc/trace.rs`, `gc/mod`, `k::gc::Collector`, `gc::Thing`,\n"
        "`gc/nothere.rs`, `k::zz::Item`, `Kernel::touch` and `mobmem run`.\n"
    )


def test_map_paths_resolve_nested_names_and_find_missing_ones(tmp_path):
    named = map_paths(_fake_repo(tmp_path), tmp_path)
    found = {(n, next(p for p in w if _exists(tmp_path, p))) for _, n, w, ok in named if ok}
    missing = {n: w[0] for _, n, w, ok in named if not ok}
    assert found == {
        ("Cargo.toml", "Cargo.toml"),
        ("crates/", "crates/"),
        ("k/", "crates/k/"),
        ("docs/k.md", "docs/k.md"),
        ("a.rs", "crates/k/src/a.rs"),
        ("gc/", "crates/k/src/gc/"),
        ("trace.rs", "crates/k/src/gc/trace.rs"),
        ("tests/", "crates/k/tests/"),
        ("python/pkg/", "python/pkg/"),
        ("x.py", "python/pkg/x.py"),
    }
    assert missing == {
        "b.rs": "crates/k/b.rs",
        "gone.rs": "crates/k/src/gc/gone.rs",
        "fleet/": "crates/k/src/gc/fleet/",
        "rgs.rs": "crates/k/src/gc/fleet/rgs.rs",
    }
    assert [i for i, n, _, _ in named if n == "b.rs"] == [7]
    prose = {n: ok for _, n, _, ok in prose_paths(_fake_repo(tmp_path), tmp_path)}
    assert prose == {
        "crates/k/src/a.rs": True,
        "gc/trace.rs": True,
        "gc/mod": True,
        "k::gc::Collector": True,
        "gc::Thing": True,
        "gc/nothere.rs": False,
        "k::zz::Item": False,
    }


def test_every_path_architecture_md_names_exists():
    text = (ROOT / "ARCHITECTURE.md").read_text()
    named = map_paths(text) + prose_paths(text)
    assert len(named) > 200 and sum(1 for _, n, _, _ in named if n.endswith("/")) > 20  # the map was read
    missing = [f"ARCHITECTURE.md:{i}: {n} (looked for {', '.join(w)})" for i, n, w, ok in sorted(named) if not ok]
    assert not missing, "ARCHITECTURE.md names paths that do not exist:\n" + "\n".join(missing)


_STRUCT = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?struct\s+\w+[^;(]*\{\s*$")
_FIELD = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?(?:r#)?\w+\s*:")


def struct_field_visibility(source: str) -> tuple[int, int]:
    """(fields, fully `pub` fields) of the brace-bodied structs in one Rust file: the fields at the
    struct body's own level, so nested items and tuple structs do not count."""
    lines = source.split("\n")
    fields = public = 0
    i = 0
    while i < len(lines):
        if not _STRUCT.match(lines[i]) or "//" in lines[i].split("struct")[0]:
            i += 1
            continue
        depth, i = 1, i + 1
        while i < len(lines) and depth:
            line = lines[i].strip()
            m = _FIELD.match(lines[i]) if depth == 1 and not line.startswith(("//", "#")) else None
            if m:
                fields += 1
                public += bool(m.group(1)) and not m.group(2)
            depth += lines[i].count("{") - lines[i].count("}")
            i += 1
    return fields, public


def test_field_visibility_counter_reads_struct_bodies():
    src = (
        "pub struct A {\n    pub x: u32,\n    pub(crate) y: Vec<u8>,\n    z: u64,\n}\n"
        "struct B { \n    pub w: f64,\n}\n"
        "impl A {\n    fn f(&self) -> u32 { let a: u32 = 1; a }\n}\n"
        "pub struct T(pub u32);\n"
    )
    assert struct_field_visibility(src) == (4, 2)


def test_struct_state_is_private_by_default():
    """A minority of the crates' struct fields is `pub`: what another crate needs is a method or a
    field of a plain record; the rest is `pub(crate)` or private."""
    fields = public = 0
    for p in ROOT.glob("crates/*/src/**/*.rs"):
        f, pub = struct_field_visibility(p.read_text())
        fields, public = fields + f, public + pub
    assert fields > 1000  # the crates were read
    assert public < fields / 2, f"{public} of {fields} struct fields are pub"


def test_no_source_file_is_over_1300_lines():
    """One concept per module: a file that outgrows this has more than one in it."""
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in sorted([*ROOT.glob("crates/*/src/**/*.rs"), *ROOT.glob("python/mobmem/**/*.py")])
        if (n := p.read_text().count("\n")) > 1300
    ]
    assert not long, "\n".join(long)
