"""Three field classes that used to pass silently are reported: a compaction that compacts
nothing because its only compactable unit is an open call says why (FC-10, FC-23.3); a
whole-context trigger at or below the fixed floor is reported when the blueprint loads
(FC-23.b); the phrases that make a summary a refusal are the deployment's to extend (another
language's refusals are refused, not committed as summaries)."""

from __future__ import annotations

from typing import Any

import pytest

from regio.blueprint import load_blueprint
from regio.content import ToolUse
from regio.engine import Engine
from regio.summarizers._validity import summary_defect

CONVERSATION = """
version: 1
name: reported
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000}
tokenizer: heuristic
window: {compact_trigger: TRIGGER}
summarizer: {refusal_phrases: PHRASES}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 3000, seed: "SYSTEM"}
  - {name: history, kind: compact_history, source: conversation, budget: 1500}
  - name: conversation
    kind: sliding_window
    budget: 40000
    eviction: {strategy: compact, compact_count: 4}
"""


def blueprint(trigger: str = "150000", phrases: str = "[]", system: str = "Be careful.") -> str:
    return (
        CONVERSATION.replace("TRIGGER", trigger)
        .replace("PHRASES", phrases)
        .replace("SYSTEM", system)
    )


# ----- a compaction whose only unit is an open call says why nothing was compacted -------------
def test_a_compaction_whose_only_unit_is_an_open_call_reports_why_nothing_was_compacted() -> None:
    engine = Engine.from_blueprint(blueprint())
    engine.add_user("start the build")
    engine.add_assistant("starting it", [ToolUse("bg", "build", {})])
    engine.add_tool_result("bg", "status: running", final=False)
    engine.add_user("meanwhile: how long will it take?")
    assert engine.compact(keep_tokens=0) is not None  # the first user message is summarized
    assert engine.events.of_kind("nothing_compacted") == []
    assert engine.compact(keep_tokens=0) is None  # left: the open call and the current turn
    (event,) = engine.events.of_kind("nothing_compacted")
    assert (event.trigger, event.region, event.reason, event.open_calls) == (
        "manual",
        "conversation",
        "open_calls",
        ("bg",),
    )


def test_a_compaction_of_only_the_current_turn_says_so() -> None:
    engine = Engine.from_blueprint(blueprint())
    engine.add_user("hello")
    engine.compact(keep_tokens=0)
    (event,) = engine.events.of_kind("nothing_compacted")
    assert (event.reason, event.open_calls) == ("current_turn", ())


# ----- a whole-context trigger below the fixed floor is reported when the blueprint loads ------
def test_a_whole_context_trigger_below_the_fixed_floor_is_reported_at_load() -> None:
    bp = load_blueprint(blueprint(trigger="200", system="Be careful. " * 100))
    (warning,) = [w for w in bp.warnings if w.path == "window.compact_trigger"]
    assert "at or below the fixed floor" in warning.message
    assert warning.line == 6
    engine = Engine.from_blueprint(bp)
    assert engine.options.compact_trigger == 200
    for turn in range(3):
        engine.add_user(f"turn {turn}")
        engine.request()
    assert len(engine.events.of_kind("trigger_below_floor")) == 1  # once, not per turn
    assert engine.events.of_kind("compaction_started") == []


@pytest.mark.parametrize(
    ("trigger", "expected"),
    [("2500", "may hold"), ('"90%"', None), ("150000", None), ("999999", "above the window")],
)
def test_the_whole_context_trigger_is_checked_against_floor_budgets_and_window(
    trigger: str, expected: str | None
) -> None:
    bp = load_blueprint(blueprint(trigger=trigger))
    found = [w.message for w in bp.warnings if w.path == "window.compact_trigger"]
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1 and expected in found[0]


def test_a_percent_trigger_resolves_against_the_window() -> None:
    engine = Engine.from_blueprint(blueprint(trigger='"50%"'))
    assert engine.options.compact_trigger == engine.window.max_tokens // 2


# ----- refusal phrases of another language ------------------------------------------------------
REFUSAL_ES = "Lo siento, no puedo resumir esta conversación."


def _compacting(phrases: str, answer: str) -> Engine:
    def summarizer(entries: Any, standing: str, extra: Any) -> str:
        return answer

    engine = Engine.from_blueprint(blueprint(phrases=phrases), summarizer=summarizer)
    for n in range(6):
        engine.add_user(f"question {n} " + "word " * 40)
        engine.add_assistant(f"answer {n} " + "word " * 40)
    return engine


def test_a_refusal_in_a_configured_language_is_refused_not_committed() -> None:
    engine = _compacting('["Lo siento", "No puedo"]', REFUSAL_ES)
    assert engine.options.refusal_phrases == ("Lo siento", "No puedo")
    with pytest.raises(Exception, match="refus"):
        for _ in range(3):
            engine.compact(keep_messages=2)
    assert engine.window.region("history").entries == []
    reasons = {e.reason for e in engine.events.of_kind("compaction_rejected")}
    assert reasons == {"refusal"}


def test_without_the_phrase_the_same_refusal_would_be_committed_as_a_summary() -> None:
    engine = _compacting("[]", REFUSAL_ES)
    engine.compact(keep_messages=2)
    assert engine.window.region("history").entries[-1].text == REFUSAL_ES


def test_refusal_phrases_match_the_opening_only_case_and_space_insensitively() -> None:
    phrases = ("Es tut mir leid", "Je ne peux pas")
    assert summary_defect("¡ES  tut mir LEID, aber ...", phrases) == "refusal"
    assert summary_defect("Je ne peux pas résumer.", phrases) == "refusal"
    assert summary_defect("Résumé : je ne peux pas venir lundi.", phrases) is None
    assert summary_defect("I'm sorry, I can't.", ()) == "refusal"  # the built-in ones stay


def test_an_empty_refusal_phrase_is_refused() -> None:
    with pytest.raises(ValueError, match="refusal_phrases: every phrase must be text"):
        Engine.from_blueprint(blueprint(), refusal_phrases=("...",))
