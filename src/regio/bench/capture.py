"""Capture: how replay turns a recorded trace into the region writes of a regio-aware agent.

The bundled traces were recorded without regio: every piece of state lives in the conversation
or the system prompt. Replay maps trace content to region writes the way an agent built on
regio would make them, with declarative rules. :func:`capture_stream` runs the rules once and
yields one stream of :data:`ReplayItem` s; the **same** stream drives every layout and every
baseline, so comparisons are fair.

Rules come from the blueprint: each region's ``capture`` list (``system_prompt``, ``footer``,
``lookup``, ``park``; the schema and its checks are :mod:`regio.blueprint.capturespec`, the
reference ``docs/blueprint.md#capture``). :func:`rules_for` turns them into rule objects:

* :class:`SystemPromptRule` — the trace's system prompt replaces the seed of the region that
  declares ``{rule: system_prompt}`` (the agent's real instructions), after each
  :class:`Extract` (a ``system_prompt`` rule with ``pattern``) moved its match to its own
  region (tau-bench's ``The current time is ...`` line goes to a clock region, so a clock
  never sits inside a stable prefix).
* :class:`FooterRule` — SWE-agent observations end with an environment status footer
  ``(Open file: X)\\n(Current directory: Y)\\nbash-$``: state that changes every step. The
  footer is stripped from the observation kept in the conversation and written to a region
  (under ``key`` for keyed regions, else replacing the region's content).
* :class:`LookupRule` — results of lookup tools (tau-bench ``get_user_details``, ...) are
  written to a region (a keyed one under a key built from the call's arguments,
  ``user:mia_li_3668``) and also kept as tool results.
* :class:`ParkRule` — a tool output of at least ``min_tokens`` is parked in a ``temporary``
  region (the newest ``keep`` parked outputs stay there) and the conversation keeps a stub with
  its first line and where the rest went.

``park`` and ``footer`` replace what they stored, so the region they write is laid out in the
tail by the ``regio`` layout whatever its declared volatility (the blueprint names the writer on
the region, :mod:`regio.blueprint.writers`; :mod:`regio.layout.observe`): a new parked output
or state invalidates only itself, never the conversation before it.

A blueprint without ``capture`` lists replays the trace as recorded (messages only).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs
import msgspec

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

#: SWE-agent's environment footer at the end of an observation (group ``state``).
SWE_AGENT_FOOTER = (
    r"\n*(?P<state>\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\))\n?(?:bash-\$)?\s*\Z"
)
#: tau-bench's clock line in the system prompt.
TIME_LINE = r"(?m)^The current time is [^\n]*\n*"


class Call(msgspec.Struct, frozen=True, tag="call", tag_field="op"):
    """A model call: ``index`` (from 0), ``t`` when the request is sent and ``t_end`` when
    the reply completed (simulated seconds, from the trace clock), ``reply`` the recorded
    reply (its token count is the call's output)."""

    index: int
    t: float
    t_end: float
    reply: Message


class RegionOp(msgspec.Struct, frozen=True, tag="region", tag_field="op"):
    """A region operation: ``write`` (``key`` replaces in keyed regions), ``replace`` (release
    every entry, then write), ``release`` (by ``key``, or all), ``trim`` (keep the newest
    ``keep`` entries, then write). ``repeat``: a footer state equal to the last one the
    stream sent, written only by an engine whose region does not hold it (an agent does not
    rewrite an unchanged fact, but files it again where the last write was refused).
    ``copy``: the text also stays where it was recorded (a lookup result stays a tool
    result), so a refusal of this write loses nothing."""

    action: str
    region: str
    text: str = ""
    key: str | None = None
    keep: int | None = None
    rule: str = ""
    repeat: bool = False
    copy: bool = False


class AddMessage(msgspec.Struct, frozen=True, tag="message", tag_field="op"):
    """A conversation message (after capture transformed it).

    ``moves``: the region operations that took text out of it (a stripped footer, a parked
    output), applied before it; ``fallback``: the message as recorded, which an engine adds
    instead when a region refused any of them or is missing, so a refused capture loses
    nothing (the agent keeps what it could not file; the text may then be both in a region
    and in the message, never in neither). ``observation``: the message (and its fallback)
    is an environment observation sent as user text (``UserMessage.observation``), which an
    engine admits as one (``Engine.add_message(..., observation=True)``)."""

    message: Message
    moves: tuple[RegionOp, ...] = ()
    fallback: Message | None = None
    observation: bool = False


ReplayItem = Call | AddMessage | RegionOp


@attrs.frozen
class Extract:
    """Move the text matched by ``pattern`` (a regex) out of the system prompt into
    ``region`` (replacing its content)."""

    pattern: str
    region: str


@attrs.frozen
class SystemPromptRule:
    """The trace's system prompt replaces the content of ``region`` (``None``: no region takes
    the rest), after each :class:`Extract` moved its match elsewhere."""

    region: str | None
    extract: tuple[Extract, ...] = ()
    name: str = "system_prompt"

    def system(self, text: str) -> list[RegionOp]:
        ops: list[RegionOp] = []
        for ex in self.extract:
            found = re.search(ex.pattern, text)
            if found is None:
                continue
            ops.append(RegionOp("replace", ex.region, found.group(0).strip(), rule=self.name))
            text = text[: found.start()] + text[found.end() :]
        if self.region is not None:
            ops.insert(0, RegionOp("replace", self.region, text.strip(), rule=self.name))
        return ops


@attrs.frozen
class FooterRule:
    """Find a state footer (regex ``pattern``; its group ``state`` when it has one, else the
    whole match) in observations and tool results and write the state to ``region`` (under
    ``key`` when set, else replacing the region's content); with ``strip`` the match is
    removed from the text kept in the conversation. A state equal to the last one is marked
    ``repeat`` (:class:`RegionOp`)."""

    region: str
    key: str | None = None
    pattern: str = SWE_AGENT_FOOTER
    strip: bool = True
    name: str = "footer"

    def split(self, text: str) -> tuple[str, str | None]:
        """(text kept in the conversation, state or ``None`` when there is no footer)."""
        found = re.search(self.pattern, text)
        if found is None:
            return text, None
        state = found.group("state") if "state" in found.re.groupindex else found.group(0)
        kept = text[: found.start()] + text[found.end() :] if self.strip else text
        return kept, state.strip()


@attrs.frozen
class LookupRule:
    """Results of calls to ``tools`` are written to ``region`` and also kept as tool results.
    ``key`` is a template of the call's arguments (``"user:{user_id}"``, ``{tool}`` = the
    tool name) for keyed regions, ``None`` for others."""

    region: str
    tools: tuple[str, ...]
    key: str | None = None
    name: str = "lookup"

    def applies(self, call: ToolUse) -> bool:
        """True when ``call`` is one of ``tools`` and has every argument the key names."""
        if call.name not in self.tools:
            return False
        return self.key is None or self.key_of(call) is not None

    def key_of(self, call: ToolUse) -> str | None:
        """The entry key for ``call`` (``None``: unkeyed rule, or an argument is missing)."""
        if self.key is None:
            return None
        values = {k: str(v) for k, v in call.input.items()}
        values["tool"] = call.name
        try:
            return self.key.format_map(values)
        except (KeyError, IndexError, ValueError):
            return None


@attrs.frozen
class ParkRule:
    """Tool outputs of at least ``min_tokens`` tokens go to the ``temporary`` ``region``
    (only the newest ``keep`` parked outputs are kept there); the conversation keeps a stub:
    the output's first line and a pointer to the region."""

    region: str
    min_tokens: int = 1500
    keep: int = 1
    name: str = "park"

    def stub(self, text: str, tokens: int) -> str:
        first = next((ln for ln in text.splitlines() if ln.strip()), "")[:200]
        return f"{first}\n[{tokens} tokens of output parked in region '{self.region}']"


CaptureRule = SystemPromptRule | FooterRule | LookupRule | ParkRule


def rules_for(blueprint: Any) -> tuple[CaptureRule, ...]:
    """The capture rules a blueprint declares (each region's ``capture`` list, see
    :mod:`regio.blueprint.capturespec`), in region order. ``system_prompt`` rules are merged
    into one :class:`SystemPromptRule` (the pattern-less region takes the rest of the prompt,
    each ``pattern`` becomes an :class:`Extract`); a region without ``capture`` gets nothing."""
    whole: str | None = None
    extract: list[Extract] = []
    rules: list[CaptureRule] = []
    for spec in blueprint.regions:
        keyed = spec.kind == "keyed"
        for cap in spec.capture:
            if cap.rule == "system_prompt":
                if cap.pattern is None:
                    whole = spec.name
                else:
                    extract.append(Extract(cap.pattern, spec.name))
            elif cap.rule == "footer":
                rules.append(
                    FooterRule(
                        spec.name,
                        key=cap.key if keyed else None,
                        pattern=cap.pattern or SWE_AGENT_FOOTER,
                        strip=cap.strip is not False,
                    )
                )
            elif cap.rule == "lookup":
                rules.append(
                    LookupRule(spec.name, tuple(cap.tools or ()), key=cap.key if keyed else None)
                )
            elif cap.rule == "park":
                rules.append(
                    ParkRule(spec.name, min_tokens=cap.min_tokens or 1500, keep=cap.keep or 1)
                )
    if whole is not None or extract:
        rules.insert(0, SystemPromptRule(whole, tuple(extract)))
    return tuple(rules)


def _moved(
    message: Message, recorded: Message, moves: Sequence[RegionOp], observation: bool = False
) -> AddMessage:
    """``message`` with the ``moves`` that took text out of it and, when there are any or
    it differs, the ``recorded`` message as its fallback (:class:`AddMessage`; ``observation``
    marks both as an environment observation)."""
    if not moves and message == recorded:
        return AddMessage(message, observation=observation)
    return AddMessage(message, tuple(moves), recorded, observation)


def _add_moves(moves: list[RegionOp], found: Sequence[RegionOp]) -> None:
    """Append one block's capture ops to its message's ``moves``. A later large output of the
    same message is parked beside the earlier one (a ``write``, not a ``trim``): the agent
    reads both before its next call, so neither displaces the other."""
    for op in found:
        if op.action == "trim" and any(m.action == "trim" and m.region == op.region for m in moves):
            op = msgspec.structs.replace(op, action="write", keep=None)
        moves.append(op)


def _tool_results(
    event: ToolResults,
    calls: dict[str, ToolUse],
    lookups: Sequence[LookupRule],
    observe: Callable[[str], tuple[str, list[RegionOp]]],
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
                key = lookup.key_of(call)
                op = RegionOp("write", lookup.region, res.content, key, rule=lookup.name, copy=True)
                ops.append(op)
        text, found = observe(res.content)
        _add_moves(moves, found)
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
    footers = [r for r in rules if isinstance(r, FooterRule)]
    lookups = [r for r in rules if isinstance(r, LookupRule)]
    parks = [r for r in rules if isinstance(r, ParkRule)]
    calls: dict[str, ToolUse] = {}
    last_state: dict[str, str] = {}
    last_t = 0.0
    step = 0

    def observe(text: str) -> tuple[str, list[RegionOp]]:
        ops: list[RegionOp] = []
        for rule in footers:
            text, state = rule.split(text)
            if state is not None and (rule.strip or last_state.get(rule.region) != state):
                repeat = last_state.get(rule.region) == state
                last_state[rule.region] = state
                action = "write" if rule.key is not None else "replace"
                ops.append(
                    RegionOp(action, rule.region, state, rule.key, rule=rule.name, repeat=repeat)
                )
        for park in parks:
            tokens = count(text)
            if tokens >= park.min_tokens:
                ops.append(RegionOp("trim", park.region, text, keep=park.keep, rule=park.name))
                text = park.stub(text, tokens)
                break
        return text, ops

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
                    text, found = observe(b.text)
                    blocks.append(Text(text))
                    _add_moves(ops, found)
                recorded = Message("user", event.blocks)
                yield _moved(Message("user", tuple(blocks)), recorded, ops, observation=True)
            else:
                yield AddMessage(Message("user", event.blocks))
        elif isinstance(event, ToolResults):
            yield from _tool_results(event, calls, lookups, observe)
        elif isinstance(event, (RegionWrite, RegionAppend)):
            yield RegionOp("write", event.region, event.text, event.key, rule="trace")
        elif isinstance(event, RegionRelease):
            yield RegionOp("release", event.region, key=event.key, rule="trace")
        last_t = event.t
