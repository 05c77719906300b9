"""The engine keeps durable items in its compact_history's item section: verbatim, keyed,
superseded across compactions, byte-identical between them, within budget with an event for
what went."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.blueprint import load_blueprint
from regio.engine import Engine
from regio.events import Event
from regio.regions.compaction import ITEMS_META
from regio.summarizers import ExtractiveSummarizer, FunctionSummarizer, LLMSummarizer
from regio.summarizers._protocol import DEFAULT_STANDING_INSTRUCTIONS
from regio.summarizers.carryforward import SCHEMA_INSTRUCTIONS
from regio.summarizers.kinds import classify
from regio.summarizers.subjects import item_key

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))

BLUEPRINT = """
version: 1
name: durable
model:
  {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000, max_output_tokens: 1000}
tokenizer: heuristic
tools: {context: none}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, heading: false}
  - {name: history, kind: compact_history, source: conversation, budget: HISTORY}
  - name: conversation
    kind: sliding_window
    budget: 60000
    max_items: 5000
    eviction: {strategy: compact, compact_count: 20}
"""


def _engine(history: int = 4000, summarizer: Any = None) -> tuple[Engine, list[Event]]:
    bp = load_blueprint(BLUEPRINT.replace("HISTORY", str(history)))
    engine = Engine.from_blueprint(bp, summarizer=summarizer or ExtractiveSummarizer())
    events: list[Event] = []
    engine.subscribe(events.append)
    return engine, events


def _say(engine: Engine, *texts: str) -> None:
    for text in texts:
        engine.add_user(text)
        engine.add_assistant("Noted.", [])


def _text(engine: Engine) -> str:
    _, payload = engine.request(provider="text")
    return str(payload["prompt"])


def _section(engine: Engine) -> Any:
    history = engine.window.region("history")
    return next((e for e in history.entries if ITEMS_META in e.meta), None)


def test_a_compaction_keeps_its_items_after_the_summaries_in_the_history() -> None:
    engine, _ = _engine()
    rule = "HARD CONSTRAINT: Budget cap is $500 total. Never exceed without explicit approval."
    _say(engine, rule, "We renamed the helper from fetch_all to list_items.", "Thanks, go on.")
    assert engine.compact(keep_tokens=0) is not None
    history = engine.window.region("history").entries
    assert ITEMS_META in history[-1].meta and all(ITEMS_META not in e.meta for e in history[:-1])
    assert rule in history[-1].text and rule not in history[0].text  # prose leaves it out
    assert _text(engine).count(rule) == 1


def test_a_later_statement_supersedes_an_item_of_an_earlier_compaction() -> None:
    engine, events = _engine()
    old, new = "The deploy target is stage-eu-2.", "Update: the deploy target is now prod-eu-1."
    _say(engine, old, "Carry on.")
    engine.compact(keep_tokens=0)
    _say(engine, new, "Carry on.")
    engine.compact(keep_tokens=0)
    text = _text(engine)
    assert new in text and "stage-eu-2" not in text
    assert any(e.kind == "items_updated" and old in e.superseded for e in events)  # type: ignore[attr-defined]
    assert any(old in r.entry.text for r in engine.transcript() if r.entry is not None)


def test_the_item_section_stays_byte_identical_between_compactions() -> None:
    engine, _ = _engine()
    _say(engine, "Never push to main.", "The port is 8443.", "Carry on.")
    engine.compact(keep_tokens=0)
    section = _section(engine)
    _say(engine, "How is it going?")
    engine.compact(keep_tokens=0)  # nothing new is an item: the section keeps its bytes
    assert _section(engine) is not None and _section(engine).text == section.text
    assert _section(engine).id == section.id
    history = engine.window.region("history").entries
    assert history[-1].id == section.id  # moved after the new summary, not rewritten


def test_a_history_over_budget_merges_then_drops_the_lowest_items_with_an_event() -> None:
    engine, events = _engine(history=120)
    rules = [f"Never deploy service-{i} on a Friday." for i in range(4)]
    _say(
        engine, *rules, *(f"The deploy target of job-{i} is host-{i}.internal." for i in range(12))
    )
    _say(engine, "Carry on.")
    engine.compact(keep_tokens=0)
    history = engine.window.region("history")
    assert history.used_tokens <= history.budget
    dropped = [e for e in events if e.kind == "items_dropped"]
    assert dropped and all(e.reason == "budget" for e in dropped)  # type: ignore[attr-defined]
    gone = {t for e in dropped for t in e.texts}  # type: ignore[attr-defined]
    assert not any(rule in gone for rule in rules)  # values went before the rules
    text = _text(engine)
    assert all(rule in text for rule in rules)


def test_compact_to_a_size_merges_summaries_then_drops_the_lowest_items() -> None:
    engine, events = _engine()
    for i in range(6):
        _say(engine, f"Never touch cluster-{i}.", f"The owner of repo-{i} is team-{i}.")
        _say(engine, *(f"Looked at src/mod_{i}_{k}.py line {k * 7}." for k in range(6)))
        engine.compact(keep_tokens=0)
    assert len(engine.window.region("history").entries) > 2
    result = engine.compact(keep_tokens=0, target_tokens=80)
    assert result is not None and engine.window.used_tokens <= 80
    assert len(engine.window.region("history").entries) <= 2  # one merged summary, items
    kinds = [e for e in events if e.kind == "items_dropped" and e.reason == "target"]  # type: ignore[attr-defined]
    assert kinds
    kept = _section(engine).text if _section(engine) is not None else ""
    assert all(
        f"Never touch cluster-{i}." in kept
        for i in range(6)
        if not any(f"Never touch cluster-{i}." in e.texts for e in kinds)  # type: ignore[attr-defined]
    )


def test_an_llm_reply_that_drops_a_constraint_falls_back_to_the_extracted_items() -> None:
    reply = "Values:\n- [key: deploy target] The deploy target is prod-eu-1.\nSummary:\nShipped."
    summarizer = FunctionSummarizer(lambda entries, standing, extra: reply)
    engine, events = _engine(summarizer=summarizer)
    _say(engine, "Never push to main.", "The deploy target is prod-eu-1.", "Carry on.")
    engine.compact(keep_tokens=0)
    assert "Never push to main." in _section(engine).text
    fallback = [e for e in events if e.kind == "items_fallback"]
    assert [e.dropped for e in fallback] == [("Never push to main.",)]  # type: ignore[attr-defined]
    assert engine.window.region("history").entries[0].text == "Shipped."


def test_an_llm_reply_item_found_in_the_input_is_added_and_an_invented_one_is_not() -> None:
    reply = (
        "Constraints:\n- Never push to main.\nDecisions:\n- We shipped it behind a flag.\n"
        "Values:\n- The region is mars-1.\nSummary:\nShipped."
    )
    engine, events = _engine(summarizer=FunctionSummarizer(lambda e, s, x: reply))
    _say(engine, "Never push to main.", "Sounds good.", "We shipped it behind a flag.")
    _say(engine, "Carry on.")
    engine.compact(keep_tokens=0)
    section = _section(engine).text
    assert "We shipped it behind a flag." in section and "mars-1" not in section
    assert not [e for e in events if e.kind == "items_fallback"]


def test_the_llm_summarizer_is_asked_for_the_carry_forward_schema() -> None:
    assert SCHEMA_INSTRUCTIONS in DEFAULT_STANDING_INSTRUCTIONS
    asked: list[list[dict[str, str]]] = []

    def complete(messages: list[dict[str, str]]) -> str:
        asked.append(messages)
        return "Constraints:\n- [key: main] Never push to main.\nSummary:\nWe agreed on rules."

    engine, _ = _engine(summarizer=LLMSummarizer(complete))
    _say(engine, "Never push to main.", "Carry on.")
    engine.compact(keep_tokens=0)
    assert asked and SCHEMA_INSTRUCTIONS in asked[0][0]["content"]
    assert "Never push to main." in _section(engine).text
    assert engine.window.region("history").entries[0].text == "We agreed on rules."


def test_items_survive_save_and_load_byte_for_byte(tmp_path: Path) -> None:
    engine, _ = _engine()
    _say(engine, "Never push to main.", "The port is 8443.", "Carry on.")
    engine.compact(keep_tokens=0)
    before = _text(engine)
    engine.save(tmp_path / "s.json")
    loaded = Engine.load(tmp_path / "s.json", summarizer=ExtractiveSummarizer())
    assert _text(loaded) == before
    _say(loaded, "Update: the port is now 9000.", "Carry on.")
    loaded.compact(keep_tokens=0)
    assert "The port is 8443." not in _text(loaded)


def test_a_summary_of_working_notes_is_shown_once() -> None:
    engine = Engine.from_blueprint(
        Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml",
        summarizer=ExtractiveSummarizer(),
    )
    engine.add_user("Fix the bug in src/app.py please.")
    engine.request(provider="text")
    for i in range(40):  # the notes compact into notes_history; the conversation stays
        engine.write("scratch", f"note {i}: src/mod_{i}.py line {i * 7} calls helper_{i}. " * 20)
    engine.add_assistant("Working on it.", [])
    engine.add_user("ok")
    text = _text(engine)
    assert engine.window.region("notes_history").entries
    assert "context note -> region 'notes_history'" not in text


# ----- the property: verbatim until superseded or dropped with an event ----------------------
_SUBJECTS = ["timeout", "port", "deploy target", "retries", "log level", "cache size"]
_STATEMENT = st.tuples(
    st.sampled_from(_SUBJECTS),
    st.from_regex(r"[a-z]{2}-[0-9]{1,4}", fullmatch=True),
    st.sampled_from(["Set the {s} to {v}.", "The {s} must be {v}.", "Update: the {s} is now {v}."]),
)
_STEP = st.one_of(
    st.lists(_STATEMENT, min_size=1, max_size=4).map(lambda s: ("say", s)),
    st.integers(0, 2).map(lambda k: ("compact", k)),
    st.integers(40, 400).map(lambda n: ("target", n)),
)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_STEP, min_size=2, max_size=10), st.sampled_from([60, 200, 4000]))
def test_an_items_text_is_in_the_window_until_superseded_or_dropped_with_an_event(
    steps: list[tuple[str, Any]], history: int
) -> None:
    engine, events = _engine(history=history)
    said: list[tuple[str, str]] = []  # (key, text) in order
    for op, arg in steps:
        if op == "say":
            for subject, value, form in arg:
                text = form.format(s=subject, v=value)
                _say(engine, text)
                said.append((item_key(text, classify(text, "user") or "fact"), text))
        elif op == "compact":
            engine.compact(keep_messages=arg)
        else:
            engine.compact(keep_tokens=0, target_tokens=arg)
        window = _text(engine)
        dropped = {t for e in events if e.kind == "items_dropped" for t in e.texts}  # type: ignore[attr-defined]
        latest = {key: text for key, text in said}
        for key, text in said:
            if latest[key] != text:
                continue  # superseded by a later statement of its key
            assert text in window or text in dropped, (text, window)


def test_an_extractive_summary_longer_than_its_history_is_shortened_so_the_compaction_progresses():
    """Found by the property above: 14 turns answered "Noted." summarize to 63 tokens of prose
    against a 60-token history; the summary was refused three times and the manual compaction
    raised CompactionNoProgressError. Now its oldest lines are cut, with an event."""
    engine, events = _engine(history=60)
    for _ in range(14):
        _say(engine, "Set the timeout to aa-0.")
    engine.compact(keep_messages=0)
    shortened = [e for e in events if e.kind == "summary_shortened"]
    assert len(shortened) == 1 and shortened[0].tokens <= 60 < shortened[0].tokens_before  # type: ignore[attr-defined]
    assert not [e for e in events if e.kind == "compaction_rejected"]
    history = engine.window.region("history")
    assert history.used_tokens <= 60
    window = _text(engine)
    assert "Set the timeout to aa-0." in window or any(
        "Set the timeout to aa-0." in t
        for e in events
        if e.kind == "items_dropped"
        for t in e.texts  # type: ignore[attr-defined]
    )


class _Counter:
    """``count_text`` as the window's counter does it, by tiktoken-free rule: one token a
    word or punctuation run."""

    def count_text(self, text: str) -> int:
        import re

        return len(re.findall(r"\w+|[^\w\s]+", text))


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(st.text(alphabet="ab .:\u2026", min_size=0, max_size=30), min_size=1, max_size=8),
    st.integers(1, 40),
)
def test_fitted_prose_fits_its_budget_and_keeps_the_start_of_the_text(lines, budget):
    from regio.compaction._commit import fit_prose

    text = "\n".join(lines)
    counter = _Counter()
    fitted = fit_prose(counter, text, budget)  # type: ignore[arg-type]
    if counter.count_text(text) <= budget:
        assert fitted == text
    else:
        assert counter.count_text(fitted) <= max(budget, 1)
        assert fitted.startswith("\u2026")
        assert text.endswith(fitted[1:].lstrip("\n").lstrip())
