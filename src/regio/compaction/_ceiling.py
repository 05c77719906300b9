"""Making room at the request ceiling: what :func:`regio.engine._requests.lay_out` does when a
request is over the ceiling (``min(window max, context window - output reserve)``).

First it compacts every compactable region toward half the allowance
(:func:`regio.compaction._flushes.pressure_steps`). A ``sliding_window`` region that no
``compact_history`` is paired with cannot be compacted: it only rolls its oldest units off, at
its own budget or item limit. When the engine's context window is smaller than the window its
blueprint was sized for (``Engine(context_window=...)``, or a window a provider adapter
declared: :mod:`regio.session._declared`), those limits are never reached and nothing would
shrink: every request would be refused although closed turns could go. So
:func:`evict_for_ceiling` then rolls off the oldest removable units of such regions (whole
turn groups, in the region's own removal order: never the newest user message nor an open
call), oldest first, until the request is back at half the allowance, as the compaction would
have. Each region's eviction is an ``evicted`` event (reason ``ceiling``) and a ``release``
record of the transcript, which keeps the entries.
"""

from __future__ import annotations

from regio.regions import SlidingWindow
from regio.regions import events as rev
from regio.session._session import Session

__all__ = ["evict_for_ceiling"]


def evict_for_ceiling(c: Session, need: int) -> int:
    """Roll off the oldest removable units of the ``sliding_window`` regions of ``c``'s window
    that compaction cannot shrink, until ``need`` tokens (raw) are freed or none is left
    (module doc); returns the tokens freed."""
    freed = 0
    for region in c.window.regions:
        if freed >= need:
            break
        if not isinstance(region, SlidingWindow) or region.compact_target is not None:
            continue
        info = region.analysis()
        want = need - freed
        j = next(
            (x for x, done in enumerate(info.removed_tokens) if done >= want),
            info.removable_count,
        )
        ids = tuple(region.entries[i].id for i in info.removal(j))
        if not ids:
            continue
        removed = region.remove_ids(ids)
        tokens = sum(e.tokens for e in removed)
        c.window.events.emit(rev.Evicted(region.name, ids, tokens, "ceiling"))
        c.record("release", region.name, ids=list(ids))
        freed += tokens
    return freed
