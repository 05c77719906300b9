"""Blueprint checks on the conversation's history windows (FC-33), budgets and summary limit."""

from __future__ import annotations

import pytest

from regio.blueprint import BlueprintError, build_window, load_blueprint

TEXT = """\
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000,
        max_output_tokens: 8000}
regions:
  - {name: system, kind: pinned, budget: 2000, volatility: stable, seed: "You are helpful."}
  - name: conversation
    kind: sliding_window
    budget: 50000
    max_turns: {turns}
    max_tool_calls: {calls}
"""


def test_max_turns_and_max_tool_calls_reach_the_conversation_region() -> None:
    window = build_window(load_blueprint(TEXT.replace("{turns}", "3").replace("{calls}", "4")))
    options = window.conversation.options()
    assert (options["max_turns"], options["max_tool_calls"]) == (3, 4)


def test_a_bad_history_window_names_its_path_and_line() -> None:
    with pytest.raises(BlueprintError) as err:
        load_blueprint(TEXT.replace("{turns}", "-1").replace("{calls}", "4"))
    assert ":10: regions[1].max_turns" in str(err.value)


OVERSUBSCRIBED = """\
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 20000,
        max_output_tokens: 100}
regions:
  - {name: system, kind: pinned, budget: "60%", volatility: stable}
  - {name: notes, kind: temporary, budget: "50%"}
  - {name: conversation, kind: sliding_window, budget: 300}
"""


def test_budgets_that_add_up_past_the_window_get_a_warning_with_the_numbers() -> None:
    bp = load_blueprint(OVERSUBSCRIBED)
    (warning,) = [w for w in bp.warnings if w.path == "regions"]
    assert "22190 tokens, 112% of the 19900-token window" in warning.message


def test_a_default_summary_limit_too_large_for_a_small_window_says_what_to_set() -> None:
    with pytest.raises(BlueprintError) as err:
        load_blueprint(OVERSUBSCRIBED.replace("context_window: 20000", "context_window: 2000"))
    message = str(err.value)
    assert "summarizer.max_summary_tokens" in message
    assert "2000, the default" in message
    assert "at most 500" in message
