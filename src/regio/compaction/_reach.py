"""Reaching a requested size: ``Engine.compact(target_tokens=N)``.

After the regions are compacted (their keep limits applied), the window may still hold more
than ``N`` tokens: the summaries accumulated in the ``compact_history`` regions and their
durable items. Then, history by history (the one holding the most first):

1. **merge the stored summaries**: all of a history's summaries are merged into one (a
   ``merge`` compaction, through the summarizer and the commit gate), and the merged summary
   again while that shrinks it, the window is over ``N`` and the prose holds more than
   :data:`MIN_PROSE_TOKENS`;
2. **drop the lowest-priority items last**: the item section gives up its items, the last
   kind first (:meth:`regio.summarizers.items.ItemSet.fit`), until the window fits; event
   ``items_dropped`` (reason ``target``) names each.

What can never shrink (pinned text, keyed facts, the newest user message, open tool calls)
stays; when it alone is over ``N`` the window ends as small as it can be, and the result's
``tokens_after`` says where it stopped.
"""

from __future__ import annotations

from regio.errors import CompactionNoProgressError
from regio.regions import CompactHistory
from regio.session._events import ItemsDropped
from regio.session._session import CompactionResult, Session, Steps
from regio.summarizers.items import DurableItem, ItemSet

from . import _durable as durable
from . import _flush as cp

__all__ = ["MAX_MERGE_PASSES", "MIN_PROSE_TOKENS", "reach_steps"]

#: Most merges of one history per request (each at least halves the extractive summary).
MAX_MERGE_PASSES = 8
#: A history whose summaries hold at most this many tokens is not merged again: the prose is
#: at its floor, and its items go next.
MIN_PROSE_TOKENS = 12


def _histories(c: Session) -> list[CompactHistory]:
    found = [r for r in c.window.regions if isinstance(r, CompactHistory)]
    return sorted(found, key=lambda h: -h.used_tokens)


def _merge_all(c: Session, history: CompactHistory) -> None:
    """Queue one merge of every summary of ``history`` (none when one is pending)."""
    summaries = history.summaries()
    if not summaries or history.pending():
        return
    history.queue_merge(summaries, "target")


def _drop_items(c: Session, history: CompactHistory, target: int) -> None:
    """Drop ``history``'s lowest-priority items until the window holds ``target`` tokens."""
    entry = history.item_entry()
    if entry is None:
        return
    items = durable.section_items(history)
    rest = c.window.used_tokens - entry.tokens

    def fits(kept: list[DurableItem]) -> bool:
        if not kept:
            return True
        return rest + c.count_text(durable.render_section(ItemSet.of(kept))) <= target

    dropped = items.fit(fits)
    if dropped:
        durable.write_items(c, history, items)
        c.emit(ItemsDropped(history.name, tuple(i.text for i in dropped), "target"))


def reach_steps(c: Session, target: int) -> Steps[CompactionResult | None]:
    """Bring the window to ``target`` tokens (module doc); returns the last merge's result, or
    ``None`` when no merge ran. Raises :class:`ValueError` for a negative target."""
    if target < 0:
        raise ValueError(f"target_tokens must be >= 0, got {target}")
    result: CompactionResult | None = None
    for history in _histories(c):
        for _ in range(MAX_MERGE_PASSES):
            prose = sum(e.tokens for e in history.summaries())
            if c.window.used_tokens <= target or prose <= MIN_PROSE_TOKENS:
                break
            before = history.used_tokens
            _merge_all(c, history)
            policy = cp.FlushPolicy(trigger="manual", check_triggers=False, only=history.name)
            try:
                done = yield from cp.flush_steps(c, policy)
            except CompactionNoProgressError:
                c.book.strikes.pop(history.name, None)
                break  # the summary cannot shrink further: the items go next
            result = done or result
            if history.used_tokens >= before:
                break
        for queued in history.pending():
            c.window.fail_compaction(queued.id, "target reached or summary at its floor")
    for history in _histories(c):
        if c.window.used_tokens <= target:
            break
        _drop_items(c, history, target)
    return result
