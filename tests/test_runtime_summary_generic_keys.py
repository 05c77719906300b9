"""A generic noun (``the result``, ``the output``) names no setting: two reports of what runs
gave never supersede each other in the summary's ``Values``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.runtime.extractive import ExtractiveSummarizer
from regio.runtime.salience import sort_entries
from regio.runtime.valuestatements import GENERIC_NOUNS, value_key
from regio.tokens import HeuristicCounter


@pytest.mark.parametrize(
    "sentence",
    ["The result is 5.", "The output is now 0.", "The answer is 42.", "The total is 3929."],
)
def test_a_generic_noun_alone_is_not_a_setting(sentence: str) -> None:
    assert value_key(sentence) is None


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("The test result is 5.", "test result"),
        ("The output format is now json-lines.", "output format"),
        ("Set the output to json.", "output"),
        ("Order ORD-7312 status is now cancelled.", None),  # a state, not a value
        ("The status of order ORD-7312 is pending-2.", "status of order ord-7312"),
    ],
)
def test_a_qualified_or_explicitly_set_generic_noun_is_still_a_key(
    sentence: str, key: str | None
) -> None:
    assert value_key(sentence) == key


def _user(i: int, text: str) -> Entry:
    return Entry(id=f"u{i}", blocks=(Text(text),), role="user")


def test_a_summarized_result_survives_a_later_run_s_result() -> None:
    previous = Entry(
        id="s0",
        blocks=(Text("Values:\n- The result is 5."),),
        role="user",
        meta={"summary": True},
    )
    later = _user(1, "I ran the other suite on the staging box. The result is 0.")
    summary = ExtractiveSummarizer(counter=HeuristicCounter(), max_summary_tokens=200)(
        [previous, later], "", None
    )
    assert "The result is 5." in summary


@given(
    noun=st.sampled_from(sorted(GENERIC_NOUNS)),
    first=st.integers(min_value=0, max_value=10**6),
    second=st.integers(min_value=0, max_value=10**6),
    now=st.booleans(),
)
def test_no_generic_noun_statement_supersedes_another(
    noun: str, first: int, second: int, now: bool
) -> None:
    older = f"The {noun} is {first}."
    newer = f"The {noun} is {'now ' if now else ''}{second}."
    sections = sort_entries([_user(0, older), _user(1, newer)]).sections
    values = sections["Values"]
    assert not values  # neither is a value: nothing to supersede
    assert value_key(older) is None and value_key(newer) is None
