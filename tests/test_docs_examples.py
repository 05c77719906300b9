"""Every ```python block in docs/ and README.md runs, so the docs stay true.

Blocks on one page run in order in one namespace (a page is one tutorial). Blocks fenced as
```text or ```yaml are illustrations and are not run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _pages_with_code() -> list[Path]:
    return [p for p in PAGES if p.exists() and FENCE.search(p.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", _pages_with_code(), ids=lambda p: p.name)
def test_the_python_examples_of_the_page_run(
    page: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.fspath(tmp_path / "tiktoken"))
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for n, match in enumerate(FENCE.finditer(page.read_text(encoding="utf-8")), 1):
        code = compile(match.group(1), f"{page.name}[block {n}]", "exec")
        exec(code, namespace)
