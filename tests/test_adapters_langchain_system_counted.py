"""The LangChain middleware's caller system prompt, sent beside regio's window when no
``system_region`` holds it, is counted like everything else that is sent: in the request's
size, the ceiling, the whole-context compaction trigger and its fixed floor. Real langchain
(``create_agent``) with a fake chat model: no network."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.messages import AIMessage

import regio
from examples_support import FakeChatModel
from regio.adapters.langchain import RegioMiddleware
from regio.session._events import CompactionStarted, TriggerBelowFloor

REGIONS = """
version: 1
name: lc
model: {provider: openai, name: gpt-4o, context_window: 100000, max_output_tokens: 1000}
tokenizer: o200k_base
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, seed: "You help."}
"""
FIXED = REGIONS + "  - {name: conversation, kind: sliding_window, budget: 60000}\n"
COMPACTING = REGIONS + (
    "  - {name: history, kind: compact_history, source: conversation, volatility: grows,"
    " budget: 4000}\n"
    "  - name: conversation\n"
    "    kind: sliding_window\n"
    "    budget: 60000\n"
    "    eviction: {strategy: compact, compact_count: 20}\n"
)
CALLER = "Always answer in English and cite the file you read. " * 40


def _engine(blueprint: str = FIXED, **options: Any) -> tuple[regio.Engine, list[Any]]:
    engine = regio.Engine.from_blueprint(blueprint, **options)
    events: list[Any] = []
    engine.subscribe(events.append)
    for k in range(30):
        engine.add_user(f"question {k} " + "about the code base " * 20)
        engine.add_assistant(f"answer {k} " + "the function returns a value " * 20)
    return engine, events


def _invoke(engine: regio.Engine, system: str | None, **middleware: Any) -> None:
    model = FakeChatModel(messages=iter([AIMessage("ok")]))
    kwargs: dict[str, Any] = {} if system is None else {"system_prompt": system}
    agent = create_agent(
        model, tools=[], middleware=[RegioMiddleware(engine, **middleware)], **kwargs
    )
    agent.invoke({"messages": [{"role": "user", "content": "hi"}]})


def _sent_beside(engine: regio.Engine, text: str) -> int:
    return engine.counter.count(text + "\n\n")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_callers_system_prompt_counts_in_the_request_size_and_the_ceiling(provider):
    with_caller, _ = _engine()
    without, _ = _engine()
    _invoke(with_caller, CALLER, provider=provider)
    _invoke(without, None, provider=provider)
    added = _sent_beside(with_caller, CALLER)
    assert added > 400
    assert with_caller.budget.estimate() == without.budget.estimate() + added
    assert with_caller.ceiling() == without.ceiling() - added


def _trigger_between(blueprint: str) -> int:
    """A whole-context trigger half way between the request without the caller's system
    prompt and the request with it."""
    engine, _ = _engine(blueprint)
    return engine.budget.estimate() + _sent_beside(engine, CALLER) // 2


def test_the_callers_system_prompt_can_reach_the_whole_context_trigger():
    trigger = _trigger_between(COMPACTING)
    with_caller, caller_events = _engine(COMPACTING, compact_trigger=trigger)
    without, quiet = _engine(COMPACTING, compact_trigger=trigger)
    _invoke(with_caller, CALLER)
    _invoke(without, None)
    assert any(isinstance(e, CompactionStarted) for e in caller_events)
    assert not any(isinstance(e, CompactionStarted) for e in quiet)


def test_a_trigger_below_the_callers_system_prompt_is_reported_below_the_floor():
    trigger = _trigger_between(FIXED)
    with_caller, events = _engine(FIXED, compact_trigger=trigger)
    _invoke(with_caller, CALLER)
    assert [e.trigger for e in events if isinstance(e, TriggerBelowFloor)] == [trigger]


def test_the_callers_system_prompt_can_put_a_request_over_the_ceiling():
    """A window that fits the model's room alone but not with the caller's system prompt is
    compacted before it is sent (trigger ``ceiling``), so the request sent fits."""
    room = _trigger_between(COMPACTING) + 1000  # + the output reserve
    with_caller, caller_events = _engine(COMPACTING, context_window=room)
    without, quiet = _engine(COMPACTING, context_window=room)
    _invoke(with_caller, CALLER)
    _invoke(without, None)
    assert [e.trigger for e in caller_events if isinstance(e, CompactionStarted)] == ["ceiling"]
    assert not any(isinstance(e, CompactionStarted) for e in quiet)


def test_a_system_prompt_in_a_system_region_is_counted_once():
    in_region, _ = _engine()
    _invoke(in_region, CALLER, system_region="system")
    assert in_region.budget.beside_tokens == 0
    assert CALLER.strip() in in_region.window.region("system").entries[0].text


def test_a_changed_system_prompt_replaces_the_counted_one():
    engine, _ = _engine()
    _invoke(engine, CALLER)
    _invoke(engine, "Be brief.")
    assert engine.budget.beside_tokens == _sent_beside(engine, "Be brief.")
    _invoke(engine, None)
    assert engine.budget.beside_tokens == 0


@settings(max_examples=10, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=300))
def test_any_callers_system_prompt_adds_exactly_its_tokens(text):
    with_caller, _ = _engine()
    without, _ = _engine()
    _invoke(with_caller, text)
    _invoke(without, None)
    sent = _sent_beside(with_caller, text) if text else 0
    assert with_caller.budget.estimate() - without.budget.estimate() == sent
