"""Property tests of the bench metrics: rates within [0, 1]; no cache reads more than the
oracle bound of the same request sequence (spec cache-rules.md section 5)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.metrics import append_only_hit_rate, cumulative_hit_rates, oracle_report
from regio.cache.types import CacheBlock, CacheRequest
from regio.providers import cache_model_for

MODELS = (
    "anthropic:claude-sonnet-4-5",
    "openai:gpt-4o",
    "deepseek:deepseek-chat",
    "vllm",
    "llamacpp",
)

# One step: append k new blocks, or rewrite the block at a position (a changed region).
steps = st.lists(
    st.tuples(st.sampled_from(["append", "rewrite"]), st.integers(1, 6), st.integers(0, 30)),
    min_size=1,
    max_size=12,
)


def _requests(plan: list[tuple[str, int, int]], sizes: list[int]) -> list[CacheRequest]:
    blocks: list[tuple[int, str]] = []
    serial = 0
    out = []
    for i, (op, k, pos) in enumerate(plan):
        if op == "append" or not blocks:
            for _ in range(k):
                blocks.append((sizes[serial % len(sizes)], f"d{serial}"))
                serial += 1
        else:
            j = pos % len(blocks)
            blocks[j] = (blocks[j][0], f"d{serial}")
            serial += 1
        marks = {len(blocks) - 1, min(2, len(blocks) - 1)}
        req_blocks = tuple(
            CacheBlock(n, d, mark="5m" if b in marks else None) for b, (n, d) in enumerate(blocks)
        )
        out.append(
            CacheRequest(
                id=f"r{i:03d}",
                blocks=req_blocks,
                t_start=10.0 * i,
                t_end=10.0 * i + 3,
                output_tokens=50,
            )
        )
    return out


@settings(max_examples=60, deadline=None)
@given(
    plan=steps,
    sizes=st.lists(st.integers(1, 900), min_size=1, max_size=5),
    model=st.sampled_from(MODELS),
)
def test_no_cache_reads_more_than_the_oracle_of_the_same_requests(plan, sizes, model) -> None:  # type: ignore[no-untyped-def]
    requests = _requests(plan, sizes)
    report = cache_model_for(model).run(requests)
    bound = oracle_report(model, requests)
    for got, best in zip(report.outcomes, bound.outcomes, strict=True):
        assert got.read <= best.read
    assert 0.0 <= report.hit_rate <= bound.hit_rate <= 1.0


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 5000)), max_size=30))
def test_hit_rates_stay_within_zero_and_one(pairs) -> None:  # type: ignore[no-untyped-def]
    prompts = [max(a, b) for a, b in pairs]
    reads = [min(a, b) for a, b in pairs]
    assert all(0.0 <= h <= 1.0 for h in cumulative_hit_rates(reads, prompts))
    assert 0.0 <= append_only_hit_rate(prompts) <= 1.0
