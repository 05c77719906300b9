"""Retention through repeated compaction with the extractive summarizer (issue 13): after 5
rounds every planted constraint is still in the request, and at least 80% of the facts.

``python tests/test_pressure_canaries.py`` prints the per-type survival curve."""

from __future__ import annotations

import json
import random
from typing import Any

from regio.content import ToolUse
from regio.policies import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow
from regio.summarizers import ExtractiveSummarizer
from regio.summarizers._validity import summary_defect
from runtime_stubs import make_engine

CONSTRAINTS = (
    "You must never edit files under migrations/ in this repository.",
    "Do not change the public signature of Client.connect under any circumstances.",
    "Always run the full test suite with pytest -x before you submit.",
    "Only use the standard library for the new parser module.",
)
#: Facts planted in tool results: ``(sentence, value)``; a fact survives when its value does.
PLANTED = (
    ("deploy key is KEY-4821", "KEY-4821"),
    ("order ORD-7312 failed", "ORD-7312"),
    ("config lives in conf/settings_prod.toml", "conf/settings_prod.toml"),
    ("the queue holds 48213 jobs", "48213"),
    ("host db-17.internal answers slowly", "db-17.internal"),
    ("ticket TCK-5521 tracks it", "TCK-5521"),
    ("branch release-2024-11 is frozen", "release-2024-11"),
    ("function parse_header_v2 returns None", "parse_header_v2"),
    ("user id 993114 is affected", "993114"),
    ("cache file /var/cache/app/index.bin is stale", "/var/cache/app/index.bin"),
)
FACTS = tuple(value for _, value in PLANTED)
ERRORS = ("E   AssertionError: expected 3 rows, got 4 rows in test_merge_rows",)
TODOS = ("TODO: update CHANGELOG.md with the parser change.",)
FILLER = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit")


def _filler(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(FILLER) for _ in range(words))


def _engine() -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=300, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=900, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=4000,
                eviction=Compact(compact_count=10, trigger="80%", target="30%"),
            ),
        ],
        max_tokens=6000,
        summarizer=ExtractiveSummarizer(max_summary_tokens=400),
    )


def _kept(text: str, items: tuple[str, ...]) -> float:
    return sum(item in text for item in items) / len(items)


def canary_curve(
    rounds: int = 5, seed: int = 3, events: list[Any] | None = None
) -> dict[str, list[float]]:
    """Share of each canary type in the request after each of ``rounds`` compactions
    (``events``: receives the ``compaction_completed`` events)."""
    rng = random.Random(seed)
    engine = _engine()
    if events is not None:
        engine.subscribe(lambda e: events.append(e) if e.kind == "compaction_completed" else None)
    engine.add_user(CONSTRAINTS[0] + " Fix the failing merge test.")
    curve: dict[str, list[float]] = {"constraints": [], "facts": [], "errors": [], "todos": []}
    done = 0
    facts = [sentence for sentence, _ in PLANTED]
    i = 0
    while done < rounds and i < 400:
        payload = json.dumps(engine.request()[1])
        completed = len(engine.events.of_kind("compaction_completed"))
        while done < min(completed, rounds):  # one point per round (a merge is a round too)
            done += 1
            for name, items in (
                ("constraints", CONSTRAINTS),
                ("facts", FACTS),
                ("errors", ERRORS),
                ("todos", TODOS),
            ):
                curve[name].append(_kept(payload, items))
        call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
        engine.add_assistant(f"Looking at step {i}.", [call])
        body = _filler(rng, 150)
        if facts and i % 2 == 0:
            body = f"{body}\nnote: {facts.pop(0)}\n{_filler(rng, 20)}"
        if i == 3:
            body = f"{body}\n{ERRORS[0]}"
        engine.add_tool_result(call.id, body)
        if i in (5, 11, 17):
            engine.add_user(CONSTRAINTS[(i // 6) + 1] + " " + (TODOS[0] if i == 11 else ""))
        i += 1
    return curve


def test_five_rounds_of_extractive_compaction_keep_every_constraint_and_most_facts() -> None:
    engine_events: list[Any] = []
    curve = canary_curve(events=engine_events)
    assert "history" in [e.region for e in engine_events], "no summary was summarized again"
    assert len(curve["constraints"]) == 5, "fewer than 5 compactions happened"
    assert curve["facts"] and min(curve["facts"]) >= 0.8
    # constraints planted after a round are counted from their first round on
    assert curve["constraints"][-1] == 1.0
    assert all(a <= b for a, b in zip(curve["constraints"], curve["constraints"][1:], strict=False))
    assert curve["facts"][-1] >= 0.8
    assert curve["errors"][-1] == 1.0


def test_every_stored_summary_is_a_valid_summary() -> None:
    engine = _engine()
    engine.add_user(CONSTRAINTS[0])
    rng = random.Random(1)
    for i in range(80):
        engine.request()
        call = ToolUse(f"c{i}", "bash", {"cmd": "x"})
        engine.add_assistant("step", [call])
        engine.add_tool_result(call.id, _filler(rng, 160))
    history = engine.window.region("history")
    assert history.entries
    assert all(summary_defect(e.text) is None for e in history.entries)


if __name__ == "__main__":
    for kind, values in canary_curve().items():
        print(kind, " ".join(f"{v:.0%}" for v in values))
