"""The package's modules import each other without cycles: the module import graph of
``src/regio``, read with ``ast``, is acyclic, and so is the package graph (each module mapped
to its top-level subpackage), but for the cycles listed as known; no module loads a regio
module by a string name the scan cannot see, outside the registries listed in
``STRING_LOADERS``. Every import counts, wherever it stands: at module level, inside a function
(a lazy import) or under ``if TYPE_CHECKING:``, since each of them is a dependency of the
importing module on the imported one, and a cycle hidden behind a lazy import is still a cycle
of the design (docs/architecture.md: dependencies point down the package list).

Edges: ``import a.b`` makes the importing module depend on ``a.b`` (its ``__init__.py`` for a
package); ``from a.b import c`` on ``a.b.c`` when that is a module, else on ``a.b``; relative
imports are resolved against the importing module's package. The implicit import of a module's
parent packages is not an edge (every module would otherwise depend on its package's face).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

SRC = Path(__file__).resolve().parent.parent / "src"
PACKAGE = "regio"

#: Cycles that are known and not yet removed, each as the sorted tuple of its modules. Empty:
#: the package has none. A listed cycle that no longer exists fails the test (the list can
#: only shrink).
KNOWN_CYCLES: frozenset[tuple[str, ...]] = frozenset()

#: Package-level cycles that are known and not yet removed (nodes as :func:`package_of` names
#: them), each the sorted tuple of one strongly connected component. The list can only shrink:
#: a new cycle fails, and so does a listed one that changed (shrunk or gone; list what is left).
#: None is left (issue 26); a cycle that appears fails the test with its path.
KNOWN_PACKAGE_CYCLES: frozenset[tuple[str, ...]] = frozenset()


#: The modules that may load a regio module by a string name, and why. Each is a lazy public
#: face: a table of public name -> defining module, loaded on first attribute access so the
#: import stays cheap; each also imports every module of its table under ``if TYPE_CHECKING:``,
#: so the import graph (and the cycle tests) see the dependency
#: (:func:`test_string_loads_happen_only_in_the_documented_registries` checks it).
STRING_LOADERS: dict[str, str] = {
    "regio": "the flat public API: `regio.<Name>` loaded from its module on first use",
    "regio.proxy": "the proxy's public names, loaded on first use (the server is heavy)",
}


def module_name(path: Path, root: Path = SRC) -> str:
    """``regio.layout.plan`` for ``src/regio/layout/plan.py``; a package's ``__init__.py``
    is named by the package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a ``level``-dots relative import of ``target`` in ``module``."""
    if level == 0:
        return target or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, target] if target else base)


def imports_of(source: str, module: str, is_package: bool, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that ``source`` (module ``module``) imports, anywhere in it."""
    names = set(known)
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_package, node.level, node.module)
            for alias in node.names:  # a submodule, else a name of ``base``
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in names else base)
    return {m for m in found if m in names and m != module}


