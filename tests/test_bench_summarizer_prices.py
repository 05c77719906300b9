"""The bench bills a summarizer on another model than the agent's at that model's prices
(regio.bench.billing): the transcript prompts of regio and of the summarizing peer go to the
blueprint's ``summarizer.model`` (the coding example's claude-haiku-4-5, $1 / $5 per MTok),
priced by its own cache rule whatever the run's cache model; the cost bound prices them the
same way; a model the cache rules do not know or do not price leaves its calls, and the
strategy's cost, unpriced (never billed at the agent's prices), and the run says so."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from regio.bench.baselines import MessageCounts
from regio.bench.billing import summarizer_pricing, summary_request
from regio.bench.costbound import (
    CostPrices,
    Schedule,
    cut_sizes,
    kept_tokens,
    prices_of,
    with_summarizer,
)
from regio.bench.output import model_table
from regio.bench.peers.view import CompactionCall
from regio.bench.replay import ReplayOutput, replay
from regio.bench.replaysetup import Clock, ReplaySetup
from regio.bench.run import score
from regio.bench.tracking import StrategyRun
from regio.blueprint import load_blueprint
from regio.cache.types import CacheBlock, CacheRequest
from regio.providers import cache_model_for
from regio.regions import SlidingWindow
from regio.tokens import get_counter
from regio.traces.synth import synthesize

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "blueprints"
CACHES = ("anthropic:claude-sonnet-4-6", "openai:gpt-5")
HAIKU = "anthropic:claude-haiku-4-5"
FUZZ = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))


def _coding(**summarizer: Any) -> Any:
    bp = load_blueprint(EXAMPLES / "coding-agent.yaml")
    return attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, **summarizer))


def _output(calls: list[CompactionCall], summarizer: str | None) -> ReplayOutput:
    """One agent request of 2,000 tokens, and ``calls`` as the strategy's transcripts."""
    agent = CacheRequest(
        id="00000", blocks=(CacheBlock(2000, "system"),), scope="t", model="claude-sonnet-4-6"
    )
    transcripts = [
        summary_request(c, f"00000.{k}", 0.0, "t", "claude-haiku-4-5") for k, c in enumerate(calls)
    ]
    run = StrategyRun([agent], transcripts, "llm", len(transcripts))
    return ReplayOutput("t", {"regio": run}, [2000], 0, 0, summarizer_cache=summarizer)


def _usd(requests: list[CacheRequest], input_price: float, output_price: float) -> float:
    """USD of ``requests`` read uncached and written at these prices (USD per MTok)."""
    return (
        sum(
            sum(b.tokens for b in r.blocks) * input_price + r.output_tokens * output_price
            for r in requests
        )
        / 1e6
    )


def _compaction_cost(out: ReplayOutput) -> dict[str, float]:
    return {m.cache_model: m.layout("regio").compaction_cost_usd or 0.0 for m in score(out, CACHES)}


def test_a_haiku_transcript_is_billed_at_haikus_price_under_every_cache_model() -> None:
    out = _output([CompactionCall("transcript", 10_000, 1_500)], HAIKU)
    # $1 / MTok x 10,000 + $5 / MTok x 1,500, paid to Anthropic even in the OpenAI run
    assert _compaction_cost(out) == pytest.approx({c: 0.01 + 0.0075 for c in CACHES})
    # priced by the run's own model as before when no summarizer model is priced:
    # Sonnet $3 x 10,000 + $15 x 1,500; GPT-5 $1.25 x 10,000 + $10 x 1,500
    plain = _output([CompactionCall("transcript", 10_000, 1_500)], None)
    assert _compaction_cost(plain) == pytest.approx(
        {CACHES[0]: 0.03 + 0.0225, CACHES[1]: 0.0125 + 0.015}
    )


@settings(max_examples=FUZZ, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 60_000), st.integers(0, 3_000)), min_size=1, max_size=6))
def test_haiku_transcripts_cost_their_tokens_at_haikus_prices(
    sizes: list[tuple[int, int]],
) -> None:
    # no cache marks on a transcript prompt (one user message): every token is read uncached
    calls = [CompactionCall(f"transcript {k}", p, o) for k, (p, o) in enumerate(sizes)]
    by_hand = sum(p * 1.0 + o * 5.0 for p, o in sizes) / 1e6
    assert _compaction_cost(_output(calls, HAIKU)) == pytest.approx({c: by_hand for c in CACHES})


