"""Which summaries fork the agent's last request (regio.compaction._forking.forked_request): a
compaction forks when the new entries it summarizes start in the last request (those appended
after it, the reply to it and what followed, ride in the instruction as a transcript); a merge
of summaries alone (a compact_history over budget) forks when every summary was, so a merge no
longer pays the transcript prompt for summaries the provider has cached."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from regio.agent.types import Completion
from regio.compaction._forking import ForkSummarizer, cheaper_than_transcript, forked_request
from regio.content import Entry, Message, Text
from regio.engine import Engine
from regio.policies import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow, Window
from runtime_stubs import StubCounter, words
from test_runtime_fork_summarizer import MODEL, RecordingProvider, _engine, _step


def _summarizer() -> ForkSummarizer:
    return ForkSummarizer(RecordingProvider(), context_window=200_000, max_summary_tokens=200)


def _after_a_request() -> Any:
    engine = _engine(_summarizer(), budget=60_000)
    engine.add_user("fix it")
    for i in range(3):
        _step(engine, i, size=40)
    engine.request()
    return engine.state


def _entry(number: int, summary: bool, tokens: int = 0) -> Entry:
    meta = {"summary": True} if summary else {}
    return Entry(
        id=f"e{number}", blocks=(Text(f"entry {number}"),), role="user", meta=meta, tokens=tokens
    )


@given(
    st.lists(st.integers(min_value=0, max_value=3000), min_size=1, max_size=6),
    st.sampled_from([0.1, 0.25, 1.0]),
    st.booleans(),
)
def test_a_fork_is_sent_exactly_when_it_costs_less_than_the_transcript_prompt(
    tokens: list[int], read: float, warm: bool
) -> None:
    state = _after_a_request()
    held = state.last_next_entry
    late = len(tokens) // 2  # the newest half appended after the last request
    numbers = [1 + k for k in range(len(tokens) - late)] + [held + k for k in range(late)]
    entries = [_entry(n, False, t) for n, t in zip(numbers, tokens, strict=True)]
    since = sum(tokens[len(tokens) - late :])
    plain = forked_request(_summarizer(), state, entries, "", None)
    assert plain is not None  # the range starts in the last request
    priced = forked_request(_summarizer(), state, entries, "", None, read=read, warm=warm)
    assert state.last_request is not None
    cached = state.last_request.tokens
    cheaper = warm and read * cached + since < sum(tokens)  # the fork's input vs the transcript's
    assert cheaper_than_transcript(state.last_request, entries, read, warm, since) == cheaper
    assert (priced is not None) == cheaper
    assert priced is None or priced.blocks == plain.blocks


@given(
    st.lists(
        st.tuples(st.integers(min_value=0, max_value=40), st.booleans()), min_size=1, max_size=8
    )
)
def test_a_summary_forks_exactly_when_the_last_request_holds_the_start_of_what_it_summarizes(
    picks: list[tuple[int, bool]],
) -> None:
    state = _after_a_request()
    held = state.last_next_entry
    entries = [_entry(n, s) for n, s in picks]
    fresh = [n < held for n, s in picks if not s]
    forked = forked_request(_summarizer(), state, entries, "", None)
    if not fresh:  # a merge: every summary held
        assert (forked is not None) == all(n < held for n, _ in picks)
    else:  # a compaction: held messages first, then only ones appended since
        first_late = fresh.index(False) if False in fresh else len(fresh)
        expected = first_late > 0 and not any(fresh[first_late:])
        assert (forked is not None) == expected


def test_a_range_with_a_held_message_after_a_newer_one_is_not_forked() -> None:
    state = _after_a_request()
    held = state.last_next_entry
    interleaved = [_entry(1, False), _entry(held, False), _entry(2, False)]
    assert forked_request(_summarizer(), state, interleaved, "", None) is None
    newer_only = [_entry(held, False), _entry(held + 1, False)]
    assert forked_request(_summarizer(), state, newer_only, "", None) is None
    assert forked_request(_summarizer(), state, [_entry(1, False), *newer_only], "", None)


def test_a_rolling_summary_fork_names_the_earlier_summary_it_replaces() -> None:
    state = _after_a_request()
    earlier = Entry(id="e1", blocks=(Text("Goal: the earlier summary."),), meta={"summary": True})
    forked = forked_request(_summarizer(), state, [earlier, _entry(2, False)], "", None)
    assert forked is not None
    text = getattr(forked.blocks[-1].block, "text", "")
    assert (
        "also replaces the earlier summary that starts \u201cGoal: the earlier summary.\u201d"
        in text
    )
    plain = forked_request(_summarizer(), state, [_entry(2, False)], "", None)
    assert plain is not None
    assert "earlier summary" not in getattr(plain.blocks[-1].block, "text", "")


def test_the_instruction_is_counted_with_the_given_counter() -> None:
    state = _after_a_request()
    held = state.last_next_entry
    entries = [_entry(1, False), _entry(held, False)]
    rough = forked_request(_summarizer(), state, entries, "", None)
    exact = forked_request(_summarizer(), state, entries, "", None, counter=StubCounter())
    assert rough is not None and exact is not None
    text = getattr(exact.blocks[-1].block, "text", "")
    assert exact.blocks[-1].tokens == StubCounter().count(text)
    assert rough.blocks[-1].tokens == -(-len(text) // 4)  # no counter: 4 characters a token


def test_a_merge_of_cached_summaries_forks_and_one_with_a_new_summary_does_not() -> None:
    state = _after_a_request()
    held = state.last_next_entry
    old = [_entry(1, True), _entry(2, True)]
    assert forked_request(_summarizer(), state, old, "", None) is not None
    assert forked_request(_summarizer(), state, [*old, _entry(held, True)], "", None) is None


@given(st.integers(min_value=1, max_value=4))
def test_a_fork_past_the_last_request_quotes_what_came_since_after_the_cached_request(
    late: int,
) -> None:
    state = _after_a_request()
    held = state.last_next_entry
    since = [_entry(held + k, False) for k in range(late)]
    forked = forked_request(_summarizer(), state, [_entry(1, False), *since], "", None)
    assert forked is not None and state.last_request is not None
    last = state.last_request.blocks
    assert [b.digest for b in forked.blocks[: len(last)]] == [b.digest for b in last]
    (instruction,) = forked.blocks[len(last) :]
    text = getattr(instruction.block, "text", "")
    for entry in since:
        assert f"[user {entry.id}]\n{entry.text}" in text
    assert "[user e1]" not in text  # what the request holds is not repeated


def test_a_forked_merge_extends_the_last_request_with_the_instruction() -> None:
    state = _after_a_request()
    forked = forked_request(_summarizer(), state, [_entry(1, True), _entry(2, True)], "", None)
    assert forked is not None and state.last_request is not None
    last = state.last_request.blocks
    assert [b.digest for b in forked.blocks[: len(last)]] == [b.digest for b in last]
    assert len(forked.blocks) > len(last)


class WordyProvider(RecordingProvider):
    """Answers with a summary of ``words`` words (a merge: a third of that)."""

    def __init__(self, words: int) -> None:
        super().__init__()
        self.words = words

    def complete(self, payload: dict[str, Any]) -> Completion:
        self.payloads.append(payload)
        n = self.words // 3 if _is_merge(payload) else self.words
        text = f"Goal: summary {len(self.payloads)}. " + words(n, f"s{len(self.payloads)}x")
        return Completion(message=Message.assistant(text))


def _is_merge(payload: dict[str, Any]) -> bool:
    """A merge of summaries: the fork's instruction, or a transcript of summaries alone."""
    if "Merge, for your own" in str(payload):
        return True
    messages = payload.get("messages", [])
    if len(messages) != 1:
        return False
    text = str(messages[0]["content"]).split("Transcript to summarize:", 1)[-1]
    labels = re.findall(r"^\[([a-z ]+) e\d+\]$", text, flags=re.M)
    return bool(labels) and set(labels) == {"previous summary"}


