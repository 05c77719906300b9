"""Every ```python block in docs/ and README.md runs, so the docs stay true.

Blocks on one page run in order in one namespace (a page is one tutorial), in a scratch
directory that holds the project's top-level entries (so ``examples/...`` paths work and files a
snippet writes stay out of the checkout). Blocks fenced as ```text or ```yaml are illustrations
and are not run. A block that needs a provider key is preceded by ``<!-- docs-fixture: NAME -->``
on the line before its fence, names the key it needs, and runs against the offline model of
that fixture (tests/docs_fixtures_support.py), which stays applied for the rest of the page.
"""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

import pytest

from docs_fixtures_support import FIXTURES

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
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
            fixture(namespace, monkeypatch)
        exec(compile(match.group("code"), where, "exec"), namespace)


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