def test_the_coding_examples_summaries_are_billed_at_haikus_prices() -> None:
    bp = _coding()
    assert summarizer_pricing(bp)[0] == HAIKU
    out = replay(synthesize(120, 3), bp, layouts=("regio",), window_tokens=16384)
    run = out.runs["regio"]
    assert run.compaction_requests and not run.fork_requests
    assert {r.model for r in run.compaction_requests} == {"claude-haiku-4-5"}
    by_hand = _usd(run.compaction_requests, 1.0, 5.0)
    assert _compaction_cost(out) == pytest.approx({c: by_hand for c in CACHES})
    assert any("claude-haiku-4-5 at its own prices ($1 / $5 per MTok" in n for n in out.notes)


def test_the_engines_cost_controller_prices_the_summaries_as_the_bench_bills_them() -> None:
    bp = _coding()
    counter = get_counter(bp.tokenizer)
    setup = ReplaySetup(
        synthesize(5, 1), bp, counter, MessageCounts(counter), (), frozenset(), (), ()
    )
    assert setup.summarizer_model == "claude-haiku-4-5"
    engine = setup.engine(Clock(), {})
    assert (engine.summarizer.api, engine.summarizer.model) == ("anthropic", "claude-haiku-4-5")
    conv = engine.window.conversation
    assert isinstance(conv, SlidingWindow)
    terms = conv.cost_terms
    assert terms is not None and terms.transcript_input == pytest.approx(1 / 3)
    assert terms.output == pytest.approx(5 / 3)


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ("claude-3-5-haiku-20241022", "has no price in the cache rules (anthropic/haiku-3-5"),
        ("my-local-summarizer", "is not in the cache rules"),
    ],
)
def test_a_summarizer_model_without_a_price_leaves_the_strategys_cost_unpriced_and_says_so(
    model: str, says: str
) -> None:
    bp = _coding(model=model)
    cache, note = summarizer_pricing(bp)
    assert cache == f"anthropic:{model}" and note is not None and says in note
    assert "its calls are unpriced" in note
    out = replay(synthesize(120, 3), bp, layouts=("regio",), window_tokens=16384)
    assert note in out.notes
    run = out.runs["regio"]
    assert run.compaction_requests and {r.model for r in run.compaction_requests} == {model}
    for result in score(out, CACHES):
        x = result.layout("regio")
        # never billed at the agent model's prices: unpriced, and so is the strategy's cost
        assert x.compaction_cost_usd is None and x.cost_usd is None
        assert x.total_cost_usd is None and x.compaction_cost_per_request == ()
        assert x.request_cost_usd is not None  # the agent's own requests keep their price
        assert x.cost_bound_usd is None and x.cost_bound_share is None
        # the JSON report says null, the printed table n/a (never $0 or the agent's price)
        (layout,) = [
            y for y in json.loads(msgspec.json.encode(result))["layouts"] if y["layout"] == "regio"
        ]
        assert layout["compaction_cost_usd"] is None and layout["cost_usd"] is None
        console = Console(record=True, width=400)
        console.print(model_table("t", result))
        (row,) = [line for line in console.export_text().splitlines() if "│ regio" in line]
        assert f"{x.compaction_calls} n/a" in row


def test_a_cost_bound_with_an_unpriced_summarizer_has_no_summary_terms() -> None:
    sonnet = prices_of(cache_model_for(CACHES[0]).rule)
    assert sonnet is not None
    assert (
        with_summarizer(sonnet, cache_model_for("anthropic:claude-3-5-haiku-20241022").rule) is None
    )


def test_the_summarizing_peer_is_billed_on_the_same_summarizer_model() -> None:
    pytest.importorskip("langchain.agents.middleware", reason="needs the 'bench' extra")
    out = replay(
        synthesize(150, 3), _coding(), layouts=("summarization-middleware",), window_tokens=16384
    )
    run = out.runs["summarization-middleware"]
    assert run.compaction_requests
    assert {r.model for r in run.compaction_requests} == {"claude-haiku-4-5"}
    by_hand = _usd(run.compaction_requests, 1.0, 5.0)
    costs = {
        m.cache_model: m.layout("summarization-middleware").compaction_cost_usd
        for m in score(out, CACHES)
    }
    assert costs == pytest.approx({c: by_hand for c in CACHES})


