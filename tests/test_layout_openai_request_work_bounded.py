"""The OpenAI renderers' work per request follows what changed since the previous request, not
the session's length, as the Anthropic renderer's does (tests/test_layout_request_work_bounded.py):
Chat Completions and Responses copy the items of the final prefix the session's render log keeps
(:mod:`regio.layout.render.prefix`) and walk, place (Chat tool media), scan for item calls
(Responses) and check only what comes after it. The payloads are whole renders: every one
equals the request rendered without the render log, whatever the prefix kept, through calls
whose results carry media or came as custom tool calls, and a prefix that ends inside a turn
(the compaction and relief property of the Anthropic tests runs for these APIs too)."""

from __future__ import annotations

import os
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from media_support import png
from regio.content import Message, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout import wellformed
from regio.layout.render import openai
from regio.layout.render.prefix import MessagePrefix
from regio.regions import Pinned, SlidingWindow
from regio.responses_items import call_block
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from render_support import whole_render
from runtime_stubs import make_engine
from test_layout_request_work_bounded import _PROXY_LIKE, _scrub

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "20"))
APIS = ("openai_chat", "openai_responses")
_PROVIDER = {"openai_chat": "openai", "openai_responses": "openai_responses"}
_SHOT = png(8, 8)


def _engine(api: str) -> Engine:
    regions = [
        Pinned(name="system", budget=2_000),
        SlidingWindow(name="conversation", budget=200_000),
    ]
    return make_engine(regions, max_tokens=300_000, provider=_PROVIDER[api])


def _patch_call(n: str) -> ToolUse:
    """A custom tool call (as Codex CLI's ``apply_patch`` comes in a Responses request)."""
    item = {"type": "custom_tool_call", "call_id": f"p{n}", "name": "apply_patch", "input": n}
    return call_block(item, "test")


def _calls(engine: Engine, n: str, size: int, together: bool) -> None:
    """An assistant turn of ``size`` parallel calls: a custom tool call, a screenshot whose
    result carries an image, reads; the results regio's own (no Responses item), in reverse
    order, in one message (``together``) or one message each."""
    calls = [ToolUse(f"c{n}x{k}", "read", {"p": [n, k]}) for k in range(size)]
    calls[0] = _patch_call(n)
    if size > 1:
        calls[1] = ToolUse(f"s{n}", "screenshot", {})
    engine.add_assistant(f"calling {n}", calls)
    results = [
        ToolResult(c.id, f"result {c.id}", media=(_SHOT,) if c.name == "screenshot" else ())
        for c in reversed(calls)
    ]
    if together:
        engine.add_message(Message.tool(results))
    else:
        for result in results:
            engine.add_message(Message.tool([result]))


class _Count:
    """Counts the conversation messages the renderer walks (regroups from blocks, looks up,
    copies one by one), the Chat messages it places (tool media held back), the blocks it scans
    for item calls (Responses) and the payload messages or items the check reads."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.walked = self.placed = self.scanned = self.checked = 0
        group_runs, hold, item_calls = openai.group_runs, openai.hold_tool_media, openai._item_calls
        chat, responses = wellformed._check_chat_message, wellformed._check_responses_item

        def walked(*args: Any) -> Any:
            out = group_runs(*args)
            self.walked += len(out)
            return out

        def placed(messages: Any, *args: Any) -> None:
            self.placed += len(messages)
            hold(messages, *args)

        def scanned(blocks: Any, start: int = 0) -> Any:
            self.scanned += len(blocks) - start
            return item_calls(blocks, start)

        def checked(step: Any) -> Any:
            def check(*args: Any) -> None:
                self.checked += 1
                step(*args)

            return check

        monkeypatch.setattr(openai, "group_runs", walked)
        monkeypatch.setattr(openai, "hold_tool_media", placed)
        monkeypatch.setattr(openai, "_item_calls", scanned)
        monkeypatch.setattr(wellformed, "_check_chat_message", checked(chat))
        monkeypatch.setattr(wellformed, "_check_responses_item", checked(responses))

    def counts(self) -> dict[str, int]:
        """Each counter by name (``walked``, ``placed``, ``scanned``, ``checked``)."""
        return dict(vars(self))


def _turn(engine: Engine, turn: int) -> tuple[Any, dict[str, Any]]:
    """A user message, three parallel calls (a custom tool call, a screenshot, a read) and
    their results, then the request and its usage."""
    engine.add_user(f"turn {turn}: " + " ".join(f"u{turn}w{i}" for i in range(30)))
    _calls(engine, str(turn), 3, together=turn % 2 == 0)
    out = engine.request()
    engine.observe({"input_tokens": 10 * turn, "output_tokens": 5})
    return out


def _layout_work(monkeypatch: pytest.MonkeyPatch, api: str, turns: int) -> dict[str, int]:
    engine = _engine(api)
    for turn in range(1, turns + 1):
        _turn(engine, turn)
    with monkeypatch.context() as patch:
        count = _Count(patch)
        request, payload = _turn(engine, turns + 1)
    assert payload == whole_render(request, payload, api)
    return count.counts()


@pytest.mark.parametrize("api", APIS)
def test_one_more_turn_renders_places_scans_and_checks_as_much_at_turn_60_as_at_turn_5(
    monkeypatch: pytest.MonkeyPatch, api: str
) -> None:
    early = _layout_work(monkeypatch, api, 5)
    late = _layout_work(monkeypatch, api, 60)
    assert early["walked"] and early["checked"], early  # the counters see the renderer work
    assert early["placed" if api == "openai_chat" else "scanned"], early
    for name, work in late.items():
        assert work <= early[name], (name, early, late)


_step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 4)),
    st.tuples(st.just("calls"), st.integers(1, 3)),
    st.tuples(st.just("apart"), st.integers(1, 3)),
    st.tuples(st.just("text"), st.integers(1, 4)),
    st.tuples(st.just("request"), st.just(0)),
)


def _play(engine: Engine, steps: list[tuple[str, int]], api: str) -> None:
    """Play ``steps`` (a request after the last), each payload checked against a whole render
    and then edited at every depth, as its caller may."""
    for n, (kind, size) in enumerate([*steps, ("request", 0)]):
        if kind == "user":
            engine.add_user(" ".join(f"u{n}w{i}" for i in range(size)))
        elif kind == "text":
            engine.add_assistant(" ".join(f"a{n}w{i}" for i in range(size)))
        elif kind in ("calls", "apart"):
            _calls(engine, str(n), size, together=kind == "calls")
        else:
            request, payload = engine.request(api=api)
            assert payload == whole_render(request, payload, api)
            _scrub(payload)  # the caller's to edit, at every depth


@pytest.mark.parametrize("api", APIS)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_step, min_size=1, max_size=30))
def test_property_an_openai_payload_rendered_from_the_kept_prefix_is_a_whole_render(
    api: str, steps: list[tuple[str, int]]
) -> None:
    """Any sequence of user messages, assistant texts, parallel calls (a custom tool call, a
    screenshot with an image, reads) with their results together or apart, and requests:
    every payload equals the same request rendered without the render log, and editing a
    payload, down to a call's arguments, changes none after it."""
    _play(_engine(api), steps, api)


