"""Every python block of docs/regions.md runs against the real API, in order."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "regions.md"


def test_the_regions_doc_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 10
    namespace: dict[str, object] = {}
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), namespace)
