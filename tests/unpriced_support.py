"""Shared figures of the unpriced-cost tests (tests/test_unpriced_costs.py,
tests/test_proxy_unpriced_costs.py): a model whose output price the cache rules do not record,
and one Anthropic call's usage with cache reads, writes and output."""

from __future__ import annotations

#: Claude Opus 4.6: input $5 / MTok recorded, output price not recorded
OPUS = ("anthropic", "claude-opus-4-6")
#: an Anthropic ``usage``: uncached input, a cache read, a cache write and output tokens
ANTHROPIC_USAGE = {
    "input_tokens": 1_000,
    "cache_read_input_tokens": 50_000,
    "cache_creation_input_tokens": 2_000,
    "output_tokens": 800,
}