def _marked_engine() -> Engine:
    """An engine whose requests carry a cache marker on their newest final message (the
    Anthropic plan, rendered for an OpenAI API): the render log keeps no unit with a marker,
    so the kept prefix ends before that message."""
    counter = get_counter("heuristic")
    return Engine.from_blueprint(
        _PROXY_LIKE, token_counter=counter, summarizer=ExtractiveSummarizer(counter=counter)
    )


@pytest.mark.parametrize("api", APIS)
def test_a_prefix_ending_after_held_media_or_an_unanswered_custom_call_renders_whole(
    api: str,
) -> None:
    """The kept prefix ends after a tool message whose result's image Chat holds back until
    the turn's tool messages end (the message after it is outside the prefix), or after a
    custom tool call whose result, one regio made, is outside it (Responses answers the call
    with a custom tool output: the prefix carries its item calls)."""
    engine = _marked_engine()
    engine.add_user("Read every file. " + "context " * 1500)
    held = answered = 0

    def request() -> None:
        nonlocal held, answered
        request, payload = engine.request(api=api)
        assert payload == whole_render(request, payload, api)
        prefix = engine.render_log.prefixes[api]
        assert isinstance(prefix, MessagePrefix)
        held += bool(prefix.held)
        results = {b.block.tool_use_id for b in prefix.blocks if isinstance(b.block, ToolResult)}
        answered += any(call not in results for call in prefix.calls)

    for turn in range(1, 6):
        job, shot = ToolUse(f"job{turn}", "run", {"x": turn}), ToolUse(f"s{turn}", "shot", {})
        engine.add_assistant(f"start {turn}", [_patch_call(str(turn)), job, shot])
        report = ToolResult(job.id, "progress 0", final=False)
        media = ToolResult(shot.id, "shot", media=(_SHOT,))
        engine.add_message(Message.tool([report, media, ToolResult(f"p{turn}", "patched")]))
        request()
        engine.add_message(Message.tool([ToolResult(job.id, "done")]))
        request()
        engine.add_user(f"next {turn}")
        request()
    assert held if api == "openai_chat" else answered  # the case this test names happened
    payload = engine.request(api=api)[1]
    if api == "openai_chat":
        media_messages = [m for m in payload["messages"] if isinstance(m["content"], list)]
        assert len(media_messages) == 5 and all(m["role"] == "user" for m in media_messages)
    else:
        outputs = [i for i in payload["input"] if i.get("type") == "custom_tool_call_output"]
        assert len(outputs) == 5


def test_a_chat_payload_whose_system_message_came_or_went_is_checked_from_its_first() -> None:
    """The session's kept prefix outlives a request whose head has no system message (the same
    conversation blocks, rendered with the session's render log): the check's progress,
    counted in payload messages, was made with the system message before the kept ones, so
    it is started again rather than resumed one message off (which reported a kept call as
    unanswered). Each payload equals the request rendered without the log."""
    regions = [
        Pinned(name="system", budget=2_000, volatility="stable"),  # a head system message
        SlidingWindow(name="conversation", budget=200_000),
    ]
    engine = make_engine(regions, max_tokens=300_000, provider="openai")
    engine.write("system", "You are a careful agent.")
    for turn in range(4):
        engine.add_user(f"turn {turn}")
        engine.add_assistant(f"calling {turn}", [ToolUse(f"c{turn}", "read", {"turn": turn})])
        engine.add_message(Message.tool([ToolResult(f"c{turn}", f"result {turn}")]))
        request, _ = engine.request(api="openai_chat")
    head = tuple(b for b in request.blocks if b.level != "system")
    bare = msgspec.structs.replace(request, blocks=head, total_tokens=-1)
    for each in (request, bare, request, bare):
        payload = openai.render_openai_chat(each, model="m", log=engine.render_log)
        assert payload == whole_render(each, payload, "openai_chat")
        assert (payload["messages"][0]["role"] == "system") == (each is request)
