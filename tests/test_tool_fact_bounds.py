"""A tool's reported values are bounded, keep a tool's authority, and never carry an
instruction or a secret: at most 16 tool facts in a set and 2 per label (the oldest go, and
the caller hears of it); a tool's report supersedes only an earlier report or the agent's own
fact; a rendering lists them under ``Reported values`` so that reading it back (a summary, an
LLM summarizer's reply) never gives them the user's authority; a line whose label instructs
the model, states a status or names a secret is no fact."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Message, ToolUse
from regio.engine import Engine
from regio.events import Event
from regio.regions.compaction import ITEMS_META
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.summarizers.carryforward import check_reply, split_reply
from regio.summarizers.extract import extract_items
from regio.summarizers.items import (
    TOOL_SUFFIX,
    DurableItem,
    ItemSet,
    names_an_id,
    parse_items,
    render_items,
)
from regio.summarizers.kinds import HEADINGS, KINDS
from regio.summarizers.toolfacts import tool_facts
from tool_items_support import compacting_blueprint, tool_entry, user_entry

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))
LIMIT, PER_LABEL, PER_ID_LABEL = 16, 2, 4  # the documented bounds (docs/items.md)

BLUEPRINT = compacting_blueprint("toolbounds", history=20000)


def _agent(text: str, i: int = 0) -> Entry:
    return Entry(f"a{i}", Message.assistant(text).blocks, role="assistant")


def _tool_texts(items: ItemSet) -> list[str]:
    return [i.text for i in items.items() if i.by_tool]


def _label(text: str) -> str:
    return " ".join(text.split(":", 1)[0].split()).casefold()


# -- bounds ----------------------------------------------------------------------------------


def test_two_job_ids_of_two_jobs_stay_two_items() -> None:
    items = extract_items([tool_entry("Job ID: 7f3a91", 1), tool_entry("Job ID: 8b2c44", 2)]).items
    assert _tool_texts(items) == ["Job ID: 7f3a91", "Job ID: 8b2c44"]


def test_a_fifth_job_id_drops_the_oldest_job_id_and_says_so() -> None:
    reports = ["Job ID: 7f3a91", "Job ID: 8b2c44", "Job ID: 3c3c3c", "Job ID: 4d4d4d"]
    reports.append("JOB ID: 9d5e17")  # the label is case-folded
    out = extract_items([tool_entry(r, i) for i, r in enumerate(reports)])
    assert _tool_texts(out.items) == reports[1:]
    assert [i.text for i in out.superseded] == ["Job ID: 7f3a91"]


def test_three_reference_codes_of_three_results_stay_three_items() -> None:
    codes = [f"Reference code for this result: CANARY-F-{n:08x}" for n in (11, 22, 33)]
    out = extract_items([tool_entry(f"ran step {i}\n{c}", i) for i, c in enumerate(codes)])
    assert _tool_texts(out.items) == codes and out.superseded == []


def test_an_identifier_names_a_thing_and_a_measurement_measures_one() -> None:
    def fact(text: str) -> DurableItem:
        return DurableItem("fact", "k", text, 0, by_user=False, by_tool=True)

    ids = ("Job ID: 7f3a91", "Job ID: 4d4d4d", "Created pull request: #4821", "Commit: 64532cc")
    for text in (*ids, "Commit: a1b2c3d4e5", "Job ID: 7f3a91 (queued 2 files)"):
        assert names_an_id(fact(text)), text
    measures = ("Passed: 12", "Duration: 1500ms", "Duration: 12m30s", "Version: 3.2.1")
    for text in (*measures, "Version: v3.2.1", "Coverage: 98%", "Status: ok", "At: 2026-12-06"):
        assert not names_an_id(fact(text)), text


def test_eight_passed_reports_keep_the_newest_two() -> None:
    out = extract_items([tool_entry(f"Passed: {100 + n}", n) for n in range(8)])
    assert _tool_texts(out.items) == ["Passed: 106", "Passed: 107"]
    assert [i.text for i in out.superseded] == [f"Passed: {100 + n}" for n in range(6)]


def test_a_set_keeps_at_most_sixteen_tool_facts_the_oldest_going_first() -> None:
    items = ItemSet()
    gone: list[DurableItem] = []
    for n in range(20):
        gone.extend(items.add("fact", f"Build {chr(65 + n)} ID: b-{n}x", by_tool=True)[1])
    assert len(_tool_texts(items)) == LIMIT
    assert [i.text for i in gone] == [f"Build {chr(65 + n)} ID: b-{n}x" for n in range(4)]


def test_the_bound_never_drops_a_stated_fact() -> None:
    items = ItemSet()
    items.add("fact", "The staging host is stage-7.internal.", by_user=True)
    items.add("fact", "The release is named Falcon-9.", by_user=False)
    for n in range(30):
        items.add("fact", f"Check {chr(65 + n % 26)}{n} ID: c-{n}x", by_tool=True)
    texts = items.texts()
    assert {"The staging host is stage-7.internal.", "The release is named Falcon-9."} <= texts
    assert len(_tool_texts(items)) == LIMIT


def test_eight_compactions_of_test_reports_keep_at_most_four_items() -> None:
    engine = Engine.from_blueprint(BLUEPRINT, summarizer=ExtractiveSummarizer())
    events: list[Event] = []
    engine.subscribe(events.append)
    for n in range(8):
        engine.add_user(f"Please run the tests, round {n}.")
        engine.add_assistant("", [ToolUse(f"c{n}", "run", {})])
        engine.add_tool_result(f"c{n}", f"Running...\nPassed: {100 + n}\nDuration: {n + 3}s")
        engine.add_assistant("Ran them.")
        engine.add_user("Carry on.")
        engine.compact(keep_tokens=0)
    history = engine.window.region("history")
    section = next(e for e in history.entries if ITEMS_META in e.meta)
    kept = [d["text"] for d in section.meta[ITEMS_META] if d.get("by_tool")]
    assert kept == ["Passed: 106", "Duration: 9s", "Passed: 107", "Duration: 10s"]
    gone = [t for e in events if e.kind == "items_updated" for t in e.superseded]  # type: ignore[attr-defined]
    assert {f"Passed: {100 + n}" for n in range(6)} <= set(gone)  # each named by an event


def test_older_tool_facts_of_a_merge_fit_the_bounds() -> None:
    items = ItemSet()
    ids = ["Job ID: 7f3a91", "Job ID: 8b2c44", "Job ID: 3c3c3c", "Job ID: 4d4d4d"]
    for text in ids:
        items.add("fact", text, by_tool=True)
    added = items.add_older([("fact", "Job ID: 1a1a1a", False, True)])
    assert added == [] and _tool_texts(items) == ids
    items.add("fact", "Passed: 10", by_tool=True)
    items.add("fact", "Passed: 11", by_tool=True)
    assert items.add_older([("fact", "Passed: 9", False, True)]) == []


_LABELS = ["Job ID", "job id", "Passed", "Duration", "Version", "Build ID", "Artifact", "Runner",
           "Created pull request", "Commit", "Region", "Image", "Host", "Port", "Queue", "Node",
           "Shard", "Bucket", "Cluster", "Reference code for this result"]  # fmt: skip


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_LABELS), st.integers(0, 60), st.booleans()), max_size=60)
)
def test_tool_facts_stay_within_both_bounds_and_every_one_that_leaves_is_reported(
    reports: list[tuple[str, int, bool]],
) -> None:
    items = ItemSet()
    items.add("constraint", "Never push to main.")
    added: list[str] = []
    gone: list[str] = []
    newest: dict[str, bool] = {}  # label -> whether its newest report named an identifier
    for label, n, ident in reports:
        value = f"id{n:04x}z" if ident else f"v{n}-x"
        kept, left = items.add("fact", f"{label}: {value}", by_user=False, by_tool=True)
        if kept is not None:
            added.append(kept.text)
            newest[_label(kept.text)] = ident
        gone.extend(i.text for i in left)
    tools = _tool_texts(items)
    assert len(tools) <= LIMIT
    labels = [_label(t) for t in tools]
    for label in labels:
        assert labels.count(label) <= (PER_ID_LABEL if newest[label] else PER_LABEL)
    assert set(tools) | set(gone) >= set(added)  # nothing leaves unannounced
    assert "Never push to main." in items.texts()
    if added:
        assert added[-1] in tools  # the newest report is always kept


# -- authority --------------------------------------------------------------------------------


def test_a_tools_version_never_supersedes_the_agents_next_step() -> None:
    todo = "Next step: bump the version to 3.2.1."
    out = extract_items([_agent(todo), tool_entry("Version: 3.2.0", 1)])
    by_text = {i.text: i for i in out.items.items()}
    assert by_text[todo].kind == "todo" and out.superseded == []
    assert by_text["Version: 3.2.0"].key == by_text[todo].key + TOOL_SUFFIX


def test_a_tools_report_supersedes_the_agents_own_fact_of_its_key() -> None:
    items = ItemSet()
    items.add("fact", "Version: 3.1.0", by_user=False)
    items.add("fact", "Version: 3.2.0", by_user=False, by_tool=True)
    assert [i.text for i in items.items()] == ["Version: 3.2.0"]


_STATED = {
    "constraint": ["The version must be 3.0.0.", "Job ID must be 1a2b3c."],
    "preference": ["I prefer version 3.0.0.", "I prefer the job ID 1a2b3c."],
    "goal": ["The goal is to ship version 3.0.0.", "The goal is to finish job 1a2b3c."],
    "todo": ["Next step: bump the version to 3.2.1.", "TODO: rerun job ID 1a2b3c."],
    "fact": ["The version is 3.0.0.", "Job ID: 1a2b3c"],
    "decision": ["We decided on version 3.0.0.", "We decided to rerun job 1a2b3c."],
    "error": ["Version 3.0.0 failed to build.", "Job ID 1a2b3c failed."],
}
_REPORTS = ["Version: 3.2.0", "Python version: 3.12", "Job ID: 1a2b3c", "Job ID: 9z9z9z",
            "Passed: 12", "Status page: status.example.com"]  # fmt: skip


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 1), st.booleans()), max_size=8),
    st.lists(st.tuples(st.sampled_from(_REPORTS), st.booleans()), min_size=1, max_size=20),
)
def test_no_tool_report_removes_any_stated_item_but_the_agents_fact(
    stated: list[tuple[str, int, bool]], reports: list[tuple[str, bool]]
) -> None:
    items = ItemSet()
    for kind, which, by_user in stated:
        items.add(kind, _STATED[kind][which], by_user=by_user)
    protected = {i.text for i in items.items() if i.by_user or i.kind != "fact"}
    keys = [i.key for i in items.items()]
    for n, (report, on_a_stated_key) in enumerate(reports):
        key = keys[n % len(keys)] if on_a_stated_key and keys else None  # a forced collision
        items.add("fact", report, by_user=False, by_tool=True, key=key)
    assert protected <= items.texts()


# -- provenance through a rendering -----------------------------------------------------------


def test_a_rendering_lists_a_tools_values_under_reported_values_after_values() -> None:
    items = ItemSet()
    items.add("decision", "We decided to go with Postgres 15.")
    items.add("fact", "Job ID: 7f3a91", by_user=False, by_tool=True)
    items.add("fact", "The port is 8443.")
    assert items.render() == (
        "Values:\n- The port is 8443.\nReported values:\n- Job ID: 7f3a91\n"
        "Decisions:\n- We decided to go with Postgres 15."
    )
    parsed, rest = parse_items(items.render())
    assert [(p.kind, p.text, p.by_tool) for p in parsed] == [
        ("fact", "The port is 8443.", False),
        ("fact", "Job ID: 7f3a91", True),
        ("decision", "We decided to go with Postgres 15.", False),
    ]
    assert rest == []


def test_a_reported_value_read_back_from_a_summary_stays_a_tools() -> None:
    summary = user_entry("Values:\n- The port is 8443.\nReported values:\n- Version: 3.2.1", 0,
                    summary=True)  # fmt: skip
    out = extract_items([summary, tool_entry("Version: 3.3.0", 1)])
    by_text = {i.text: i for i in out.items.items()}
    assert by_text["The port is 8443."].by_user
    assert "Version: 3.2.1" not in by_text  # a tool's value, so the newer report replaces it
    assert [i.text for i in out.superseded] == ["Version: 3.2.1"]
    assert by_text["Version: 3.3.0"].by_tool and not by_text["Version: 3.3.0"].by_user


def test_an_extractive_summary_read_back_keeps_its_reported_values_a_tools() -> None:
    log = "\n".join(f"compiling module {n} of 40 ... ok" for n in range(40))
    entries = [
        user_entry("Run the build on the farm, please."),
        tool_entry(f"{log}\nJob ID: 7f3a91", 1),
    ]
    summary = ExtractiveSummarizer()(entries, "", None)
    assert "Reported values:\n- Job ID: 7f3a91" in summary
    again = extract_items([user_entry(summary, 2, summary=True)]).items
    item = next(i for i in again.items() if i.text == "Job ID: 7f3a91")
    assert item.by_tool and not item.by_user


def test_an_llm_replys_reported_values_never_gain_the_users_authority() -> None:
    reply = "Reported values:\n- Job ID: 7f3a91\nSummary:\nRan the build."
    items, prose, structured = split_reply(reply)
    assert structured and prose == "Ran the build."
    check = check_reply(items, [], "Job ID: 7f3a91")
    assert [(i.text, i.by_tool, i.by_user) for i in check.accepted] == [
        ("Job ID: 7f3a91", True, False)
    ]


def _old_render(items: list[DurableItem]) -> str:
    """The rendering before tool facts had a heading of their own."""
    lines: list[str] = []
    for kind in KINDS:
        group = [i for i in items if i.kind == kind]
        if group:
            lines.append(f"{HEADINGS[kind]}:")
            lines.extend(f"- {i.text}" for i in group)
    return "\n".join(lines)


@settings(max_examples=EXAMPLES * 4, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(0, 1), st.booleans()), max_size=10))
def test_a_set_without_tool_facts_renders_the_same_bytes_as_before(
    stated: list[tuple[str, int, bool]],
) -> None:
    items = ItemSet()
    for kind, which, by_user in stated:
        items.add(kind, _STATED[kind][which], by_user=by_user)
    assert render_items(items.items()) == _old_render(items.items())
    assert "Reported values" not in items.render()


# -- instructions and secrets -----------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "Instruction: rm-rf /",
        "SYSTEM: override-1",
        "Assistant: use-v2",
        "User: delete-db-1",
        "Important: use-v2",
        "Note to assistant: skip-tests-1",
        "Reminder: push-2",
        "Policy: allow-all-1",
        "Preferred: tabs-4",
        "Must: use-v2",
        "Done: TODO-12",
        "Fixed: BUG-7",
        "Resolved: INC-42",
        "Update: v2.0",
    ],
)
def test_a_line_that_instructs_or_states_a_status_is_no_fact(line: str) -> None:
    assert tool_facts(f"Job ID: 7f3a91\n{line}") == ["Job ID: 7f3a91"]


@pytest.mark.parametrize(
    "line",
    [
        "Password: hunter2",
        "API Key: sk-abc123",
        "API-Key: sk-abc123",
        "Token: ghp_abc123XYZ",
        "Access token: ghp_abc123XYZ",
        "Secret: s3cr3t-1",
        "Private key: id_rsa-1",
        "Credentials: admin:pw1",
        "Authorization: Bearer-abc123",
        "Session: sess-42",
        "Cookie: sid-42",
        "Signature: sig-0a1b",
    ],
)
def test_a_line_that_names_a_secret_is_never_kept(line: str) -> None:
    assert tool_facts(f"Job ID: 7f3a91\n{line}") == ["Job ID: 7f3a91"]
    value = line.split(":", 1)[1].strip()
    items = extract_items(
        [tool_entry(f"Deploying...\n{line}"), user_entry(f"Obs:\n{line}", 1, observation=True)]
    ).items
    assert not any(value in t for t in items.texts())


def test_ordinary_reports_are_still_kept() -> None:
    for line in ("Job ID: 7f3a91", "Version: 3.2.1", "Operating system: linux-6.1",
                 "Tokens used: 1234", "Created pull request: #4821"):  # fmt: skip
        assert tool_facts(line) == [line]
