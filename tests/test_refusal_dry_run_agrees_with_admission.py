"""The dry run of an admission's refusal (``regio.engine._messages.refused``, what a live capture
asks before it files anything) agrees with the admission itself: it says "refused" exactly when
``Engine.add_message`` raises :class:`regio.errors.RegionFullError`, and it changes nothing
(no event, no transcript record, no entry)."""

from __future__ import annotations

from hypothesis import event, given, settings
from hypothesis import strategies as st

from regio.content import Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.engine._messages import refused
from regio.errors import RegionFullError
from regio.policies import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words


def _engine(relief: bool) -> Engine:
    return make_engine(
        [
            Pinned(name="system", budget=100),
            CompactHistory(name="history", budget=500, source="conversation"),
            SlidingWindow(name="conversation", budget=2_000, eviction=Compact()),
        ],
        max_tokens=4_000,
        summarizer=StubSummarizer(1),
        relief=ReliefPolicy(clear_at_least=0) if relief else None,
    )


#: Sizes (words) on both sides of the 2,000-token conversation and the 4,000-token window.
_SIZES = st.sampled_from([1, 50, 500, 1_500, 1_900, 2_100, 3_000, 4_000, 8_000])


@settings(max_examples=60, deadline=None)
@given(
    st.booleans(),
    st.lists(st.integers(1, 600), max_size=6),  # earlier turns' sizes (words)
    st.lists(_SIZES, min_size=1, max_size=3),  # the new results' sizes (words)
    st.sampled_from([0, 50, 1_900, 2_100, 4_000, 8_000]),  # a text beside them (0: none)
)
def test_the_dry_run_refuses_exactly_what_admission_refuses_and_changes_nothing(
    relief: bool, earlier: list[int], results: list[int], text: int
) -> None:
    engine = _engine(relief)
    for n, size in enumerate(earlier):
        engine.add_user(words(size, f"u{n}_"))
        engine.add_assistant("ok", [])
        engine.request()
    calls = tuple(ToolUse(f"c{k}", "read", {}) for k in range(len(results)))
    engine.add_message(Message("assistant", calls))
    blocks = [ToolResult(f"c{k}", words(size, f"r{k}_")) for k, size in enumerate(results)]
    message = Message("user", (*blocks, *((Text(words(text, "t")),) if text else ())))
    events, records = len(engine.events.history), len(engine.transcript_log)
    said = refused(engine.session, engine.state, message)
    assert (len(engine.events.history), len(engine.transcript_log)) == (events, records)
    try:
        engine.add_message(message)
    except RegionFullError:
        assert said
        assert len(engine.transcript_log) == records
        event("refused")
    else:
        assert not said
        event("admitted")
