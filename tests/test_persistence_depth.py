"""The depth scans of state files measure the real nesting of JSON and msgpack values (strings
holding brackets do not count) without recursing."""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.persistence._statescan import max_json_depth, max_msgpack_depth

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(alphabet='[]{}"\\ax', max_size=6)
    | st.binary(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=300, deadline=None)
@given(values, st.integers(0, 12))
def test_property_the_scans_agree_with_the_nesting_of_the_value(value: Any, limit: int) -> None:
    expected = depth(value)
    text = msgspec.json.encode(value)
    packed = msgspec.msgpack.encode(value)
    for measured in (max_json_depth(text, limit), max_msgpack_depth(packed, limit)):
        if expected > limit:
            assert measured > limit
        else:
            assert measured <= limit
    assert max_msgpack_depth(packed, 10**6) == expected


def test_a_million_levels_are_measured_without_recursion() -> None:
    n = 1_000_000
    assert max_json_depth(b"[" * n + b"]" * n, 200) == 201
    assert max_msgpack_depth(b"\x91" * n + b"\xc0", 200) == 201
    assert max_json_depth(b'["' + b"[" * n + b'"]', 200) <= 200
