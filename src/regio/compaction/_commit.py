"""Committing one summary: the commit gate (:func:`regio.summarizers._protocol.check_summary`),
the summary entry in the ``compact_history`` (the compaction's ``covers_all``, a rolling
summary's ``supersedes``), its transcript record, and the durable items it carries
(:mod:`regio.compaction._durable`). Used by the flush of :mod:`regio.compaction._flush`.
"""

from __future__ import annotations

from typing import Any

from regio.content import Entry
from regio.errors import CompactionError, SummaryRejected
from regio.regions import CompactHistory, PendingCompaction
from regio.session._events import SummaryShortened
from regio.session._session import Session
from regio.session._textadmit import admit_value
from regio.summarizers._hierarchy import SummaryOutcome
from regio.summarizers._protocol import check_summary, summarizer_limits

from . import _durable as durable

__all__ = ["commit_summary", "fit_prose"]


def commit_summary(
    c: Session,
    p: PendingCompaction,
    outcome: SummaryOutcome,
    previous: Entry | None,
    inputs: tuple[Entry, ...],
) -> Entry:
    """Check and commit one summary of ``p`` (its summarizer ``outcome``; ``previous``: the
    source's previous summary, ``inputs``: what the summarizer read, each tool result as the
    window holds it) and its durable items
    (:mod:`regio.compaction._durable`). Raises :class:`SummaryRejected` or
    :class:`regio.errors.CompactionError` (changing nothing) when the summary is refused."""
    window = c.window
    raw = outcome.text
    if isinstance(raw, str):  # anything else is refused by check_summary as empty
        raw = admit_value(c.emit, raw, f"summary({p.region})")
    settled = durable.settle(c, p, inputs, raw)
    text = settled.prose
    tokens = c.count_text(text)
    rolling = (
        c.options.carry_forward == "replace" and previous is not None and p.operation == "compact"
    )
    replaced = p.tokens + (previous.tokens if (rolling and previous is not None) else 0)
    try:
        cap: int | None = summarizer_limits(c.summarizer)[2]
    except ValueError:
        cap = None
    check_summary(
        text,
        summary_tokens=tokens,
        replaced_tokens=replaced,
        max_summary_tokens=cap,
        refusal_phrases=c.options.refusal_phrases,
    )
    target = window.region(p.target) if p.target else None
    if target is None:
        raise CompactionError(f"{p.id}: region {p.region!r} has no compact_history")
    shortened: SummaryShortened | None = None
    if tokens > target.budget and getattr(c.summarizer, "extracts_items", False):
        text = fit_prose(c, text, target.budget)
        before, tokens = tokens, c.count_text(text)
        shortened = SummaryShortened(p.region, target.name, target.budget, before, tokens)
    if tokens > target.budget:
        raise SummaryRejected(
            f"the summary ({tokens} tokens) is larger than region {target.name!r} "
            f"({target.budget} tokens); nothing was changed",
            reason="oversized",
            summary_tokens=tokens,
            replaced_tokens=replaced,
        )
    version = c.book.versions.get(p.region, 0) + 1
    meta: dict[str, Any] = {"summary": True, "version": version}
    if p.operation == "compact":
        covered = (
            list(previous.meta.get("covers_all", previous.meta.get("covers", [])))
            if (previous is not None and rolling)
            else []
        )
        meta["covers_all"] = covered + list(p.entry_ids)
    entry = window.make_entry(text, tokens=tokens, meta=meta)
    # a rolling summary carries the previous one forward: the regions layer removes it in the
    # same commit and checks the size against everything the new summary replaces
    supersedes = (previous.id,) if (rolling and previous is not None) else ()
    committed = window.complete_compaction(p.id, entry, supersedes=supersedes)
    c.book.versions[p.region] = version
    if shortened is not None:  # said once the shortened summary is committed
        c.emit(shortened)
    c.record("compaction", p.region, entry=committed, ids=p.entry_ids)
    if isinstance(target, CompactHistory):
        durable.commit_items(c, target, settled, p.region)
    return committed


def fit_prose(c: Session, text: str, budget: int) -> str:
    """The longest end of ``text`` that counts at most ``budget`` tokens with the window's
    counter, after an ellipsis: whole lines, then the last words of the first line that does
    not fit; a lone ellipsis when not even one word fits. Extractive prose is the previous
    summary first and one line per new turn after it, so what goes is the oldest, and a
    rolling summary at its budget still takes in each compaction's turns."""
    if c.count_text(text) <= budget:
        return text
    ellipsis = "\u2026"
    lines = text.split("\n")
    kept: list[str] = []
    for line in reversed(lines):
        if c.count_text("\n".join([ellipsis, line, *kept])) > budget:
            words = line.split(" ")
            lo, hi = 0, len(words)  # the most words w with the cut line fitting
            while lo < hi:
                mid = (lo + hi + 1) // 2
                tail = ellipsis + " ".join(words[-mid:])
                if c.count_text("\n".join([tail, *kept])) <= budget:
                    lo = mid
                else:
                    hi = mid - 1
            head = ellipsis + " ".join(words[-lo:]) if lo else ellipsis
            return "\n".join([head, *kept])
        kept.insert(0, line)
    return text
