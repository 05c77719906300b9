"""Window changes are transactions: events are delivered after the commit, and a subscriber
that raises can neither interrupt a change nor undo it (it surfaces as SubscriberError)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, Text, ToolResult, ToolUse
from regio.errors import CompactionError, RegionFullError, SubscriberError
from regio.events import Event
from regio.regions import (
    CompactHistory,
    Compacting,
    Keyed,
    Refusal,
    SlidingWindow,
    Temporary,
    Window,
)
from regions_support import StubCounter


def _window() -> Window:
    return Window(
        regions=[
            Temporary(name="scratch", budget=100),
            Temporary(name="strict", budget=60, admission="reject"),
            Keyed(name="facts", budget=80, max_entries=3),
            Compacting(name="notes", budget=120, compact_at=0.8),
            CompactHistory(name="notes_history", budget=200, source="notes"),
            SlidingWindow(name="conversation", budget=400),
        ],
        max_tokens=1_000,
        counter=StubCounter(),
    )


class Boom(Exception):
    pass


def _held(w: Window) -> Any:
    """What the window holds (regions, queue, turn, call groups); entry ids are allocated from a
    counter that a refused write may advance (ids are never reused), so it is left out."""
    state = w.snapshot_state()
    return (state.regions, state.pending, state.turn, state.call_groups)


def test_a_raising_subscriber_leaves_the_write_committed_and_surfaces_after_it() -> None:
    w = _window()
    w.write("scratch", "old [60]")
    seen: list[tuple[str, list[str]]] = []

    def subscriber(event: Event) -> None:
        # delivered after the commit: the new entry is already in, the evicted one gone
        seen.append((event.kind, [e.text for e in w.region("scratch").entries]))
        if event.kind == "evicted":
            raise Boom("subscriber failed")

    w.events.subscribe(subscriber)
    with pytest.raises(SubscriberError) as info:
        w.write("scratch", "new [60]")
    assert [e.text for e in w.region("scratch").entries] == ["new [60]"]
    assert w.region("scratch").used_tokens == 60
    assert {kind for kind, _ in seen} >= {"evicted", "written"}
    assert all(texts == ["new [60]"] for _, texts in seen)
    assert isinstance(info.value.__cause__, Boom)
    assert [event.kind for event, _ in info.value.errors] == ["evicted"]


def test_a_refused_write_with_a_raising_subscriber_leaves_the_window_as_it_was() -> None:
    w = _window()
    w.write("strict", "kept [50]")
    before = _held(w)
    w.events.subscribe(lambda event: (_ for _ in ()).throw(Boom(event.kind)))
    with pytest.raises(SubscriberError):
        w.write("strict", "too much [20]")
    assert _held(w) == before
    with pytest.raises(RegionFullError) as info:
        w.write("strict", "too much [20]", strict=True)
    assert _held(w) == before
    assert any("while delivering its events" in note for note in info.value.__notes__)


def test_every_subscriber_receives_every_event_when_one_raises() -> None:
    w = _window()
    late: list[str] = []
    w.events.subscribe(lambda event: (_ for _ in ()).throw(Boom()))
    w.events.subscribe(lambda event: late.append(event.kind))
    with pytest.raises(SubscriberError) as info:
        w.write("scratch", "a [10]")
    assert late == [event.kind for event, _ in info.value.errors]
    assert "written" in late


def test_events_of_a_compaction_are_delivered_after_it_completed() -> None:
    w = _window()
    for i in range(4):
        w.write("notes", f"note{i} [25]")
    (pending,) = w.pending_compactions()
    states: list[tuple[int, int]] = []

    def subscriber(event: Event) -> None:
        states.append((len(w.region("notes").entries), len(w.region("notes_history").entries)))

    w.events.subscribe(subscriber)
    w.complete_compaction(pending.id, "summary [5]")
    after = (len(w.region("notes").entries), len(w.region("notes_history").entries))
    assert states and all(s == after for s in states)


# --- property: a raising subscriber never changes what the window holds ----------------------

_ops = st.lists(
    st.one_of(
        st.tuples(
            st.just("write"),
            st.sampled_from(["scratch", "strict", "facts", "notes"]),
            st.integers(1, 70),
            st.sampled_from(["a", "b", "c", "d"]),
        ),
        st.tuples(st.just("release"), st.sampled_from(["scratch", "facts"]), st.integers(1, 2)),
        st.tuples(st.just("clear"), st.sampled_from(["scratch", "notes"])),
        st.tuples(st.just("message"), st.integers(0, 3), st.integers(1, 40)),
        st.tuples(st.just("compact"), st.integers(1, 9)),
    ),
    max_size=25,
)


def _apply(w: Window, op: tuple[Any, ...]) -> Any:
    kind = op[0]
    if kind == "write":
        _, region, size, key = op
        return w.write(region, f"{kind} [{size}]", key=key if region == "facts" else None)
    if kind == "release":
        return w.release(op[1], oldest=op[2])
    if kind == "clear":
        return w.clear(op[1])
    if kind == "message":
        shape, size = op[1], op[2]
        if shape == 0:
            return w.add_message(Message("user", (Text(f"ask [{size}]"),)))
        if shape == 1:
            call = f"c{w.next_entry}"
            return w.add_message(Message.assistant("", (ToolUse(call, "read", {}),)))
        if shape == 2:
            calls = [c for c in w.call_groups]
            if calls:
                return w.add_message(Message.tool((ToolResult(calls[-1], f"out [{size}]"),)))
            return None
        return w.add_message(Message.assistant(f"answer [{size}]"))
    pending = w.pending_compactions()
    if pending:
        try:
            return w.complete_compaction(pending[0].id, f"summary [{op[1]}]")
        except CompactionError as exc:  # a refused summary changes nothing on either window
            return type(exc)
    return None


@settings(max_examples=60, deadline=None)
@given(ops=_ops, raise_on=st.sets(st.sampled_from(["written", "evicted", "refused", "replaced"])))
def test_a_raising_subscriber_never_changes_the_window(ops: list[Any], raise_on: set[str]) -> None:
    quiet, noisy = _window(), _window()
    raised: list[str] = []

    def subscriber(event: Event) -> None:
        if event.kind in raise_on:
            raised.append(event.kind)
            raise Boom(event.kind)

    noisy.events.subscribe(subscriber)
    for op in ops:
        expected = _apply(quiet, op)
        before = len(raised)
        try:
            got = _apply(noisy, op)
        except SubscriberError as exc:
            assert len(raised) > before
            assert [e.kind for e, _ in exc.errors] == raised[before:]
        else:
            assert len(raised) == before
            assert isinstance(got, Refusal) == isinstance(expected, Refusal)
        assert noisy.snapshot_state() == quiet.snapshot_state()
        assert [e.kind for e in noisy.events.history] == [e.kind for e in quiet.events.history]
