"""Tool results on admission, under each tool's relief policy (``relief.tools[]``):
``route`` writes the result into a region and leaves a pointer in the conversation,
``max_result_tokens`` trims it (head + tail with a marker saying how much was cut), ``dedupe``
supersedes the older results of the same tool with the same arguments (each becomes a stable
placeholder). The originals stay in the engine's ``ReliefBook`` and come back with
``context_restore`` (:func:`regio.runtime.relief.restore`)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.content import Block, Entry, Message, ToolResult, ToolUse, canonical_json
from regio.policies import relief as rp
from regio.regions import SlidingWindow, WriteResult

from .compactor import Compactor
from .relief import ReliefApplied, restorable, rewrite_block_entry
from .writes import write_to

__all__ = ["admit"]


def admit(c: Compactor, message: Message, tokens: int | None) -> tuple[Message, int | None]:
    """``message`` as the conversation admits it under the tools' relief policies (module
    doc), with ``tokens`` (``None``: count it again, the message changed)."""
    policy = c.options.relief
    conv = c.window.conversation
    if policy is None or conv is None or not message.tool_results or not policy.tools:
        return message, tokens
    blocks: list[Block] = []
    changed = False
    for block in message.blocks:
        is_result = isinstance(block, ToolResult)
        call = _find_call(conv.entries, block.tool_use_id) if is_result else None  # type: ignore[union-attr]
        if not isinstance(block, ToolResult) or call is None:
            blocks.append(block)
            continue
        rule = policy.tool(call.name)
        if rule.dedupe and isinstance(conv, SlidingWindow):
            _supersede(c, conv, call)
        new = _admitted(c, block, call, rule)
        changed = changed or new is not block
        blocks.append(new)
    if not changed:
        return message, tokens
    return Message(message.role, tuple(blocks)), None


def _find_call(entries: Sequence[Entry], call_id: str) -> ToolUse | None:
    for entry in reversed(entries):
        for b in entry.blocks:
            if isinstance(b, ToolUse) and b.id == call_id:
                return b
    return None


def _admitted(c: Compactor, block: ToolResult, call: ToolUse, rule: rp.ToolRelief) -> ToolResult:
    """``block`` routed or trimmed by ``rule`` (the original kept for :func:`restore`)."""
    before = c.count_text(block.content)
    text = _route(c, block, call, rule) if rule.route else None
    stage = "route"
    if text is None and rule.max_result_tokens is not None and before > rule.max_result_tokens:
        text = rp.trimmed_to(block.content, before, rule.max_result_tokens, c.count_text)
        stage = "admit_trim"
    if text is None or text == block.content:
        return block
    c.book.relief.originals[block.tool_use_id] = block
    tally = c.book.relief.tally(stage)
    tally.runs += 1
    tally.blocks += 1
    tally.freed_tokens += max(0, before - c.count_text(text))
    # only the text changes: a progress report stays one, and the media stay with the result
    return msgspec.structs.replace(block, content=text)


def _route(c: Compactor, block: ToolResult, call: ToolUse, rule: rp.ToolRelief) -> str | None:
    """Write ``block`` into ``rule.route``; the pointer left in the conversation, or ``None``
    (the result stays in the conversation) when the key cannot be built or the region
    refuses the write."""

    key = None
    if rule.route_key is not None:
        try:
            key = rule.route_key.format(tool=call.name, **call.input)
        except (KeyError, IndexError, ValueError, AttributeError):
            return None
    result = write_to(c, str(rule.route), block.content, key=key)
    if not isinstance(result, WriteResult):
        return None
    where = f"region {rule.route!r}" + (f" under key {key!r}" if key is not None else "")
    how = (
        f'context_restore(call_id="{call.id}") brings it into the conversation'
        if restorable(c)
        else "kept in the session transcript"
    )
    return f"[result of {call.name} call {call.id} stored in {where}; {how}]"


def _supersede(c: Compactor, conv: SlidingWindow, call: ToolUse) -> None:
    """Clear every live result of an earlier call with ``call``'s tool and arguments."""
    same = canonical_json([call.name, call.input])
    calls = rp.call_tools(conv.entries)
    can_restore = restorable(c)
    before = conv.used_tokens
    hit: list[str] = []
    for index, entry in enumerate(list(conv.entries)):
        cleared = set(entry.meta.get(rp.CLEARED_META, ()))
        blocks = list(entry.blocks)
        ids = []
        for j, b in enumerate(blocks):
            old = calls.get(b.tool_use_id) if isinstance(b, ToolResult) else None
            if old is None or old.id == call.id or b.tool_use_id in cleared:  # type: ignore[union-attr]
                continue
            if canonical_json([old.name, old.input]) != same:
                continue
            how = rp.placeholder(old.id, old.name, restorable=can_restore)
            text = f"[superseded by call {call.id} with the same arguments] {how}"
            # superseded: its media go too, a progress report stays non-final (group open)
            blocks[j] = msgspec.structs.replace(b, content=text, media=())
            ids.append(old.id)
        if ids:
            meta = {**entry.meta, rp.CLEARED_META: [*cleared, *ids]}
            rewrite_block_entry(c, conv, index, entry, tuple(blocks), meta)
            hit.extend(ids)
    if hit:
        tally = c.book.relief.tally("dedupe")
        tally.runs += 1
        tally.blocks += len(hit)
        tally.freed_tokens += before - conv.used_tokens
        after = conv.used_tokens
        c.emit(ReliefApplied("dedupe", conv.name, tuple(hit), (), before - after, before, after))
