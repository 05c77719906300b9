"""A turn that fits the window is never refused (``docs/runtime.md``, "A turn that fits").

The **newest turn** is what compaction may not take from the conversation: its protected
units (the newest user message, every open group of calls) and every unit holding a tool
result no request carried yet (:func:`regio.compaction._cuts.unsent`), plus the message being
admitted. (A ``reject`` conversation refuses what does not fit, as it declares.) When it does
not fit the conversation's room (an elastic conversation's room is what the window has free,
:attr:`regio.regions.Region.budget`), admission goes in this order:

1. :func:`check` -- changes nothing: a message that could not fit even with every tool result
   of the turn cut to its marker is refused (:class:`regio.errors.RegionFullError`) before
   any compaction runs, so a refused write changes nothing and bills no summarizer call;
2. the conversation's older turns are compacted to make room
   (:func:`regio.engine._messages.make_room`);
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

from regio.compaction._cuts import unsent, unsent_from
from regio.compaction.relief._admit import Admission, with_changes
from regio.compaction.relief._chain import ReliefApplied, rewrite_block_entry
from regio.content import Block, Entry, Message, ToolResult
from regio.policies import relief as rp
from regio.regions import Region, SlidingWindow
from regio.session._session import Session
from regio.session._sizes import admission_tokens, count_up_to, entry_cap
from regio.tokens import count_entry_up_to

__all__ = ["STAGE", "check", "report", "shorten", "trim", "turn_indexes"]

#: The relief stage name of a turn trimmed to fit (events, tallies, the bench's relief line).
STAGE = "turn_trim"


def turn_indexes(c: Session, conv: Region) -> list[int]:
    """Indexes of the conversation entries of the newest turn (module doc), oldest first:
    the protected units and every unit holding a result no request carried yet."""
    memo = conv.units()  # the grouping and the protected units, without a whole analysis
    unit_of = memo.grouping.assignment
    units = memo.protected_units()
    mark = unsent_from(c)
    numbers = memo.numbers
    if mark is not None and numbers.top >= c.window.next_entry:
        # a caller's entry numbered past the window's own: what `unsent` finds, read whole
        units.update(unit_of[i] for i in unsent(conv.entries, mark))
    elif mark is not None:  # what `unsent` finds: the entries made since, found by id
        for number in range(mark, c.window.next_entry):
            i = memo.results.get(f"e{number}")
            if i is not None:
                units.add(unit_of[i])
        units.update(unit_of[i] for number, i in numbers.odd if number >= mark)
    groups = memo.grouping.groups
    return sorted(m for u in units for m in groups[u].members)


def _results(blocks: Sequence[Block]) -> list[tuple[int, ToolResult]]:
    return [(j, b) for j, b in enumerate(blocks) if isinstance(b, ToolResult)]


def _slack(c: Session, blocks: Sequence[Block]) -> int:
    """Tokens the tool results among ``blocks`` (of entries the conversation holds) could give
    up (each down to its marker)."""
    return sum(max(0, c.count_text(b.content) - rp.MARKER_TOKENS) for _, b in _results(blocks))


def _least(c: Session, conv: Region, message: Message) -> int:
    """Tokens of ``message`` with every tool result cut to its marker (at most): its other
    blocks and the results' framing counted only up to what ``conv`` could admit
    (:func:`regio.session._sizes.entry_cap`), so a 100 MiB result is never counted here."""
    counter = c.window.counter
    assert counter is not None
    blocks = tuple(
        msgspec.structs.replace(b, content="") if isinstance(b, ToolResult) else b
        for b in message.blocks
    )
    probe = Entry(id="", blocks=blocks, role=message.role)
    cap = entry_cap(c.window, conv)
    size = counter.count_entry(probe) if cap is None else count_entry_up_to(counter, probe, cap)
    marker = rp.MARKER_TOKENS
    return int(size) + sum(
        min(marker, count_up_to(counter, b.content, marker)) for _, b in _results(message.blocks)
    )


def _size(c: Session, conv: Region, message: Message, tokens: int | None) -> int:
    """``tokens``, else the size of ``message`` as an entry (counted only up to what ``conv``
    could admit: :func:`regio.session._sizes.admission_tokens`)."""
    if tokens is not None:
        return tokens
    return admission_tokens(c.window, conv, Entry(id="", blocks=message.blocks, role=message.role))


def check(c: Session, conv: Region, admission: Admission) -> None:
    """Refuse ``admission``'s message now, changing nothing, when the newest turn could not
    fit ``conv`` even with every tool result of the turn cut to its marker (module doc).
    Raises :class:`regio.errors.RegionFullError` (event ``refused``, reason ``too_large``)."""
    message = admission.message
    if conv.admission == "reject":
        return  # the region refuses what does not fit, changing nothing, as declared
    least = _least(c, conv, message)
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


def trim(c: Session, conv: Region, admission: Admission) -> Admission:
    """``admission`` with the newest turn trimmed so the message fits ``conv`` (module doc):
    the turn's results already in the conversation first (rewritten in place, oldest first),
    then the message's own; unchanged when it fits. Units compaction could still take are
    left to the region's own rules (they are not the turn)."""
    if not isinstance(conv, SlidingWindow) or conv.admission == "reject":
        return admission  # a ``reject`` conversation refuses what does not fit, as declared
    message = admission.message
    size = _size(c, conv, message, admission.tokens)
    turn = turn_indexes(c, conv)  # whole units: every other unit is one compaction may take
    entries = conv.entries
    need = size + sum(entries[i].tokens for i in turn) - conv.budget
    limit = conv.max_entry_tokens
    if limit is not None:
        need = max(need, size - limit)
    if need <= 0:
        return admission
    need -= shorten(c, conv, need)
    return _trim_message(c, conv, admission, need) if need > 0 else admission


