"""The providers' own compaction as peers, on hand-written vectors: the documented trigger
(Anthropic: default 150,000 input tokens, at least 50,000; scaled with the bench window), the
placement (the compaction block first, nothing before it in the next request) and the billing
(a compaction pass of its own before the message pass, the sum of the two billed)."""

from __future__ import annotations

import pytest

from regio.bench.baselines import plain_message
from regio.bench.peers import make_peer
from regio.bench.peers.providers import (
    DOCUMENTED_WINDOW,
    PROVIDER_RULES,
    SUMMARY_PROMPT,
    ProviderCompactionPeer,
)
from regio.bench.replay import replay
from regio.bench.run import score
from regio.bench.tracking import prompt_tokens
from regio.content import Message, Text
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.tokens import get_counter
from regio.traces.format import AssistantMessage, Header, SystemPrompt, Trace, UserMessage

COUNTER = get_counter("o200k_base")
ANTHROPIC = PROVIDER_RULES["anthropic-compaction"]
OPENAI = PROVIDER_RULES["openai-compaction"]


def test_the_anthropic_trigger_is_the_documented_default_at_its_window() -> None:
    assert ANTHROPIC.trigger(DOCUMENTED_WINDOW) == 150_000
    assert ANTHROPIC.trigger(65_536) == round(150_000 * 65_536 / 200_000)
    ANTHROPIC.check(50_000)
    with pytest.raises(ValueError, match="below the documented minimum of 50000"):
        ANTHROPIC.check(49_999)


def test_a_scaled_trigger_never_falls_below_the_scaled_minimum() -> None:
    from regio.bench.peers.providers import ProviderRule

    low = ProviderRule("x", "anthropic", 10_000, 50_000, "doc")
    assert low.trigger(100_000) == 25_000  # the minimum, scaled by 100k / 200k
    assert OPENAI.trigger(32_768) == ANTHROPIC.trigger(32_768)


def _peer(trigger: int, fixed: int = 100) -> ProviderCompactionPeer:
    summarizer = ExtractiveSummarizer(max_summary_tokens=200, counter=COUNTER)
    return ProviderCompactionPeer(ANTHROPIC, trigger, fixed, summarizer, COUNTER.count)


def _message(role: str, words: int, tag: str) -> object:
    text = f"{tag} " + "word " * words
    return plain_message(Message(role, (Text(text),)), COUNTER.count(text))  # type: ignore[arg-type]


def test_below_the_trigger_the_client_sends_its_whole_history() -> None:
    peer = _peer(trigger=10_000)
    for k in range(4):
        peer.add(_message("user" if k % 2 == 0 else "assistant", 100, f"m{k}"))
    view = peer.view()
    assert view.compaction_pass is None and not view.summary and not view.compacted
    assert [m.message.text.split()[0] for m in view.messages] == ["m0", "m1", "m2", "m3"]


def test_over_the_trigger_the_block_stands_alone_and_opens_every_later_request() -> None:
    peer = _peer(trigger=500)
    history = [_message("user" if k % 2 == 0 else "assistant", 150, f"m{k}") for k in range(4)]
    for m in history:
        peer.add(m)
    view = peer.view()
    made = view.compaction_pass
    assert made is not None and view.summary and view.compacted
    # the compaction pass: what the client sent, then the summarization prompt
    assert made.messages[:-1] == history
    assert made.messages[-1].message.text == SUMMARY_PROMPT
    # the message pass: the compaction block alone, an assistant block wrapped as documented
    (block,) = view.messages
    assert block.message.role == "assistant"
    assert block.message.text.startswith("<summary>") and block.message.text.endswith("</summary>")
    assert made.output_tokens == block.tokens
    # the next requests: the block first, then only what came after it
    later = _message("user", 10, "after")
    peer.add(later)
    nxt = peer.view()
    assert nxt.compaction_pass is None and nxt.messages == [block, later]


def test_a_second_compaction_summarizes_the_block_and_what_followed() -> None:
    peer = _peer(trigger=400)
    for k in range(3):
        peer.add(_message("user", 150, f"a{k}"))
    first = peer.view().messages[0]
    for k in range(3):
        peer.add(_message("user", 150, f"b{k}"))
    view = peer.view()
    assert view.compaction_pass is not None
    assert view.compaction_pass.messages[0] == first
    assert peer.passes == 2 and view.messages[0] != first


def _trace(turns: int, words: int) -> Trace:
    events: list = [SystemPrompt(0.0, "You help."), UserMessage(0.0, (Text("The task."),))]
    t = 0.0
    for k in range(turns):
        t += 2.0
        events.append(AssistantMessage(t, (Text(f"reply {k} " + "word " * words),)))
        t += 10.0
        events.append(UserMessage(t, (Text(f"more {k} " + "word " * words),)))
    events.append(AssistantMessage(t + 2.0, (Text("done"),)))
    return Trace(Header(id="tiny/chat", source_format="synth"), tuple(events))


def test_the_compaction_pass_is_billed_in_the_agents_cache_before_its_call() -> None:
    from _bench_fixtures import tiny_blueprint

    out = replay(
        _trace(40, 120), tiny_blueprint(), layouts=("anthropic-compaction",), window_tokens=8192
    )
    run = out.runs["anthropic-compaction"]
    trigger = ANTHROPIC.trigger(8192)
    passes = run.fork_requests
    assert passes and run.compaction_calls == len(passes) and run.summarizer == "provider"
    for made in passes:
        call = int(made.id.split(".")[0]) + 1
        message = next(r for r in run.requests if int(r.id) == call)
        assert made.scope == message.scope and made.t_start == message.t_start
        assert made.id < message.id  # billed first: same time, sorting before the call
        assert prompt_tokens(made) > trigger
        # the message pass is tools + system + the block alone
        assert len([b for b in message.blocks if b.level == "messages"]) == 1
        assert made.output_tokens == message.blocks[-1].tokens
    (model,) = score(out, ["anthropic:claude-sonnet-4-6"])
    item = model.layout("anthropic-compaction")
    assert item.compaction_cost_usd and item.compaction_cost_usd > 0
    assert item.cost_usd == pytest.approx(item.request_cost_usd + item.compaction_cost_usd)
    assert item.broken_requests == 0


def test_make_peer_scales_the_trigger_to_the_models_window() -> None:
    summarizer = ExtractiveSummarizer(counter=COUNTER)
    peer = make_peer(
        "openai-compaction", 20_000, 500, COUNTER.count, summarizer, 800, window=32_768
    )
    assert isinstance(peer, ProviderCompactionPeer)
    assert peer.trigger == round(150_000 * 32_768 / 200_000) and peer.fixed == 800
