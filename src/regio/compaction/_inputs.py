"""What a compaction's summarizer reads besides the units it replaces (the flush's
carry-forward rule, ``docs/runtime.md``, "Compaction flush").

* :func:`previous_summary` -- the last summary of the same source in the ``compact_history``;
* :func:`summary_inputs` -- the summaries a compaction reads before its entries: the previous
  one (as context with ``carry_forward="append"``) and, for a summarizer that
  ``reads_all_summaries``, every earlier one of the source;
* :func:`widen_merge` -- a ``merge`` widened to enough of the oldest summaries
  (:data:`MERGE_INPUT_FACTOR` times the summary cap) that a summary at the cap still shrinks.
"""

from __future__ import annotations

import msgspec

from regio.content import Entry
from regio.regions import PendingCompaction
from regio.regions.compaction import ITEMS_META
from regio.session._session import Session
from regio.summarizers._protocol import summarizer_limits

__all__ = ["MERGE_INPUT_FACTOR", "previous_summary", "summary_inputs", "widen_merge"]


def previous_summary(c: Session, p: PendingCompaction) -> Entry | None:
    """The last summary of ``p``'s source in its ``compact_history`` (``None``: none, or ``p``
    is not a compaction into a history)."""
    if p.operation != "compact" or p.target is None:
        return None
    history = c.window.region(p.target)
    for entry in reversed(history.entries):
        if entry.meta.get("source") == p.region and ITEMS_META not in entry.meta:
            return entry
    return None


def summary_inputs(c: Session, p: PendingCompaction, previous: Entry | None) -> tuple[Entry, ...]:
    """The summaries a compaction of ``p`` reads before its entries: ``previous`` (its
    source's last summary, :func:`_as_input`); with ``carry_forward="append"`` and a
    summarizer that declares ``reads_all_summaries`` (the extractive one), every earlier
    summary of the source too, as context: the new summary then repeats no identifier line
    another summary of the history already shows."""
    if previous is None:
        return ()
    earlier: tuple[Entry, ...] = ()
    if c.options.carry_forward != "replace" and getattr(c.summarizer, "reads_all_summaries", False):
        history = c.window.region(p.target) if p.target else None
        earlier = tuple(
            _as_input(c, e)
            for e in (history.entries if history is not None else ())
            if e.meta.get("source") == p.region and ITEMS_META not in e.meta and e.id != previous.id
        )
    return (*earlier, _as_input(c, previous))


def _as_input(c: Session, previous: Entry) -> Entry:
    """The previous summary as summarizer input. With ``carry_forward="append"`` it stays in
    the history and the new summary replaces only the new units, so it is passed as context
    (``meta["context_only"]``): a summarizer must not copy it (the extractive one uses it only
    to skip identifiers it already holds, and sizes its output on the replaced units)."""
    if c.options.carry_forward == "replace":
        return previous
    return msgspec.structs.replace(previous, meta={**previous.meta, "context_only": True})


#: A merge's input is widened to at least this many times the summarizer's
#: ``max_summary_tokens`` (when the history holds that much), so a summary at the cap still
#: makes progress.
MERGE_INPUT_FACTOR = 2


def widen_merge(c: Session, p: PendingCompaction) -> PendingCompaction:
    """``p`` (a ``merge``) extended to the history's oldest summaries that hold more than
    ``MERGE_INPUT_FACTOR * max_summary_tokens`` (or all of them): a merge whose input is near
    the summary cap could never shrink it."""
    history = c.window.region(p.region)
    try:
        cap = summarizer_limits(c.summarizer)[2]
    except ValueError:
        return p
    floor = MERGE_INPUT_FACTOR * cap
    if p.tokens > floor:
        return p
    taken: list[Entry] = []
    for entry in history.entries:
        if ITEMS_META in entry.meta:
            continue
        taken.append(entry)
        if sum(e.tokens for e in taken) > floor and len(taken) >= len(p.entry_ids):
            break
    if len(taken) <= len(p.entry_ids) or [e.id for e in taken[: len(p.entry_ids)]] != list(
        p.entry_ids
    ):
        return p
    wider = msgspec.structs.replace(
        p, entry_ids=tuple(e.id for e in taken), tokens=sum(e.tokens for e in taken)
    )
    c.window.queue.put(wider)
    return wider
