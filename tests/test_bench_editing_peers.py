"""The context-editing peers: Anthropic's server-side edit (simulated) and LangChain's
ContextEditingMiddleware (its real package), at a window, with the trim fallback."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.baselines import PlainMessage, plain_message
from regio.bench.peers import PEERS, make_peer, peer_available
from regio.bench.peers.editing import (
    CLEAR_AT_LEAST_SHARE,
    TRIGGER_SHARE,
    MiddlewareEditPeer,
    ServerEditPeer,
    fit_allowance,
)
from regio.cache.context_editing import PLACEHOLDER
from regio.content import Message, ToolResult, ToolUse
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.tokens import get_counter

COUNTER = get_counter("o200k_base")


def session(rounds: int, body: int = 80) -> list[PlainMessage]:
    out = [plain_message(Message.user("Fix the bug."), 5)]
    for i in range(rounds):
        out.append(plain_message(Message.assistant(f"step {i}", [ToolUse(f"c{i}", "ls", {})]), 10))
        text = f"output {i} " + "x " * body
        out.append(plain_message(Message.tool((ToolResult(f"c{i}", text),)), COUNTER.count(text)))
    return out


def results(messages: list[PlainMessage]) -> dict[str, str]:
    return {r.tool_use_id: r.content for m in messages for r in m.message.tool_results}


def test_both_editing_peers_are_listed_and_built_by_name() -> None:
    assert "anthropic-clear-tool-uses" in PEERS and "context-editing-middleware" in PEERS
    summarizer = ExtractiveSummarizer(context_window=8000, max_summary_tokens=200)
    peer = make_peer("anthropic-clear-tool-uses", 900, 50, COUNTER.count, summarizer, fixed=100)
    assert isinstance(peer, ServerEditPeer)
    assert peer.edit.trigger == int(1000 * TRIGGER_SHARE) and peer.edit.keep == 3


def test_server_edit_clears_all_but_the_last_three_results_past_its_trigger() -> None:
    peer = ServerEditPeer(allowance=5000, fixed=100, count=COUNTER.count)
    for pm in session(8, body=400):
        peer.add(pm)
    view = peer.view()
    got = results(view.messages)
    assert [k for k, v in got.items() if v == PLACEHOLDER] == [f"c{i}" for i in range(5)]
    assert all(got[f"c{i}"].startswith(f"output {i}") for i in (5, 6, 7))
    assert view.compacted and peer.overflowed == 0
    # the client's history is kept whole: the next call starts from the full results again
    assert results(peer.plain)["c0"].startswith("output 0")


def test_server_edit_below_its_trigger_sends_the_history_untouched() -> None:
    peer = ServerEditPeer(allowance=50_000, fixed=100, count=COUNTER.count)
    history = session(4)
    for pm in history:
        peer.add(pm)
    view = peer.view()
    assert view.messages == history and not view.compacted


def test_an_edit_that_cannot_fit_falls_back_to_dropping_the_oldest_turns() -> None:
    peer = ServerEditPeer(allowance=300, fixed=100, count=COUNTER.count)
    history = session(2)
    for k in range(6):
        for pm in [plain_message(Message.user(f"task {k}"), 5), *history[1:]]:
            peer.add(pm)
        view = peer.view()
    assert sum(m.tokens for m in view.messages) <= 300
    assert view.messages[0].message.role == "user" and not view.messages[0].message.tool_results
    assert peer.overflowed > 0 and "still over the window" in peer.notes()[0]


@pytest.mark.skipif(
    not peer_available("context-editing-middleware"), reason="langchain (extra 'bench') missing"
)
def test_middleware_clears_with_langchains_placeholder_through_its_real_hook() -> None:
    peer = MiddlewareEditPeer(allowance=5000, fixed=100, count=COUNTER.count)
    for pm in session(8, body=400):
        peer.add(pm)
    view = peer.view()
    got = results(view.messages)
    assert [k for k, v in got.items() if v == "[cleared]"] == [f"c{i}" for i in range(5)]
    cleared = next(m for m in view.messages if m.message.tool_results and got["c0"] == "[cleared]")
    assert cleared.tokens == COUNTER.count("[cleared]")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 400), min_size=1, max_size=30), st.integers(1, 3000))
def test_fit_allowance_keeps_a_fitting_suffix_that_starts_on_a_task(
    sizes: list[int], allowance: int
) -> None:
    messages = [
        plain_message(Message.user(f"q{i}"), n)
        if i % 3 == 0
        else plain_message(Message.tool((ToolResult(f"c{i}", "r"),)), n)
        for i, n in enumerate(sizes)
    ]
    kept, over = fit_allowance(messages, allowance)
    assert kept == messages[len(messages) - len(kept) :]
    assert over == (sum(sizes) > allowance)
    if over and len(kept) > 1:
        assert sum(m.tokens for m in kept) <= allowance
        assert kept[0].message.role == "user" and not kept[0].message.tool_results


def sized_session(bodies: list[int]) -> list[PlainMessage]:
    out = [plain_message(Message.user("Fix the bug."), 5)]
    for i, body in enumerate(bodies):
        out.append(plain_message(Message.assistant(f"step {i}", [ToolUse(f"c{i}", "ls", {})]), 10))
        text = f"output {i} " + "x " * body
        out.append(plain_message(Message.tool((ToolResult(f"c{i}", text),)), COUNTER.count(text)))
    return out


def test_the_tuned_peers_are_the_defaults_with_a_clear_at_least_scaled_to_the_window() -> None:
    summarizer = ExtractiveSummarizer(context_window=8000, max_summary_tokens=200)
    names = ("anthropic-clear-tool-uses-tuned", "context-editing-middleware-tuned")
    assert all(n in PEERS for n in names)
    server = make_peer(names[0], 900, 50, COUNTER.count, summarizer, fixed=100)
    default = make_peer("anthropic-clear-tool-uses", 900, 50, COUNTER.count, summarizer, fixed=100)
    assert isinstance(server, ServerEditPeer) and isinstance(default, ServerEditPeer)
    assert server.edit.clear_at_least == int(1000 * CLEAR_AT_LEAST_SHARE)
    assert default.edit.clear_at_least is None
    assert (server.edit.trigger, server.edit.keep) == (default.edit.trigger, default.edit.keep)
    if peer_available(names[1]):
        tuned = make_peer(names[1], 900, 50, COUNTER.count, summarizer, fixed=100)
        plain = make_peer("context-editing-middleware", 900, 50, COUNTER.count, summarizer, 100)
        assert isinstance(tuned, MiddlewareEditPeer) and isinstance(plain, MiddlewareEditPeer)
        edit, base = tuned.middleware.edits[0], plain.middleware.edits[0]
        assert edit.clear_at_least == int(1000 * CLEAR_AT_LEAST_SHARE) and base.clear_at_least == 0
        assert (edit.trigger, edit.keep, edit.placeholder) == (
            base.trigger,
            base.keep,
            base.placeholder,
        )


def test_the_tuned_server_edit_is_not_applied_when_it_would_free_less_than_its_minimum() -> None:
    # past the trigger (2,550 of a 5,100-token window), but the five old results clearable
    # free ~250 tokens, under the tuned minimum of 1,275: the tuned edit is not applied
    history = sized_session([50] * 5 + [1000] * 3)
    peers = [ServerEditPeer(5000, 100, COUNTER.count, tuned) for tuned in (False, True)]
    for peer in peers:
        for pm in history:
            peer.add(pm)
    default, tuned = (results(p.view().messages) for p in peers)
    assert [k for k, v in default.items() if v == PLACEHOLDER] == [f"c{i}" for i in range(5)]
    assert PLACEHOLDER not in tuned.values() and not peers[1].compacted


@pytest.mark.skipif(
    not peer_available("context-editing-middleware"), reason="langchain (extra 'bench') missing"
)
def test_the_tuned_middleware_clears_oldest_first_until_it_freed_its_minimum() -> None:
    history = session(8, body=400)
    peers = [MiddlewareEditPeer(5000, 100, COUNTER.count, tuned=t) for t in (False, True)]
    for peer in peers:
        for pm in history:
            peer.add(pm)
    default, tuned = (results(p.view().messages) for p in peers)
    assert [k for k, v in default.items() if v == "[cleared]"] == [f"c{i}" for i in range(5)]
    # LangChain stops once the freed tokens reach clear_at_least (1,275 of a 5,100 window)
    freed, expected = 0, []
    for pm in history:
        for r in pm.message.tool_results:
            if freed < int(5100 * CLEAR_AT_LEAST_SHARE):
                expected.append(r.tool_use_id)
                freed += pm.tokens - COUNTER.count("[cleared]")
    assert [k for k, v in tuned.items() if v == "[cleared]"] == expected
    assert 0 < len(expected) < 5
