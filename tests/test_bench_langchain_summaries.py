"""LangChain's ``SummarizationMiddleware`` peer: which of its summaries stand for the task
(the broken-request rule), its ``-tuned`` variant, and the summary it sends at a compaction."""

from __future__ import annotations

import html

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _bench_fixtures import swe_trace, tiny_blueprint
from regio.bench.baselines import plain_message
from regio.bench.peers import SummarizationPeer, make_peer, peer_available
from regio.bench.replay import replay
from regio.content import Message, ToolResult, ToolUse
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter

pytestmark = pytest.mark.skipif(
    not peer_available("summarization-middleware"),
    reason="langchain v1 (extra 'bench') is not installed",
)

TASK = "Fix the KeyError in tests/test_api.py::test_login."
#: what LangChain 1.x writes when nothing of the dropped part fits its summarizer's input
TOO_LONG = "Previous conversation was too long to summarize."
COUNT = get_counter("o200k_base").count


def _peer(name: str, allowance: int = 2000) -> SummarizationPeer:
    peer = make_peer(name, allowance, 10, COUNT, ExtractiveSummarizer(), tasks=frozenset({TASK}))
    assert isinstance(peer, SummarizationPeer)
    peer.add(plain_message(Message.user(TASK), COUNT(TASK)))
    return peer


def _step(peer: SummarizationPeer, i: int, tokens: int) -> None:
    """One tool call whose result counts ``tokens``."""
    peer.add(plain_message(Message.assistant(f"step {i}", [ToolUse(f"c{i}", "cat", {})]), 5))
    peer.add(plain_message(Message.tool((ToolResult(f"c{i}", f"line {i} " * 20),)), tokens))


def _shown_summaries(peer: SummarizationPeer) -> list[str]:
    originals = {id(m) for m in peer.log.plain}
    view = peer.view()
    return [
        m.message.blocks[0].text  # type: ignore[union-attr]
        for m in view.messages
        if id(m) not in originals
    ]


def test_a_summary_written_without_its_model_does_not_stand_for_the_task() -> None:
    peer = _peer("summarization-middleware")
    _step(peer, 0, 5000)  # the dropped part's last 4,000 tokens hold no human message
    _step(peer, 1, 100)
    view = peer.view()
    assert view.compacted and not peer.calls  # no summarizer call was made
    (shown,) = _shown_summaries(peer)
    assert shown.endswith(TOO_LONG) and not view.summary


def test_the_tuned_middleware_reads_everything_it_drops_and_keeps_the_task() -> None:
    peer = _peer("summarization-middleware-tuned")
    _step(peer, 0, 5000)
    _step(peer, 1, 100)
    view = peer.view()
    assert view.compacted and len(peer.calls) == 1 and TASK in peer.calls[0].prompt
    (shown,) = _shown_summaries(peer)
    assert view.summary and not shown.endswith(TOO_LONG)


def test_a_summary_that_read_the_task_stands_for_it_and_so_does_the_next_that_read_it() -> None:
    peer = _peer("summarization-middleware", allowance=4000)
    for i in range(8):
        _step(peer, i, 450)
    assert peer.view().summary and len(peer.calls) == 1
    assert TASK in peer.calls[0].prompt
    (first,) = _shown_summaries(peer)
    for i in range(8, 16):
        _step(peer, i, 450)
    assert peer.view().summary and len(peer.calls) == 2
    # its model read the task again, or the first summary (quoted escaped in its prompt)
    read = html.unescape(peer.calls[1].prompt)
    assert (TASK in read or first in read) and len(peer.standing) == 2


def test_the_summary_sent_at_a_compaction_is_the_one_just_written() -> None:
    peer = _peer("summarization-middleware-tuned", allowance=4000)
    sent: list[str] = []
    for i in range(40):
        _step(peer, i, 450)
        before = len(peer.calls)
        shown = _shown_summaries(peer)
        if len(peer.calls) > before:
            state = next(m for m in peer.state if not str(m.id).startswith("m"))
            assert shown == [str(state.content)]
            sent.append(shown[0])
    assert len(sent) >= 3 and len(set(sent)) == len(sent)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(10, 6000), min_size=1, max_size=25), st.booleans())
def test_a_summary_stands_for_the_task_only_where_a_summarizer_read_it(
    sizes: list[int], tuned: bool
) -> None:
    peer = _peer("summarization-middleware-tuned" if tuned else "summarization-middleware")
    for i, tokens in enumerate(sizes):
        _step(peer, i, tokens)
        calls = len(peer.calls)
        view = peer.view()
        shown = _shown_summaries(peer)
        state = [m for m in peer.state if not str(m.id).startswith("m")]
        # what is sent is the summary the middleware keeps, and only one
        assert shown == [str(m.content) for m in state]
        if any(text.endswith(TOO_LONG) for text in shown):
            assert not view.summary
        if view.summary:
            assert peer.calls and any(TASK in c.prompt for c in peer.calls)
        if tuned and len(peer.calls) > calls:
            assert view.summary


def test_a_replay_counts_the_middlewares_summaries_of_nothing_as_lost_tasks() -> None:
    out = replay(
        swe_trace(steps=40),
        tiny_blueprint(),
        layouts=("summarization-middleware", "summarization-middleware-tuned"),
        window_tokens=4000,
    )
    assert out.runs["summarization-middleware-tuned"].lost_task_requests == 0
    assert out.runs["summarization-middleware-tuned"].compaction_calls > 0