def shorten(c: Session, conv: SlidingWindow, need: int) -> int:
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


def _cut(
    c: Session, block: ToolResult, need: int, cap: int | None = None
) -> tuple[ToolResult, int]:
    """``block`` trimmed to give up about ``need`` tokens (never below its marker), and the
    tokens it gave up; ``cap``: its text is counted only up to that many tokens (an estimate
    past it, :func:`regio.session._sizes.count_up_to`: a result that large is cut anyway)."""
    before = count_up_to(c.window.counter, block.content, cap)
    keep = max(rp.MARKER_TOKENS, before - need)
    if keep >= before:
        return block, 0
    text = rp.trimmed_to(block.content, before, keep, c.count_text)
    return msgspec.structs.replace(block, content=text), before - c.count_text(text)


def _trim_blocks(
    c: Session, blocks: Sequence[Block], need: int, cap: int | None = None
) -> tuple[tuple[Block, ...], list[tuple[ToolResult, int]]]:
    """``blocks`` with their tool results trimmed (oldest first) toward ``need`` tokens, and
    each trimmed original with the tokens it gave up (``cap``: :func:`_cut`)."""
    out = list(blocks)
    trims: list[tuple[ToolResult, int]] = []
    left = need
    for j, block in _results(out):
        if left <= 0:
            break
        new, freed = _cut(c, block, left, cap)
        if freed <= 0:
            continue
        out[j] = new
        trims.append((block, freed))
        left -= freed
    return tuple(out), trims


def _trim_entry(c: Session, conv: SlidingWindow, index: int, need: int) -> int:
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


def _trim_message(c: Session, conv: Region, admission: Admission, need: int) -> Admission:
    """The message of ``admission`` with its results trimmed (oldest first) toward ``need``
    tokens; each original is kept when the message is committed. A result is counted only up
    to what ``conv`` could admit (:func:`regio.session._sizes.entry_cap`)."""
    cap = entry_cap(c.window, conv)
    blocks, trims = _trim_blocks(c, admission.message.blocks, need, cap)
    changed = {ch.original.tool_use_id for ch in admission.changes}
    # an admission change keeps its original already
    kept = [(block, freed) for block, freed in trims if block.tool_use_id not in changed]
    return with_changes(admission, blocks, STAGE, kept)


def report(c: Session, conv: Region, admission: Admission, entry: Entry) -> None:
    """Emit ``relief_applied`` (stage ``turn_trim``) for the results of ``admission``'s
    message that :func:`trim` shortened, now that the conversation holds it as ``entry`` (the
    tallies are counted when the admission commits)."""
    trims = [ch for ch in admission.changes if ch.stage == STAGE]
    if trims:
        freed = sum(ch.freed for ch in trims)
        ids = tuple(ch.original.tool_use_id for ch in trims)
        used = conv.used_tokens
        c.emit(ReliefApplied(STAGE, conv.name, ids, (entry.id,), freed, used + freed, used))


def _count(c: Session, blocks: int, freed: int) -> None:
    tally = c.book.relief.tally(STAGE)
    tally.runs += 1
    tally.blocks += blocks
    tally.freed_tokens += max(0, freed)
