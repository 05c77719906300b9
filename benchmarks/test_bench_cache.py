"""Throughput of the cache simulator: 1,000 requests of 200 blocks (an append-only agent run)
through the Anthropic model and the oracle. Correctness is asserted; timings are only reported."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from regio.cache import CacheBlock, CacheReport, CacheRequest
from regio.providers import cache_model_for

N_REQUESTS = 1000
BLOCKS = 200


EPISODES = 20
TURNS = N_REQUESTS // EPISODES
HEAD = BLOCKS - TURNS


def _trace() -> list[CacheRequest]:
    """20 append-only episodes of 50 turns on a shared 150-block head: turn k sends the head
    plus k conversation blocks (151..200 blocks of 100 tokens), one 5m mark on the last block,
    30 s apart (entries stay live)."""
    head = [CacheBlock(tokens=100, digest=f"h{j}") for j in range(HEAD)]
    out = []
    for ep in range(EPISODES):
        conv = [CacheBlock(tokens=100, digest=f"e{ep}c{j}") for j in range(TURNS)]
        for k in range(1, TURNS + 1):
            last = CacheBlock(tokens=100, digest=conv[k - 1].digest, mark="5m")
            i = ep * TURNS + k - 1
            out.append(
                CacheRequest(
                    id=f"r{i:04d}",
                    blocks=(*head, *conv[: k - 1], last),
                    model="claude-sonnet-4-6",
                    t_start=30.0 * i,
                    ttft=1.0,
                )
            )
    return out


TRACE = _trace()


def _run(name: str) -> Callable[[], CacheReport]:
    return lambda: cache_model_for(name).run(TRACE)


@pytest.mark.parametrize("name", ["anthropic:claude-sonnet-4-6", "oracle"])
def test_bench_cache_throughput_1000_requests_of_200_blocks(benchmark, name: str) -> None:
    report = benchmark.pedantic(_run(name), rounds=1, iterations=1)
    sizes = [(HEAD + k) * 100 for k in range(1, TURNS + 1)]
    assert report.requests == N_REQUESTS
    assert report.prompt_tokens == EPISODES * sum(sizes)
    # within an episode turn k reads turn k-1's whole prompt
    within = EPISODES * sum(sizes[:-1])
    if name == "oracle":
        # ideal marks also reuse the shared head at the start of every later episode
        assert report.read == within + (EPISODES - 1) * HEAD * 100
        assert report.creation == 0
    else:
        assert report.read == within
        assert report.write_5m == report.prompt_tokens - within
