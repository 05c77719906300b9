"""A request's layout work follows what changed since the previous request, not the session's
length: the Anthropic renderer walks only the messages after the final prefix the session's
render log keeps rendered (:mod:`regio.layout.render.prefix`), and the payload check reads only
the messages after the ones it checked for an earlier request. (The bytes are the same as a
whole render's: the goldens, and the property below against a render without the log.)"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from regio import turngroups
from regio.content import ToolUse
from regio.engine import Engine
from regio.layout import wellformed
from regio.layout.render import anthropic
from regio.layout.render.anthropic import render_anthropic
from regio.policies import units
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from render_support import PREFIX_APIS, whole_render
from store_support import play_turn, store_engine


class _Count:
    """Counts the conversation messages the renderer walks (regroups from blocks, looks up,
    copies one by one) and the payload messages the check reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walked = 0
        self.checked = 0
        group_runs, blocks_of = anthropic.group_runs, wellformed._blocks_of

        def walked(*args: Any) -> Any:
            out = group_runs(*args)
            self.walked += len(out)
            return out

        def checked(message: Any) -> Any:
            self.checked += 1
            return blocks_of(message)

        monkeypatch.setattr(anthropic, "group_runs", walked)
        monkeypatch.setattr(wellformed, "_blocks_of", checked)


def _layout_work(monkeypatch: pytest.MonkeyPatch, turns: int) -> tuple[int, int]:
    engine = store_engine()
    for turn in range(1, turns + 1):
        play_turn(engine, turn)
    with monkeypatch.context() as patch:
        count = _Count(patch)
        play_turn(engine, turns + 1)
    return count.walked, count.checked


def test_one_more_turn_renders_and_checks_as_many_messages_at_turn_60_as_at_turn_5(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    early = _layout_work(monkeypatch, 5)
    late = _layout_work(monkeypatch, 60)
    assert late[0] <= early[0], (early, late)
    assert late[1] <= early[1], (early, late)


_step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 4)),
    st.tuples(st.just("calls"), st.integers(1, 3)),
    st.tuples(st.just("text"), st.integers(1, 4)),
    st.tuples(st.just("request"), st.just(0)),
)


def _scrub(value: Any) -> None:
    """Empty ``value`` and every container in it (a caller editing its payload in place)."""
    for inner in list(value.values() if isinstance(value, dict) else value):
        if isinstance(inner, (dict, list)):
            _scrub(inner)
    value.clear()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=30))
def test_property_a_payload_rendered_from_the_kept_prefix_is_a_whole_render(
    steps: list[tuple[str, int]],
) -> None:
    """Any sequence of user messages, assistant texts, parallel calls with their results and
    requests: every payload equals the same request rendered without the render log, and
    editing a payload, down to a call's arguments, changes none after it."""
    engine = store_engine()
    for n, (kind, size) in enumerate([*steps, ("request", 0)]):
        if kind == "user":
            engine.add_user(" ".join(f"u{n}w{i}" for i in range(size)))
        elif kind == "text":
            engine.add_assistant(" ".join(f"a{n}w{i}" for i in range(size)))
        elif kind == "calls":
            calls = [ToolUse(id=f"c{n}x{k}", name="read", input={"p": [n, k]}) for k in range(size)]
            engine.add_assistant(f"calling {n}", calls)
            for k in range(size):
                engine.add_tool_result(f"c{n}x{k}", f"result {n} {k}")
        else:
            request, payload = engine.request()
            whole = render_anthropic(
                request, model=payload["model"], max_tokens=payload["max_tokens"]
            )
            assert payload == whole
            for message in payload["messages"]:  # the caller's to edit, at every depth
                for block in message["content"]:
                    _scrub(block)
                message["content"].append({"type": "text", "text": "edited"})


