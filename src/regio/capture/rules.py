"""The blueprint's ``capture`` rules as objects: what content of an agent's system prompt and
messages belongs in which region, and the region operations that move it there.

An agent's loop puts state where it hurts the prefix cache: a clock line in the system prompt,
an environment footer at the end of every observation, lookup results inside tool results, a
huge tool output in the conversation. A region's ``capture`` list (the schema and its checks:
:mod:`regio.blueprint.capturespec`; reference ``docs/blueprint.md#capture``) says which of it
the region takes. :func:`rules_for` turns a blueprint's lists into rule objects:

* :class:`SystemPromptRule` -- the agent's system prompt replaces the content of the region
  that declares ``{rule: system_prompt}``, after each :class:`Extract` (a ``system_prompt``
  rule with ``pattern``) moved its match to its own region (tau-bench's
  ``The current time is ...`` line goes to a clock region, so a clock never sits inside a
  stable prefix).
* :class:`FooterRule` -- SWE-agent observations end with an environment status footer
  ``(Open file: X)\\n(Current directory: Y)\\nbash-$``: state that changes every step. The
  footer is stripped from the text kept in the conversation and written to a region (under
  ``key`` for keyed regions, else replacing the region's content).
* :class:`LookupRule` -- results of lookup tools (tau-bench ``get_user_details``, ...) are
  written to a region (a keyed one under a key built from the call's arguments,
  ``user:mia_li_3668``) and also kept as tool results.
* :class:`ParkRule` -- a tool output of at least ``min_tokens`` is parked in a ``temporary``
  region (the newest ``keep`` parked outputs stay there) and the conversation keeps a stub with
  its first line, what it reports (its error lines, reported values and quoted sentences, the
  items a compaction would keep of it: :func:`regio.summarizers.kinds.tool_errors`,
  :func:`~regio.summarizers.toolnotes.reported_lines`) and where the rest went.

Applying a rule yields :class:`RegionOp` s, and a message whose text some of them took out is
an :class:`AddMessage` (the message as kept, the moves, the message as sent as its fallback);
:mod:`regio.capture.filing` applies them through an engine, :func:`observe` is the rules of one
text. Two users: the bench's replay of recorded traces (:mod:`regio.bench.capture`) and the
live capture of messages as they arrive (:mod:`regio.capture.live`, which ``regio proxy``
applies in front of unmodified agents).

``park`` and ``footer`` replace what they stored, so the region they write is laid out in the
tail by the ``regio`` layout whatever its declared volatility (the blueprint names the writer on
the region, :mod:`regio.blueprint.writers`; :mod:`regio.layout.observe`): a new parked output
or state invalidates only itself, never the conversation before it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import attrs
import msgspec

from regio.content import Message, ToolUse
from regio.regions.simple import parked_pointer
from regio.summarizers.kinds import tool_errors
from regio.summarizers.toolnotes import reported_lines

if TYPE_CHECKING:
    from regio.blueprint.spec import Blueprint

__all__ = [
    "SWE_AGENT_FOOTER",
    "TIME_LINE",
    "AddMessage",
    "CaptureRule",
    "Extract",
    "FooterRule",
    "LookupRule",
    "ParkRule",
    "RegionOp",
    "SystemPromptRule",
    "add_moves",
    "observe",
    "rules_for",
]

#: SWE-agent's environment footer at the end of an observation (group ``state``).
SWE_AGENT_FOOTER = (
    r"\n*(?P<state>\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\))\n?(?:bash-\$)?\s*\Z"
)
#: tau-bench's clock line in the system prompt.
TIME_LINE = r"(?m)^The current time is [^\n]*\n*"


class RegionOp(msgspec.Struct, frozen=True, tag="region", tag_field="op"):
    """A region operation: ``write`` (``key`` replaces in keyed regions), ``replace`` (release
    every entry, then write), ``release`` (by ``key``, or all), ``trim`` (keep the newest
    ``keep`` entries, then write). ``repeat``: a footer state equal to the last one the
    stream sent, written only by an engine whose region does not hold it (an agent does not
    rewrite an unchanged fact, but files it again where the last write was refused).
    ``copy``: the text also stays where it was recorded (a lookup result stays a tool
    result), so a refusal of this write loses nothing. ``stub``: for a parked output, the text the
    conversation keeps in its place (:meth:`ParkRule.stub`), and ``call`` the id of the tool call
    whose result it was, as sent (empty for an observation), and ``admitted`` that call's id as the
    engine admitted it when the capture knew it (a live capture): the parked entry leaves its region
    when a compaction summarizes the message holding it, or relief clears that result
    (:data:`regio.regions.PARKED_STUB`, :data:`regio.regions.PARKED_CALL`)."""

    action: str
    region: str
    text: str = ""
    key: str | None = None
    keep: int | None = None
    rule: str = ""
    repeat: bool = False
    copy: bool = False
    stub: str = ""
    call: str = ""
    admitted: str = ""


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

    def op(self, call: ToolUse, content: str) -> RegionOp:
        """The write of ``content``, the result of ``call`` (one this rule applies to), to the
        region; a ``copy``: the result also stays where it was."""
        return RegionOp("write", self.region, content, self.key_of(call), rule=self.name, copy=True)

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
    (only the newest ``keep`` parked outputs are kept there); the conversation keeps a stub
    (:meth:`stub`)."""

    region: str
    min_tokens: int = 1500
    keep: int = 1
    name: str = "park"

    def stub(self, text: str, tokens: int) -> str:
        """What the conversation keeps of ``text`` (``tokens`` long): its first non-blank line
        (at most 200 characters), then its error lines and the values it reports, each once
        (:func:`regio.summarizers.kinds.tool_errors`, at most 3, and
        :func:`~regio.summarizers.toolfacts.tool_facts`, at most 2, and its quotes,
        :func:`~regio.summarizers.toolnotes.tool_notes`, at most 3: what a compaction keeps of
        a tool result as items), then a pointer to the region. The parked output leaves the
        region when a newer one is parked (``keep``), when the window reclaims it, or when its
        result leaves the conversation (summarized, or cleared by relief: it leaves with its
        turn, in the same rewrite, :mod:`regio.compaction._parked`); what it reported stays
        in the conversation, and from there in the summaries and their items."""
        first = next((ln for ln in text.splitlines() if ln.strip()), "")[:200]
        lines = [first]
        for line in (*tool_errors(text), *reported_lines(text)):
            if line not in lines and line.strip() != first.strip():
                lines.append(line)
        lines.append(parked_pointer(tokens, self.region))
        return "\n".join(lines)


