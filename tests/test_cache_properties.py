"""Property tests of the cache models against the oracle bound (spec section 5)."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cache_support import blk, req
from regio.cache import CacheRequest
from regio.providers import cache_model_for

# (model name, oracle name, model id used in requests)
MODELS = [
    ("anthropic:claude-sonnet-4-5", "oracle:anthropic:claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("openai:gpt-4o", "oracle:openai:gpt-4o", "gpt-4o"),
    ("openai:gpt-5.6", "oracle:openai:gpt-5.6", "gpt-5.6"),
    ("gemini:gemini-2.5-flash", "oracle:gemini:gemini-2.5-flash", "gemini-2.5-flash"),
    ("deepseek:deepseek-chat", "oracle:deepseek:deepseek-chat", "deepseek-chat"),
    ("deepseek:deepseek-v4-pro", "oracle:deepseek:deepseek-v4-pro", "deepseek-v4-pro"),
    ("vllm", "oracle:vllm", "m"),
    ("sglang", "oracle:sglang", "m"),
    ("llamacpp", "oracle:llamacpp", "m"),
]

KINDS = ("text", "tool_use", "tool_result")
SIZES = (40, 150, 300, 700)


@st.composite
def traces(draw: st.DrawFn, model: str = "m") -> list[CacheRequest]:
    """Branching agent traffic: each request extends a cut of an earlier one (or starts fresh),
    may re-send an earlier answer, carries up to 4 marks (1h before 5m) and has an answer."""
    count = draw(st.integers(1, 7))
    out: list[CacheRequest] = []
    t = 0.0
    for i in range(count):
        blocks = []
        if out and draw(st.booleans()):
            base = draw(st.sampled_from(out))
            cut = draw(st.integers(0, len(base.blocks)))
            blocks = list(base.blocks[:cut])
            if base.output_tokens and draw(st.booleans()):
                blocks.append(blk(f"y{base.id}", base.output_tokens))
        for j in range(draw(st.integers(1, 6))):
            size = draw(st.sampled_from(SIZES))
            kind = draw(st.sampled_from(KINDS))
            blocks.append(blk(f"n{i}.{j}.{size}", size, kind=kind, role="user", message=i))
        blocks = [msgspec.structs.replace(b, mark=None) for b in blocks]
        marks = sorted(draw(st.sets(st.integers(0, len(blocks) - 1), max_size=4)))
        n1h = draw(st.integers(0, len(marks)))
        for k, idx in enumerate(marks):
            blocks[idx] = msgspec.structs.replace(blocks[idx], mark="1h" if k < n1h else "5m")
        t += draw(st.sampled_from((0.5, 5.0, 60.0, 400.0)))
        out_tokens = draw(st.sampled_from((0, 1, 30, 120)))
        out.append(
            req(
                f"r{i}",
                blocks,
                t,
                model=model,
                key="k",
                output_tokens=out_tokens,
                output_digest=f"yr{i}",
                ttft=draw(st.sampled_from((0.1, 1.0, 3.0))),
            )
        )
    return out


@pytest.mark.parametrize(("name", "oracle_name", "model"), MODELS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_cached_tokens_never_exceed_the_oracle_bound(
    name: str, oracle_name: str, model: str, data: st.DataObject
) -> None:
    trace = data.draw(traces(model))
    sim = cache_model_for(name).run(trace)
    bound = cache_model_for(oracle_name).run(trace)
    for got, best in zip(sim.outcomes, bound.outcomes, strict=True):
        assert got.id == best.id
        assert got.read <= best.read, (name, got, best)
    assert 0.0 <= sim.hit_rate <= bound.hit_rate <= 1.0


@pytest.mark.parametrize(("name", "oracle_name", "model"), MODELS)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_prompt_token_is_read_written_or_plain(
    name: str, oracle_name: str, model: str, data: st.DataObject
) -> None:
    trace = data.draw(traces(model))
    rep = cache_model_for(name).run(trace)
    for o, r in zip(rep.outcomes, sorted(trace, key=lambda x: (x.t_start, x.id)), strict=True):
        assert o.read + o.write_5m + o.write_1h + o.write + o.uncached == o.prompt_tokens
        assert o.prompt_tokens == r.prompt_tokens
        assert min(o.read, o.write_5m, o.write_1h, o.write, o.uncached) >= 0
    assert 0.0 <= rep.hit_rate <= 1.0
    assert rep.eps >= 0.0


@settings(max_examples=60, deadline=None)
@given(
    first=st.integers(1, 30),
    growth=st.lists(st.integers(1, 10), min_size=1, max_size=12),
    quantize=st.sampled_from(("exact", "block", "openai", "paged", "slot", "deepseek")),
)
def test_the_oracle_never_exceeds_the_append_only_bound(
    first: int, growth: list[int], quantize: str
) -> None:
    sizes = [first]
    for g in growth:
        sizes.append(sizes[-1] + g)
    trace = [
        req(f"r{i:02d}", [blk(f"b{j}", 128) for j in range(s)], float(i), model="m")
        for i, s in enumerate(sizes)
    ]
    ns = [128 * s for s in sizes]
    rep = cache_model_for("oracle", quantize=quantize, persist="request").run(trace)
    h_max = 1 - ns[-1] / sum(ns)
    assert rep.hit_rate <= h_max + 1e-12
    if quantize == "exact" and ns[0] >= 1024:  # every request above the rule minimum
        assert rep.hit_rate == pytest.approx(h_max)
