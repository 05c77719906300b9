"""What a summary reads of the tool results ``keep_last`` kept verbatim.

**Rule.** When a compaction cuts a ``sliding_window`` conversation, the relief chain's clear
stage is enabled (``ReliefPolicy.clear``) and the summarizer reads what the conversation holds
(``summarize_originals: false``), each tool result of the cut that the clear stage left
verbatim only because of ``keep_last`` (the chain-wide one or the tool's own) reaches the
summarizer as the placeholder clearing it would write: the call, the tool and the result's
salient extract, byte for byte the clear stage's edit (:func:`._chain._placeholders`), when
that placeholder is smaller (by the window's counter; the clear stage never writes one that
frees no tokens). Every other block is read as before: a result of a tool with
``clear: false``, a result after the last assistant message (not answered yet), a result no
request has carried yet (:func:`regio.compaction._cuts.unsent`), a result already cleared or
trimmed (as the window holds it), a result the clear stage could clear but did not (its batch
was under its minimum), assistant and user text.

**Reason.** ``keep_last`` protects a result's place in the window (the model works with its
newest results verbatim), not its length in a summary: once a compaction cuts it, it is
summarized like every other answered result in the cut that was cleared, as the clear stage
would show it. At small windows with large results (2k-20k tokens at 32k) a compaction lands
every request or two and its cut holds those newest results, so the summarizer read each
large result whole, at the summarizer model's prices. Measured on generated sessions of every
shape, seeds never tuned on: docs/benchmark.md, "Summaries read the newest results as their
placeholders".

Only what the summarizer reads changes. The window's entries, the transcript,
``context_restore`` and the durable items (extracted from the cut as the window holds it,
:func:`regio.compaction._durable.settle`) are as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.compaction._cuts import unsent, unsent_from
from regio.content import Block, Entry
from regio.policies import relief as rp
from regio.regions import Region, SlidingWindow
from regio.session._session import Session

from ._chain import _by_entry, _edited, _placeholders, _rewritten

__all__ = ["kept_as_placeholders", "kept_candidates"]


def kept_candidates(entries: Sequence[Entry], policy: rp.ReliefPolicy) -> list[rp.Candidate]:
    """The results of ``entries`` the clear stage would clear but for ``keep_last`` (the
    chain-wide one and each tool's own), oldest first: answered by a later assistant message,
    live, of a tool without ``clear: false``, among the newest ``keep_last``
    (:func:`regio.policies.relief.clear_candidates` without its ``keep_last`` limits, less
    those it gives with them)."""
    tools = {
        name: msgspec.structs.replace(rule, keep_last=None) for name, rule in policy.tools.items()
    }
    loose = msgspec.structs.replace(policy, keep_last=0, tools=tools)
    normal = {x.call_id for x in rp.clear_candidates(entries, policy)}
    return [x for x in rp.clear_candidates(entries, loose) if x.call_id not in normal]


def kept_as_placeholders(c: Session, region: Region, cut: Sequence[Entry]) -> list[Entry]:
    """``cut`` (entries of ``region`` a compaction summarizes, in order) as the summarizer
    reads them (module doc): each result :func:`kept_candidates` gives, and no request left
    unsent, replaced by its clear-stage placeholder when that is smaller (by
    :meth:`Session.count_text`; the entry's tokens recounted by the
    window's counter); ``cut`` itself, as a new list, when the rule does not apply. Changes
    nothing in the window."""
    policy = c.options.relief
    if not isinstance(region, SlidingWindow) or policy is None:
        return list(cut)
    if not policy.clear or policy.summarize_originals:
        return list(cut)
    everything = region.entries
    index = {e.id: i for i, e in enumerate(everything)}
    covered = {index[e.id] for e in cut if e.id in index}
    held = unsent(everything, unsent_from(c))
    chosen = [
        x for x in kept_candidates(everything, policy) if x.index in covered and x.index not in held
    ]
    if not chosen:
        return list(cut)
    clear = _placeholders(c)
    placeholders: dict[tuple[int, int], Block] = {}
    for x in chosen:  # as the clear stage: never a placeholder that frees no tokens
        old = everything[x.index].blocks[x.block]
        new = clear(everything[x.index], x)
        if c.count_text(rp.block_text(old)) > c.count_text(rp.block_text(new)):
            placeholders[(x.index, x.block)] = new
    by_entry = _by_entry([x for x in chosen if (x.index, x.block) in placeholders])
    out = []
    for entry in cut:
        i = index.get(entry.id)
        if i is None or i not in by_entry:
            out.append(entry)
            continue
        blocks, meta = _edited(
            "clear", entry, by_entry[i], lambda _, x: placeholders[(x.index, x.block)]
        )
        out.append(_rewritten(c, entry, blocks, meta))
    return out
