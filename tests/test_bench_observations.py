"""The bench replay admits every recorded observation as an observation, on every path.

An importer marks a plain-text agent's environment observation (``UserMessage.observation``);
the replay hands the mark to the engine (``Engine.add_message(..., observation=True)``) whether
the observation is added as captured (its footer stripped into a region) or, when a region
refused the capture, as recorded (the fallback); the task and any other user message is not
marked.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _bench_fixtures import FOOTER, footer_state_blueprint
from regio.bench.capture import AddMessage, FooterRule, capture_stream
from regio.bench.replay import replay
from regio.content import Message, Text
from regio.engine import Engine
from regio.traces.format import AssistantMessage, Header, SystemPrompt, Trace, UserMessage


def _blueprint(state_budget: int) -> Any:
    return footer_state_blueprint("observations", state_budget)


def _trace(bodies: list[str], *, task_footer: bool = False) -> Trace:
    """The task (with a footer when ``task_footer``), then per body an action and an
    observation of that body ending with the SWE-agent footer."""
    events: list[Any] = [SystemPrompt(0.0, "You are a careful engineer.")]
    task = "Fix the bug. TODO: add a test." + (FOOTER.format(f="n/a") if task_footer else "")
    events.append(UserMessage(0.0, (Text(task),)))
    for i, body in enumerate(bodies):
        events.append(AssistantMessage(2.0 * i + 1, (Text(f"step {i}\n```\ncat f{i}.py\n```"),)))
        text = body + FOOTER.format(f=f"f{i}.py")
        events.append(UserMessage(2.0 * i + 2, (Text(text),), observation=True))
    events.append(AssistantMessage(2.0 * len(bodies) + 1, (Text("done"),)))
    return Trace(Header(id="tiny/observations", source_format="swe-agent"), tuple(events))


def _admitted(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Message, bool]]:
    """Every ``(message, observation)`` the engines are given from now on."""
    seen: list[tuple[Message, bool]] = []
    original = Engine.add_message

    def spy(self: Engine, message: Message, **kw: Any) -> Any:
        seen.append((message, bool(kw.get("observation", False))))
        return original(self, message, **kw)

    monkeypatch.setattr(Engine, "add_message", spy)
    return seen


def test_an_observation_and_its_fallback_are_both_marked_in_the_capture_stream() -> None:
    trace = _trace(["# TODO: handle this", 'raise ValueError("x")'], task_footer=True)
    items = [
        i
        for i in capture_stream(trace, [FooterRule("env_state")], lambda s: len(s) // 4)
        if isinstance(i, AddMessage) and i.message.role == "user"
    ]
    assert [i.observation for i in items] == [False, True, True]
    for item in items[1:]:
        assert item.moves and item.fallback is not None  # a stripped footer, the recorded text


@pytest.mark.parametrize(
    ("state_budget", "refused"),
    [(400, False), (2, True)],  # the footer filed; the footer refused: the fallback is added
)
def test_every_recorded_observation_reaches_the_engine_as_an_observation(
    monkeypatch: pytest.MonkeyPatch, state_budget: int, refused: bool
) -> None:
    trace = _trace(["# TODO: handle this", "13:    raise ValueError('x')", "ok"])
    seen = _admitted(monkeypatch)
    out = replay(trace, _blueprint(state_budget), layouts=("regio",))
    assert (out.refused_writes > 0) is refused
    users = [(m.text, flag) for m, flag in seen if m.role == "user"]
    assert [flag for _, flag in users] == [False, True, True, True]
    assert ("(Open file:" in users[1][0]) is refused  # the recorded text, footer and all


@settings(max_examples=20, deadline=None)
@given(
    bodies=st.lists(
        st.sampled_from(["# TODO: handle this", "You must never do this.", "AssertionError: 1"]),
        min_size=1,
        max_size=5,
    ),
    state_budget=st.sampled_from([2, 400]),
)
def test_the_replay_marks_exactly_the_recorded_observations(
    bodies: list[str], state_budget: int
) -> None:
    trace = _trace(bodies)
    with pytest.MonkeyPatch.context() as monkeypatch:
        seen = _admitted(monkeypatch)
        replay(trace, _blueprint(state_budget), layouts=("regio",))
    recorded = [e.observation for e in trace.events if isinstance(e, UserMessage)]
    assert [flag for m, flag in seen if m.role == "user"] == recorded