def _history_engine(provider: Any, history: int, clock: Any = None) -> Engine:
    window = Window(
        regions=[
            Pinned(name="system", budget=1500, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=history),
            SlidingWindow(
                name="conversation", budget=6000, eviction=Compact(trigger="80%", target="40%")
            ),
        ],
        max_tokens=6000 + history + 3000,
        counter=StubCounter(),
    )
    summarizer = ForkSummarizer(provider, context_window=200_000, max_summary_tokens=1000)
    kwargs: dict[str, Any] = {} if clock is None else {"clock": clock}
    engine = Engine(window, summarizer=summarizer, provider="anthropic", model=MODEL, **kwargs)
    engine.write("system", words(1100, "sys"))
    engine.add_user("fix it")
    return engine


def _merges(engine: Engine, provider: Any, steps: int = 300) -> list[bool]:
    """Drive ``engine``; for each merge the provider was sent, whether it was a fork (it
    starts with the agent's last request) or the transcript prompt."""
    last: list[dict[str, Any]] = []
    forked: list[bool] = []
    for i in range(steps):
        before = len(provider.payloads)
        sent = engine.request()[1]
        for p in provider.payloads[before:]:
            if _is_merge(p):
                forked.append(bool(last) and p.get("messages", [])[: len(last)] == last)
        last = sent["messages"]
        _step(engine, i)
    return forked


def test_a_merge_forks_when_the_fork_reads_less_than_the_merge_summarizes() -> None:
    # large summaries: a merge summarizes ~3,000 tokens, the fork reads ~11,000 at 0.1
    provider = WordyProvider(600)
    forked = _merges(_history_engine(provider, history=3000), provider)
    assert forked and all(forked)


def test_a_merge_of_small_summaries_is_sent_as_the_transcript_prompt() -> None:
    # small summaries: a merge summarizes ~300 tokens, less than 0.1 x the ~7,000-token fork
    provider = WordyProvider(60)
    forked = _merges(_history_engine(provider, history=250), provider)
    assert forked and not any(forked)


def test_an_expired_cache_sends_the_transcript_prompt_not_a_fork() -> None:
    now = [0.0]
    provider = RecordingProvider()
    engine = _history_engine(provider, history=3000, clock=lambda: now[0])
    for i in range(60):
        now[0] += 400.0  # past the 300 s TTL before every step
        engine.request()
        _step(engine, i)
    assert provider.payloads, "no compaction happened"
    now[0] += 400.0
    assert engine.session.fork_terms()["warm"] is False  # what each flush above saw
    assert all(len(p["messages"]) == 1 for p in provider.payloads)  # transcript prompts