def test_the_cost_bound_prices_a_haiku_transcript_at_haikus_prices() -> None:
    sonnet = prices_of(cache_model_for(CACHES[0]).rule)
    assert sonnet is not None
    haiku = with_summarizer(sonnet, cache_model_for(HAIKU).rule)
    assert haiku.summary_output == pytest.approx(5 / 3)
    assert haiku.transcript_input == pytest.approx(1 / 3)
    # a 12,000-token request cut to 2,000: the transcript reads the 10,000 it summarizes
    # ($0.01) and writes 1,500 ($0.0075); a fork on Sonnet reads all 12,000 from the cache
    assert haiku.compaction(12_000, 2_000, 1_500) * haiku.input_usd == pytest.approx(0.0175)
    assert sonnet.compaction(12_000, 2_000, 1_500) * sonnet.input_usd == pytest.approx(
        (0.1 * 12_000 + 5 * 1_500) * 3e-6
    )
    # the recorded replies stay at the agent's output price
    schedule = Schedule(
        sizes=[1_000, 12_000, 13_000],
        outputs=[100, 100, 100],
        limit=20_000,
        fixed=0,
        kept=2_000,
        summary=1_500,
        summarizes=1.0,
        prices=haiku,
    )
    # 1,000 written; 1,000 read + 11,000 written; then at 13,000 > 12,500 a compaction:
    # the summary call (0.0175 USD) and the 2,000 kept written again; 300 reply tokens
    by_hand = (
        1.25 * 1_000
        + 0.1 * 1_000
        + 1.25 * 11_000
        + (10_000 / 3 + 5 / 3 * 1_500)
        + 1.25 * 2_000
        + 5 * 300
    ) * 3e-6
    assert schedule.cost(12_500) == pytest.approx(by_hand)


def test_a_transcript_summary_of_a_prompt_below_the_kept_size_reads_nothing_not_less() -> None:
    """A schedule compacts when the next prompt would pass the trigger, so a single large
    request can start a compaction from a prompt below the kept size: the transcript then
    summarizes nothing and its read costs 0, never a negative amount that would make the
    bound cheaper than any schedule (:func:`regio.policies.costcontrol.summary_call_cost`)."""
    sonnet = prices_of(cache_model_for(CACHES[0]).rule)
    assert sonnet is not None
    haiku = with_summarizer(sonnet, cache_model_for(HAIKU).rule)
    summary_only = 5 / 3 * 1_500  # the 1,500-token summary at Haiku's output price
    assert haiku.compaction(1_000, 2_000, 1_500) == pytest.approx(summary_only)
    assert haiku.compaction(2_000, 2_000, 1_500) == pytest.approx(summary_only)
    # a fork reads the whole prompt from the agent's cache, whatever the kept size
    assert sonnet.compaction(1_000, 2_000, 1_500) == pytest.approx(0.1 * 1_000 + 5 * 1_500)


def test_the_cost_bound_of_a_haiku_run_uses_haikus_prices() -> None:
    out = replay(synthesize(120, 3), _coding(), layouts=("regio",), window_tokens=16384)
    run = out.runs["regio"]
    result = score(out, CACHES[:1])[0].layout("regio")
    prompts = [sum(b.tokens for b in r.blocks) for r in run.requests]
    summary = round(
        sum(r.output_tokens for r in run.compaction_requests) / len(run.compaction_requests)
    )
    sonnet = prices_of(cache_model_for(CACHES[0]).rule)
    assert sonnet is not None and out.prompt_limit is not None

    def bound(prices: CostPrices) -> float:
        found = Schedule(
            sizes=out.raw_sizes,
            outputs=out.outputs,
            limit=out.prompt_limit or 0,
            fixed=out.fixed_tokens,
            kept=kept_tokens(prompts),
            summary=summary,
            summarizes=min(1.0, len(run.compaction_requests) / len(cut_sizes(prompts))),
            prices=prices,
        ).bound()
        assert found is not None
        return found.cost_usd

    haiku = bound(with_summarizer(sonnet, cache_model_for(HAIKU).rule))
    assert result.cost_bound_usd == pytest.approx(haiku)
    assert haiku != pytest.approx(bound(sonnet))
