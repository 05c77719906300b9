"""A to-do that a later sentence completes leaves the summary's open items; nothing else does."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers.extract import extract_items


def _say(i: int, text: str, role: str = "user") -> Entry:
    return Entry(id=f"m{i}", blocks=(Text(text),), role=role)


def _summary(open_items: list[str]) -> Entry:
    text = "Open items:\n" + "\n".join(f"- {item}" for item in open_items)
    return Entry(id="s", blocks=(Text(text),), tokens=40, meta={"summary": True})


def _open(*texts: tuple[str, str]) -> list[str]:
    entries = [_say(i, text, role) for i, (role, text) in enumerate(texts)]
    return extract_items(entries).sections["Open items"]


@pytest.mark.parametrize(
    ("todo", "done"),
    [
        ("TODO: update CHANGELOG.md before the release.", "Done: update CHANGELOG.md."),
        ("- [ ] document the new flag", "- [x] document the new flag"),
        ("We still need to migrate the billing tables.", "Finished migrating the billing tables."),
        ("We still need to migrate the billing tables.", "The billing tables migration is done."),
        ("Next: wire the retry into the client.", "Wiring the retry into the client is complete."),
        ("TODO-12: migrate the billing tables.", "Closed TODO-12."),
        ("TODO: fix the flaky retry test in test_client.py.", "We fixed the flaky retry test."),
        ("Remember to bump the version in pyproject.toml.", "I've bumped the version."),
        ("TODO: update the README.", "Updated the README."),
        ("Follow-ups: rotate the staging keys (#42).", "Resolved #42."),
    ],
)
def test_a_later_completion_drops_the_open_item(todo: str, done: str) -> None:
    assert _open(("user", todo), ("assistant", done)) == []
    assert _open(("user", todo), ("user", done)) == []


@pytest.mark.parametrize(
    "unrelated",
    [
        "Done.",
        "Fixed the CSV export bug.",
        "The login bug isn't fixed yet.",
        "The login bug is not fixed.",
        "Once the login bug is fixed, deploy to staging.",
        "Is the login bug fixed?",
        "Make sure the login bug is fixed.",
        "The login bug is almost fixed.",
        "Closed TODO-13.",
        "I checked the login page.",
    ],
)
def test_an_unrelated_or_unfinished_done_keeps_the_open_item(unrelated: str) -> None:
    todo = "TODO-12: fix the login bug on the sign-in page."
    assert _open(("user", todo), ("assistant", unrelated)) == [todo]


@pytest.mark.parametrize(
    "line",
    [
        "FAILED tests/test_api.py::test_login - AssertionError: 401",
        "Failed to connect to db-07.internal: connection refused.",
    ],
)
def test_a_pasted_failure_is_an_error_not_a_completion(line: str) -> None:
    todo = "TODO: fix the login test in tests/test_api.py."
    entries = [_say(0, todo), _say(1, line, "assistant")]
    sections = extract_items(entries).sections
    assert sections["Open items"] == [todo] and sections["Errors"] == [line]


def test_a_wish_to_do_the_item_does_not_complete_it() -> None:
    todo = "TODO: update the README."
    for line in ("I need to update the README.", "I wanted to update the README."):
        assert _open(("user", todo), ("user", line)) == [todo]


def test_a_completion_matching_two_items_equally_closes_neither() -> None:
    todos = ("TODO: fix the login bug.", "TODO: fix the export bug.")
    assert _open(("user", " ".join(todos)), ("assistant", "Fixed the bug.")) == list(todos)
    left = _open(("user", " ".join(todos)), ("assistant", "Fixed the login bug."))
    assert left == [todos[1]]


def test_an_item_of_a_previous_summary_is_dropped_by_a_later_completion() -> None:
    items = ["TODO: update CHANGELOG.md before the release.", "TODO-7: rotate the staging keys."]
    entries = [_summary(items), _say(1, "Closed TODO-7."), _say(2, "Done: update CHANGELOG.md.")]
    assert extract_items(entries).sections["Open items"] == []
    summary = ExtractiveSummarizer()(entries, "", None)
    assert "Open items:" not in summary
    assert not any(item in summary for item in items)


_VERBS = ("update", "migrate", "rotate", "document", "refactor", "review", "bump", "deploy")
_NOUNS = (
    "billing", "tables", "staging", "keys", "readme", "changelog", "parser", "client", "cache",
    "schema", "router", "ledger", "invoice", "webhook", "scheduler", "exporter", "metrics",
    "dashboard", "alerts", "sidebar", "banner", "queue", "worker", "mailer", "importer",
    "loader", "gateway", "catalog", "sitemap", "tracker", "uploader", "checkout",
)  # fmt: skip
_PHRASINGS = (
    "Done: {verb} the {a} {b}.",
    "- [x] {verb} the {a} {b}",
    "We finished {verb}ing the {a} {b}.",
    "The {a} {b} are done.",
    "{Verb}d the {a} {b}.",
    "I have completed the {a} {b}.",
)


def _ing(verb: str) -> str:
    return verb[:-1] if verb.endswith("e") else verb


@st.composite
def _sessions(draw: st.DrawFn) -> tuple[list[str], list[tuple[int, str]], set[int]]:
    """Open items of disjoint words, and later lines: completions of some of them (by text or
    by identifier) mixed with unrelated ``done`` lines."""
    count = draw(st.integers(1, 6))
    nouns = draw(st.permutations(_NOUNS))
    todos = []
    for i in range(count):
        verb = draw(st.sampled_from(_VERBS))
        a, b = nouns[2 * i], nouns[2 * i + 1]
        label = f"TODO-{i + 1}:" if draw(st.booleans()) else "TODO:"
        todos.append((label, verb, a, b))
    done = draw(st.sets(st.integers(0, count - 1)))
    spare = nouns[2 * count :]
    lines: list[tuple[int, str]] = []
    for i in sorted(done):
        label, verb, a, b = todos[i]
        if label != "TODO:" and draw(st.booleans()):
            lines.append((i, f"Closed {label[:-1]}."))
            continue
        phrasing = draw(st.sampled_from(_PHRASINGS))
        if "{Verb}d" in phrasing:
            phrasing = phrasing.replace("{Verb}d", _ing(verb).capitalize() + "ed")
        lines.append((i, phrasing.format(verb=_ing(verb) if "ing" in phrasing else verb, a=a, b=b)))
    for _ in range(draw(st.integers(0, 3))):
        a, b = draw(st.sampled_from(spare)), draw(st.sampled_from(spare))
        lines.append((-1, draw(st.sampled_from(_PHRASINGS[:2])).format(verb="update", a=a, b=b)))
    order = draw(st.permutations(lines))
    items = [f"{label} {verb} the {a} {b}." for label, verb, a, b in todos]
    return items, list(order), done


@settings(max_examples=80, deadline=None)
@given(_sessions(), st.booleans())
def test_exactly_the_completed_items_leave_the_open_items(
    session: tuple[list[str], list[tuple[int, str]], set[int]], from_summary: bool
) -> None:
    items, lines, done = session
    head = [_summary(items)] if from_summary else [_say(0, " ".join(items))]
    later = [
        _say(n + 1, text, "assistant" if n % 2 else "user") for n, (_, text) in enumerate(lines)
    ]
    kept = extract_items([*head, *later]).sections["Open items"]
    assert kept == [item for i, item in enumerate(items) if i not in done]


def _errors(*texts: tuple[str, str]) -> list[str]:
    entries = [_say(i, text, role) for i, (role, text) in enumerate(texts)]
    return extract_items(entries).sections["Errors"]


@pytest.mark.parametrize(
    "line",
    [
        "Fixed the TypeError, but now test_dump fails with AssertionError: 344 != 345.",
        "Resolved the merge conflict; pytest now reports ImportError: cannot import name 'utc'.",
        "The migration is done, but it raised IntegrityError on the orders table.",
        "I've implemented the change and the build failed with exit code 2.",
    ],
)
def test_a_completion_that_also_reports_an_error_is_kept_as_an_error(line: str) -> None:
    assert _errors(("assistant", line)) == [line]


@pytest.mark.parametrize(
    "line", ["We fixed the TypeError.", "Fixed the TypeError and the ValueError in the parser."]
)
def test_a_completion_naming_the_error_it_fixed_reports_no_error(line: str) -> None:
    assert _errors(("assistant", line)) == []


_DONE_CLAUSES = (
    "Fixed the TypeError",
    "I've implemented the change",
    "Resolved the merge conflict",
    "The migration is done",
    "We finished the refactor",
)
_ERROR_CLAUSES = (
    "now test_dump fails with AssertionError: 344 != 345",
    "the build failed with exit code 2",
    "it raised IntegrityError on the orders table",
    "pytest reports ImportError: no module named 'utc'",
    "the login test is now failing",
)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(_DONE_CLAUSES),
    st.sampled_from((", but ", " and ", "; ", ", though ", ", however ")),
    st.sampled_from(_ERROR_CLAUSES),
    st.sampled_from(("user", "assistant")),
)
def test_a_sentence_reporting_an_error_stays_an_error_whatever_it_completes(
    done: str, joint: str, error: str, role: str
) -> None:
    line = f"{done}{joint}{error}."
    assert _errors(("user", "TODO: fix the TypeError."), (role, line)) == [line]


@pytest.mark.parametrize(
    ("todo", "later"),
    [
        ("TODO: fix TCK-5521", "Reopened TCK-5521."),
        ("TODO: fix TCK-5521", "Created TCK-5521 to track it."),
        ("TODO: fix TCK-5521", "I looked at TCK-5521."),
        ("TODO: fix TCK-5521", "Closed TCK-5522 as a duplicate of TCK-5521."),
        ("TODO: fix TCK-5521", "Fixed TCK-5522, which is related to TCK-5521."),
        ("TODO: review PR #42", "Opened #42 in the browser."),
        ("TODO: cancel reservation NQNU5R", "The reservation NQNU5R has been rebooked."),
    ],
)
def test_an_identifier_closes_its_item_only_as_the_object_of_a_completion(
    todo: str, later: str
) -> None:
    assert _open(("user", todo), ("assistant", later)) == [todo]


@pytest.mark.parametrize(
    ("todo", "later"),
    [
        (
            "TODO: cancel reservation NQNU5R",
            "The reservation NQNU5R has been successfully canceled.",
        ),
        (
            "Remember to cancel reservation GV1N64.",
            "Your reservation with ID GV1N64 has been successfully cancelled",
        ),
        ("TODO: fix TCK-5521", "TCK-5521 is resolved."),
        ("TODO: fix TCK-5521", "Fixed TCK-5521, which was related to TCK-5522."),
    ],
)
def test_a_completion_of_the_named_item_closes_it(todo: str, later: str) -> None:
    assert _open(("user", todo), ("assistant", later)) == []


@pytest.mark.parametrize(
    ("todo", "later"),
    [
        ("TODO: add sha-256 checksums to the release", "Added sha-256 to the hash list."),
        ("TODO: fix the utf-8 decoding in the parser", "Fixed utf-8 output in the logger."),
        ("TODO: port the client to gpt-4", "Ported gpt-4 to the sample."),
        ("TODO: migrate the CI image to Python-3", "Migrated the docs to Python-3."),
    ],
)
def test_a_version_or_encoding_name_is_not_an_item_identifier(todo: str, later: str) -> None:
    assert _open(("user", todo), ("assistant", later)) == [todo]


_TICKETS = st.builds(
    "{}-{}".format, st.sampled_from(("TCK", "BUG", "OPS", "JIRA")), st.integers(1, 99999)
)
_MENTIONS = (
    "Reopened {id}.",
    "Created {id} to track it.",
    "I looked at {id}.",
    "Closed {other} as a duplicate of {id}.",
    "Fixed {other}, which is related to {id}.",
    "Resolved {other} after {id} was reported.",
    "Merged {other} into {id}.",
)


@settings(max_examples=80, deadline=None)
@given(_TICKETS, _TICKETS, st.sampled_from(_MENTIONS), st.sampled_from(("fix", "close")))
def test_a_mere_mention_of_an_identifier_keeps_its_item(
    ident: str, other: str, mention: str, verb: str
) -> None:
    assume(ident != other)
    todo = f"TODO: {verb} {ident}"
    later = mention.format(id=ident, other=other)
    assert _open(("user", todo), ("assistant", later)) == [todo]
    assert _open(("user", todo), ("assistant", f"Closed {ident}.")) == []


@pytest.mark.parametrize(
    ("todo", "partial", "full"),
    [
        (
            "TODO: update the README and the CHANGELOG.",
            "Updated the README.",
            "Updated the README and the CHANGELOG.",
        ),
        (
            "TODO: fix the login bug and the logout bug.",
            "Fixed the login bug.",
            "Fixed the login bug and the logout bug.",
        ),
        (
            "Next steps: migrate the users table, then the orders table.",
            "Migrated the users table.",
            "Migrated the users table and the orders table.",
        ),
        (
            "Remember to rebook flight HAT001 and refund the old ticket.",
            "I have rebooked flight HAT001.",
            "I have rebooked flight HAT001 and refunded the old ticket.",
        ),
    ],
)
def test_a_to_do_of_several_tasks_closes_only_when_every_task_is_done(
    todo: str, partial: str, full: str
) -> None:
    assert _open(("user", todo), ("assistant", partial)) == [todo]
    assert _open(("user", todo), ("assistant", full)) == []


def test_an_indefinite_completion_closes_only_an_item_it_names_in_full() -> None:
    todo = "TODO: add a test for the parser."
    assert _open(("user", todo), ("assistant", "I added a test.")) == [todo]
    assert _open(("user", todo), ("assistant", "I added a test for the parser.")) == []
    assert _open(("user", "TODO: add a test."), ("assistant", "I added a test.")) == []


@st.composite
def _compound(draw: st.DrawFn) -> tuple[str, list[str], list[bool]]:
    """A to-do of 2-4 tasks on distinct nouns, and which of its tasks a completion names."""
    verb = draw(st.sampled_from(_VERBS))
    nouns = draw(st.permutations(_NOUNS))[: draw(st.integers(2, 4))]
    joints = [draw(st.sampled_from((" and ", ", then ", ", ", "; "))) for _ in nouns[1:]]
    tasks = [f"the {noun} module" for noun in nouns]
    todo = (
        "TODO: "
        + verb
        + " "
        + tasks[0]
        + "".join(j + t for j, t in zip(joints, tasks[1:], strict=True))
    )
    named = draw(st.lists(st.booleans(), min_size=len(tasks), max_size=len(tasks)))
    assume(any(named))
    return todo + ".", [t for t, n in zip(tasks, named, strict=True) if n], named


@settings(max_examples=80, deadline=None)
@given(_compound())
def test_a_compound_to_do_stays_open_until_all_its_tasks_are_completed(
    case: tuple[str, list[str], list[bool]],
) -> None:
    todo, done_tasks, named = case
    verb = todo.split()[1]
    line = f"{_ing(verb).capitalize()}ed " + " and ".join(done_tasks) + "."
    expected = [] if all(named) else [todo]
    assert _open(("user", todo), ("assistant", line)) == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from([f"Note {i} on the parser." for i in range(8)]))))
def test_previous_summaries_carried_lines_are_kept_once_in_first_seen_order(
    summaries: list[list[str]],
) -> None:
    entries = [
        Entry(id=f"s{n}", blocks=(Text("\n".join(lines)),), meta={"summary": True})
        for n, lines in enumerate(summaries)
        if lines
    ]
    flat = [line for lines in summaries for line in lines]
    assert extract_items(entries).carried == list(dict.fromkeys(flat))


@pytest.mark.parametrize("done", ["Done: TODO-12, TODO-13", "Closed TODO-12 and TODO-13."])
def test_a_list_of_identifiers_is_one_object_and_closes_every_item(done: str) -> None:
    todos = ("TODO-12: migrate the users table", "TODO-13: migrate the orders table")
    assert _open(("user", todos[0]), ("user", todos[1]), ("assistant", done)) == []
