"""A request's layout work follows what changed since the previous request, not the session's
length: the Anthropic renderer walks only the messages after the final prefix the session's
render log keeps rendered (:mod:`regio.layout.render.prefix`), and the payload check reads only
the messages after the ones it checked for an earlier request. (The bytes are the same as a
whole render's: the goldens, and the property below against a render without the log.)"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import ToolUse
from regio.layout import wellformed
from regio.layout.render import anthropic
from regio.layout.render.anthropic import render_anthropic
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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=30))
def test_property_a_payload_rendered_from_the_kept_prefix_is_a_whole_render(
    steps: list[tuple[str, int]],
) -> None:
    """Any sequence of user messages, assistant texts, parallel calls with their results and
    requests: every payload equals the same request rendered without the render log, and
    editing a payload changes none after it."""
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
            for message in payload["messages"]:  # the caller's to edit
                for block in message["content"]:
                    block.clear()
                message["content"].append({"type": "text", "text": "edited"})
