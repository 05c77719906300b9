"""The failure classes of issue 28, each through the public API: a rule loses its condition,
an instruction without a modal word is cut or lost, a preference, a goal or a named value is
cut to its identifiers, a paraphrased update leaves the stale value beside the new one, and the
agent's ``compact`` tool promises a compaction that does not happen."""

from __future__ import annotations

from regio.blueprint import load_blueprint
from regio.content import Entry, Text
from regio.engine import Engine
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import HeuristicCounter

_FILLER = [
    "Let's review the module layout for the ingestion pipeline.",
    "The dashboard mock shows latency p50 and p95 side by side.",
    "Standup notes: yesterday focused on schema cleanup, today on tests.",
    "The memo about hiring is in the shared drive, folder Q3 planning.",
]


def _summary(*texts: str) -> str:
    """The extractive summary of a chat in which each of ``texts`` comes after four turns of
    ordinary work (the shape of a long session: most of it is not what must be kept)."""
    entries: list[Entry] = []
    for text in [*texts, *(f"Batch {k} of the import went through." for k in range(12))]:
        for filler in _FILLER:
            entries.append(Entry(id=f"f{len(entries)}", blocks=(Text(filler),), role="user"))
            entries.append(
                Entry(id=f"f{len(entries)}", blocks=(Text("Acknowledged."),), role="assistant")
            )
        entries.append(Entry(id=f"u{len(entries)}", blocks=(Text(text),), role="user"))
        entries.append(Entry(id=f"a{len(entries)}", blocks=(Text("Noted."),), role="assistant"))
    return ExtractiveSummarizer(counter=HeuristicCounter())(entries, "", None)


def test_a_rule_keeps_its_condition() -> None:
    rule = "HARD CONSTRAINT: Budget cap is $500 total. Never exceed without explicit approval."
    assert rule in _summary(rule)


def test_instructions_without_a_modal_word_are_kept_whole() -> None:
    long = (
        "Report every time in the America/Los_Angeles timezone and round each duration to "
        "whole minutes in summaries."
    )
    summary = _summary("No external network calls from the sandbox.", long)
    assert "No external network calls from the sandbox." in summary
    assert long in summary


def test_preferences_goals_and_named_values_are_kept_whole() -> None:
    texts = (
        "USER PREFERENCE: User prefers a single decisive recommendation over a list of options.",
        "GOAL STATE: Current task is migrating auth to OAuth. Next step is token refresh.",
        "FACT: The on-call rotation owner this week is Priya Natarajan.",
    )
    summary = _summary(*texts)
    assert all(text in summary for text in texts)


def test_a_paraphrased_update_replaces_the_stale_value() -> None:
    summary = _summary(
        "HARD CONSTRAINT: Project budget cap is $800 total.",
        "Quick update: keep project spend under five hundred dollars from now on.",
    )
    assert "five hundred dollars" in summary and "$800" not in summary


def test_the_compact_tool_says_nothing_is_due_below_the_target() -> None:
    bp = load_blueprint(
        """
version: 1
name: tool
model:
  {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000, max_output_tokens: 1000}
tokenizer: heuristic
tools: {context: all}
regions:
  - {name: history, kind: compact_history, source: conversation, budget: 4000}
  - name: conversation
    kind: sliding_window
    budget: 60000
    max_items: 5000
    eviction: {strategy: compact, compact_count: 20}
"""
    )
    engine = Engine.from_blueprint(bp, summarizer=ExtractiveSummarizer())
    for i in range(20):
        engine.add_user(f"Please look at src/mod_{i}.py and tell me what it does.")
        engine.add_assistant(f"src/mod_{i}.py parses the config and returns a dict.", [])
    answer = engine.handle_tool_call("compact", {}).text
    assert "no compaction is due" in answer and "'conversation'" in answer
    engine.request(provider="text")
    assert engine.window.region("history").entries == []  # and indeed nothing was summarized
    answer = engine.handle_tool_call("compact", {}).text
    assert "no compaction is due" in answer
