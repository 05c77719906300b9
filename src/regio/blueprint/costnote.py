"""What the cost controller would do with a blueprint (``regio validate``): for a conversation
under ``compact`` eviction, the compaction trigger and target it would use and the expected
cost per request, at a stated number of new tokens per request (``docs/runtime.md``, "The
cost controller"). Computed on the blueprint's own window (seeds written, no tool schemas)
with its cache profile's prices and its summarizer's ``max_summary_tokens`` as the summary."""

from __future__ import annotations

from regio.blueprint.build import build_window
from regio.blueprint.spec import Blueprint
from regio.policies.costcontrol import CostTerms, request_cost
from regio.policies.eviction import Compact
from regio.regions import SlidingWindow
from regio.session._cacheprices import cache_terms

__all__ = ["GROWTHS", "cost_notes"]

#: New tokens per request the notes are given for: a chat turn, a coding agent's tool step.
GROWTHS = (1000, 3000)


def cost_notes(bp: Blueprint, growths: tuple[int, ...] = GROWTHS) -> list[str]:
    """One line per ``growths`` value for the conversation of ``bp`` when it compacts (none
    otherwise): trigger and target in tokens of the whole request, and its cost per request
    in input-token equivalents and USD."""
    spec = next((s for s in bp.regions if s.kind == "sliding_window"), None)
    if spec is None:
        return []
    window = build_window(bp)
    conv = window.conversation
    if not isinstance(conv, SlidingWindow) or not isinstance(conv.eviction, Compact):
        return []
    provider, _, model = bp.cache_profile.partition(":")
    cache = cache_terms(provider, model, bp.cache.ttl)
    terms = CostTerms(
        read=cache.read,
        write=cache.write,
        output=cache.output,
        summary=float(bp.summarizer.max_summary_tokens),
    )
    conv.cache_multipliers = (cache.write, cache.read)
    outside = conv.outside_tokens()
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
            f"input-token equivalents{usd} a request"
        )
    return notes
