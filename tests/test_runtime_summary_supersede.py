"""The newest statement of a key wins in the summary, whichever section it lands in; an
entity's identifier is part of its key; a state (failing, done, ...) is never a value."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.summarizers.extract import extract_items
from regio.summarizers.valuestatements import value_key


def _say(i: int, text: str, role: str = "user") -> Entry:
    return Entry(id=f"m{i}", blocks=(Text(text),), role=role)


def _sections(*texts: str, role: str = "user") -> dict[str, list[str]]:
    return extract_items([_say(i, text, role) for i, text in enumerate(texts)]).sections


# -- a constraint on a key supersedes its value --------------------------------------------


@pytest.mark.parametrize(
    ("value", "constraint"),
    [
        ("The port is 8080.", "The port must be 9000."),
        ("The deploy target is stage-eu-2.", "The deploy target must be prod-eu-1."),
        ("Set the timeout to 30s.", "Make sure the timeout is 60s."),
        ("Set the timeout to 30s.", "The timeout should always be 60s."),
        ("Use npm for installs.", "Always use uv for installs."),
    ],
)
def test_a_constraint_on_a_key_drops_its_older_value(value: str, constraint: str) -> None:
    sections = _sections(value, constraint)
    assert sections["Constraints"] == [constraint]
    assert sections["Values"] == []


def test_a_users_later_value_supersedes_their_constraint_on_the_key() -> None:
    sections = _sections("The port must be 9000.", "Change the port to 9100.")
    assert sections["Values"] == ["Change the port to 9100."]
    assert sections["Constraints"] == []


def test_the_agent_cannot_lift_the_users_constraint_by_stating_a_value() -> None:
    entries = [_say(0, "The port must be 9000."), _say(1, "The port is now 8080.", "assistant")]
    sections = extract_items(entries).sections
    assert sections["Constraints"] == ["The port must be 9000."]


def test_a_required_state_is_a_constraint_but_fixes_no_value() -> None:
    sections = _sections("The deploy target is stage-eu-2.", "The tests must be passing.")
    assert sections["Constraints"] == ["The tests must be passing."]
    assert sections["Values"] == ["The deploy target is stage-eu-2."]


_KEYS = st.sampled_from(["port", "timeout", "deploy target", "log level", "region"])
_VALUES = st.from_regex(r"[a-z]{2,6}-[0-9]{1,4}", fullmatch=True)
_FORMS = {
    "value": ("Set the {k} to {v}.", "The {k} is now {v}.", "The {k} is {v}."),
    "constraint": (
        "The {k} must be {v}.",
        "Make sure the {k} is {v}.",
        "The {k} must always be {v}.",
    ),
}


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(_KEYS, _VALUES, st.sampled_from(["value", "constraint"]), st.integers(0, 2)),
        min_size=1,
        max_size=12,
    )
)
def test_the_users_newest_statement_of_each_key_is_the_only_one_kept(
    statements: list[tuple[str, str, str, int]],
) -> None:
    texts = [_FORMS[kind][form].format(k=k, v=v) for k, v, kind, form in statements]
    sections = _sections(*texts)
    latest: dict[str, tuple[str, str]] = {}
    for (key, _, kind, _), text in zip(statements, texts, strict=True):
        latest[key] = (kind, text)
    want_values = {text for kind, text in latest.values() if kind == "value"}
    want_constraints = {text for kind, text in latest.values() if kind == "constraint"}
    assert set(sections["Values"]) == want_values
    assert set(sections["Constraints"]) == want_constraints


# -- an entity's identifier is part of the key -----------------------------------------------


def test_two_entities_of_one_kind_are_two_values() -> None:
    first, second = "Reservation ABC123 is for May 3.", "Reservation XYZ789 is for May 9."
    assert value_key(first) != value_key(second)
    assert _sections(first, second)["Values"] == [first, second]
    update = "Reservation ABC123 is now for May 4."
    assert _sections(first, second, update)["Values"] == [second, update]


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("reservation ABC123 is for May 3", "reservation abc123"),
        ("Order ORD-7312 is now cancelled.", "order ord-7312"),
        ("The seat of booking PEP4E0 is now 12A.", "seat of booking pep4e0"),
        ("Set the owner of ticket TCK-5521 to dana.", "owner of ticket tck-5521"),
    ],
)
def test_an_entity_statement_keys_on_its_identifier(sentence: str, key: str) -> None:
    assert value_key(sentence) == key


@pytest.mark.parametrize(
    "sentence",
    [
        "Reservation ABC123 is cancelled.",  # plain 'is' of words: a description
        "Line 42 is the return statement.",
        "Order ORD-7312 is the one we talked about on the phone last week.",
        "value 8022 is 2116 or",  # a bare number is a quantity, not an identifier
        "The items 3929 are 5240.",
        "if tests 8242 is actual_0eea3550 actual",
        "TypeError 3807 int request field is 2595",  # the identifier is not the key's last word
    ],
)
def test_an_entity_description_is_not_a_value(sentence: str) -> None:
    assert value_key(sentence) is None


_IDS = st.from_regex(r"[A-Z]{3}[0-9]{3}", fullmatch=True)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_IDS, min_size=1, max_size=5, unique=True),
    st.lists(st.tuples(st.integers(0, 4), st.integers(1, 28)), min_size=1, max_size=14),
)
def test_the_latest_value_of_each_entity_wins(
    ids: list[str], updates: list[tuple[int, int]]
) -> None:
    texts = [
        f"Reservation {ids[i % len(ids)]} is {'now ' if n % 2 else ''}for May {day}."
        for n, (i, day) in enumerate(updates)
    ]
    latest = {ids[i % len(ids)]: text for (i, _), text in zip(updates, texts, strict=True)}
    assert sorted(_sections(*texts)["Values"]) == sorted(latest.values())


# -- a state is not a value -------------------------------------------------------------------

_STATES = ("failing", "broken", "passing", "fixed", "done", "running", "complete", "flaky")
_FAILURES = {"failing", "broken", "flaky"}


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["the test", "the build", "the deploy", "CI", "the parser tests"]),
    st.sampled_from(["is", "are"]),
    st.sampled_from(["", "now ", "still ", "now all "]),
    st.sampled_from(_STATES),
    st.sampled_from(["", " on main", " because of the lock timeout"]),
)
def test_a_state_is_never_a_value_and_a_failure_state_is_an_error(
    subject: str, verb: str, adverb: str, state: str, tail: str
) -> None:
    sentence = f"{subject.capitalize()} {verb} {adverb}{state}{tail}."
    assert value_key(sentence) is None
    sections = _sections("The deploy target is stage-eu-2.", sentence)
    assert sections["Values"] == ["The deploy target is stage-eu-2."]
    if state in _FAILURES:
        assert sections["Errors"] == [sentence]
    else:
        assert sentence not in sections["Errors"]


def test_the_test_is_now_failing_is_an_error_not_a_value() -> None:
    sections = _sections("The test is now failing.")
    assert sections["Values"] == [] and sections["Errors"] == ["The test is now failing."]


# -- the agent cannot override the user's constraint; a kind or property fixes no value ----


def _by(*texts: tuple[str, str]) -> dict[str, list[str]]:
    return extract_items([_say(i, text, role) for i, (role, text) in enumerate(texts)]).sections


def test_the_agents_constraint_does_not_override_the_users() -> None:
    user, agent = "The port must be 9000.", "The port must be 8080 for the tests."
    assert _by(("user", user), ("assistant", agent))["Constraints"] == [user, agent]
    assert _by(("assistant", agent), ("user", user))["Constraints"] == [user]


def test_the_agents_newer_constraint_replaces_its_own() -> None:
    first, second = "The port must be 8080.", "The port must be 8081."
    assert _by(("assistant", first), ("assistant", second))["Constraints"] == [second]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The value must be an integer.", "The value must be positive."),
        ("The value must be positive.", "The value must be an integer."),
        ("The port must be 9000.", "The port must be a number."),
        ("The timeout must be 30s.", "The timeout must be short."),
    ],
)
def test_a_constraint_without_a_concrete_value_supersedes_nothing(first: str, second: str) -> None:
    assert _by(("user", first), ("user", second))["Constraints"] == [first, second]


@settings(max_examples=80, deadline=None)
@given(
    _KEYS,
    _VALUES,
    st.lists(st.tuples(st.sampled_from(["assistant", "user"]), st.booleans(), _VALUES), max_size=6),
)
def test_the_users_concrete_constraint_survives_the_agents_and_any_generic_one(
    key: str, value: str, later: list[tuple[str, bool, str]]
) -> None:
    user = f"The {key} must be {value}."
    texts = [("user", user)]
    for n, (role, generic, other) in enumerate(later):
        if generic or role == "user":
            kind = ["an integer", "positive", "unique", "non-empty", "a string"][n % 5]
            texts.append((role, f"The {key} must be {kind}."))
        else:
            texts.append((role, f"The {key} must be {other}."))
    assert user in _by(*texts)["Constraints"]
