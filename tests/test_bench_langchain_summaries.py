"""LangChain's ``SummarizationMiddleware`` peer: which of its summaries stand for the task
(the broken-request rule, traced by the ids of the messages its model read), its ``-tuned``
variant, what its fake model summarizes, and the summary it sends at a compaction."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.baselines import plain_message
from regio.bench.peers import SummarizationPeer, make_peer, peer_available
from regio.bench.peers.summarization import quoted
from regio.bench.peers.view import PeerView
from regio.bench.replay import replay
from regio.blueprint import load_blueprint
from regio.content import Message, ToolResult, ToolUse
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from regio.traces.synth import synthesize
from test_bench_baselines import EXAMPLES

pytestmark = pytest.mark.skipif(
    not peer_available("summarization-middleware"),
    reason="langchain v1 (extra 'bench') is not installed",
)

#: a task with the characters LangChain escapes in its summary prompt
TASK = "Fix the KeyError in tests/test_api.py::test_login when a < b & c > 0."
#: what LangChain 1.x writes when nothing of the dropped part fits its summarizer's input
TOO_LONG = "Previous conversation was too long to summarize."
COUNT = get_counter("o200k_base").count


def _peer(name: str, allowance: int = 2000, task: str = TASK) -> SummarizationPeer:
    peer = make_peer(name, allowance, 10, COUNT, ExtractiveSummarizer(), tasks=frozenset({task}))
    assert isinstance(peer, SummarizationPeer)
    peer.add(plain_message(Message.user(task), COUNT(task)))
    return peer


def _step(peer: SummarizationPeer, i: int, tokens: int) -> None:
    """One tool call whose result counts ``tokens``."""
    peer.add(plain_message(Message.assistant(f"step {i}", [ToolUse(f"c{i}", "cat", {})]), 5))
    peer.add(plain_message(Message.tool((ToolResult(f"c{i}", f"line {i} " * 20),)), tokens))


def _summaries(peer: SummarizationPeer, view: PeerView) -> list[str]:
    """The texts of the summaries ``view`` sends (the messages that are not the run's)."""
    originals = {id(m) for m in peer.log.plain}
    return [m.message.text for m in view.messages if id(m) not in originals]


def test_a_summary_written_without_its_model_does_not_stand_for_the_task() -> None:
    peer = _peer("summarization-middleware")
    _step(peer, 0, 5000)  # the dropped part's last 4,000 tokens hold no human message
    _step(peer, 1, 100)
    view = peer.view()
    assert view.compacted and not peer.calls  # no summarizer call was made
    (shown,) = _summaries(peer, view)
    assert shown.endswith(TOO_LONG) and not view.summary


def test_the_tuned_middleware_reads_everything_it_drops_and_keeps_the_task() -> None:
    peer = _peer("summarization-middleware-tuned")
    _step(peer, 0, 5000)
    _step(peer, 1, 100)
    view = peer.view()
    assert view.compacted and len(peer.calls) == 1 and peer.read[0] in peer.task_ids
    (shown,) = _summaries(peer, view)
    assert view.summary and not shown.endswith(TOO_LONG)


def test_a_summary_that_read_only_the_summary_before_it_stands_for_the_task() -> None:
    peer = _peer("summarization-middleware", allowance=4000)
    for i in range(8):
        _step(peer, i, 450)
    first = peer.view()
    assert first.summary and len(peer.calls) == 1 and set(peer.read) & peer.task_ids
    (first_id,) = peer.standing
    for i in range(8, 16):
        _step(peer, i, 450)
    second = peer.view()
    assert len(peer.calls) == 2
    # its model read the first summary, and no task message: the lineage carries the task
    assert first_id in peer.read and not set(peer.read) & peer.task_ids
    assert second.summary and len(peer.standing) == 2


def test_a_model_that_read_the_end_of_a_long_task_stands_for_it() -> None:
    task = "\n".join(f"Step {i} of the task: keep the public API stable." for i in range(40))
    peer = _peer("summarization-middleware", allowance=6000, task=task)
    _step(peer, 0, 1800)
    _step(peer, 1, 1800)
    _step(peer, 2, 1500)
    view = peer.view()
    # the trim kept the end of the task message (cut short, counted by its text) and more
    assert len(peer.calls) == 1 and peer.read[0] in peer.task_ids
    assert view.summary


def test_the_fake_model_summarizes_the_messages_not_langchains_instructions() -> None:
    peer = _peer("summarization-middleware-tuned")
    _step(peer, 0, 5000)
    _step(peer, 1, 100)
    view = peer.view()
    (shown,) = _summaries(peer, view)
    (call,) = peer.calls
    instruction = "nearing the total number of input tokens"  # LangChain's summary prompt
    assert instruction in call.prompt  # billed whole
    assert instruction not in shown
    assert "&lt;" in call.prompt and TASK in quoted(call.prompt) and TASK in shown


def test_the_summary_sent_at_a_compaction_is_the_one_just_written() -> None:
    peer = _peer("summarization-middleware-tuned", allowance=4000)
    sent: list[str] = []
    for i in range(40):
        _step(peer, i, 450)
        before = len(peer.calls)
        view = peer.view()
        if len(peer.calls) > before:
            state = next(m for m in peer.state if not str(m.id).startswith("m"))
            assert _summaries(peer, view) == [str(state.content)]
            sent.append(str(state.content))
    assert len(sent) >= 3 and len(set(sent)) == len(sent)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(10, 2000), min_size=1, max_size=30), st.booleans())
def test_a_summary_stands_for_the_task_only_through_what_a_model_read(
    sizes: list[int], tuned: bool
) -> None:
    peer = _peer("summarization-middleware-tuned" if tuned else "summarization-middleware")
    for i, tokens in enumerate(sizes):
        _step(peer, i, tokens)
        calls = len(peer.calls)
        view = peer.view()
        shown = _summaries(peer, view)
        state = [m for m in peer.state if not str(m.id).startswith("m")]
        # what is sent is the summary the middleware keeps, and only one
        assert shown == [str(m.content) for m in state]
        if any(text.endswith(TOO_LONG) for text in shown):
            assert not view.summary
        if view.summary and len(peer.calls) > calls:
            assert set(peer.read) & (peer.task_ids | peer.standing)
        if tuned and state:  # reading everything, the lineage never breaks
            assert view.summary


def test_a_replay_counts_the_middlewares_summaries_of_nothing_as_lost_tasks() -> None:
    out = replay(
        synthesize(60, 5, shape="bigtool"),
        load_blueprint(EXAMPLES / "coding-agent.yaml"),
        layouts=("summarization-middleware", "summarization-middleware-tuned"),
        window_tokens=32768,
    )
    default, tuned = (
        out.runs["summarization-middleware"],
        out.runs["summarization-middleware-tuned"],
    )
    assert default.lost_task_requests > 0
    assert tuned.lost_task_requests == 0 and tuned.compaction_calls > 0
