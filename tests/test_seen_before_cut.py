"""Every tool result reaches the model at least once (whole or trimmed) before a clearing or a
summary covers it (issue 29; ``regio.compaction._cuts``, "Seen before cut"): in a tight window a
result used to be summarized at the very next turn boundary, before any request carried it."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import Message, ToolResult, ToolUse
from regio.policies.eviction import Compact
from regio.policies.relief import ReliefPolicy
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "40"))

#: A turn: (a user message first, [result sizes], the results in one message, request after).
TURN = st.tuples(
    st.booleans(),
    st.lists(st.integers(min_value=20, max_value=4000), min_size=1, max_size=3),
    st.booleans(),
    st.integers(min_value=0, max_value=4).map(lambda n: n > 0),  # mostly a request after
)


def played(examples: int) -> Any:
    """The hypothesis settings of a property that plays :data:`TURN` lists (:func:`play`):
    ``examples`` examples, no deadline (a session of turns and requests), large draws allowed
    (tests/test_seen_before_cut_across_save.py plays them with saves between)."""
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def _engine(window: int, relief: bool) -> Any:
    policy = ReliefPolicy(keep_last=0, clear_at_least=50, trim=False) if relief else None
    return make_engine(
        [
            Pinned(name="system", budget=300, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600),
            SlidingWindow(name="conversation", budget="40%", eviction=Compact()),
        ],
        max_tokens=window,
        summarizer=StubSummarizer(size=30),
        relief=policy,
    )


def _covered(engine: Any, log: list[tuple[str, frozenset[str]]], results: dict[str, str]) -> None:
    """Log, in event order, every call id a clearing or a summary covers."""

    def on_event(event: Any) -> None:
        tag = type(event).__struct_config__.tag
        if tag == "relief_applied" and event.stage in ("clear", "dedupe"):
            log.append(("cover", frozenset(event.call_ids)))
        elif tag == "compaction_finished":
            ids = frozenset(results[e] for e in event.replaced_ids if e in results)
            log.append(("cover", ids))

    engine.subscribe(on_event)


def _sent(request: Any) -> frozenset[str]:
    return frozenset(b.block.tool_use_id for b in request.blocks if isinstance(b.block, ToolResult))


#: Called after a turn's results, before its request: ``(engine, turn number) -> engine`` (the
#: one to go on with; tests/test_seen_before_cut_across_save.py saves and loads it there).
Between = Callable[[Any, int], Any]


def play(
    engine: Any, turns: list[tuple[bool, list[int], bool, bool]], between: Between | None = None
) -> list[tuple[str, frozenset[str]]]:
    """Play ``turns`` (:data:`TURN`) on ``engine``: the log, in event order, of the call ids
    each request carried and each clearing or summary covered."""
    log: list[tuple[str, frozenset[str]]] = []
    results: dict[str, str] = {}  # entry id -> the call id whose result it holds
    _covered(engine, log, results)
    engine.add_user("start")
    engine.request()  # the calls below answer the model's responses to requests
    for n, (user, sizes, together, then_request) in enumerate(turns):
        if user:
            engine.add_user(words(30, f"u{n}x"))
        calls = [ToolUse(f"c{n}_{k}", "bash", {"k": k}) for k in range(len(sizes))]
        engine.add_assistant(f"step {n}", calls)
        batches = [calls] if together else [[c] for c in calls]
        for batch in batches:
            message = Message.tool(
                [ToolResult(c.id, words(sizes[calls.index(c)], f"{c.id}r")) for c in batch]
            )
            entry = engine.add_message(message)
            for c in batch:
                results[entry.id] = c.id
        if between is not None:
            moved = between(engine, n)
            if moved is not engine:
                engine = moved
                _covered(engine, log, results)
        if then_request:
            request, _ = engine.request()
            log.append(("request", _sent(request)))
    return log


def uncarried(log: list[tuple[str, frozenset[str]]]) -> list[str]:
    """The call ids of ``log`` (:func:`play`) a clearing or summary covered before any request
    carried them, in order."""
    seen: set[str] = set()
    out: list[str] = []
    for kind, ids in log:
        if kind == "request":
            seen |= ids
        else:
            out.extend(sorted(ids - seen))
    return out


@played(EXAMPLES)
@given(
    turns=st.lists(TURN, min_size=1, max_size=25),
    window=st.sampled_from([3000, 6000, 12000]),
    relief=st.booleans(),
)
def test_every_tool_result_is_in_a_request_before_it_is_cleared_or_summarized(
    turns: list[tuple[bool, list[int], bool, bool]], window: int, relief: bool
) -> None:
    assert uncarried(play(_engine(window, relief), turns)) == []
