"""Counting a real SWE-agent trace: cold (fresh counter, empty count cache) and cached.

Run with ``pytest benchmarks/test_bench_count.py --benchmark-enable``. The cached benchmark
asserts on the cache statistics (zero tokenize calls), not on time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from regio.content import Message
from regio.tokens import CachedCounter, get_counter
from regio.tokens.chatfile import read_transcript

ROOT = Path(__file__).resolve().parents[1]
TRACE = "swe-agent/marshmallow-1867__function_calling_replace.traj"


def _trace_path() -> Path:
    for base in (ROOT / "examples" / "traces", ROOT.parent / "shared" / "traces" / "raw"):
        for candidate in (base / TRACE, *base.rglob(Path(TRACE).name)):
            if candidate.is_file():
                return candidate
    pytest.skip(f"trace {TRACE} not found under examples/traces or ../shared/traces/raw")


@pytest.fixture(scope="module")
def messages() -> list[Message]:
    return [item.message for item in read_transcript(_trace_path())]


def _count(counter: CachedCounter, messages: list[Message]) -> int:
    return sum(counter.count_message(m) for m in messages)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base", "heuristic"])
def test_bench_count_trace_cold(benchmark, messages: list[Message], encoding: str) -> None:
    get_counter(encoding).count("warm the shared encoding")  # build the BPE outside the timing
    counters: list[CachedCounter] = []

    def setup() -> tuple[tuple[CachedCounter, list[Message]], dict[str, object]]:
        counter = get_counter(encoding)
        counters.append(counter)
        return (counter, messages), {}

    total = benchmark.pedantic(_count, setup=setup, rounds=20, iterations=1)
    assert total > 0
    for counter in counters:
        stats = counter.stats
        assert stats.hits + stats.misses > 0
        assert stats.tokenize_calls == stats.misses > 0


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base", "heuristic"])
def test_bench_count_trace_cached(benchmark, messages: list[Message], encoding: str) -> None:
    counter = get_counter(encoding)
    expected = _count(counter, messages)
    counter.cache.reset_stats()
    total = benchmark(_count, counter, messages)
    assert total == expected
    stats = counter.stats
    assert stats.tokenize_calls == 0
    assert stats.misses == 0
    assert stats.hits > 0
