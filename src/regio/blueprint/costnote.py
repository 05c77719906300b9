"""What the cost controller would do with a blueprint (``regio validate``): for a conversation
under ``compact`` eviction, the compaction trigger and target it would use and the expected
cost per request, at a stated number of new tokens per request (``docs/runtime.md``, "The
cost controller"). Computed on the blueprint's own window (seeds written, no tool schemas)
with its cache profile's prices and its summarizer's ``max_summary_tokens`` as the summary; a
``summarizer.model`` other than the agent's is priced at its own input and output prices (a
transcript prompt of its own: :func:`regio.session._cacheprices.summary_cost_terms`) when the
cache rules record them."""

from __future__ import annotations

from regio.blueprint.build import build_window
from regio.blueprint.spec import Blueprint
from regio.policies.costcontrol import request_cost
from regio.policies.eviction import Bulk, Compact
from regio.regions import SlidingWindow
from regio.session._cacheprices import CacheTerms, cache_terms, summary_cost_terms

__all__ = ["GROWTHS", "cost_notes", "priced_conversation"]

#: New tokens per request the notes are given for: a chat turn, a coding agent's tool step.
GROWTHS = (1000, 3000)


def cost_notes(bp: Blueprint, growths: tuple[int, ...] = GROWTHS) -> list[str]:
    """One line per ``growths`` value for the conversation of ``bp`` when it compacts (none
    otherwise): trigger and target in tokens of the whole request, and its cost per request
    in input-token equivalents and USD."""
    found = priced_conversation(bp)
    if found is None or not isinstance(found[0].eviction, Compact):
        return []
    conv, cache = found
    terms = summary_cost_terms(cache, bp.summary_model, float(bp.summarizer.max_summary_tokens))
    outside = conv.outside_tokens()
    writer = bp.summary_model
    priced = ""
    if writer is not None:
        priced = (
            f", its summaries written by {writer[1]} at that model's prices"
            if terms.transcript_input is not None
            else f", its summaries priced as the agent model's: the cache rules give no "
            f"price for {writer[1]}"
        )
    notes = []
    for growth in growths:
        conv.cost_terms = None
        plain = conv.hysteresis(float(growth))
        conv.cost_terms = terms
        marks = conv.hysteresis(float(growth))
        if marks is None or plain is None:
            return []
        trigger, target = (outside + m for m in marks)
        cost = request_cost(growth, target, trigger - target, terms)
        usd = f" (${cost * cache.input_usd / 1e6:.4f})" if cache.input_usd else ""
        earlier = (
            "" if marks[0] >= plain[0] else f", before the window-fill mark {outside + plain[0]:,}"
        )
        notes.append(
            f"{conv.name}: at {growth:,} new tokens a request the cost controller compacts at "
            f"{trigger:,} tokens a request{earlier} down to {target:,}: about {cost:,.0f} "
            f"input-token equivalents{usd} a request{priced}"
        )
    return notes


def priced_conversation(
    bp: Blueprint, name: str | None = None
) -> tuple[SlidingWindow, CacheTerms] | None:
    """The conversation (or the ``sliding_window`` region called ``name``) of a fresh window
    of ``bp`` (seeds written) with the cache-price multipliers an engine gives it
    (:func:`regio.engine._parts.apply_options`), and those cache terms; ``None`` without such
    a ``sliding_window`` under ``bulk`` / ``compact`` eviction. Its ``cost_terms`` are left
    unset: the caller prices the summarizer it means."""
    if not any(s.kind == "sliding_window" for s in bp.regions):
        return None
    window = build_window(bp)
    conv = window.conversation if name is None else window.region(name)
    if not isinstance(conv, SlidingWindow) or not isinstance(conv.eviction, Bulk | Compact):
        return None
    provider, _, model = bp.cache_profile.partition(":")
    cache = cache_terms(provider, model, bp.cache.ttl)
    conv.cache_multipliers = (cache.write, cache.read)
    return conv, cache