def import_graph(root: Path = SRC, package: str = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports, for every module under ``root/package``."""
    paths = sorted((root / package).rglob("*.py"))
    names = {module_name(p, root): p for p in paths}
    return {
        name: imports_of(p.read_text("utf-8"), name, p.name == "__init__.py", names)
        for name, p in names.items()
    }


def cycles(graph: Mapping[str, Iterable[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of ``graph`` with more than one module (a module
    importing itself is no edge here), each sorted, in sorted order (Tarjan's algorithm,
    iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[tuple[str, ...]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(tuple(sorted(component)))
    return sorted(found)


def cycle_path(graph: Mapping[str, Iterable[str]], component: Iterable[str]) -> list[str]:
    """One import loop through ``component`` (a strongly connected set), as
    ``[a, b, ..., a]``: what a failure message shows."""
    members = set(component)
    start = min(members)
    paths = {start: [start]}
    frontier = [start]
    while frontier:  # breadth first inside the component, back to the start
        nxt = []
        for node in frontier:
            for child in sorted(graph.get(node, ())):
                if child == start:
                    return [*paths[node], start]
                if child in members and child not in paths:
                    paths[child] = [*paths[node], child]
                    nxt.append(child)
        frontier = nxt
    raise ValueError(f"{sorted(members)} is not a cycle of the graph")


def test_the_package_has_no_import_cycles():
    graph = import_graph()
    assert len(graph) > 100, "the scan found too few modules; is src/regio where it was?"
    found = cycles(graph)
    unexpected = [c for c in found if c not in KNOWN_CYCLES]
    loops = "; ".join(" -> ".join(cycle_path(graph, c)) for c in unexpected)
    assert not unexpected, f"import cycles among modules (move the shared piece down): {loops}"
    stale = KNOWN_CYCLES - set(found)
    assert not stale, f"known cycles that no longer exist, drop them: {sorted(stale)}"


def package_of(module: str) -> str:
    """The package-level node of ``module``: its top-level subpackage (``regio.layout`` for
    ``regio.layout.render.text``); a top-level module is its own node (``regio.content``), and
    the package face ``regio/__init__.py`` is ``regio``."""
    return ".".join(module.split(".")[:2])


def package_graph(
    graph: Mapping[str, Iterable[str]],
) -> tuple[dict[str, set[str]], dict[tuple[str, str], tuple[str, str]]]:
    """The package graph of a module graph (:func:`package_of` of each module; an import inside
    one node is no edge), and for each package edge the first module edge that makes it
    (what a failure message names)."""
    nodes: dict[str, set[str]] = {}
    why: dict[tuple[str, str], tuple[str, str]] = {}
    for a in sorted(graph):
        pa = nodes.setdefault(package_of(a), set())
        for b in sorted(graph[a]):
            pb = package_of(b)
            nodes.setdefault(pb, set())
            if pb != package_of(a):
                pa.add(pb)
                why.setdefault((package_of(a), pb), (a, b))
    return nodes, why


def explain(path: list[str], why: Mapping[tuple[str, str], tuple[str, str]]) -> str:
    """``a -> b (a.x imports b.y) -> ...``: a package loop with the module edge of each step."""
    steps = [path[0]]
    for a, b in itertools.pairwise(path):
        src, dst = why[(a, b)]
        steps.append(f"{b} ({src} imports {dst})")
    return " -> ".join(steps)


def test_the_package_graph_has_no_cycles_but_the_known_ones():
    graph, why = package_graph(import_graph())
    assert {"regio", "regio.content", "regio.layout", "regio.cli"} <= set(graph)
    found = cycles(graph)
    loops = {c: explain(cycle_path(graph, c), why) for c in found}
    unexpected = [c for c in found if c not in KNOWN_PACKAGE_CYCLES]
    assert not unexpected, "package-level import cycles (dependencies point down the package " + (
        "list, docs/architecture.md): " + "; ".join(loops[c] for c in unexpected)
    )
    changed = KNOWN_PACKAGE_CYCLES - set(found)
    assert not changed, (
        f"known package cycles changed, list what is left: {sorted(changed)}; "
        f"found: {'; '.join(loops.values()) or 'none'}"
    )


_LOADERS = {("importlib", "import_module"), ("", "import_module"), ("", "__import__")}


def _loader_calls(tree: ast.AST) -> list[ast.Call]:
    """The calls of ``importlib.import_module`` / ``import_module`` / ``__import__``."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
            key = (f.value.id, f.attr)
        elif isinstance(f, ast.Name):
            key = ("", f.id)
        else:
            continue
        if key in _LOADERS or key == ("importlib", "__import__"):
            out.append(node)
    return out


def string_loads(
    root: Path = SRC, package: str = PACKAGE, allowed: Iterable[str] = ()
) -> list[str]:
    """Where a module of ``root/package`` loads one of the package's modules by a string name,
    each as ``"module: name"``: a loader call on a literal naming a package module, or, in a
    module that calls a loader, any string constant that is the exact name of a package
    module (a table the call reads, like ``{"naive": "pkg.layouts"}``). A module of
    ``allowed`` may, when it also imports each module it names (so the import graph has the
    edge)."""
    graph = import_graph(root, package)
    # a submodule name (the bare package name is also its distribution name)
    pattern = re.compile(rf"{re.escape(package)}(\.\w+)+")
    found = []
    for path in sorted((root / package).rglob("*.py")):
        module = module_name(path, root)
        tree = ast.parse(path.read_text("utf-8"))
        calls = _loader_calls(tree)
        if not calls:
            continue
        names = sorted(
            {
                n.value
                for n in ast.walk(tree)
                if isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and pattern.fullmatch(n.value)
            }
        )
        for name in names:
            if module in allowed and name in graph[module]:
                continue
            found.append(f"{module}: {name}")
    return found


def test_no_module_loads_a_regio_module_by_a_string_name():
    found = string_loads(allowed=STRING_LOADERS)
    assert not found, (
        "regio modules loaded by a string name the import graph cannot see (import the module, "
        "or pass the object; a lazy public face lists it in STRING_LOADERS and imports it "
        f"under TYPE_CHECKING): {found}"
    )


def test_string_loads_happen_only_in_the_documented_registries(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "import importlib\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg import b\n"
        "_EXPORTS = {'B': 'pkg.b'}\n"
        "def __getattr__(name):\n    return importlib.import_module(_EXPORTS[name])\n"
    )
    (pkg / "b.py").write_text('"""Loads pkg.c by name."""\nB = 1\n')
    (pkg / "c.py").write_text("C = 1\n")
    (pkg / "table.py").write_text(
        "import importlib\n_PROVIDED = {'x': 'pkg.c'}\n"
        "def load(n):\n    return importlib.import_module(_PROVIDED[n])\n"
    )
    (pkg / "literal.py").write_text("def load():\n    return __import__('pkg.b')\n")
    (pkg / "user.py").write_text(
        "from importlib import import_module\ndef load(name):\n    return import_module(name)\n"
    )
    assert string_loads(tmp_path, "pkg", allowed={"pkg"}) == [
        "pkg.literal: pkg.b",
        "pkg.table: pkg.c",
    ]
    assert string_loads(tmp_path, "pkg") == ["pkg: pkg.b", "pkg.literal: pkg.b", "pkg.table: pkg.c"]
    (pkg / "__init__.py").write_text(  # a registry that does not import what it names
        "import importlib\n_EXPORTS = {'B': 'pkg.b'}\n"
        "def __getattr__(name):\n    return importlib.import_module(_EXPORTS[name])\n"
    )
    assert "pkg: pkg.b" in string_loads(tmp_path, "pkg", allowed={"pkg"})


def test_the_package_graph_maps_each_module_to_its_top_level_package():
    graph = {
        "pkg": {"pkg.a.x"},
        "pkg.a": set(),
        "pkg.a.x": {"pkg.a", "pkg.b.deep.y", "pkg.m"},
        "pkg.b.deep.y": {"pkg.m"},
        "pkg.m": {"pkg.a.x"},
    }
    nodes, why = package_graph(graph)
    assert nodes == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.b", "pkg.m"},
        "pkg.b": {"pkg.m"},
        "pkg.m": {"pkg.a"},
    }
    assert why[("pkg.a", "pkg.b")] == ("pkg.a.x", "pkg.b.deep.y")
    assert cycles(nodes) == [("pkg.a", "pkg.b", "pkg.m")]
    path = cycle_path(nodes, ("pkg.a", "pkg.b", "pkg.m"))
    assert (
        explain(path, why)
        == "pkg.a -> pkg.m (pkg.a.x imports pkg.m) -> pkg.a (pkg.m imports pkg.a.x)"
    )
    assert explain(["pkg.a", "pkg.b", "pkg.m", "pkg.a"], why) == (
        "pkg.a -> pkg.b (pkg.a.x imports pkg.b.deep.y) -> pkg.m (pkg.b.deep.y imports pkg.m) "
        "-> pkg.a (pkg.m imports pkg.a.x)"
    )


