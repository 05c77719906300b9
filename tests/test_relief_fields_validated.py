"""A relief policy's fields are validated by msgspec against their declared types, so every
``msgspec.Meta`` constraint holds (not only ``ge`` and ``min_length``), on the Python path
(``ToolRelief(...)`` / ``ReliefPolicy(...)``, :func:`check_fields`) and on the blueprint path
(:func:`regio.blueprint.reliefspec.check_relief`), with an error naming the field and the fix;
a value that meets them is accepted."""

from __future__ import annotations

import re
from typing import Annotated, Any

import attrs
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.blueprint.reliefspec import ReliefSpec, ReliefToolSpec, check_relief
from regio.policies.fieldrules import check_fields, field_problem
from regio.policies.relief import ReliefPolicy, ToolRelief


class _Bounded(msgspec.Struct):
    """A policy-like struct with the constraints the relief policy does not use yet."""

    ratio: Annotated[float, msgspec.Meta(gt=0, lt=1)] = 0.5
    count: Annotated[int, msgspec.Meta(le=10, multiple_of=2)] = 2
    label: Annotated[str, msgspec.Meta(max_length=5, pattern="^[a-z]+$")] | None = None


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("ratio", 0.0, "> 0"),
        ("ratio", 1.0, "< 1"),
        ("count", 12, "<= 10"),
        ("count", 3, "multiple of 2"),
        ("label", "abcdefg", "length <= 5"),
        ("label", "ABC", "matching regex"),
        ("count", "2", "expected `int`"),
    ],
)
def test_every_declared_constraint_is_enforced_naming_the_field(
    field: str, value: Any, said: str
) -> None:
    bad = msgspec.structs.replace(_Bounded(), **{field: value})
    with pytest.raises(ValueError, match=rf"^where\.{field} is .*{re.escape(said)}.*change it"):
        check_fields(bad, "where.")


@given(st.integers(-5, 15), st.floats(-1, 2, allow_nan=False), st.text(max_size=8))
def test_a_value_is_refused_exactly_when_msgspec_refuses_it(
    count: int, ratio: float, label: str
) -> None:
    value = _Bounded(ratio=ratio, count=count, label=label)
    ok = 0 < ratio < 1 and count <= 10 and count % 2 == 0
    ok = ok and len(label) <= 5 and re.search("^[a-z]+$", label) is not None
    if ok:
        check_fields(value, "")
    else:
        with pytest.raises(ValueError):
            check_fields(value, "")


@given(st.integers(-20, 40))
def test_tool_relief_keep_last_is_refused_below_zero_with_the_known_message(n: int) -> None:
    if n >= 0:
        assert ToolRelief(keep_last=n).keep_last == n
        return
    with pytest.raises(ValueError, match=rf"^keep_last must be >= 0, got {n}; raise it$"):
        ToolRelief(keep_last=n)


def test_a_policy_field_of_the_wrong_type_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match=r"^relief\.keep_last is '3': expected `int`"):
        ReliefPolicy(keep_last="3")  # type: ignore[arg-type]
    assert field_problem(ToolRelief, "route", "") == (
        "route must not be empty; name it or remove it"
    )


def test_the_blueprint_check_reports_a_broken_constraint_at_its_key() -> None:
    # a spec built without the converter's checks: check_relief validates it with msgspec
    tool = attrs.evolve(ReliefToolSpec(name="cat"), keep_last=-2)
    spec = attrs.evolve(ReliefSpec(enabled=True), clear_at_least="many", tools=(tool,))
    errors: list[tuple[tuple[Any, ...], str]] = []
    check_relief(spec, [], lambda path, message: errors.append((path, message)))
    assert (("relief", "tools", 0, "keep_last"), "keep_last must be >= 0, got -2; raise it") in (
        errors
    )
    assert any(
        path == ("relief", "clear_at_least") and "expected `int`" in message
        for path, message in errors
    )
