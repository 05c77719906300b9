"""What the cost controller would do with a blueprint (``regio validate``): for a conversation
under ``compact`` eviction, the compaction trigger and target it would use and the expected
cost per request, at a stated number of new tokens per request (``docs/runtime.md``, "The
cost controller"). Computed on the blueprint's own window (seeds written, no tool schemas)
with its cache profile's prices and its summarizer's ``max_summary_tokens`` as the summary; a
``summarizer.model`` other than the agent's is priced at its own input and output prices (a
transcript prompt of its own: :func:`regio.session._cacheprices.summary_cost_terms`) when the
cache rules record them. When they do not (a model they do not know, or know without an input
or output price), the controller still weighs the summaries at the agent model's prices to
choose its trigger, and the note says so; the cost per request is then unpriced, as
:mod:`regio.cache.billing` has it and the bench reports such a summarizer's calls: no figure in
USD or input-token equivalents for prices that do not exist, the reason instead, and what to
add to the cache rules to price it (:func:`unpriced_summarizer`)."""

from __future__ import annotations

from regio.blueprint.build import build_window
from regio.blueprint.spec import Blueprint
from regio.policies.costcontrol import CostTerms, payback_requests, request_cost
from regio.policies.eviction import Bulk, Compact
from regio.regions import SlidingWindow
from regio.session._cacheprices import CacheTerms, cache_terms, priced, summary_cost_terms
from regio.session._usage import rule_prices

__all__ = ["GROWTHS", "cost_notes", "priced_conversation", "unpriced_summarizer"]

#: New tokens per request the notes are given for: a chat turn, a coding agent's tool step.
GROWTHS = (1000, 3000)


def cost_notes(bp: Blueprint, growths: tuple[int, ...] = GROWTHS) -> list[str]:
    """One line per ``growths`` value for the conversation of ``bp`` when it compacts (none
    otherwise): trigger and target in tokens of the whole request, and its cost per request
    in input-token equivalents and USD, or ``unpriced`` with the reason when the summarizer's
    model has no price in the cache rules (module doc)."""
    found = priced_conversation(bp)
    if found is None or not isinstance(found[0].eviction, Compact):
        return []
    conv, cache = found
    terms = summary_cost_terms(cache, bp.summary_model, float(bp.summarizer.max_summary_tokens))
    outside = conv.outside_tokens()
    writer = bp.summary_model
    unpriced = unpriced_summarizer(writer) if writer is not None else None
    remark = ""
    if unpriced is not None and writer is not None:
        remark = f", assuming {writer[1]}'s summaries cost what the agent model's would"
    elif writer is not None:
        remark = (
            f", its summaries written by {writer[1]} at that model's prices"
            if terms.transcript_input is not None
            else f", its summaries weighed at the agent model's prices: the agent model has "
            f"no input price to weigh {writer[1]}'s prices against"
        )
    notes = []
    for growth in growths:
        conv.cost_terms = None
        plain = conv.hysteresis(float(growth), steady=True)
        conv.cost_terms = terms
        marks = conv.hysteresis(float(growth), steady=True)
        if marks is None or plain is None:
            return []
        trigger, target = (outside + m for m in marks)
        earlier = ""
        if marks[0] < plain[0]:
            fill = outside + plain[0]
            start = outside + conv.used_tokens
            earlier = f", before the window-fill mark {fill:,}" + early_text(
                target, trigger, fill, start, growth, terms
            )
        decision = (
            f"{conv.name}: at {growth:,} new tokens a request the cost controller compacts at "
            f"{trigger:,} tokens a request{earlier} down to {target:,}"
        )
        if unpriced is not None:
            notes.append(f"{decision}{remark}; cost a request: unpriced: {unpriced}")
            continue
        cost = request_cost(growth, target, trigger - target, terms)
        usd = f" (${cost * cache.input_usd / 1e6:.4f})" if cache.input_usd else ""
        notes.append(
            f"{decision}: about {cost:,.0f} input-token equivalents{usd} a request{remark}"
        )
    return notes


def early_text(
    kept: int, trigger: int, fill: int, start: int, growth: float, terms: CostTerms
) -> str:
    """What validate adds to an early trigger: the requests a session must have made before
    a compaction at ``trigger`` keeping ``kept`` tokens pays back
    (:func:`regio.policies.costcontrol.payback_requests`), and so where the first one comes
    for requests of ``growth`` tokens from a ``start``-token request, never past ``fill``
    (the window-fill mark); all in tokens of the whole request. Empty when it pays back from
    the first request or never does."""
    after = payback_requests(kept, trigger - kept, terms)
    if after is None or after <= 1:
        return ""
    first = min(fill, max(trigger, start + round(after * growth)))
    return (
        f" once the session has made {after:,} requests (an early compaction must pay back "
        f"within a third of the requests so far), so first at about {first:,}"
    )


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


def unpriced_summarizer(writer: tuple[str, str]) -> str | None:
    """Why the summaries of ``writer`` (``(provider, model)``: a summarizer on another model
    than the agent's, :attr:`regio.blueprint.Blueprint.summary_model`) have no price, and what
    to add to the cache rules (``regio/data/cache-rules.yaml``, docs/cache.md) to price them;
    ``None`` when the rules give the model an input and an output price
    (:func:`regio.session._cacheprices.priced`, the rule of :mod:`regio.cache.billing`)."""
    provider, model = writer
    pricing = rule_prices(provider, model)
    if pricing is None:
        return (
            f"the cache rules do not know {model} ({provider}); to price it, add a rule for "
            f"provider {provider}, model_family [{model}*] with price: {{input, output}} "
            "(USD per million tokens) to the cache rules"
        )
    if priced(pricing) is not None:
        return None
    missing = " and ".join(
        k for k, v in (("input", pricing.input), ("output", pricing.output)) if v is None
    )
    return (
        f"the cache rules give no price for {model} (rule {pricing.rule_id} records no "
        f"{missing} price); to price it, record its price.{missing.replace(' and ', ' and price.')}"
        " (USD per million tokens) in that rule"
    )