CaptureRule = SystemPromptRule | FooterRule | LookupRule | ParkRule


def rules_for(blueprint: Blueprint) -> tuple[CaptureRule, ...]:
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


def observe(
    text: str,
    rules: Sequence[CaptureRule],
    count: Callable[[str], int],
    *,
    park: bool = True,
    last_state: dict[str, str] | None = None,
    call: str = "",
    admitted: str = "",
) -> tuple[str, list[RegionOp]]:
    """The ``footer`` and ``park`` rules of ``rules`` on one text (a tool result, or an
    observation with ``park=False`` when observations are not parked): the text kept in the
    conversation and the region operations that took the rest. A footer's state is written
    when it changed since ``last_state`` (region -> the state last sent; updated here), else
    marked ``repeat`` (filed again only where the region does not hold it); with
    ``last_state=None`` every state is a ``repeat`` (the region decides). A text of at least a
    park rule's ``min_tokens`` (by ``count``) is parked by the first such rule; ``call``: the
    id of the call whose result ``text`` is (empty for an observation), kept with the park, and
    ``admitted`` that call's id as the engine admits it (empty: not known)."""
    ops: list[RegionOp] = []
    for rule in rules:
        if not isinstance(rule, FooterRule):
            continue
        text, state = rule.split(text)
        if state is None:
            continue
        repeat = True
        if last_state is not None:
            repeat = last_state.get(rule.region) == state
            if repeat and not rule.strip:  # left in the text, and the region has it
                continue
            last_state[rule.region] = state
        action = "write" if rule.key is not None else "replace"
        ops.append(RegionOp(action, rule.region, state, rule.key, rule=rule.name, repeat=repeat))
    for rule in rules:
        if park and isinstance(rule, ParkRule):
            tokens = count(text)
            if tokens >= rule.min_tokens:
                stub = rule.stub(text, tokens)
                ops.append(
                    RegionOp(
                        "trim",
                        rule.region,
                        text,
                        keep=rule.keep,
                        rule=rule.name,
                        stub=stub,
                        call=call,
                        admitted=admitted,
                    )
                )
                text = stub
                break
    return text, ops


def add_moves(moves: list[RegionOp], found: Sequence[RegionOp]) -> None:
    """Append one block's capture ops (:func:`observe`) to its message's ``moves``. A later
    large output of the same message is parked beside the earlier one (a ``write``, not a
    ``trim``): the agent reads both before its next call, so neither displaces the other."""
    for op in found:
        if op.action == "trim" and any(m.action == "trim" and m.region == op.region for m in moves):
            op = msgspec.structs.replace(op, action="write", keep=None)
        moves.append(op)
