"""An environment observation sent as user text is read as tool output, not as the user's words.

Plain-text agents (SWE-agent's default mode, mini-swe-agent) send each file view or test run as
a user message. ``Engine.add_observation`` marks it (``meta["observation"]``): the summarizers
keep only its error lines and the values it reports (``KEY: VALUE`` report lines, with a
tool's authority), never a constraint, an open item or a decision, and it completes no to-do;
the flag survives save, load and the session store.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore
from regio.regions.compaction import ITEMS_META
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers._llm import entries_as_transcript
from regio.summarizers.extract import extract_items
from regio.summarizers.kinds import SECTIONS
from regio.summarizers.observations import OBSERVATION_META, is_observation
from regio.summarizers.statements import sentences

BLUEPRINT = """version: 1
name: observations
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000,
        max_output_tokens: 1000}
tokenizer: heuristic
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 1000, seed: "You are careful."}
  - {name: conversation_history, kind: compact_history, source: conversation, budget: 6000}
  - {name: conversation, kind: sliding_window, budget: 150000, eviction: {strategy: compact}}
"""

TASK = "Fix the crash in parse(). TODO: add a regression test for empty input."
#: A SWE-agent file view: source code with a to-do, a raise and a modal, and its footer.
FILE_VIEW = """[File: src/app/parser.py (40 lines total)]
10:def parse(text):
11:    # TODO: handle this
12:    if not text:
13:        raise ValueError("x")
14:    # callers must never pass None here
15:    return text.split()
(Open file: /testbed/src/app/parser.py)"""
TEST_RUN = """============ FAILURES ============
E       AssertionError: 344 != 345
FAILED tests/test_parser.py::test_empty - AssertionError: 344 != 345
1 failed in 0.12s"""


def _engine() -> Engine:
    return Engine.from_blueprint(BLUEPRINT)


def _plain_text_session(engine: Engine) -> None:
    """A SWE-agent-style session: the task, then actions as assistant text and observations
    as user messages."""
    engine.add_user(TASK)
    engine.add_assistant("Let me look at the parser.\n```\nopen src/app/parser.py\n```")
    engine.add_observation(FILE_VIEW)
    engine.add_assistant("Now the tests.\n```\npytest tests/test_parser.py\n```")
    engine.add_observation(TEST_RUN)
    engine.add_assistant("I will fix the off-by-one.\n```\nedit 12:13\n```")
    engine.add_observation("File updated.")


def _sections(text: str) -> dict[str, list[str]]:
    """The ``- `` lines of each section of a summary."""
    out: dict[str, list[str]] = {s: [] for s in SECTIONS}
    current = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith(":") and line[:-1] in SECTIONS:
            current = line[:-1]
        elif current is not None and line.startswith("- "):
            out[current].append(line[2:])
        else:
            current = None
    return out


def _summary(engine: Engine) -> str:
    """What a compaction kept: its summary and the durable items it took out."""
    result = engine.compact(keep_messages=1)
    assert result is not None
    record = next(r for r in reversed(engine.transcript()) if r.kind == "compaction")
    assert record.entry is not None
    items = [
        entry.text
        for region in engine.window.regions
        for entry in region.entries
        if ITEMS_META in entry.meta
    ]
    return "\n".join([record.entry.text, *items])


def _user(i: int, text: str) -> Entry:
    return Entry(id=f"u{i}", blocks=(Text(text),), role="user")


def _observation(i: int, text: str) -> Entry:
    return Entry(id=f"o{i}", blocks=(Text(text),), role="user", meta={OBSERVATION_META: True})


# ----- the defect: a file view's lines read as the user's ------------------------------------
def test_a_file_views_todo_and_raise_lines_are_not_the_users_open_items_or_constraints() -> None:
    engine = _engine()
    _plain_text_session(engine)
    sections = _sections(_summary(engine))
    # the user's own task and to-do; nothing of the file view
    assert sections["Open items"] == [
        "Fix the crash in parse().",
        "TODO: add a regression test for empty input.",
    ]
    assert not any("handle this" in line for line in sections["Open items"])
    assert not any("must never pass None" in line for line in sections["Constraints"])
    assert not any("raise ValueError" in line for s in SECTIONS for line in sections[s])


def test_an_observations_error_lines_are_kept_as_errors() -> None:
    engine = _engine()
    _plain_text_session(engine)
    errors = _sections(_summary(engine))["Errors"]
    assert "E       AssertionError: 344 != 345" in errors


def test_the_salience_sort_reads_an_observation_entry_as_tool_output() -> None:
    out = extract_items([_user(0, TASK), _observation(1, FILE_VIEW), _observation(2, TEST_RUN)])
    assert out.sections["Open items"] == [
        "Fix the crash in parse().",
        "TODO: add a regression test for empty input.",
    ]
    assert out.sections["Constraints"] == []
    assert out.sections["Errors"] == [
        "E       AssertionError: 344 != 345",
        "FAILED tests/test_parser.py::test_empty - AssertionError: 344 != 345",
        "1 failed in 0.12s",
    ]


def test_the_same_text_sent_as_the_users_own_still_gives_open_items_and_constraints() -> None:
    out = extract_items([_user(0, FILE_VIEW)])
    assert any("handle this" in line for line in out.sections["Open items"])
    assert any("must never pass None" in line for line in out.sections["Constraints"])


def test_an_observation_does_not_complete_the_users_todo() -> None:
    todo = "TODO: update the README."
    out = extract_items([_user(0, todo), _observation(1, "Updated the README.\nDone: the README.")])
    assert out.sections["Open items"] == [todo]
    done = extract_items([_user(0, todo), _user(1, "Updated the README.")])
    assert done.sections["Open items"] == []


def test_a_summary_labels_an_observation_as_one_not_as_the_user() -> None:
    entries = [_user(0, "Fix it."), _observation(1, "ls output\nREADME.md")]
    lines = ExtractiveSummarizer().summary_lines(entries)
    assert lines[0].startswith("user: ") and lines[1].startswith("observation: ")
    assert "[observation o1]" in entries_as_transcript(entries)
    assert "[user u0]" in entries_as_transcript(entries)


# ----- the API -----------------------------------------------------------------------------
def test_add_observation_marks_the_entry_and_add_user_does_not() -> None:
    engine = _engine()
    task = engine.add_user("Fix it.")
    seen = engine.add_observation("ls output")
    flagged = engine.add_user("more output", observation=True)
    assert not is_observation(task) and task.meta == {}
    assert is_observation(seen) and seen.meta == {OBSERVATION_META: True}
    assert is_observation(flagged)
    assert seen.role == "user" and seen.text == "ls output"
    record = next(r for r in engine.transcript() if r.entry is not None and r.entry.id == seen.id)
    assert record.entry is not None and is_observation(record.entry)


@pytest.mark.parametrize(
    "message",
    [Message.assistant("I ran it."), Message.tool([ToolResult("c1", "ok")])],
)
def test_an_observation_flag_on_anything_but_user_text_is_refused(message: Message) -> None:
    engine = _engine()
    engine.add_user("Fix it.")
    if message.role == "tool":
        engine.add_assistant("", [ToolUse("c1", "run", {})])
    before = len(engine.transcript())
    with pytest.raises(ValueError, match="observation=True marks a user message"):
        engine.add_message(message, observation=True)
    assert len(engine.transcript()) == before


def test_an_observation_starts_a_turn_like_any_user_message() -> None:
    engine = _engine()
    engine.add_user("Fix it.")
    turn = engine.window.turn
    engine.add_assistant("```\nls\n```")
    entry = engine.add_observation("README.md")
    assert engine.window.turn == turn + 1 and entry.turn == turn + 1


def test_an_observation_does_not_rearm_overflow_recovery_and_a_user_message_does() -> None:
    engine = _engine()
    engine.add_user("Fix it.")
    engine.state.overflow_retry = True  # as after a recovered overflow
    engine.add_assistant("```\nls\n```")
    engine.add_observation("README.md")
    assert engine.state.overflow_retry is True
    engine.add_user("Also update the docs.")
    assert engine.state.overflow_retry is False


# ----- persistence -------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_a_saved_and_loaded_engine_keeps_the_observation_flag(tmp_path: Path, suffix: str) -> None:
    engine = _engine()
    _plain_text_session(engine)
    flags = [is_observation(e) for e in engine.window.conversation.entries]  # type: ignore[union-attr]
    loaded = Engine.load(engine.save(tmp_path / f"state{suffix}"))
    conv = loaded.window.conversation
    assert conv is not None
    expected = [False, False, True, False, True, False, True]
    assert [is_observation(e) for e in conv.entries] == flags == expected
    marked = [r.entry.id for r in loaded.transcript() if r.entry and is_observation(r.entry)]
    assert marked == [e.id for e in conv.entries if is_observation(e)]
    assert _sections(_summary(loaded)) == _sections(_summary(engine))


def test_a_store_session_keeps_the_observation_flag(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")
    engine = _engine()
    engine.add_user(TASK)
    engine.add_assistant("```\nopen src/app/parser.py\n```")
    engine.save_to(store, "s1")
    engine.add_observation(FILE_VIEW)  # saved incrementally
    engine.save_to(store, "s1")
    loaded = Engine.load_from(store, "s1")
    conv = loaded.window.conversation
    assert conv is not None
    assert [is_observation(e) for e in conv.entries] == [False, False, True]
    assert [r.entry is not None and is_observation(r.entry) for r in loaded.transcript()] == [
        r.entry is not None and is_observation(r.entry) for r in engine.transcript()
    ]


def test_a_state_saved_before_the_flag_existed_loads_with_no_observations(
    tmp_path: Path,
) -> None:
    fixture = Path(__file__).resolve().parent / "fixtures" / "state" / "main-20261201.json"
    path = tmp_path / "old.json"
    path.write_bytes(fixture.read_bytes())
    loaded = Engine.load(path)
    conv = loaded.window.conversation
    assert conv is not None and any(e.role == "user" for e in conv.entries)
    assert not any(is_observation(e) for e in conv.entries)
    assert loaded.add_observation("README.md").meta == {OBSERVATION_META: True}


# ----- properties --------------------------------------------------------------------------
_PHRASES = [
    "# TODO: handle this",
    'raise ValueError("x")',
    "You must never edit this file.",
    "make sure the build passes",
    "Set the timeout to 30s.",
    "The port is 8080.",
    "port is now 9000",
    "Done: add a regression test for empty input.",
    "Added a regression test for empty input.",
    "We decided to use postgres.",
    "Remember to update the README.",
    "- [ ] wire the retry",
    "Next: deploy to staging",
    "Traceback (most recent call last):",
    "E       AssertionError: 344 != 345",
    "FAILED tests/test_x.py::test_y",
    "the test is now failing",
    "Job ID: 7f3a91",
    "Port: 9090",
    "  timeout: 30s",
]
_observation_texts = st.lists(
    st.one_of(st.sampled_from(_PHRASES), st.text(max_size=60)), min_size=1, max_size=10
).map("\n".join)
_USER_TEXTS = [
    TASK,
    "The port must be 8080.",
    "Set the timeout to 45s.",
    "We will use sqlite for the cache.",
]


@settings(max_examples=150, deadline=None)
@given(
    observations=st.lists(_observation_texts, min_size=1, max_size=4),
    places=st.lists(st.integers(0, len(_USER_TEXTS)), min_size=4, max_size=4),
)
def test_observations_add_nothing_but_error_lines_and_reported_values_to_the_salient_sections(
    observations: list[str], places: list[int]
) -> None:
    users = [_user(i, t) for i, t in enumerate(_USER_TEXTS)]
    mixed: list[Entry] = list(users)
    for k, (text, at) in enumerate(zip(observations, places, strict=False)):
        mixed.insert(min(at + k, len(mixed)), _observation(k, text))
    alone, together = extract_items(users).sections, extract_items(mixed).sections
    for title in SECTIONS[:-1]:  # every section but Errors and Values
        if title != "Values":
            assert together[title] == alone[title]
    observed = {ln.strip() for text in observations for ln in text.splitlines()}
    for title in ("Errors", "Values"):  # a reported value never displaces the user's
        assert set(alone[title]) <= set(together[title])
        assert set(together[title]) - set(alone[title]) <= observed


@settings(max_examples=100, deadline=None)
@given(observations=st.lists(_observation_texts, min_size=1, max_size=4))
def test_a_summarys_constraints_items_and_decisions_never_come_from_observations(
    observations: list[str],
) -> None:
    entries: list[Entry] = [_user(0, _USER_TEXTS[0])]
    for k, text in enumerate(observations):
        entries.append(Entry(id=f"a{k}", blocks=(Text(f"step {k}"),), role="assistant"))
        entries.append(_observation(k, text))
    entries.extend(_user(i, t) for i, t in enumerate(_USER_TEXTS[1:], start=1))
    summary = ExtractiveSummarizer(max_summary_tokens=2000)(entries, "", None)
    said = {s for e in entries if not is_observation(e) for s in sentences(e.text)}
    reported = {ln.rstrip() for text in observations for ln in text.splitlines()}
    for title in SECTIONS[:-1]:
        for line in _sections(summary)[title]:  # values: said, or reported as a tool's fact
            assert line in said or (title == "Values" and line in reported), (title, line)


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(st.tuples(st.booleans(), _observation_texts), min_size=1, max_size=6))
def test_the_observation_flag_survives_a_save_and_load(
    tmp_path_factory: pytest.TempPathFactory, texts: list[tuple[bool, str]]
) -> None:
    engine = _engine()
    engine.add_user("Fix it.")
    for k, (observed, text) in enumerate(texts):
        engine.add_assistant(f"step {k}")
        engine.add_user(text or "(no output)", observation=observed)
    path = tmp_path_factory.mktemp("obs") / "state.msgpack"
    loaded = Engine.load(engine.save(path))
    before = [(e.id, is_observation(e)) for e in engine.window.conversation.entries]  # type: ignore[union-attr]
    after = [(e.id, is_observation(e)) for e in loaded.window.conversation.entries]  # type: ignore[union-attr]
    assert after == before
    assert [flag for _, flag in after if flag] == [True for observed, _ in texts if observed]
