"""A turn that fits the window is never refused (``docs/runtime.md``, "A turn that fits").

The **newest turn** is what compaction may not take from the conversation: its protected
units (the newest user message, every open group of calls) and every unit holding a tool
result no request carried yet (:func:`regio.runtime.cuts.unsent`), plus the message being
admitted. (A ``reject`` conversation refuses what does not fit, as it declares.) When it does
not fit the conversation's room (an elastic conversation's room is what the window has free,
:attr:`regio.regions.Region.budget`), admission goes in this order:

1. :func:`check` -- changes nothing: a message that could not fit even with every tool result
   of the turn cut to its marker is refused (:class:`regio.errors.RegionFullError`) before
   any compaction runs, so a refused write changes nothing and bills no summarizer call;
2. the conversation's older turns are compacted to make room
   (:func:`regio.runtime.messages.make_room`);
3. :func:`trim` -- whatever still does not fit comes off the turn's tool results, oldest
   result first, each trimmed head + tail around a marker saying how much was cut
   (:func:`regio.policies.relief.trimmed_to`), as far as needed. The originals are kept
   (``ReliefBook.originals`` and the transcript): ``context_restore`` brings one back, and a
   summary with ``summarize_originals`` reads them.

Only a message whose own text (user or assistant text, not tool results) cannot fit is ever
refused. Relief's events and tallies name the stage ``turn_trim``.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.content import Block, Entry, Message, ToolResult
from regio.policies import relief as rp
from regio.regions import Region, SlidingWindow

from .compactor import Compactor
from .cuts import unsent, unsent_from
from .relief import ReliefApplied, rewrite_block_entry
from .reliefadmit import Admission, with_changes

__all__ = ["STAGE", "check", "report", "shorten", "trim", "turn_indexes"]

#: The relief stage name of a turn trimmed to fit (events, tallies, the bench's relief line).
STAGE = "turn_trim"


def turn_indexes(c: Compactor, conv: Region) -> list[int]:
    """Indexes of the conversation entries of the newest turn (module doc), oldest first:
    the protected units and every unit holding a result no request carried yet."""
    info = conv.analysis()
    held = unsent(conv.entries, unsent_from(c))
    units = {info.unit_of[i] for i in held}
    return [i for i in range(len(conv.entries)) if info.is_protected(i) or info.unit_of[i] in units]


def _results(blocks: Sequence[Block]) -> list[tuple[int, ToolResult]]:
    return [(j, b) for j, b in enumerate(blocks) if isinstance(b, ToolResult)]


def _slack(c: Compactor, blocks: Sequence[Block]) -> int:
    """Tokens the tool results among ``blocks`` could give up (each down to its marker)."""
    return sum(max(0, c.count_text(b.content) - rp.MARKER_TOKENS) for _, b in _results(blocks))


def _size(c: Compactor, message: Message, tokens: int | None) -> int:
    """``tokens``, else the counter's size of ``message`` as an entry."""
    if tokens is not None:
        return tokens
    counter = c.window.counter
    assert counter is not None
    return int(counter.count_entry(Entry(id="", blocks=message.blocks, role=message.role)))


def check(c: Compactor, conv: Region, admission: Admission) -> None:
    """Refuse ``admission``'s message now, changing nothing, when the newest turn could not
    fit ``conv`` even with every tool result of the turn cut to its marker (module doc).
    Raises :class:`regio.errors.RegionFullError` (event ``refused``, reason ``too_large``)."""
    message = admission.message
    if conv.admission == "reject":
        return  # the region refuses what does not fit, changing nothing, as declared
    size = _size(c, message, admission.tokens)
    least = size - _slack(c, message.blocks)
    limit = conv.max_entry_tokens
    turn = turn_indexes(c, conv)
    kept = sum(conv.entries[i].tokens - _slack(c, conv.entries[i].blocks) for i in turn)
    if least + kept <= conv.budget and (limit is None or least <= limit):
        return
    probe = Entry(id="", blocks=message.blocks, role=message.role, tokens=least + kept)
    reason = "entry_limit" if limit is not None and least > limit else "too_large"
    refusal = conv.refusal(probe, reason)
    conv.emit_refusal(refusal)
    raise refusal.error()


