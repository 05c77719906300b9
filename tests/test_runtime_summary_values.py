"""The extractive summary keeps open to-dos and the latest stated value of each setting."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from _traces_support import raw_traces_dir
from regio.content import Entry, Text, ToolResult, ToolUse
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers.extract import extract_items
from regio.summarizers.valuestatements import value_key
from regio.tokens import HeuristicCounter
from regio.traces import AssistantMessage, ToolResults, UserMessage, import_file


def _section(summary: str, title: str) -> list[str]:
    """The ``- `` lines of one section of an extractive summary."""
    lines = summary.splitlines()
    if f"{title}:" not in lines:
        return []
    out: list[str] = []
    for line in lines[lines.index(f"{title}:") + 1 :]:
        if not line.startswith("- "):
            break
        out.append(line[2:])
    return out


def _user(i: int, text: str) -> Entry:
    return Entry(id=f"u{i}", blocks=(Text(text),), role="user")


def _tool_errors(i: int, lines: int) -> Entry:
    text = "\n".join(f"E   AssertionError: row {i}_{k} differs in test_{k}" for k in range(lines))
    return Entry(id=f"t{i}", blocks=(ToolResult(f"c{i}", text),), role="tool")


@pytest.mark.parametrize(
    ("sentence", "key"),
    [
        ("The deploy target is stage-eu-2.", "deploy target"),
        ("Update: the deploy target is now prod-eu-1.", "deploy target"),
        ("Set the timeout to 30s.", "timeout"),
        ("Please change LOG_LEVEL to debug", "log level"),
        ("We switched the database to postgres 16.", "database"),
        ("The staging host is db-07.internal", "staging host"),
        ("The API base URL is https://api.example.com/v2.", "api base url"),
        ("I set the retries to 5.", "retries"),
        ("The default branch has been renamed to main.", "default branch"),
        ("Use pytest for the tests.", "tests"),
        ("My user ID is amelia_davis_8890.", "user id"),
    ],
)
def test_a_sentence_that_sets_a_value_names_its_key(sentence: str, key: str) -> None:
    assert value_key(sentence) == key


@pytest.mark.parametrize(
    "sentence",
    [
        "The problem is that it fails on Windows.",
        "It is now done.",
        "This is now ready to merge, thanks for looking at all of it so quickly and carefully.",
        "The fix is simple.",
        "Change is hard.",
        "record are diff_73b1963",  # no article: a fragment, not a setting
        "is_61193742 recent is 6981",  # a key word with a digit is an identifier
        "update index_4fa2 to data_77",
    ],
)
def test_a_description_is_not_a_value_statement(sentence: str) -> None:
    assert value_key(sentence) is None


def test_a_later_value_supersedes_the_earlier_one_in_the_summary() -> None:
    entries = [
        _user(0, "The deploy target is stage-eu-2.\n" + "context words " * 40),
        _user(1, "filler talk " * 60),
        _user(2, "Update: the deploy target is now prod-eu-1.\n" + "more words " * 40),
    ]
    summary = ExtractiveSummarizer()(entries, "", None)
    assert _section(summary, "Values") == ["Update: the deploy target is now prod-eu-1."]


def test_a_value_in_a_previous_summary_is_superseded_by_a_later_statement() -> None:
    previous = Entry(
        id="s",
        blocks=(Text("Values:\n- Set the timeout to 30s."),),
        tokens=20,
        meta={"summary": True},
    )
    salient = extract_items([previous, _user(1, "Change the timeout to 90s.")])
    assert salient.sections["Values"] == ["Change the timeout to 90s."]


def test_open_todos_and_values_are_kept_before_tool_errors_fill_the_budget() -> None:
    entries = [
        _user(0, "TODO: update CHANGELOG.md before the release. The port is 8443."),
        *(_tool_errors(i, 3) for i in range(1, 30)),
    ]
    summarizer = ExtractiveSummarizer(max_summary_tokens=80)
    summary = summarizer(entries, "", None)
    assert "- TODO: update CHANGELOG.md before the release." in summary
    assert "- The port is 8443." in summary
    assert summary.index("Open items:") < summary.index("Errors:")
    assert summarizer.measure.count(summary) <= 80


@pytest.mark.parametrize(
    "todo",
    [
        "We still need to migrate the billing tables.",
        "Next: wire the retry into the client.",
        "- [ ] document the new flag",
        "Remember to bump the version in pyproject.toml.",
        "The remaining tasks are the docs and the changelog.",
        "Action items: rotate the staging keys.",
    ],
)
def test_each_to_do_phrasing_lands_in_open_items(todo: str) -> None:
    assert extract_items([_user(0, todo)]).sections["Open items"] == [todo]


@pytest.mark.parametrize(
    "sentence",
    [
        "Would you like me to do that?",
        "After this booking you will have $201 remaining on the certificate.",
        "I will fix my syntax in this follow up edit command.",
    ],
)
def test_a_casual_to_do_or_remaining_is_not_an_open_item(sentence: str) -> None:
    assert extract_items([_user(0, sentence)]).sections["Open items"] == []


def test_tool_output_supplies_neither_to_dos_nor_values() -> None:
    call = Entry(id="a", blocks=(ToolUse("c1", "read_file", {"path": "a.py"}),), role="assistant")
    result = Entry(
        id="t",
        blocks=(ToolResult("c1", "# TODO: remove this hack\nThe port is 8443."),),
        role="tool",
    )
    salient = extract_items([call, result])
    assert salient.sections["Open items"] == [] and salient.sections["Values"] == []


_KEYS = st.sampled_from(["timeout", "deploy target", "log level", "region", "base url"])
_VALUES = st.from_regex(r"[a-z]{2,6}-[0-9]{1,4}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(_KEYS, _VALUES), min_size=1, max_size=12),
    st.integers(1, 400),
    st.integers(0, 6),
)
# a budget smaller than any item: the fallback cut the rendered items, keeping "Values:\n- Se"
# (an item holding a value nobody set)
@example(updates=[("timeout", "aa-0")], cap=3, padding=0)
def test_the_latest_value_of_a_key_wins_and_the_summary_stays_in_bound(
    updates: list[tuple[str, str]], cap: int, padding: int
) -> None:
    entries = [
        _user(i, f"Set the {key} to {value}.\n" + "plain words here " * padding)
        for i, (key, value) in enumerate(updates)
    ]
    counter = HeuristicCounter()
    summarizer = ExtractiveSummarizer(max_summary_tokens=cap, counter=counter)
    summary = summarizer(entries, "", None)
    assert counter.count(summary) <= summarizer.budget(entries)
    latest = [f"Set the {k} to {v}." for k, v in {k: v for k, v in updates}.items()]
    kept = _section(summary, "Values")
    assert set(kept) <= set(latest)  # a superseded value is never kept
    if counter.count("\n".join(["Values:", *(f"- {line}" for line in latest)])) < min(
        cap, summarizer.budget(entries)
    ):
        assert sorted(kept) == sorted(latest)  # every latest value kept when all fit


def _entries(trace_events: tuple[object, ...]) -> list[Entry]:
    out: list[Entry] = []
    for i, event in enumerate(trace_events):
        if isinstance(event, UserMessage):
            out.append(Entry(id=f"e{i}", blocks=event.blocks, role="user"))
        elif isinstance(event, AssistantMessage):
            blocks = tuple(b for b in event.blocks if isinstance(b, Text | ToolUse))
            if blocks:
                out.append(Entry(id=f"e{i}", blocks=blocks, role="assistant"))
        elif isinstance(event, ToolResults) and event.results:
            out.append(Entry(id=f"e{i}", blocks=event.results, role="tool"))
    return out


def test_summaries_of_real_traces_stay_within_their_bound() -> None:
    root: Path = raw_traces_dir()
    counter = HeuristicCounter()
    checked = 0
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".traj", ".json")):
        for trace in import_file(path).traces[:3]:
            entries = _entries(trace.events)
            for cap in (64, 256, 1_500):
                summarizer = ExtractiveSummarizer(max_summary_tokens=cap, counter=counter)
                summary = summarizer(entries, "", None)
                assert summary.strip(), path.name
                assert counter.count(summary) <= summarizer.budget(entries), path.name
                checked += 1
    assert checked >= 30


def test_a_value_already_in_a_context_only_summary_still_supersedes_an_older_one() -> None:
    context = Entry(
        id="s",
        blocks=(Text("Values:\n- Set the timeout to 60s."),),
        tokens=20,
        meta={"summary": True, "context_only": True},
    )
    salient = extract_items(
        [context, _user(1, "Set the timeout to 30s."), _user(2, "Set the timeout to 60s.")]
    )
    assert "Set the timeout to 30s." not in salient.sections["Values"]


def test_a_change_with_its_reason_still_supersedes_the_old_value() -> None:
    old = "The deploy target is stage-eu-2."
    new = (
        "Update: the deploy target is now prod-eu-1 because the stage cluster is being "
        "retired next week."
    )
    salient = extract_items([_user(0, old), _user(1, new)])
    assert salient.sections["Values"] == [new]


@pytest.mark.parametrize(
    "spellings",
    [
        ("Set LOG_LEVEL to debug.", "The log level is now info."),
        ("Set log-level to debug.", "The log level is now info."),
    ],
)
def test_one_setting_spelled_differently_is_one_key(spellings: tuple[str, str]) -> None:
    first, second = spellings
    assert value_key(first) == value_key(second) == "log level"
    salient = extract_items([_user(0, first), _user(1, second)])
    assert salient.sections["Values"] == [second]


@pytest.mark.parametrize(
    "sentence",
    [
        "Update the README to mention the new flag.",
        "Update them to use the new API.",
        "Point me to the file.",
        "Set up the database to use postgres.",
    ],
)
def test_an_instruction_is_not_a_value(sentence: str) -> None:
    assert value_key(sentence) is None
