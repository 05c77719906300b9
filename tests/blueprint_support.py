"""Shared YAML fixtures and helpers of the blueprint tests."""

from __future__ import annotations

HEAD = """\
version: 1
name: t
model:
  provider: anthropic
  name: claude-sonnet-4-5
  context_window: 200000
  max_output_tokens: 8000
"""

REGIONS = """\
regions:
  - name: system
    kind: pinned
    volatility: stable
    budget: 4000
    seed: You are an agent.
  - name: conversation
    kind: sliding_window
    budget: "50%"
  - name: scratch
    kind: temporary
    budget: 2000
"""


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the ``occurrence``-th line containing ``needle`` (independent of the
    loader, so the tests check the loader's line numbers)."""
    seen = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in text")
