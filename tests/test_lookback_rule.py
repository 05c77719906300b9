"""The one lookback rule (regio.cache.walk) that the cache simulator and the layout's
breakpoint placement both use: how blocks are numbered into lookback positions, and which
positions a read from a breakpoint reaches (Anthropic: 20, the breakpoint being #1)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mutation_support import fuzz_settings
from regio.cache.rules import Lookback
from regio.cache.walk import (
    LOOKBACK_POSITIONS,
    lookback_positions,
    looks_back_to,
    probed_positions,
)
from regio.layout import LOOKBACK

_KINDS = st.lists(st.sampled_from(["text", "tool_use", "tool_result", None]), max_size=40)
_COLLAPSE = st.sets(st.sampled_from(["text", "tool_use", "tool_result"])).map(tuple)


def test_a_run_of_tool_results_is_one_position_and_twenty_are_reached() -> None:
    kinds = ["text", *["tool_result"] * 25, "text"]
    assert lookback_positions(kinds, ("tool_use", "tool_result")) == [1, *[2] * 25, 3]
    assert lookback_positions(kinds, ()) == list(range(1, 28))
    assert LOOKBACK == Lookback().positions == LOOKBACK_POSITIONS == 20
    assert list(probed_positions(25)) == list(range(24, 5, -1))  # 19 before the breakpoint
    assert looks_back_to(19) and not looks_back_to(20)


@given(_KINDS, _COLLAPSE, st.integers(0, 40))
@fuzz_settings(100)
def test_positions_counted_in_two_parts_are_the_positions_counted_at_once(
    kinds: list[str | None], collapse: tuple[str, ...], cut: int
) -> None:
    whole = lookback_positions(kinds, collapse)
    cut = min(cut, len(kinds))
    head = lookback_positions(kinds[:cut], collapse)
    p, prev = (head[-1], kinds[cut - 1]) if cut else (0, None)
    assert head + lookback_positions(kinds[cut:], collapse, p, prev) == whole
    assert all(b - a in (0, 1) for a, b in zip([0, *whole], whole, strict=False))


@given(st.integers(1, 200), st.integers(1, 60))
@fuzz_settings(100)
def test_a_read_probes_exactly_the_positions_its_lookback_reaches(p: int, window: int) -> None:
    reached = [q for q in range(p - 1, 0, -1) if looks_back_to(p - q, window)]
    assert list(probed_positions(p, window)) == reached
