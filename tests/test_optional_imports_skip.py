"""Without an optional package, its tests skip with a reason instead of erroring.

A test module that imports an optional package (a framework, a provider SDK, the proxy's
server, a third-party suite) at module level, directly or through a support module of tests/,
fails to collect when the package is missing, unless ``pytest.importorskip`` of that package
comes first. This reads the modules of tests/ (it imports none of them) and checks that order,
so the rule holds in a checkout with every extra installed too.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

#: Top-level modules of the optional extras and of the third-party suites in ``dev``
#: (pyproject ``[project.optional-dependencies]``); the base dependencies and the test tools
#: (pytest, hypothesis, jsonschema, ...) are always installed with ``dev``.
OPTIONAL = frozenset(
    {
        "agent_framework",
        "agents",
        "anthropic",
        "compaction_kit",
        "google",
        "httpx",
        "httpx2",
        "jev_harness",
        "langchain",
        "langchain_anthropic",
        "langchain_core",
        "langchain_openai",
        "litellm",
        "llama_index",
        "matplotlib",
        "openai",
        "prometheus_client",
        "pydantic",
        "pydantic_ai",
        "redis",
        "starlette",
        "uvicorn",
    }
)

#: What a skipped package brings with it: the optional modules among its declared requirements
#: (``importlib.metadata.requires`` of each distribution, closed over), so ``import anthropic``
#: after ``pytest.importorskip("langchain_anthropic")`` is not a missing skip.
BRINGS: dict[str, frozenset[str]] = {
    "langchain": frozenset({"langchain_core", "pydantic", "httpx"}),
    "langchain_core": frozenset({"pydantic", "httpx"}),
    "langchain_anthropic": frozenset(
        {"anthropic", "langchain_core", "pydantic", "httpx", "httpx2"}
    ),
    "langchain_openai": frozenset({"openai", "langchain_core", "pydantic", "httpx", "httpx2"}),
    "pydantic_ai": frozenset({"pydantic", "httpx2"}),
    "anthropic": frozenset({"pydantic", "httpx2"}),
    "openai": frozenset({"pydantic", "httpx2"}),
    "litellm": frozenset({"openai", "pydantic", "httpx", "httpx2"}),
    "agents": frozenset({"openai", "pydantic", "starlette", "httpx2"}),
    "google": frozenset({"pydantic", "httpx", "starlette", "uvicorn"}),
    "llama_index": frozenset({"pydantic", "httpx"}),
    "agent_framework": frozenset({"pydantic"}),
    "jev_harness": frozenset({"pydantic", "httpx"}),
}


def _importorskip(node: ast.stmt) -> str | None:
    """The top-level module a ``pytest.importorskip("x", ...)`` statement guards, if it is one."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign, ast.AnnAssign)) else None
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "importorskip"
        and value.args
        and isinstance(value.args[0], ast.Constant)
        and isinstance(value.args[0].value, str)
    ):
        return value.args[0].value.split(".")[0]
    return None


def _imported(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name.split(".")[0] for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        return [node.module.split(".")[0]]
    return []


def _guarded(node: ast.stmt) -> bool:
    """``if TYPE_CHECKING:`` and ``try: ... except ImportError`` blocks import nothing unguarded."""
    if isinstance(node, ast.If):
        return "TYPE_CHECKING" in ast.unparse(node.test)
    if isinstance(node, ast.Try):
        caught = " ".join(ast.unparse(h.type) for h in node.handlers if h.type is not None)
        return any(name in caught for name in ("ImportError", "ModuleNotFoundError", "Exception"))
    return False


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Module-level statements in order, the bodies of plain ``if`` / ``with`` blocks included."""
    out: list[ast.stmt] = []
    for node in body:
        if _guarded(node):
            continue
        if isinstance(node, ast.If):
            out.extend(_statements(node.body + node.orelse))
        elif isinstance(node, ast.With):
            out.extend(_statements(node.body))
        else:
            out.append(node)
    return out


def _unskipped(name: str, chain: tuple[str, ...] = ()) -> list[str]:
    """Each optional package module ``name`` of tests/ imports at module level before a skip
    of it, with the path of imports that reaches it (``module -> support -> package``)."""
    return list(_unskipped_cached(name, chain))


@cache
def _unskipped_cached(name: str, chain: tuple[str, ...]) -> tuple[str, ...]:
    return _scan((TESTS / f"{name}.py").read_text(encoding="utf-8"), name, chain)


def _scan(source: str, name: str, chain: tuple[str, ...] = ()) -> tuple[str, ...]:
    tree = ast.parse(source)
    skipped: set[str] = set()
    found: list[str] = []
    for node in _statements(tree.body):
        guarded = _importorskip(node)
        if guarded is not None:
            skipped |= {guarded, *BRINGS.get(guarded, ())}
        for top in _imported(node):
            if top in OPTIONAL and top not in skipped:
                found.append(f"{name} -> {top} (line {node.lineno})")
            elif (TESTS / f"{top}.py").is_file() and top not in chain and top != name:
                for path in _unskipped_cached(top, (*chain, name)):
                    if path.rsplit(" -> ", 1)[1].split(" ")[0] not in skipped:
                        found.append(f"{name} -> {path}")
    return tuple(found)


def _test_modules() -> list[str]:
    return [*sorted(p.stem for p in TESTS.glob("test_*.py")), "conftest"]


@pytest.mark.parametrize("module", _test_modules())
def test_a_test_module_skips_before_it_imports_an_optional_package(module: str) -> None:
    missing = _unskipped(module)
    assert not missing, (
        f"tests/{module}.py imports optional packages at module level with no "
        f"pytest.importorskip(..., reason=...) before: {missing}"
    )


def test_the_check_finds_an_optional_import_before_its_skip_also_through_a_support_module() -> None:
    source = (
        "import pytest\nimport httpx\n"
        'pytest.importorskip("anthropic", reason="x")\nimport anthropic\n'
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import openai\n"
    )
    assert _scan(source, "demo") == ("demo -> httpx (line 2)",)
    # proxy_support imports httpx at module level: importing it needs the skip first
    assert _unskipped("proxy_support"), "the check no longer sees proxy_support's httpx import"
    assert _scan("from proxy_support import blueprint\n", "demo")
    skips = "".join(f'pytest.importorskip("{m}", reason="x")\n' for m in sorted(OPTIONAL))
    assert _scan(f"import pytest\n{skips}from proxy_support import blueprint\n", "demo") == ()
