"""A generic noun alone (``the result``, ``the output``) in the plain ``X is Y`` form is one
run's report: two of them are both kept in the summary's ``Values``, neither supersedes the
other; changed (``is now``) or set explicitly, the newest statement still wins."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers.extract import extract_items
from regio.summarizers.valuestatements import GENERIC_NOUNS, value_key
from regio.tokens import HeuristicCounter


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("The result is 5.", "result is 5"),
        ("The answer is 42.", "answer is 42"),
        ("The code is 4821.", "code is 4821"),
        ("The file is config.yaml.", "file is config.yaml"),
    ],
)
def test_a_generic_noun_alone_keys_the_report_by_its_value(sentence: str, key: str) -> None:
    assert value_key(sentence) == key


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("The test result is 5.", "test result"),
        ("The output format is now json-lines.", "output format"),
        ("The output is now yaml.", "output"),
        ("Set the output to json.", "output"),
        ("Order ORD-7312 status is now cancelled.", None),  # a state, not a value
        ("The status of order ORD-7312 is pending-2.", "status of order ord-7312"),
    ],
)
def test_a_qualified_changed_or_explicitly_set_generic_noun_is_a_key(
    sentence: str, key: str | None
) -> None:
    assert value_key(sentence) == key


def _user(i: int, text: str) -> Entry:
    return Entry(id=f"u{i}", blocks=(Text(text),), role="user")


def test_a_summarized_result_survives_a_later_run_s_result() -> None:
    previous = Entry(
        id="s0", blocks=(Text("Values:\n- The result is 5."),), role="user", meta={"summary": True}
    )
    later = _user(1, "I ran the other suite on the staging box. The result is 0.")
    summary = ExtractiveSummarizer(counter=HeuristicCounter(), max_summary_tokens=200)(
        [previous, later], "", None
    )
    assert "The result is 5." in summary
    assert "The result is 0." in summary


def test_a_change_of_a_generic_setting_still_supersedes_the_explicit_one() -> None:
    sections = extract_items(
        [_user(0, "Set the output to json."), _user(1, "The output is now yaml.")]
    )
    assert sections.sections["Values"] == ["The output is now yaml."]


@given(
    noun=st.sampled_from(sorted(GENERIC_NOUNS)),
    first=st.integers(min_value=100, max_value=10**6),
    second=st.integers(min_value=100, max_value=10**6),
)
def test_two_plain_reports_of_a_generic_noun_are_both_kept(
    noun: str, first: int, second: int
) -> None:
    older, newer = f"The {noun} is {first}.", f"The {noun} is {second}."
    values = extract_items([_user(0, older), _user(1, newer)]).sections["Values"]
    assert older in values and newer in values
