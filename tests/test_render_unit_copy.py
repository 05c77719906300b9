"""A rendered unit the render log keeps is copied into each payload with fresh containers at
every depth (the payload never shares a dict or list with the log), by a copy function chosen
once per unit: per block ``dict.copy``, walking only the values that are containers."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.layout.render.common import copier

_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=5))
_value = st.recursive(
    _leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
_unit = st.one_of(
    st.lists(st.dictionaries(st.text(max_size=4), _value, max_size=4), max_size=4), _value
)


def _containers(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(c for v in value.values() for c in _containers(v))]
    if isinstance(value, list):
        return [value, *(c for v in value for c in _containers(v))]
    return []


@settings(max_examples=60, deadline=None)
@given(unit=_unit)
def test_property_a_copied_unit_equals_it_and_shares_no_container_with_it(unit: Any) -> None:
    copy = copier(unit)
    for _ in range(2):  # the function is kept and used again for the same unit
        out = copy(unit)
        assert out == unit
        kept = {id(c) for c in _containers(unit)}
        assert not kept & {id(c) for c in _containers(out)}


def test_a_tool_use_block_gets_a_fresh_input_dict() -> None:
    unit = [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": ["f.py"]}},
    ]
    out = copier(unit)(unit)
    out[1]["input"]["path"].append("g.py")
    assert unit[1]["input"] == {"path": ["f.py"]}
