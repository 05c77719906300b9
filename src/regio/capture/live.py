"""The blueprint's ``capture`` rules applied to a live agent's system prompt and messages, as
they arrive (:class:`LiveCapture`).

An agent that was not written for regio never calls ``Engine.write``: everything it has is in
its system prompt and its messages. Captures are how its content reaches the blueprint's regions
anyway; ``regio proxy`` applies them in front of unmodified agents, and any loop can
(reference ``docs/blueprint.md#capture``; the rule objects: :mod:`regio.capture.rules`)::

    capture = LiveCapture.of(blueprint)
    beside = capture.system(engine, system_prompt)   # what no region took: send it yourself
    capture.admit(engine, new_messages, notes)       # instead of engine.add_message(...)

* ``system_prompt``: the system prompt replaces the content of the region that declares the
  rule (a ``pattern`` moves its match to its own region first: a clock line goes to a small
  ``rewritten`` region in the tail instead of breaking the cached prefix on every request).
  Apply it when the prompt changes, not on every request. Without such a region the prompt
  (what no ``pattern`` took) is returned, to be sent beside the window;
* ``footer``: a state footer at the end of a tool result or a user message is written to its
  region (when the region does not hold it yet) and stripped from the text kept in the
  conversation;
* ``lookup``: the result of a call to one of the named tools is also written to its region;
* ``park``: a tool result of at least ``min_tokens`` goes to a ``temporary`` region; the
  conversation keeps its first line and where the rest went (two large results of one message
  are parked side by side).

A region that refuses a capture changes nothing: the message is admitted as the agent sent it
(:func:`regio.capture.filing.file_moves`), so nothing is lost. A message the conversation then
refuses (it cannot fit even with its tool results cut to their markers: ``admit`` raises
:class:`regio.errors.RegionFullError`) leaves the captures filed before it: its parked outputs
stay in their region until a newer park displaces them (``regio proxy`` commits nothing of such
a request). A result answering one of regio's own tools (``context_restore``) is never parked.
What is captured changes only the engine's window; the agent's own history is never edited.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs
import msgspec

from regio.content import Block, Message, Text, ToolResult, ToolUse
from regio.session._callnames import answered_calls

from .filing import file_moves
from .rules import (
    AddMessage,
    CaptureRule,
    LookupRule,
    ParkRule,
    RegionOp,
    SystemPromptRule,
    add_moves,
    observe,
    rules_for,
)

if TYPE_CHECKING:
    from regio.blueprint.spec import Blueprint
    from regio.engine import Engine

__all__ = ["BESIDE", "LiveCapture"]

#: Stand-in region name under which the system prompt's rest is returned when no region takes it.
BESIDE = "\0beside"


@attrs.frozen
class LiveCapture:
    """The capture rules of one blueprint (module doc)."""

    rules: tuple[CaptureRule, ...]

    @classmethod
    def of(cls, blueprint: Blueprint) -> LiveCapture:
        """The rules ``blueprint`` (a :class:`regio.blueprint.Blueprint`) declares (none: every
        message is admitted as sent)."""
        return cls(rules_for(blueprint))

    def system(self, engine: Engine, text: str, *, apply: bool = True) -> str:
        """The system prompt rules on ``text``: with ``apply`` its parts are written to their
        regions through ``engine`` (when the prompt changed); returns the text to send beside
        the window (``""`` when a region took the whole prompt; a region that refused its part
        leaves that part in it)."""
        rule = next((r for r in self.rules if isinstance(r, SystemPromptRule)), None)
        if rule is None:
            return text
        if rule.region is None:
            rule = attrs.evolve(rule, region=BESIDE)
        beside = ""
        for op in rule.system(text):
            if op.region == BESIDE:
                beside = op.text
                continue
            if apply:
                engine.clear(op.region)
                if op.text:
                    engine.write(op.region, op.text)
            if op.text and not any(
                e.text == op.text for e in engine.window.region(op.region).entries
            ):
                beside = "\n\n".join(t for t in (beside, op.text) if t)  # refused: sent beside
        return beside

    def admit(self, engine: Engine, messages: Sequence[Message], notes: list[str]) -> None:
        """Add ``messages`` to the engine's conversation, each after its captures (module doc);
        ``notes`` receives what could not be captured (a rule naming a region the blueprint
        does not have)."""
        calls: dict[str, ToolUse] = {}
        names = {r.name for r in engine.window.regions}
        parks = any(isinstance(r, ParkRule) for r in self.rules)
        own = frozenset(spec.name for spec in engine.tools()) if parks else frozenset()
        for message in messages:
            for b in message.blocks:
                if isinstance(b, ToolUse):
                    calls[b.id] = b
            item = self._captured(engine, message, calls, own)
            if item is None:
                engine.add_message(message)
                continue
            filed = file_moves({"live": engine}, None, item, names, notes)
            chosen = item.message if filed.by_engine["live"] else item.fallback or item.message
            engine.add_message(chosen)

    def _captured(
        self, engine: Engine, message: Message, calls: dict[str, ToolUse], own: frozenset[str]
    ) -> AddMessage | None:
        """The message with its captures applied, or ``None`` when no rule touches it. A
        result of one of regio's own tools (``own``: ``context_restore`` bringing back an
        output, ``context_read``) is never parked: it would move back into a region what the
        agent just asked to have in the conversation."""
        if message.role not in ("tool", "user") or not self.rules:
            return None
        count = engine.counter.count
        # the call each result answers, named as admission will name it (a reused or mapped
        # id answers the call the engine holds it for)
        # (only rules that read the call need it: park and lookup, not footer)
        named = any(isinstance(r, ParkRule | LookupRule) for r in self.rules)
        results = named and any(isinstance(b, ToolResult) for b in message.blocks)
        answers = iter(answered_calls(engine.window, engine.state, message) if results else ())
        blocks: list[Block] = []
        moves: list[RegionOp] = []
        for b in message.blocks:
            if isinstance(b, ToolResult):
                answered = next(answers, None)
                park = answered is None or answered.name not in own
                admitted = answered.id if answered is not None else ""
                text, found = observe(
                    b.content, self.rules, count, park=park, call=b.tool_use_id, admitted=admitted
                )
                call = answered or calls.get(b.tool_use_id)
                if call is not None and not b.is_error:
                    found += [
                        r.op(call, b.content)
                        for r in self.rules
                        if isinstance(r, LookupRule) and r.applies(call)
                    ]
                blocks.append(msgspec.structs.replace(b, content=text))
            elif isinstance(b, Text):
                text, found = observe(b.text, self.rules, count, park=False)
                blocks.append(Text(text))
            else:
                blocks.append(b)
                continue
            add_moves(moves, found)
        if not moves:
            return None
        return AddMessage(Message(message.role, tuple(blocks)), tuple(moves), message)
