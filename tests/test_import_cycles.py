"""The package's modules import each other without cycles: the module import graph of
``src/regio``, read with ``ast``, is acyclic. Every import counts, wherever it stands: at module
level, inside a function (a lazy import) or under ``if TYPE_CHECKING:``, since each of them is
a dependency of the importing module on the imported one, and a cycle hidden behind a lazy
import is still a cycle of the design (docs/architecture.md: dependencies point down the
package list).

Edges: ``import a.b`` makes the importing module depend on ``a.b`` (its ``__init__.py`` for a
package); ``from a.b import c`` on ``a.b.c`` when that is a module, else on ``a.b``; relative
imports are resolved against the importing module's package. The implicit import of a module's
parent packages is not an edge (every module would otherwise depend on its package's face).
"""

from __future__ import annotations

import ast
import itertools
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
