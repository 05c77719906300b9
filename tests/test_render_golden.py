"""The payload bytes every layout strategy sends on the bundled traces are the golden ones.

Regenerate (only for a byte change you meant, with the reason in the commit message) with
``python -m tests.golden.regenerate`` from the project root.
"""

from __future__ import annotations

import json

from golden.payloads import GOLDEN_FILE, collect, differences


def test_every_layout_sends_the_golden_payload_bytes_on_the_bundled_traces() -> None:
    expected = json.loads(GOLDEN_FILE.read_text())
    actual = collect()
    changed = differences(expected, actual)
    assert not changed, "payload bytes changed:\n" + "\n".join(changed[:40])


def test_golden_differences_name_the_first_changed_request() -> None:
    golden = {"t": {"regio": {"text": {"requests": 3, "sha256": "x", "each": "aa bb cc"}}}}
    changed = {"t": {"regio": {"text": {"requests": 3, "sha256": "y", "each": "aa bx cc"}}}}
    assert differences(golden, golden) == []
    assert differences(golden, changed) == ["t regio text: request 1 of 3 differs (golden has 3)"]
