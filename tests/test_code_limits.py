"""Size limits of the package source (issue 26's acceptance): no module in ``src/regio`` over
500 lines, no package with more than 25 modules (its ``*.py`` files, ``__init__.py``
included), no function (or method) over 80 lines, counted from its ``def`` (decorators
excluded) to its last line, and fewer than 100 parameters annotated bare ``Any`` (a ceiling
that can only come down). CI enforces them through this test; a scan of the tree by ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "regio"
MAX_MODULE_LINES = 500
MAX_PACKAGE_MODULES = 25
#: Parameters annotated exactly ``Any`` (``*args`` / ``**kwargs`` not counted) allowed in the
#: package; lower it when you type more (the test says when it is stale).
MAX_ANY_PARAMETERS = 10
MAX_FUNCTION_LINES = 80

#: Functions over the limit that belong to work in progress elsewhere; each must still exceed
#: it (a stale exception fails the test below), so the list can only shrink.
KNOWN_LONG_FUNCTIONS: frozenset[str] = frozenset()


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _name(path: Path) -> str:
    return path.relative_to(SRC.parent).with_suffix("").as_posix().replace("/", ".")


def _long_functions(
    source: str, module: str, limit: int = MAX_FUNCTION_LINES
) -> list[tuple[str, int]]:
    """``(module:qualified.name, lines)`` for each function over ``limit`` lines in ``source``."""
    tree = ast.parse(source, filename=module)
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{prefix}{child.name}"
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > limit:
                    found.append((f"{module}:{name}", lines))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def test_no_module_is_over_500_lines():
    long = {
        p.relative_to(SRC.parent).as_posix(): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them): {long}"


def test_no_function_is_over_80_lines():
    long = dict(f for p in _modules() for f in _long_functions(p.read_text("utf-8"), _name(p)))
    unexpected = {k: n for k, n in long.items() if k not in KNOWN_LONG_FUNCTIONS}
    assert not unexpected, f"functions over {MAX_FUNCTION_LINES} lines (split them): {unexpected}"
    stale = KNOWN_LONG_FUNCTIONS - set(long)
    assert not stale, f"known exceptions now within the limit, drop them: {sorted(stale)}"


@pytest.mark.parametrize("lines", [MAX_FUNCTION_LINES, MAX_FUNCTION_LINES + 1])
def test_scan_counts_a_method_from_def_to_last_line(lines):
    body = "\n".join(f"        x{i} = {i}" for i in range(lines - 1))
    source = f"class C:\n    @staticmethod\n    def f():\n{body}\n"
    found = _long_functions(source, "probe")
    assert found == ([("probe:C.f", lines)] if lines > MAX_FUNCTION_LINES else [])


def test_scan_finds_nested_functions():
    source = "def outer():\n    def inner():\n        a = 1\n        return a\n    return inner\n"
    assert _long_functions(source, "m", limit=2) == [("m:outer", 5), ("m:outer.inner", 3)]


def test_no_package_has_more_than_25_modules():
    packages = {p.parent for p in _modules()}
    big = {
        d.relative_to(SRC.parent).as_posix(): n
        for d in packages
        if (n := len(list(d.glob("*.py")))) > MAX_PACKAGE_MODULES
    }
    assert not big, f"packages over {MAX_PACKAGE_MODULES} modules (group them): {big}"


def _any_parameters(source: str, module: str) -> list[str]:
    """``module:function(parameter)`` for each parameter of ``source`` annotated bare ``Any``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, filename=module)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
                if arg.annotation is not None and ast.unparse(arg.annotation) == "Any":
                    found.append(f"{module}:{node.name}({arg.arg})")
    return found


def test_parameters_typed_any_stay_under_the_ceiling():
    found = [f for p in _modules() for f in _any_parameters(p.read_text("utf-8"), _name(p))]
    assert len(found) <= MAX_ANY_PARAMETERS, (
        f"{len(found)} parameters typed bare Any (at most {MAX_ANY_PARAMETERS}); give these "
        f"their types: {found[-20:]}"
    )
    assert len(found) > MAX_ANY_PARAMETERS - 10, (
        f"only {len(found)} parameters typed Any now: lower MAX_ANY_PARAMETERS to {len(found)}"
    )
    assert MAX_ANY_PARAMETERS < 100


def test_the_any_scan_counts_annotated_parameters_only():
    source = (
        "from typing import Any\n"
        "def f(a: Any, b: int, *args: Any, c: Any = 1, d: dict[str, Any] | None = None,\n"
        "      **k: Any):\n"
        "    pass\n"
    )
    assert _any_parameters(source, "m") == ["m:f(a)", "m:f(c)"]
