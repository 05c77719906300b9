"""Capture in replay: how the bench turns a recorded trace into the region writes of a
regio-aware agent.

The bundled traces were recorded without regio: every piece of state lives in the conversation
or the system prompt. Replay maps trace content to region writes the way an agent built on
regio would make them, with the blueprint's ``capture`` rules (:mod:`regio.capture.rules`: the
rule objects, shared with the live capture ``regio proxy`` applies,
:mod:`regio.capture.live`). :func:`capture_stream` runs the rules once and yields one stream of
:data:`ReplayItem` s; the **same** stream drives every layout and every baseline, so
comparisons are fair. The model calls of the trace are :class:`Call` items in it.

A blueprint without ``capture`` lists replays the trace as recorded (messages only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import msgspec

from regio.capture.rules import (
    SWE_AGENT_FOOTER,
    TIME_LINE,
    AddMessage,
    CaptureRule,
    Extract,
    FooterRule,
    LookupRule,
    ParkRule,
    RegionOp,
    SystemPromptRule,
    add_moves,
    observe,
    rules_for,
)
from regio.content import Message, Text, ToolResult, ToolUse
from regio.traces.format import (
    AssistantMessage,
    RegionAppend,
    RegionRelease,
    RegionWrite,
    SystemPrompt,
    ToolResults,
    Trace,
    UserMessage,
)

#: The rule objects (:mod:`regio.capture.rules`) are named here too, for the replay's callers.
__all__ = [
    "SWE_AGENT_FOOTER",
    "TIME_LINE",
    "AddMessage",
    "Call",
    "CaptureRule",
    "Extract",
    "FooterRule",
    "LookupRule",
    "ParkRule",
    "RegionOp",
    "ReplayItem",
    "SystemPromptRule",
    "capture_stream",
    "rules_for",
]


class Call(msgspec.Struct, frozen=True, tag="call", tag_field="op"):
    """A model call: ``index`` (from 0), ``t`` when the request is sent and ``t_end`` when
    the reply completed (simulated seconds, from the trace clock), ``reply`` the recorded
    reply (its token count is the call's output)."""

    index: int
    t: float
    t_end: float
    reply: Message


ReplayItem = Call | AddMessage | RegionOp


def _moved(
    message: Message, recorded: Message, moves: Sequence[RegionOp], observation: bool = False
) -> AddMessage:
    """``message`` with the ``moves`` that took text out of it and, when there are any or
    it differs, the ``recorded`` message as its fallback (:class:`AddMessage`; ``observation``
    marks both as an environment observation)."""
    if not moves and message == recorded:
        return AddMessage(message, observation=observation)
    return AddMessage(message, tuple(moves), recorded, observation)


def _tool_results(
    event: ToolResults,
    calls: dict[str, ToolUse],
    lookups: Sequence[LookupRule],
    observed: Callable[[str, str], tuple[str, list[RegionOp]]],
) -> Iterator[ReplayItem]:
    """The message of ``event`` with its capture moves (footers and parks of each result,
    :func:`_moved`), then the ``lookups``' writes of the results of ``calls`` they apply to."""
    results: list[ToolResult] = []
    ops = []
    moves: list[RegionOp] = []
    for res in event.results:
        call = calls.get(res.tool_use_id)
        for lookup in lookups:
            if call is not None and not res.is_error and lookup.applies(call):
                ops.append(lookup.op(call, res.content))
        text, found = observed(res.content, res.tool_use_id)
        add_moves(moves, found)
        results.append(msgspec.structs.replace(res, content=text))
    yield _moved(Message("tool", tuple(results)), Message("tool", tuple(event.results)), moves)
    yield from ops


def capture_stream(
    trace: Trace, rules: Sequence[CaptureRule], count: Callable[[str], int]
) -> Iterator[ReplayItem]:
    """The replay stream of ``trace`` under ``rules``: messages (transformed), region
    operations and model calls, in trace order. ``count`` measures text in tokens (used by
    :class:`ParkRule`). Region events recorded in the trace itself (``region_write``, ...)
    pass through as :class:`RegionOp` s."""
    system_rules = [r for r in rules if isinstance(r, SystemPromptRule)]
    lookups = [r for r in rules if isinstance(r, LookupRule)]
    calls: dict[str, ToolUse] = {}
    last_state: dict[str, str] = {}
    last_t = 0.0
    step = 0

    def observed(text: str, call: str = "") -> tuple[str, list[RegionOp]]:
        return observe(text, rules, count, last_state=last_state, call=call)

    for event in trace.events:
        if isinstance(event, SystemPrompt):
            if system_rules:
                for rule in system_rules:
                    yield from rule.system(event.text)
            continue
        if isinstance(event, AssistantMessage):
            reply = Message("assistant", event.blocks)
            yield Call(step, last_t, event.t, reply)
            step += 1
            for b in event.blocks:
                if isinstance(b, ToolUse):
                    calls[b.id] = b
            yield AddMessage(reply)
        elif isinstance(event, UserMessage):
            if event.observation:
                blocks: list[Text] = []
                ops: list[RegionOp] = []
                for b in event.blocks:
                    text, found = observed(b.text)
                    blocks.append(Text(text))
                    add_moves(ops, found)
                recorded = Message("user", event.blocks)
                yield _moved(Message("user", tuple(blocks)), recorded, ops, observation=True)
            else:
                yield AddMessage(Message("user", event.blocks))
        elif isinstance(event, ToolResults):
            yield from _tool_results(event, calls, lookups, observed)
        elif isinstance(event, (RegionWrite, RegionAppend)):
            yield RegionOp("write", event.region, event.text, event.key, rule="trace")
        elif isinstance(event, RegionRelease):
            yield RegionOp("release", event.region, key=event.key, rule="trace")
        last_t = event.t