def trim(c: Compactor, conv: Region, admission: Admission) -> Admission:
    """``admission`` with the newest turn trimmed so the message fits ``conv`` (module doc):
    the turn's results already in the conversation first (rewritten in place, oldest first),
    then the message's own; unchanged when it fits. Units compaction could still take are
    left to the region's own rules (they are not the turn)."""
    if not isinstance(conv, SlidingWindow) or conv.admission == "reject":
        return admission  # a ``reject`` conversation refuses what does not fit, as declared
    message = admission.message
    size = _size(c, message, admission.tokens)
    turn = turn_indexes(c, conv)
    info = conv.analysis()
    held = set(turn)
    others = sum(
        info.unit_tokens[u] for u in info.removable if not held.intersection(info.units[u])
    )
    need = conv.used_tokens + size - conv.budget - others
    limit = conv.max_entry_tokens
    if limit is not None:
        need = max(need, size - limit)
    if need <= 0:
        return admission
    need -= shorten(c, conv, need)
    return _trim_message(c, admission, need) if need > 0 else admission


def shorten(c: Compactor, conv: SlidingWindow, need: int) -> int:
    """Trim the newest turn's results already in ``conv`` (oldest first, each head + tail,
    never below its marker) toward ``need`` tokens; returns the tokens freed. What
    :func:`trim` does before the message's own results, and what a request over the ceiling
    does once compaction, which never takes the newest turn, has freed all it could."""
    freed = 0
    for index in turn_indexes(c, conv):
        if freed >= need:
            break
        freed += _trim_entry(c, conv, index, need - freed)
    return freed


def _cut(c: Compactor, block: ToolResult, need: int) -> tuple[ToolResult, int]:
    """``block`` trimmed to give up about ``need`` tokens (never below its marker), and the
    tokens it gave up."""
    before = c.count_text(block.content)
    keep = max(rp.MARKER_TOKENS, before - need)
    if keep >= before:
        return block, 0
    text = rp.trimmed_to(block.content, before, keep, c.count_text)
    return msgspec.structs.replace(block, content=text), before - c.count_text(text)


def _trim_blocks(
    c: Compactor, blocks: Sequence[Block], need: int
) -> tuple[tuple[Block, ...], list[tuple[ToolResult, int]]]:
    """``blocks`` with their tool results trimmed (oldest first) toward ``need`` tokens, and
    each trimmed original with the tokens it gave up."""
    out = list(blocks)
    trims: list[tuple[ToolResult, int]] = []
    left = need
    for j, block in _results(out):
        if left <= 0:
            break
        new, freed = _cut(c, block, left)
        if freed <= 0:
            continue
        out[j] = new
        trims.append((block, freed))
        left -= freed
    return tuple(out), trims


def _trim_entry(c: Compactor, conv: SlidingWindow, index: int, need: int) -> int:
    """Trim the results of the conversation entry at ``index`` (oldest first) toward
    ``need`` tokens; returns the tokens its entry gave up."""
    entry = conv.entries[index]
    blocks, trims = _trim_blocks(c, entry.blocks, need)
    if not trims:
        return 0
    originals = c.book.relief.originals
    for block, _ in trims:
        if originals.get(block.tool_use_id) is None:
            originals[block.tool_use_id] = block
    touched = tuple(block.tool_use_id for block, _ in trims)
    before = conv.used_tokens
    meta = dict(entry.meta)
    meta[rp.TRIMMED_META] = int(meta.get(rp.TRIMMED_META, 0)) + len(touched)
    rewrite_block_entry(c, conv, index, entry, blocks, meta)
    freed_total = before - conv.used_tokens
    _count(c, len(touched), freed_total)
    c.emit(
        ReliefApplied(STAGE, conv.name, touched, (entry.id,), freed_total, before, conv.used_tokens)
    )
    return freed_total


def _trim_message(c: Compactor, admission: Admission, need: int) -> Admission:
    """The message of ``admission`` with its results trimmed (oldest first) toward ``need``
    tokens; each original is kept when the message is committed."""
    blocks, trims = _trim_blocks(c, admission.message.blocks, need)
    changed = {ch.original.tool_use_id for ch in admission.changes}
    # an admission change keeps its original already
    kept = [(block, freed) for block, freed in trims if block.tool_use_id not in changed]
    return with_changes(admission, blocks, STAGE, kept)


def report(c: Compactor, conv: Region, admission: Admission, entry: Entry) -> None:
    """Emit ``relief_applied`` (stage ``turn_trim``) for the results of ``admission``'s
    message that :func:`trim` shortened, now that the conversation holds it as ``entry`` (the
    tallies are counted when the admission commits)."""
    trims = [ch for ch in admission.changes if ch.stage == STAGE]
    if trims:
        freed = sum(ch.freed for ch in trims)
        ids = tuple(ch.original.tool_use_id for ch in trims)
        used = conv.used_tokens
        c.emit(ReliefApplied(STAGE, conv.name, ids, (entry.id,), freed, used + freed, used))


def _count(c: Compactor, blocks: int, freed: int) -> None:
    tally = c.book.relief.tally(STAGE)
    tally.runs += 1
    tally.blocks += blocks
    tally.freed_tokens += max(0, freed)