class _Analysed:
    """Counts the entries the admissions and the layout group into units
    (:func:`regio.turngroups.group_entries`) and analyse (:func:`regio.policies.analyze`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entries = 0
        group, prefix_counts = turngroups._group, units._prefix_counts

        def grouped(items: Any, *args: Any) -> Any:
            self.entries += len(items)
            return group(items, *args)

        def analysed(entries: Any, *args: Any) -> Any:
            self.entries += len(entries)
            return prefix_counts(entries, *args)

        monkeypatch.setattr(turngroups, "_group", grouped)
        monkeypatch.setattr(units, "_prefix_counts", analysed)


#: the proxy benchmark's blueprint (benchmarks/test_bench_proxy.py) with a window that never
#: fills in 60 steps: compact eviction (token hysteresis), a history region, relief
_PROXY_LIKE = """
version: 1
name: bounded
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 2000}
tokenizer: o200k_base
tools: {context: none}
relief: {enabled: true, restore_tool: false}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, heading: false,
     capture: [{rule: system_prompt}]}
  - {name: conversation_history, kind: compact_history, source: conversation,
     volatility: grows, budget: 3000}
  - {name: conversation, kind: sliding_window, budget: "70%", max_items: 2000,
     eviction: {strategy: compact, compact_count: 20}}
"""


def _tool_step(engine: Engine, step: int) -> None:
    engine.request()
    engine.add_assistant(f"reading {step}", [ToolUse(f"c{step}", "read", {"p": step})])
    engine.add_tool_result(f"c{step}", f"line {step} " * 40)


def _analysis_work(monkeypatch: pytest.MonkeyPatch, steps: int) -> int:
    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        _PROXY_LIKE, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )
    engine.add_user("Read every file.")
    for step in range(1, steps + 1):
        _tool_step(engine, step)
    with monkeypatch.context() as patch:
        count = _Analysed(patch)
        _tool_step(engine, steps + 1)
        engine.request()
    return count.entries


def test_one_more_tool_step_groups_and_analyses_as_many_entries_at_step_60_as_at_step_5(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool loop's admissions (the conversation's growth per request, the newest turn an
    admission keeps) read the entries appended since, not the whole conversation."""
    early = _analysis_work(monkeypatch, 5)
    late = _analysis_work(monkeypatch, 60)
    assert late <= early, (early, late)


#: a window small enough that a few dozen steps compact and relieve (clearing old results
#: resets the render log; a compaction removes the conversation's oldest units)
_TIGHT = _PROXY_LIKE.replace("context_window: 200000", "context_window: 6000").replace(
    "max_output_tokens: 2000", "max_output_tokens: 500"
)

_tight_step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 60)),
    st.tuples(st.just("calls"), st.integers(1, 3)),
    st.tuples(st.just("big"), st.integers(100, 600)),
    st.tuples(st.just("request"), st.just(0)),
)


@pytest.mark.parametrize("api", PREFIX_APIS)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_tight_step, min_size=5, max_size=40))
@example(steps=[("big", 300), ("request", 0)] * 30)  # compacts 4 times (checked below)
def test_property_payloads_stay_whole_renders_through_compaction_and_relief(
    api: str, steps: list[tuple[str, int]]
) -> None:
    """In a window that compacts and clears old results, every payload (for each API whose
    renderer keeps a prefix) still equals the same request rendered without the render log:
    the kept prefix never outlives a cut or a relief edit."""
    counter = get_counter("heuristic")
    engine = Engine.from_blueprint(
        _TIGHT, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )
    engine.add_user("Read every file.")
    for n, (kind, size) in enumerate([*steps, ("request", 0)]):
        if kind == "user":
            engine.add_user(" ".join(f"u{n}w{i}" for i in range(size)))
        elif kind in ("calls", "big"):
            count = size if kind == "calls" else 1
            words = 20 if kind == "calls" else size
            calls = [
                ToolUse(id=f"c{n}x{k}", name="read", input={"p": [n, k]}) for k in range(count)
            ]
            engine.add_assistant(f"calling {n}", calls)
            for k in range(count):
                engine.add_tool_result(f"c{n}x{k}", " ".join(f"r{n}k{k}w{i}" for i in range(words)))
        else:
            request, payload = engine.request(api=api)
            assert payload == whole_render(request, payload, api)
    if steps == [("big", 300), ("request", 0)] * 30:  # the example exercises what it names
        assert engine.session.book.versions.get("conversation", 0) >= 2
