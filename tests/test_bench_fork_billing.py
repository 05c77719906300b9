"""The bench bills regio's summaries as the request its LLM summarizer sends: a fork of the
agent's last request in the agent's own cache when the summarizer runs on the agent's model,
else the transcript prompt in a cache of its own (regio.bench.billing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.bench.replay import replay
from regio.bench.replaysetup import forks
from regio.bench.run import score
from regio.blueprint import load_blueprint
from regio.regions import SlidingWindow
from regio.traces.synth import synthesize

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "blueprints"
CACHE = "anthropic:claude-sonnet-4-6"


def _coding(own_model: bool, model: str | None = None) -> Any:
    """The coding example; ``own_model``: its summarizer on the agent's model, else on
    ``model`` (default: the example's claude-haiku-4-5)."""
    bp = load_blueprint(EXAMPLES / "coding-agent.yaml")
    if own_model:
        return attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, model=""))
    if model is not None:
        return attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, model=model))
    return bp


def _with_target(bp: Any, target: int) -> Any:
    """``bp`` with its conversation's compaction target set to ``target`` tokens."""
    regions = tuple(
        attrs.evolve(s, eviction=attrs.evolve(s.eviction, target=target))
        if s.name == "conversation"
        else s
        for s in bp.regions
    )
    return attrs.evolve(bp, regions=regions)


def _run(bp: Any, calls: int = 150, seed: int = 3, window: int = 16384) -> Any:
    return replay(synthesize(calls, seed), bp, layouts=("regio",), window_tokens=window)


def _check_forks(out: Any) -> None:
    """Every fork extends the agent request before it, block for block, and sorts between
    that request and the next one (after the other forks of the same flush)."""
    run = out.runs["regio"]
    calls = {r.id: r for r in run.requests}
    order = sorted([*run.requests, *run.fork_requests], key=lambda r: (r.t_start, r.id))
    # a call the engine's fork would not send (a range starting after the last request, a
    # merge with a summary written after it) is billed as the transcript prompt, as sent
    assert run.compaction_calls == len(run.fork_requests) + len(run.compaction_requests)
    for k, r in enumerate(order):
        if r.id in calls:
            continue
        before = next(x for x in reversed(order[:k]) if x.id in calls)  # forks of one flush
        if order[k - 1] is not before:  # a later fork of the same flush: ids increase
            assert order[k - 1].id.startswith(before.id + ".s") and order[k - 1].id < r.id
        assert r.id.startswith(before.id + ".s")
        assert r.scope == before.scope
        digests = [b.digest for b in r.blocks]
        assert digests[: len(before.blocks)] == [b.digest for b in before.blocks]
        assert len(r.blocks) > len(before.blocks)  # the instruction is appended
        after = order[k + 1] if k + 1 < len(order) else None
        assert after is None or after.id in calls or after.id.startswith(before.id + ".s")


def test_a_summarizer_on_another_model_is_billed_as_a_transcript_prompt() -> None:
    bp = _coding(own_model=False)
    assert not forks(bp)  # the example names claude-haiku-4-5
    run = _run(bp).runs["regio"]
    assert run.compaction_calls == len(run.compaction_requests) > 0
    assert run.fork_requests == []
    assert {r.scope for r in run.compaction_requests} == {run.requests[0].scope + "#summarizer"}


def test_a_summarizer_on_the_agents_model_is_billed_as_a_fork_of_the_last_request() -> None:
    bp = _coding(own_model=True)
    assert forks(bp)
    out = _run(bp)
    _check_forks(out)
    run = out.runs["regio"]
    # the others are the calls the engine's fork would not send (or that cost less as the
    # transcript prompt: a small range in a long request), billed as sent
    assert run.fork_requests
    # where each compaction takes a long stretch (8,000 tokens kept at 16k, not 4% of the
    # room), reading the cached request is the cheaper call for most of them
    long = _run(_with_target(bp, 8000)).runs["regio"]
    assert long.fork_requests and len(long.fork_requests) >= len(long.compaction_requests)


def test_a_fork_reads_the_agents_cache_and_costs_less_than_the_transcript_prompt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a summarizer model the rules give no price (Claude Haiku 3.5): the engine's cost
    # controller decides as for a fork; the bench leaves its transcripts unpriced, so they
    # are priced here by the run's own cache model, at the agent's prices, to compare. The
    # transcript run would leave newest cache markers off before its compactions (nothing
    # reads them there; the fork does): off here, so both runs mark alike
    # (tests/test_layout_unread_writes.py)
    monkeypatch.setattr(SlidingWindow, "rewrite_odds", lambda self: None)
    unpriced = _coding(own_model=False, model="claude-3-5-haiku-20241022")
    at_agents_prices = attrs.evolve(_run(unpriced), summarizer_cache=None)
    transcript = score(at_agents_prices, [CACHE])[0].layout("regio")
    forked_out = _run(_coding(own_model=True))
    forked = score(forked_out, [CACHE])[0].layout("regio")
    # the same engine decisions: the same model calls at the same cost
    assert forked.compaction_calls == transcript.compaction_calls > 0
    assert forked.request_cost_usd == pytest.approx(transcript.request_cost_usd, rel=1e-3)
    assert (forked.cost_usd or 0) < (transcript.cost_usd or 0)
    assert 0 < (forked.compaction_cost_usd or 0) < (transcript.compaction_cost_usd or 0)
    assert forked.hit_rate == pytest.approx(transcript.hit_rate, abs=1e-3)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    calls=st.integers(min_value=50, max_value=110),
    seed=st.integers(min_value=0, max_value=10_000),
    window=st.sampled_from([12288, 16384]),
)
def test_every_fork_extends_the_request_before_it_and_sorts_before_the_next(
    calls: int, seed: int, window: int
) -> None:
    _check_forks(_run(_coding(own_model=True), calls, seed, window))