def test_scan_sees_lazy_and_type_checking_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import B\n")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub import b\n    return b\n")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import f\nB = 1\n"
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg.sub.b"},
        "pkg.sub": {"pkg.sub.b"},
        "pkg.sub.b": {"pkg.a"},
    }
    assert cycles(graph) == [("pkg.a", "pkg.sub.b")]
    assert cycle_path(graph, ("pkg.a", "pkg.sub.b")) == ["pkg.a", "pkg.sub.b", "pkg.a"]


def test_relative_imports_resolve_against_the_package():
    assert _resolve("regio.layout.plan", False, 1, "model") == "regio.layout.model"
    assert _resolve("regio.layout", True, 1, "model") == "regio.layout.model"
    assert _resolve("regio.layout.plan", False, 2, "content") == "regio.content"
    assert _resolve("regio.layout.plan", False, 1, None) == "regio.layout"


@st.composite
def _graphs(draw: st.DrawFn) -> dict[str, set[str]]:
    nodes = [f"m{i}" for i in range(draw(st.integers(1, 8)))]
    return {n: set(draw(st.lists(st.sampled_from(nodes), max_size=4))) - {n} for n in nodes}


def _reaches(graph: Mapping[str, Iterable[str]], a: str, b: str) -> bool:
    seen, todo = {a}, [a]
    while todo:
        for child in graph.get(todo.pop(), ()):
            if child == b:
                return True
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return False


@given(_graphs())
def test_cycles_are_exactly_the_mutually_reachable_modules(graph):
    found = cycles(graph)
    in_cycle = {m for c in found for m in c}
    for a in graph:
        for b in graph:
            mutual = a != b and _reaches(graph, a, b) and _reaches(graph, b, a)
            same = a != b and any(a in c and b in c for c in found)
            assert mutual == same
    for a in graph:
        looped = any(_reaches(graph, a, b) and _reaches(graph, b, a) for b in graph if b != a)
        assert (a in in_cycle) == looped
    for c in found:
        path = cycle_path(graph, c)
        assert path[0] == path[-1] == min(c) and set(path) <= set(c) and len(path) > 2
        assert all(b in graph[a] for a, b in itertools.pairwise(path))


@pytest.mark.parametrize("acyclic", [{"a": {"b"}, "b": {"c"}, "c": set()}, {"a": set()}])
def test_an_acyclic_graph_has_no_cycles(acyclic):
    assert cycles(acyclic) == []
