"""FC-33 history windows by turns and by tool calls (``sliding_window`` options ``max_turns`` and
``max_tool_calls``), over the deterministic generator: every window starts on a unit boundary,
turn windows start on a user message, the current turn is always kept in full, W and L hold."""

from __future__ import annotations

import random

import msgspec
import pytest

from regio.content import Entry, ToolUse
from regio.errors import RegionConfigError
from regio.policies import analyze, is_user_turn_start
from regio.regions import SlidingWindow, Window, WindowState, WriteResult
from regions_support import StubCounter, assert_well_formed, check_units, generated_history

MSGS = generated_history(random.Random(33), 36)


def _entries() -> list[Entry]:
    w = Window(
        regions=[SlidingWindow(name="conv", budget=10**6)], max_tokens=10**7, counter=StubCounter()
    )
    for m in MSGS:
        assert isinstance(w.add_message(m), WriteResult)
    return list(w.region("conv").entries)


ENTRIES = _entries()


def _turn_start(prefix: list[Entry]) -> int:
    return max(i for i, e in enumerate(prefix) if is_user_turn_start(e))


def _calls(entries: list[Entry]) -> int:
    return sum(1 for e in entries for b in e.blocks if isinstance(b, ToolUse))


def _trimmed(prefix: list[Entry], **caps: int) -> list[Entry]:
    region = SlidingWindow(name="c", budget=10**6)
    region.load_state(prefix, 0, {})
    region.trim(**caps)
    return list(region.entries)


def _check_window(prefix: list[Entry], kept: list[Entry]) -> int:
    """Shared FC-33 checks; returns where the window starts."""
    start = len(prefix) - len(kept)
    assert kept == prefix[start:]  # a suffix: nothing removed from the middle
    info = analyze(prefix)
    assert info.safe[start]  # a unit boundary
    assert start <= _turn_start(prefix)  # the current turn is kept in full
    check_units(kept)
    assert_well_formed([e.message for e in kept], [e.message for e in prefix])
    return start


def test_fc_33_the_generator_builds_at_least_120_messages_of_four_turn_shapes():
    assert len(MSGS) >= 120
    assert sum(1 for e in ENTRIES if is_user_turn_start(e)) == 36


@pytest.mark.parametrize("turns", range(1, 31))
def test_fc_33_turn_windows_start_on_a_user_message_and_keep_the_last_n_earlier_turns(turns):
    for length in range(1, len(ENTRIES) + 1, 3):
        prefix = ENTRIES[:length]
        kept = _trimmed(prefix, max_turns=turns)
        start = _check_window(prefix, kept)
        assert is_user_turn_start(prefix[start])  # turn windows start on a user message
        earlier = sum(1 for e in prefix[: _turn_start(prefix)] if is_user_turn_start(e))
        kept_earlier = sum(1 for e in kept if is_user_turn_start(e)) - 1
        assert kept_earlier == min(turns, earlier)


@pytest.mark.parametrize("calls", range(0, 11))
def test_fc_33_tool_call_caps_keep_at_most_k_calls_and_drop_the_oldest_with_their_results(calls):
    for length in range(1, len(ENTRIES) + 1, 2):
        prefix = ENTRIES[:length]
        kept = _trimmed(prefix, max_tool_calls=calls)
        start = _check_window(prefix, kept)
        current = _turn_start(prefix)
        assert _calls(prefix[start:current]) <= calls
        # the longest such window: one more unit back would pass the cap
        info = analyze(prefix)
        earlier_cuts = [k for k in range(start) if info.safe[k]]
        if earlier_cuts:
            assert _calls(prefix[earlier_cuts[-1] : current]) > calls


@pytest.mark.parametrize(("turns", "calls"), [(1, None), (3, None), (None, 0), (None, 4), (2, 2)])
def test_fc_33_windows_hold_on_every_write_of_a_live_conversation(turns, calls):
    w = Window(
        regions=[SlidingWindow(name="conv", budget=10**6, max_turns=turns, max_tool_calls=calls)],
        max_tokens=10**7,
        counter=StubCounter(),
    )
    conv = w.region("conv")
    seen: list[Entry] = []
    for m in MSGS:
        assert isinstance(w.add_message(m), WriteResult)
        seen.append(conv.entries[-1])
        start = _check_window(seen, list(conv.entries))
        current = _turn_start(seen)
        if turns is not None:
            assert sum(1 for e in seen[start:current] if is_user_turn_start(e)) <= turns
            assert is_user_turn_start(seen[start])
        if calls is not None:
            assert _calls(seen[start:current]) <= calls


def test_fc_33_window_options_are_exposed_validated_and_survive_a_state_round_trip():
    region = SlidingWindow(name="conv", budget=1000, max_turns=4, max_tool_calls=6)
    options = region.options()
    assert options["max_turns"] == 4 and options["max_tool_calls"] == 6
    w = Window(regions=[region], max_tokens=2000, counter=StubCounter())
    raw = msgspec.json.encode(w.snapshot_state())
    again = Window.from_state(msgspec.json.decode(raw, type=WindowState), counter=StubCounter())
    restored = again.region("conv")
    assert isinstance(restored, SlidingWindow)
    assert (restored.max_turns, restored.max_tool_calls) == (4, 6)
    for bad in ({"max_turns": -1}, {"max_tool_calls": -2}, {"max_turns": 1.5}):
        with pytest.raises(RegionConfigError, match=next(iter(bad))):
            SlidingWindow(name="conv", budget=10, **bad)


def test_fc_33_a_zero_turn_window_keeps_only_the_current_turn():
    prefix = ENTRIES[:40]
    kept = _trimmed(prefix, max_turns=0)
    assert kept == prefix[_turn_start(prefix) :]
