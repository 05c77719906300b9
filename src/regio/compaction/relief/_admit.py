"""Tool results on admission, under each tool's relief policy (``relief.tools[]``):
``route`` writes the result into a region and leaves a pointer in the conversation,
``max_result_tokens`` trims it (head + tail with a marker saying how much was cut). The
originals stay in the engine's ``ReliefBook`` and come back with ``context_restore``
(:func:`regio.compaction.relief._originals.restore`). (``dedupe`` is not applied here but by the
chain's
first stage under token pressure, :mod:`regio.compaction.relief._chain`: on admission it rewrote an
earlier message, so the cached prefix, on almost every turn of a session repeating calls.)

Two steps, so that a write the conversation refuses changes nothing: :func:`admit` decides
what the message becomes and touches no state (a route is a dry run of the region write,
``Window.plan_write``); :func:`commit`, called once the conversation has admitted the
message, writes the routed results into their regions and keeps the originals and the
tallies.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import msgspec

from regio.compaction._writes import write_steps
from regio.content import Block, Entry, Message, Text, ToolResult, ToolUse
from regio.policies import relief as rp
from regio.regions import SlidingWindow, WritePlan, WriteResult
from regio.session._reliefbook import Originals
from regio.session._session import Session, Steps
from regio.session._sizes import admission_tokens, count_up_to, entry_cap

from ._chain import restorable, rewrite_block_entry

__all__ = ["Admission", "admit", "commit", "with_changes"]


@attrs.frozen
class _Change:
    """One result changed on admission: ``original`` as received, the ``stage`` (``route``,
    ``admit_trim``), the ``freed`` tokens, and for a route the ``region``, ``key`` and the
    ``tool`` called."""

    original: ToolResult
    stage: str
    freed: int
    region: str | None = None
    key: str | None = None
    tool: str = ""


@attrs.frozen
class Admission:
    """``message`` as the conversation admits it, its ``tokens`` (``None``: count it again)
    and the changes :func:`commit` makes take effect once it is admitted."""

    message: Message
    tokens: int | None
    changes: tuple[_Change, ...] = ()


def admit(c: Session, message: Message, tokens: int | None) -> Admission:
    """``message`` as the conversation admits it under the tools' relief policies (module
    doc), with ``tokens`` (``None``: count it again, the message changed). Changes no state."""
    policy = c.options.relief
    conv = c.window.conversation
    if policy is None or conv is None or not message.tool_results or not policy.tools:
        return Admission(message, tokens)
    blocks: list[Block] = []
    changes: list[_Change] = []
    for block in message.blocks:
        # the window's call index (call id -> tool_use), not a scan of the conversation
        call = c.window.tool_call(block.tool_use_id) if isinstance(block, ToolResult) else None
        if not isinstance(block, ToolResult) or call is None:
            blocks.append(block)
            continue
        new, change = _admitted(c, block, call, policy.tool(call.name))
        blocks.append(new)
        if change is not None:
            changes.append(change)
    if not changes:
        return Admission(message, tokens)
    return Admission(Message(message.role, tuple(blocks)), None, tuple(changes))


def with_changes(
    admission: Admission,
    blocks: tuple[Block, ...],
    stage: str,
    originals: Sequence[tuple[ToolResult, int]],
) -> Admission:
    """``admission`` whose message now holds ``blocks`` (its size counted again), with one
    change of ``stage`` per ``(original result, tokens freed)`` of ``originals``: their
    originals are kept when :func:`commit` runs."""
    changes = tuple(_Change(original, stage, freed) for original, freed in originals)
    message = Message(admission.message.role, blocks)
    return Admission(message, None, admission.changes + changes)


def commit(c: Session, admission: Admission, entry: Entry, region: str) -> Steps[Entry]:
    """Make ``admission``'s changes take effect now that the conversation ``region`` holds
    ``entry``: write each routed result into its region, keep each original for
    ``context_restore``, count each stage, and record the message in the transcript, with the
    call ids whose originals were kept (``TranscriptRecord.kept``: the transcript holds those
    results shortened, so a missing original is never taken for the transcript's text); a
    result admitted unchanged whose call id already has an original (the call id was used
    again) replaces it (:func:`_replace_stale`). Returns ``entry`` as it now stands (the one
    recorded). A region that refuses the routed write now (the window changed since
    :func:`admit` tried it) gets nothing, and the result goes back into ``entry`` in full
    (:func:`_put_back`). A step generator: a routed write that makes room by compaction yields
    its summarizer jobs (:func:`regio.compaction._writes.write_steps`)."""
    changed = {change.original.tool_use_id for change in admission.changes}
    for block in admission.message.tool_results:
        if block.tool_use_id not in changed:
            _replace_stale(c, block)
    kept: list[str] = []
    for change in admission.changes:
        original = change.original
        if change.region is not None:
            result = yield from write_steps(c, change.region, original.content, key=change.key)
            if not isinstance(result, WriteResult):
                _replace_stale(c, original)
                entry, cleared = _put_back(c, entry, change)
                kept.extend([original.tool_use_id] if cleared else [])
                continue
        c.book.relief.originals[original.tool_use_id] = original
        kept.append(original.tool_use_id)
        tally = c.book.relief.tally(change.stage)
        tally.runs += 1
        tally.blocks += 1
        tally.freed_tokens += max(0, change.freed)
    c.record("message", region, entry=entry, kept=kept)
    return entry


def _replace_stale(c: Session, result: ToolResult) -> None:
    """Keep ``result`` (admitted unchanged) as the original of its call when the session holds
    an original of an earlier result under the same call id: the call id was used again, and
    ``context_restore`` / the clear stage's placeholder extract must see this result, not the
    earlier one. Originals are append-only, so the stale one is replaced, not removed."""
    originals = c.book.relief.originals
    held = originals.holds if isinstance(originals, Originals) else originals.__contains__
    if held(result.tool_use_id):
        originals[result.tool_use_id] = result


def _put_back(c: Session, entry: Entry, change: _Change) -> tuple[Entry, bool]:
    """``(entry, cleared)``: ``entry`` with the refused route's pointer replaced by the full
    result, in the conversation too when it is still there. When the full result does not fit
    the conversation's budget or the window's ``max_tokens`` (the pointer was admitted, not
    the result), the pointer becomes the cleared-result placeholder instead (marked cleared,
    :data:`regio.policies.relief.CLEARED_META`; ``cleared`` is ``True``) and the original is
    kept for ``context_restore``: the conversation never passes its budget and nothing is
    lost."""
    original = change.original
    conv = c.window.conversation
    # the entry was just admitted: look from the end
    entries = conv.entries if conv is not None else []
    index = next((i for i in reversed(range(len(entries))) if entries[i].id == entry.id), None)
    if not isinstance(conv, SlidingWindow) or index is None:
        # the entry left the conversation already: the transcript keeps it whole
        return _with_block(entry, original), False
    current = conv.entries[index]
    counter = c.window.counter
    grown = int(counter.count_entry(_with_block(current, original))) - int(
        counter.count_entry(current)
    )
    meta = dict(current.meta)
    fits = conv.used_tokens + grown <= conv.budget
    cleared = not fits or c.window.used_tokens + grown > c.window.max_tokens
    if cleared:
        c.book.relief.originals[original.tool_use_id] = original
        meta[rp.CLEARED_META] = [*meta.get(rp.CLEARED_META, ()), original.tool_use_id]
        text = rp.placeholder(original.tool_use_id, change.tool, restorable=restorable(c))
        original = msgspec.structs.replace(original, content=text)
    rewrite_block_entry(c, conv, index, current, _with_block(current, original).blocks, meta)
    return conv.entries[index], cleared


def _with_block(entry: Entry, result: ToolResult) -> Entry:
    """``entry`` with its result for ``result.tool_use_id`` replaced by ``result``."""
    blocks = tuple(
        result if isinstance(b, ToolResult) and b.tool_use_id == result.tool_use_id else b
        for b in entry.blocks
    )
    return msgspec.structs.replace(entry, blocks=blocks)


def _admitted(
    c: Session, block: ToolResult, call: ToolUse, rule: rp.ToolRelief
) -> tuple[ToolResult, _Change | None]:
    """``block`` routed or trimmed by ``rule``, and the change to commit (``None``: as is)."""
    conv = c.window.conversation
    assert conv is not None  # admit() reads relief policies only for a conversation
    # counted up to what the conversation could admit and the trim limit (an estimate past
    # both: a result that large is trimmed, routed or refused, never admitted as is)
    cap = entry_cap(c.window, conv)
    limit = None if cap is None else max(cap, rule.max_result_tokens or 0)
    before = count_up_to(c.window.counter, block.content, limit)
    routed = _route(c, block, call, rule) if rule.route else None
    if routed is not None:
        text, key = routed
        change = _Change(
            block, "route", before - c.count_text(text), str(rule.route), key, call.name
        )
    elif rule.max_result_tokens is not None and before > rule.max_result_tokens:
        text = rp.trimmed_to(block.content, before, rule.max_result_tokens, c.count_text)
        change = _Change(block, "admit_trim", before - c.count_text(text))
    else:
        return block, None
    if text == block.content:
        return block, None
    # only the text changes: a progress report stays one, and the media stay with the result
    return msgspec.structs.replace(block, content=text), change


def _route(
    c: Session, block: ToolResult, call: ToolUse, rule: rp.ToolRelief
) -> tuple[str, str | None] | None:
    """``(pointer, key)`` when ``rule.route`` would take ``block`` (a dry run of the write,
    ``Window.plan_write``), or ``None`` (the result stays in the conversation) when the key
    cannot be built or the region would refuse the write."""
    key = None
    if rule.route_key is not None:
        try:
            key = rule.route_key.format(tool=call.name, **call.input)
        except (KeyError, IndexError, ValueError, AttributeError):
            return None
    window = c.window
    # a dry run of the write (the id and turn make_entry would give; nothing changes)
    probe = Entry(id=f"e{window.next_entry}", blocks=(Text(block.content),), key=key)
    target = window.region(str(rule.route))
    probe = msgspec.structs.replace(
        probe, tokens=admission_tokens(window, target, probe), turn=window.turn
    )
    if not isinstance(window.plan_write(str(rule.route), probe), WritePlan):
        return None
    where = f"region {rule.route!r}" + (f" under key {key!r}" if key is not None else "")
    how = (
        f'context_restore(call_id="{call.id}") brings it into the conversation'
        if restorable(c)
        else "kept in the session transcript"
    )
    return f"[result of {call.name} call {call.id} stored in {where}; {how}]", key
