"""``regio validate`` says, with numbers, when a conversation evicts or compacts on every turn
(issue 13)."""

from __future__ import annotations

from regio.blueprint import load_blueprint
from regio.blueprint.pressure import pressure_notes
from regio.blueprint.validate import resolved_budget

BASE = """
version: 1
name: t
model:
  {provider: anthropic, name: claude-sonnet-4-5, context_window: 100000, max_output_tokens: 1000}
regions:
  - {name: sys, kind: pinned, budget: 1000, volatility: stable}
  - {name: h, kind: compact_history, source: conversation, budget: 2000}
  - name: conversation
    kind: sliding_window
    budget: 50000
"""


def _bp(eviction: str) -> object:
    base = (
        BASE
        if "compact" in eviction
        else BASE.replace(
            "  - {name: h, kind: compact_history, source: conversation, budget: 2000}\n", ""
        )
    )
    return load_blueprint(base + f"    eviction: {eviction}\n")


def _notes(bp: object) -> list[str]:
    budgets = {i: resolved_budget(s, bp.window_tokens) for i, s in enumerate(bp.regions)}
    return pressure_notes(bp, budgets)


def test_a_target_just_below_its_trigger_warns_with_the_numbers() -> None:
    bp = _bp('{strategy: compact, trigger: "90%", target: 44900}')
    (warning,) = [w for w in bp.warnings if w.path.endswith("eviction.target")]
    assert "44900" in warning.message and "45000" in warning.message
    assert "every turn" in warning.message


def test_a_target_at_its_trigger_warns() -> None:
    bp = _bp("{strategy: bulk, trigger: 30000, target: 30000}")
    assert any("not below" in w.message and "bulk-evicts" in w.message for w in bp.warnings)


def test_a_compact_count_smaller_than_a_turn_warns() -> None:
    bp = load_blueprint(
        BASE + "    max_items: 50\n    eviction: {strategy: compact, compact_count: 2}\n"
    )
    (warning,) = [w for w in bp.warnings if w.path.endswith("compact_count")]
    assert "2 items" in warning.message and "every turn" in warning.message


def test_a_well_spaced_step_does_not_warn() -> None:
    bp = _bp('{strategy: compact, compact_count: 20, trigger: "90%", target: "40%"}')
    assert not [w for w in bp.warnings if "eviction" in w.path]


def test_notes_say_what_per_item_costs_and_where_a_step_lands() -> None:
    (per_item,) = _notes(_bp("{strategy: per_item}"))
    assert "50,000 tokens" in per_item and "every turn" in per_item
    fixed = _bp('{strategy: compact, trigger: "80%", target: 20000}\n    elastic: false')
    (step,) = _notes(fixed)
    assert "40,000 tokens" in step and "20,000 tokens" in step


def test_an_elastic_conversations_declared_trigger_is_a_share_of_the_windows_room() -> None:
    (step,) = _notes(_bp('{strategy: compact, trigger: "80%", target: 20000}'))
    # the other regions' seeds are empty: the room is the 99,000-token window less framing
    assert "40,000 tokens a request" not in step and "its trigger 80% of its room" in step
    assert "compacts at 79,200 tokens a request" in step  # 80% of 99,000
    assert "down to 20,000" in step
