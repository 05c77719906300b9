"""``summarizer.carry_forward`` in a blueprint: ``append`` (the default) keeps every summary of a
source until the history merges its oldest; ``replace`` keeps one rolling summary per source,
each compaction's summarizer reading the previous summary with what it cuts. The key reaches
the engine, ``regio validate`` says which, a bad value is refused naming the key, and under
``replace`` the history never holds two summaries of one source while every message cut stays
covered by the one it holds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from regio.blueprint import BlueprintError, load_blueprint
from regio.blueprint.summary import render_summary
from regio.content import ToolUse
from regio.engine import Engine
from regio.regions.compaction import ITEMS_META
from regio.regions.events import CompactionQueued, Written

BLUEPRINT = """\
version: 1
name: rolling
model:
  provider: anthropic
  name: claude-sonnet-4-6
  context_window: 6000
  max_output_tokens: 500
tokenizer: heuristic
summarizer:
  max_summary_tokens: 300
{carry}
regions:
  - name: system
    kind: pinned
    volatility: stable
    budget: 300
    seed: You fix bugs.
  - name: conversation_history
    kind: compact_history
    source: conversation
    budget: 700
  - name: conversation
    kind: sliding_window
    budget: "60%"
    eviction:
      strategy: compact
      target: 800
"""


def _text(carry: str | None) -> str:
    return BLUEPRINT.format(carry="" if carry is None else f"  carry_forward: {carry}")


def _turn(engine: Engine, turn: int, words: int) -> None:
    engine.add_user(f"Turn {turn}: check ticket TCK-{1000 + turn} and report its status.")
    call = ToolUse(id=f"call-{turn}", name="read", input={"path": f"src/mod{turn}.py"})
    engine.add_assistant(f"Reading src/mod{turn}.py", [call])
    body = " ".join(f"line{turn}_{i}" for i in range(words))
    engine.add_tool_result(f"call-{turn}", f"Status: open-{turn}\n{body}")
    engine.request()


def _summaries(engine: Engine) -> list[Any]:
    history = engine.window.region("conversation_history")
    return [e for e in history.entries if ITEMS_META not in e.meta]


class _Seen:
    """What an engine's events said: the conversation's admitted entry ids, merges queued."""

    def __init__(self, engine: Engine) -> None:
        self.admitted: list[str] = []
        self.merges = 0
        engine.subscribe(self)

    def __call__(self, event: Any) -> None:
        if isinstance(event, Written) and event.region == "conversation":
            self.admitted.append(event.entry_id)
        elif isinstance(event, CompactionQueued) and event.reason == "history_over_budget":
            self.merges += 1


@pytest.mark.parametrize(
    ("carry", "expected"), [(None, "append"), ("append", "append"), ("replace", "replace")]
)
def test_the_blueprint_key_reaches_the_engine(carry: str | None, expected: str) -> None:
    assert load_blueprint(_text(carry)).summarizer.carry_forward == expected
    assert Engine.from_blueprint(_text(carry)).options.carry_forward == expected


def test_a_bad_value_is_refused_naming_the_key() -> None:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(_text("rolling"))
    message = str(info.value)
    assert "summarizer.carry_forward" in message and "replace" in message


def test_validate_says_whether_summaries_roll() -> None:
    def shown(carry: str | None) -> str:
        console = Console(width=200, record=True)
        render_summary(load_blueprint(_text(carry)), console)
        return console.export_text()

    rolling, appended = shown("replace"), shown(None)
    assert "from conversation; one rolling summary" in rolling
    assert "one rolling summary)" in rolling
    assert "from conversation; merge oldest" in appended
    assert "summaries appended)" in appended


def test_replace_keeps_one_summary_and_makes_no_merge_call_where_append_merges() -> None:
    rolling = Engine.from_blueprint(_text("replace"))
    appended = Engine.from_blueprint(_text("append"))
    seen_rolling, seen_appended = _Seen(rolling), _Seen(appended)
    for turn in range(1, 61):
        _turn(rolling, turn, 120)
        _turn(appended, turn, 120)
    assert len(_summaries(rolling)) == 1
    assert seen_rolling.merges == 0
    assert seen_appended.merges > 0 and len(_summaries(appended)) > 1
    # both compacted many times; the rolling summary is a newer version each time
    assert _summaries(rolling)[0].meta["version"] >= 4


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(5, 400), min_size=5, max_size=30))
def test_the_rolling_summary_covers_every_message_cut(sizes: list[int]) -> None:
    engine = Engine.from_blueprint(_text("replace"))
    seen = _Seen(engine)
    for turn, words in enumerate(sizes, start=1):
        _turn(engine, turn, words)
        summaries = _summaries(engine)
        assert len(summaries) <= 1
        kept = {e.id for e in engine.window.region("conversation").entries}
        covered = set(summaries[0].meta.get("covers_all", ())) if summaries else set()
        missing = set(seen.admitted) - kept - covered
        assert not missing, "a message left without the summary covering it"
    assert seen.merges == 0
