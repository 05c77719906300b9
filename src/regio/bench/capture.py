"""Capture: how replay turns a recorded trace into the region writes of a regio-aware agent.

The bundled traces were recorded without regio: every piece of state lives in the conversation
or the system prompt. Replay maps trace content to region writes the way an agent built on
regio would make them, with declarative rules. :func:`capture_stream` runs the rules once and
yields one stream of :data:`ReplayItem` s; the **same** stream drives every layout and every
baseline, so comparisons are fair.

Rules (each names its target region):

* :class:`SystemPromptRule` — the trace's system prompt replaces the seed of a ``pinned``
  region (the agent's real instructions), after :class:`Extract` patterns moved per-run values
  out of it (tau-bench's ``The current time is ...`` line goes to a ``clock`` region, so a
  clock never sits inside a stable prefix).
* :class:`FooterRule` — SWE-agent observations end with an environment status footer
  ``(Open file: X)\\n(Current directory: Y)\\nbash-$``: state that changes every step. The
  footer is stripped from the observation kept in the conversation and written to a region
  (under ``key`` for keyed regions, else replacing the region's content).
* :class:`LookupRule` — results of lookup tools (tau-bench ``get_user_details``,
  ``get_reservation_details``, ``get_flight_status``) are written to a keyed region under a key
  built from the call's arguments (``user:mia_li_3668``) and also kept as tool results.
* :class:`ParkRule` — a tool output of at least ``min_tokens`` is parked in a ``temporary``
  region (the newest ``keep`` parked outputs stay there) and the conversation keeps a stub with
  its first line and where the rest went.

Selection (:func:`rules_for`): the blueprint format has no ``capture`` option, so rules are
chosen by **region name** with :data:`RULES_BY_REGION` (``env_state`` / ``file_notes``,
``customer``, ``tool_output`` / ``lookups``, ``clock``); a region absent from the blueprint
gets no rule. ``FooterRule`` goes to ``env_state`` when the blueprint has one, else to
``file_notes`` under the key ``environment``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
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
    "RULES_BY_REGION",
    "SWE_AGENT_FOOTER",
    "TAU_LOOKUPS",
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
#: tau-bench lookup tools -> (key label, argument names forming the key).
TAU_LOOKUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "get_user_details": ("user", ("user_id",)),
    "get_reservation_details": ("reservation", ("reservation_id",)),
    "get_flight_status": ("flight", ("flight_number", "date")),
}


class Call(msgspec.Struct, frozen=True, tag="call", tag_field="op"):
    """A model call: ``index`` (from 0), ``t`` when the request is sent and ``t_end`` when
    the reply completed (simulated seconds, from the trace clock), ``reply`` the recorded
    reply (its token count is the call's output)."""

    index: int
    t: float
    t_end: float
    reply: Message


class AddMessage(msgspec.Struct, frozen=True, tag="message", tag_field="op"):
    """A conversation message (after capture transformed it)."""

    message: Message


class RegionOp(msgspec.Struct, frozen=True, tag="region", tag_field="op"):
    """A region operation: ``write`` (``key`` replaces in keyed regions), ``replace`` (release
    every entry, then write), ``release`` (by ``key``, or all), ``trim`` (keep the newest
    ``keep`` entries, then write)."""

    action: str
    region: str
    text: str = ""
    key: str | None = None
    keep: int | None = None
    rule: str = ""


ReplayItem = Call | AddMessage | RegionOp


@attrs.frozen
class Extract:
    """Move the text matched by ``pattern`` (a regex) out of the system prompt into
    ``region`` (replacing its content)."""

    pattern: str
    region: str


@attrs.frozen
class SystemPromptRule:
    """The trace's system prompt replaces the content of ``region`` (a pinned region), after
    each :class:`Extract` moved its match elsewhere."""

    region: str
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
        ops.insert(0, RegionOp("replace", self.region, text.strip(), rule=self.name))
        return ops


@attrs.frozen
class FooterRule:
    """Strip an environment footer (regex ``pattern`` with a group ``state``) from
    observations and tool results, writing the state to ``region`` (under ``key`` when set,
    else replacing the region's content). A write whose state equals the last one is skipped
    (an agent does not rewrite an unchanged fact)."""

    region: str
    key: str | None = None
    pattern: str = SWE_AGENT_FOOTER
    name: str = "env_footer"

    def split(self, text: str) -> tuple[str, str | None]:
        found = re.search(self.pattern, text)
        if found is None:
            return text, None
        return text[: found.start()], found.group("state")


@attrs.frozen
class LookupRule:
    """Results of the lookup ``tools`` (tool name -> (key label, argument names)) are written
    to the keyed ``region`` under ``label:arg1:arg2`` and also kept as tool results."""

    region: str
    tools: Mapping[str, tuple[str, tuple[str, ...]]] = attrs.field(factory=lambda: TAU_LOOKUPS)
    name: str = "lookup"

    def key(self, call: ToolUse) -> str | None:
        spec = self.tools.get(call.name)
        if spec is None:
            return None
        label, args = spec
        values = [str(call.input.get(a, "")) for a in args]
        return ":".join([label, *values])


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

#: Bench-side selection by region name (the blueprint has no ``capture`` option yet).
RULES_BY_REGION: dict[str, Callable[[], CaptureRule]] = {
    "env_state": lambda: FooterRule("env_state"),
    "file_notes": lambda: FooterRule("file_notes", key="environment"),
    "customer": lambda: LookupRule("customer"),
    "tool_output": lambda: ParkRule("tool_output"),
    "lookups": lambda: ParkRule("lookups"),
}


def rules_for(regions: Sequence[Any]) -> tuple[CaptureRule, ...]:
    """Capture rules for a window's regions (objects with ``name``, ``kind`` and
    ``volatility``), chosen by :data:`RULES_BY_REGION`.

    The system prompt goes to the first ``pinned`` ``stable`` region (if any), with the clock
    line extracted to a region named ``clock`` when there is one. ``file_notes`` only gets the
    footer when there is no ``env_state`` region.
    """
    names = {r.name for r in regions}
    rules: list[CaptureRule] = []
    target = next(
        (r.name for r in regions if r.kind == "pinned" and r.volatility == "stable"), None
    )
    if target is not None:
        extract = (Extract(TIME_LINE, "clock"),) if "clock" in names else ()
        rules.append(SystemPromptRule(target, extract))
    for r in regions:
        make = RULES_BY_REGION.get(r.name)
        if make is None:
            continue
        if r.name == "file_notes" and "env_state" in names:
            continue
        rules.append(make())
    return tuple(rules)


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
            if state is not None and last_state.get(rule.region) != state:
                last_state[rule.region] = state
                action = "write" if rule.key is not None else "replace"
                ops.append(RegionOp(action, rule.region, state, key=rule.key, rule=rule.name))
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
                    ops.extend(found)
                yield AddMessage(Message("user", tuple(blocks)))
                yield from ops
            else:
                yield AddMessage(Message("user", event.blocks))
        elif isinstance(event, ToolResults):
            results: list[ToolResult] = []
            ops = []
            for res in event.results:
                call = calls.get(res.tool_use_id)
                for lookup in lookups:
                    key = lookup.key(call) if call is not None else None
                    if key is not None and not res.is_error:
                        ops.append(
                            RegionOp("write", lookup.region, res.content, key, rule=lookup.name)
                        )
                text, found = observe(res.content)
                ops.extend(found)
                results.append(msgspec.structs.replace(res, content=text))
            yield AddMessage(Message("tool", tuple(results)))
            yield from ops
        elif isinstance(event, (RegionWrite, RegionAppend)):
            yield RegionOp("write", event.region, event.text, event.key, rule="trace")
        elif isinstance(event, RegionRelease):
            yield RegionOp("release", event.region, key=event.key, rule="trace")
        last_t = event.t
