"""An engine's options, handed to every part that reads them.

An :class:`regio.engine.Engine` owns an :class:`regio.session.EngineBudget` (counting, the
ceiling) and a :class:`regio.compaction.Session` (compaction and its bookkeeping); both read the
engine's :class:`regio.session.EngineOptions`, and the cache terms of the options' provider,
model and TTL (:func:`regio.session._cacheprices.cache_terms`) set the session's idle TTL and
each sliding window's cache-price multipliers. :func:`apply_options` sets all of them from one
value, so no part reads options another part no longer has.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio.compaction._forking import forks_last_request
from regio.regions import SlidingWindow
from regio.session._cacheprices import cache_terms, summarizer_model, summary_cost_terms
from regio.summarizers._protocol import DEFAULT_MAX_SUMMARY_TOKENS, summarizer_limits

if TYPE_CHECKING:
    from regio.regions import Window
    from regio.session._budget import EngineBudget
    from regio.session._options import EngineOptions
    from regio.session._session import Session

__all__ = ["apply_options"]


def apply_options(
    window: Window, budget: EngineBudget, session: Session, options: EngineOptions
) -> None:
    """Give ``options`` to ``budget`` and ``session`` and set what derives from them: the
    session's ``cache_ttl_s`` (seconds, ``None`` when the provider's TTL is unknown) and
    ``cache_read`` (the read multiplier), and the
    ``cache_multipliers`` (write, read; multiples of the input price) of every
    :class:`regio.regions.SlidingWindow` in ``window`` with the cost controller's prices
    (``cost_terms``: those, the output price and the summarizer's ``max_summary_tokens`` as
    the summary size until one is measured; a summarizer on another model than the agent's is
    priced at its own input and output prices when the cache rules record them:
    :func:`regio.session._cacheprices.summary_cost_terms`), whether a compaction's summary
    request reads the last request (``summary_reads_request``: a summarizer that forks it,
    :func:`regio.compaction._forking.forks_last_request`, on the agent's own model), and the
    window's ``reserved_tokens`` (:meth:`regio.session._budget.EngineBudget.reserve`)."""
    budget.options = options
    session.options = options
    terms = cache_terms(options.provider, options.model, options.ttl)
    session.cache_ttl_s = terms.ttl_s
    session.cache_read = terms.read
    try:
        summary = float(summarizer_limits(session.summarizer)[2])
    except ValueError:
        summary = float(DEFAULT_MAX_SUMMARY_TOKENS)
    writer = summarizer_model(session.summarizer, options.provider, options.model)
    prices = summary_cost_terms(terms, writer, summary)
    forks = writer is None and forks_last_request(session.summarizer)
    for region in window.regions:
        if isinstance(region, SlidingWindow):
            region.cache_multipliers = (terms.write, terms.read)
            region.cost_terms = prices if options.cost_control else None
            region.summary_reads_request = forks
    budget.reserve()  # the room elastic regions may fill (tools, overhead, output reserve)
