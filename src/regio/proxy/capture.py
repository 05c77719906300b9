"""The blueprint's ``capture`` rules, applied to what an unmodified agent sends.

An agent that was not written for regio never calls ``Engine.write``: everything it has is in
its system prompt and its messages. Captures are how its content reaches the blueprint's
regions anyway, so the proxy applies them (the same rule objects the bench replays recorded
runs with, :mod:`regio.bench.capture`; reference ``docs/blueprint.md#capture``):

* ``system_prompt``: the client's system prompt replaces the content of the region that
  declares the rule (a ``pattern`` moves its match to its own region first: a clock line goes
  to a small ``rewritten`` region in the tail instead of breaking the cached prefix on every
  request). It is applied when the prompt changes, not on every request. Without such a region
  the prompt (what no ``pattern`` took) is sent beside the window, as the client's own system
  text, and counted there (:mod:`regio.proxy.payloads`);
* ``footer``: a state footer at the end of a tool result or a user message is written to its
  region (when it changed) and stripped from the text kept in the conversation;
* ``lookup``: the result of a call to one of the named tools is also written to its region;
* ``park``: a tool result of at least ``min_tokens`` goes to a ``temporary`` region; the
  conversation keeps its first line and where the rest went.

A region that refuses a capture changes nothing: the message is admitted as the client sent it
(:func:`regio.bench.regionops.file_moves`), so nothing is lost. What is captured changes only
what goes upstream; the client's own history is never edited.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
import msgspec

from regio.bench.capture import (
    AddMessage,
    CaptureRule,
    FooterRule,
    LookupRule,
    ParkRule,
    RegionOp,
    SystemPromptRule,
    rules_for,
)
from regio.bench.regionops import file_moves
from regio.content import Message, Text, ToolResult, ToolUse

__all__ = ["BESIDE", "LiveCapture"]

#: Stand-in region name under which the system prompt's rest is returned when no region takes it.
BESIDE = "\0beside"


@attrs.frozen
class LiveCapture:
    """The capture rules of one blueprint (module doc)."""

    rules: tuple[CaptureRule, ...]

    @classmethod
    def of(cls, blueprint: Any) -> LiveCapture:
        """The rules ``blueprint`` declares (none: every message is admitted as sent)."""
        return cls(rules_for(blueprint))

    def system(self, engine: Any, text: str, *, apply: bool = True) -> str:
        """The system prompt rules on ``text``: with ``apply`` its parts are written to their
        regions through ``engine`` (when the prompt changed); returns the text to send beside
        the window (``""`` when a region took the whole prompt)."""
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

    def admit(self, engine: Any, messages: Sequence[Message], notes: list[str]) -> None:
        """Add ``messages`` to the engine's conversation, each after its captures (module doc);
        ``notes`` receives what could not be captured."""
        calls: dict[str, ToolUse] = {}
        names = {r.name for r in engine.window.regions}
        for message in messages:
            for b in message.blocks:
                if isinstance(b, ToolUse):
                    calls[b.id] = b
            item = self._captured(engine, message, calls)
            if item is None:
                engine.add_message(message)
                continue
            filed = file_moves({"proxy": engine}, None, item, names, notes)
            chosen = item.message if filed.by_engine["proxy"] else item.fallback or item.message
            engine.add_message(chosen)

    def _captured(
        self, engine: Any, message: Message, calls: dict[str, ToolUse]
    ) -> AddMessage | None:
        """The message with its captures applied, or ``None`` when no rule touches it."""
        if message.role not in ("tool", "user") or not self.rules:
            return None
        blocks: list[Any] = []
        moves: list[RegionOp] = []
        for b in message.blocks:
            if isinstance(b, ToolResult):
                text, ops = self._observe(engine, b.content, park=True)
                call = calls.get(b.tool_use_id)
                if call is not None and not b.is_error:
                    ops.extend(self._lookups(call, b.content))
                blocks.append(msgspec.structs.replace(b, content=text))
            elif isinstance(b, Text):
                text, ops = self._observe(engine, b.text, park=False)
                blocks.append(Text(text))
            else:
                blocks.append(b)
                continue
            moves.extend(ops)
        if not moves:
            return None
        return AddMessage(Message(message.role, tuple(blocks)), tuple(moves), message)

    def _observe(self, engine: Any, text: str, *, park: bool) -> tuple[str, list[RegionOp]]:
        ops: list[RegionOp] = []
        for rule in self.rules:
            if isinstance(rule, FooterRule):
                text, state = rule.split(text)
                if state is not None:
                    action = "write" if rule.key is not None else "replace"
                    ops.append(
                        RegionOp(action, rule.region, state, rule.key, rule=rule.name, repeat=True)
                    )
        for rule in self.rules:
            if park and isinstance(rule, ParkRule):
                tokens = engine.counter.count(text)
                if tokens >= rule.min_tokens:
                    ops.append(RegionOp("trim", rule.region, text, keep=rule.keep, rule=rule.name))
                    text = rule.stub(text, tokens)
                    break
        return text, ops

    def _lookups(self, call: ToolUse, content: str) -> list[RegionOp]:
        return [
            RegionOp("write", r.region, content, r.key_of(call), rule=r.name, copy=True)
            for r in self.rules
            if isinstance(r, LookupRule) and r.applies(call)
        ]
