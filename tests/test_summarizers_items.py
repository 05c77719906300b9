"""Durable items: statements kept whole, sorted by kind, keyed by subject, superseded by a later
statement of the same subject, rendered in the same bytes every time."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.summarizers.carryforward import check_reply, join_summary, split_reply
from regio.summarizers.extract import extract_items
from regio.summarizers.items import ItemSet, ParsedItem, parse_items, render_items
from regio.summarizers.kinds import classify
from regio.summarizers.statements import statements
from regio.summarizers.subjects import item_key, related

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "60"))


def _user(i: int, text: str) -> Entry:
    return Entry(id=f"u{i}", blocks=(Text(text),), role="user")


# ----- statements: a rule keeps its condition -----------------------------------------------
def test_a_rule_and_its_condition_are_one_statement() -> None:
    text = "HARD CONSTRAINT: Budget cap is $500 total. Never exceed without explicit approval."
    assert statements(text) == [text]
    assert statements("Budget cap is $500 total. Never exceed without explicit approval.") == [
        "Budget cap is $500 total. Never exceed without explicit approval."
    ]


def test_a_sentence_with_a_subject_or_a_value_of_its_own_stands_alone() -> None:
    assert statements("TODO: update CHANGELOG.md. The port is 8443.") == [
        "TODO: update CHANGELOG.md.",
        "The port is 8443.",
    ]
    assert statements("TODO: fix the login bug. TODO: fix the export bug.") == [
        "TODO: fix the login bug.",
        "TODO: fix the export bug.",
    ]


def test_a_statement_is_a_verbatim_slice_of_its_line() -> None:
    line = "  - Report all times in UTC.  It is  the house rule.  "
    for statement in statements(line):
        assert statement in line


# ----- kinds: instructions with or without a modal word --------------------------------------
@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("No external network calls from the sandbox.", "constraint"),
        ("use metric, not imperial", "constraint"),
        ("From now on, report all times in Pacific time.", "constraint"),
        ("Please make responses light and playful.", "constraint"),
        ("I would rather get playful, warm answers with metric units.", "preference"),
        ("The production database is Postgres 15 running in us-west-2.", "fact"),
        ("Codeword for CLAUDE.md: AMBER-FALCON-4821", "fact"),
        ("Jklm Nopqr now owns the pager this week.", "fact"),
        ("Our goal is to migrate auth to OAuth.", "goal"),
        ("TODO: update the README.", "todo"),
        ("We decided to go with Redis instead of Memcached.", "decision"),
        ("The test is now failing with KeyError: 'token'.", "error"),
    ],
)
def test_a_statement_is_sorted_by_what_it_says(text: str, kind: str) -> None:
    assert classify(text, "user", alone=True) == kind


@pytest.mark.parametrize(
    "text",
    [
        "What is the budget cap and the rule for exceeding it? -- recorded.",
        "Acknowledged. Continuing with the plan.",
        "call info the recent config parse",  # code-like words, not an instruction
        "True try 454 request was field",
    ],
)
def test_questions_acknowledgements_and_fragments_are_no_items(text: str) -> None:
    assert classify(text, "user") is None


def test_the_agent_cannot_instruct_without_a_strong_modal() -> None:
    assert classify("Keep the functions short.", "assistant") is None
    assert classify("Keep the functions short.", "user") == "constraint"
    assert classify("We must never push to main.", "assistant") == "constraint"


# ----- keys: one subject, however it is phrased ----------------------------------------------
@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("HARD CONSTRAINT: Project budget cap is $800 total.", "Keep project spend under $500."),
        ("FACT: Launch deadline is 2027-03-04.", "Update: the launch date moved to March 12."),
        ("FACT: The project codename is ABCDE-123.", "We are calling the project FGHIJ-456 now."),
        ("Report all times in UTC.", "From now on, report all times in Pacific time."),
        ("The deploy target is stage-eu-2.", "Update: the deploy target is now prod-eu-1."),
        ("Never disclose the vault code ab-12.", "Never disclose the new vault code cd-34."),
    ],
)
def test_two_statements_of_one_subject_share_a_key(old: str, new: str) -> None:
    old_kind, new_kind = classify(old, "user"), classify(new, "user")
    assert old_kind is not None and new_kind is not None
    assert item_key(old, old_kind) == item_key(new, new_kind)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("FACT: The production database is Postgres 15.", "FACT: The staging database is MySQL 8."),
        (
            "FACT: The primary deployment region is eu-1.",
            "FACT: The backup deployment region is us-2.",
        ),
        ("Run unit tests with pytest before pushing.", "Run integration tests before release."),
        (
            "Constraint: every reply must cite ticket T-1.",
            "Constraint: every reply must cite ticket T-2.",
        ),
        ("The port must be 9000.", "The port must be a number."),
    ],
)
def test_distinct_subjects_keep_distinct_keys(a: str, b: str) -> None:
    ka, kb = item_key(a, classify(a, "user") or "fact"), item_key(b, classify(b, "user") or "fact")
    assert ka != kb and not related(ka, kb)


def test_a_narrower_mention_of_a_subject_is_related_to_the_wider_one() -> None:
    assert related("budget:field trip", "budget:trip")
    assert not related("budget:", "budget:trip")  # an empty scope supersedes only itself


# ----- the set: the latest of each key, stable bytes -----------------------------------------
_SUBJECTS = st.sampled_from(["timeout", "port", "deploy target", "retries", "log level"])
_VALUES = st.from_regex(r"[a-z]{2}-[0-9]{1,3}", fullmatch=True)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.tuples(_SUBJECTS, _VALUES), min_size=1, max_size=16))
def test_a_later_item_with_the_same_key_replaces_the_earlier(
    updates: list[tuple[str, str]],
) -> None:
    items = ItemSet()
    for subject, value in updates:
        items.add("fact", f"Set the {subject} to {value}.")
    latest = {s: f"Set the {s} to {v}." for s, v in updates}
    kept = {i.key: i.text for i in items.items()}
    assert sorted(kept.values()) == sorted(latest.values())
    assert len(kept) == len(latest)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.tuples(_SUBJECTS, _VALUES, st.booleans()), min_size=1, max_size=12))
def test_the_same_session_renders_the_same_item_bytes(updates: list[tuple[str, str, bool]]) -> None:
    def session() -> str:
        entries = [
            _user(i, f"Set the {s} to {v}." if todo else f"The {s} must be {v}.")
            for i, (s, v, todo) in enumerate(updates)
        ]
        return extract_items(entries).items.render()

    first = session()
    assert first == session()
    parsed, _ = parse_items(first)
    again = ItemSet()
    for item in parsed:
        again.add(item.kind, item.text)
    assert again.render() == first  # a rendering read back renders the same bytes


def test_the_agent_does_not_lift_the_users_constraint() -> None:
    items = ItemSet()
    items.add("constraint", "The port must be 9000.", by_user=True)
    items.add("fact", "The port is now 8080.", by_user=False)
    assert {i.text for i in items.items()} == {"The port must be 9000.", "The port is now 8080."}
    items.add("constraint", "The port must be 7000.", by_user=True)  # the user settles it
    assert [i.text for i in items.items()] == ["The port must be 7000."]


def test_the_budget_drops_the_lowest_priority_items_first() -> None:
    items = ItemSet()
    items.add("error", "KeyError: 'token'")
    items.add("fact", "The deploy target is prod-eu-1.")
    items.add("constraint", "Never push to main.")
    dropped = items.fit(lambda kept: len(kept) <= 1)
    assert [i.kind for i in dropped] == ["error", "fact"]
    assert [i.text for i in items.items()] == ["Never push to main."]


def test_a_rendering_lists_constraints_first_under_their_headings() -> None:
    items = ItemSet()
    items.add("fact", "The deploy target is prod-eu-1.")
    items.add("constraint", "Never push to main.")
    assert render_items(items.items()) == (
        "Constraints:\n- Never push to main.\nValues:\n- The deploy target is prod-eu-1."
    )


# ----- the carry-forward schema --------------------------------------------------------------
def test_a_reply_in_the_schema_splits_into_items_and_prose() -> None:
    reply = join_summary(
        "Constraints:\n- [key: budget] Budget cap is $500. Never exceed it.", "We shipped v2."
    )
    items, prose, structured = split_reply(reply)
    assert structured and prose == "We shipped v2."
    assert items == [ParsedItem("constraint", "Budget cap is $500. Never exceed it.", "budget")]


def test_a_plain_reply_is_all_prose() -> None:
    assert split_reply("  The user asked for X.\n  Done.") == (
        [],
        "The user asked for X.\n  Done.",
        False,
    )


def test_a_reply_that_drops_an_extracted_constraint_falls_back() -> None:
    source = "Never push to main. The deploy target is prod-eu-1."
    extracted = extract_items([_user(0, source)]).items.items()
    check = check_reply([("fact", "The deploy target is prod-eu-1.", None)], extracted, source)
    assert check.fallback and check.dropped == ("Never push to main.",)
    invented = check_reply(
        [("constraint", "Never push to main.", None), ("fact", "The region is mars-1.", None)],
        extracted,
        source,
    )
    assert not invented.fallback and invented.rejected == ("The region is mars-1.",)
