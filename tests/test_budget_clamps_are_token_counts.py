"""A budget's ``min_tokens`` / ``max_tokens`` are token counts whatever form the budget itself
takes (tokens, a percent string, or a ``Budget`` already made, as a restored region passes it):
anything else is refused with ``RegionConfigError`` naming the clamp, never kept to fail later
with a ``TypeError`` when the budget is resolved. (A damaged stored session decoded a clamp
as ``{}`` and raised ``TypeError`` on the next message instead of a damaged-session error.)"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.errors import RegionConfigError
from regio.policies.budget import Budget

VALUES = st.sampled_from([2000, "12%", "1500", Budget.of(800), Budget.of("5%")])
NOT_COUNTS = (
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
    | st.lists(st.integers(), max_size=2)
    | st.text(max_size=4)
    | st.floats(allow_nan=True)
    | st.booleans()
    | st.integers(max_value=-1)
)


@given(value=VALUES, clamp=NOT_COUNTS, which=st.sampled_from(["min_tokens", "max_tokens"]))
def test_a_clamp_that_is_no_token_count_is_refused_naming_it(
    value: Any, clamp: Any, which: str
) -> None:
    with pytest.raises(RegionConfigError, match=which):
        Budget.of(value, **{which: clamp})


@given(
    value=VALUES,
    low=st.none() | st.integers(0, 10**6),
    high=st.none() | st.integers(0, 10**6),
    window=st.integers(1, 10**6),
)
def test_a_budget_with_token_count_clamps_resolves_to_a_count_within_them(
    value: Any, low: int | None, high: int | None, window: int
) -> None:
    tokens = Budget.of(value, min_tokens=low, max_tokens=high).resolve(window)
    assert isinstance(tokens, int)
    if low is not None:
        assert tokens >= low  # the floor wins over the cap
    elif high is not None:
        assert tokens <= high
