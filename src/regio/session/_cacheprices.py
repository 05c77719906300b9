"""What an engine knows about its provider's prefix cache: the ``(write, read)`` price
multipliers that size token hysteresis targets, the output price the cost controller weighs a
summary with, and the cache TTL (seconds) that times an idle compaction; and the prices of a
summarizer on another model than the agent's (:func:`summary_cost_terms`). All come from the
cache rules data (``regio/data/cache-rules.yaml``, each rule citing its source).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import msgspec

from regio.cache import resolve
from regio.cache.billing import bill, read_multiplier, write_multiplier
from regio.errors import RegioError
from regio.policies.costcontrol import DEFAULT_OUTPUT, CostTerms
from regio.policies.hysteresis import DEFAULT_MULTIPLIERS
from regio.providers.registry import find_provider
from regio.session._usage import ModelPricing, rule_prices

if TYPE_CHECKING:
    from regio.cache.rules import Price, Rule

__all__ = [
    "CacheTerms",
    "cache_terms",
    "model_price",
    "priced",
    "summarizer_model",
    "summary_cost_terms",
    "summary_ratios",
]


class CacheTerms(msgspec.Struct, frozen=True):
    """``write`` / ``read``: price multipliers of a cache write and a cache read (x the base
    input price); ``ttl_s``: seconds an unused cached prefix lives (``None``: unknown or
    unbounded); ``output``: the output price over the input price (the rules' prices, else
    :data:`regio.policies.costcontrol.DEFAULT_OUTPUT`); ``input_usd``: the input price."""

    write: float
    read: float
    ttl_s: float | None
    output: float = DEFAULT_OUTPUT
    #: the input price, USD per million tokens (``None``: not in the rules)
    input_usd: float | None = None


def _ttl(rule: Rule, ttl: str) -> float | None:
    value = rule.ttl_s
    if isinstance(value, dict):
        value = value.get(ttl, next(iter(value.values()), None))
    if value is None:
        value = rule.param("ttl_default_s")
    return float(value) if value is not None else None


def cache_terms(provider: str, model: str, ttl: str = "5m") -> CacheTerms:
    """The :class:`CacheTerms` of ``provider`` / ``model`` for the breakpoint TTL ``ttl``
    (``5m`` / ``1h``); a provider the rules do not know gets Anthropic's 5-minute terms."""
    try:
        rule = resolve(provider, model or "")
    except (RegioError, LookupError, ValueError):
        return CacheTerms(*DEFAULT_MULTIPLIERS, ttl_s=300.0)
    price = rule.price
    output = DEFAULT_OUTPUT
    if price.input and price.output:
        output = float(price.output) / float(price.input)
    write = write_multiplier(rule.mult, "1h" if ttl == "1h" else "5m")
    read = read_multiplier(rule.mult)
    return CacheTerms(
        write=write, read=read, ttl_s=_ttl(rule, ttl), output=output, input_usd=price.input
    )


def model_price(provider: str, model: str) -> tuple[float, float] | None:
    """``(input, output)`` USD per million tokens of ``model`` on ``provider`` from the cache
    rules data (:func:`regio.session._usage.rule_prices`); ``None`` when the rules do not know
    the model or record no input or output price for it."""
    pricing = rule_prices(provider, model)
    return None if pricing is None else priced(pricing)


def priced(price: Price | ModelPricing) -> tuple[float, float] | None:
    """``(input, output)`` USD per million tokens of a cache rule's ``price`` (its ``input``
    and ``output`` fields), or ``None`` when :func:`regio.cache.billing.bill` would leave a
    call of it with prompt and output tokens (a summary call always has both) unpriced: the
    "has a price" test of a summarizer's model (the engine's controller, the bench's bill and
    bound), the one rule of :mod:`regio.cache.billing` (an input or output price of ``0`` is a
    price, ``None`` is none). A caller that divides by the input price checks it is not ``0``
    itself (:func:`regio.bench.costbound.prices_of`)."""
    if bill(price.input, price.output, input_tokens=1, input_units=1.0, output_tokens=1) is None:
        return None
    # billed: both prices are recorded (the casts only tell the type checker so)
    return float(cast("float", price.input)), float(cast("float", price.output))


def summary_ratios(price: tuple[float, float], base_usd: float) -> tuple[float, float]:
    """A summarizer's ``(transcript_input, output)`` cost terms: its ``price`` (``(input,
    output)`` USD per million tokens) over the agent's input price ``base_usd`` (same unit)."""
    return price[0] / base_usd, price[1] / base_usd


def summarizer_model(summarizer: object, provider: str, model: str) -> tuple[str, str] | None:
    """``(provider, model)`` of a summarizer that asks for another model than the agent's
    ``model``: its ``model`` attribute, on the provider its ``api`` names (a
    :class:`regio.compaction.ForkSummarizer`'s client), else on the agent's ``provider``;
    ``None`` when it names no model or the agent's own (an offline summarizer names none)."""
    own = str(getattr(summarizer, "model", "") or "")
    if not own or own == model:
        return None
    api = getattr(summarizer, "api", None)
    found = find_provider(api) if isinstance(api, str) else None
    return (found.name if found is not None else provider), own


def summary_cost_terms(
    cache: CacheTerms, summarizer: tuple[str, str] | None, summary: float
) -> CostTerms:
    """The cost controller's :class:`regio.policies.costcontrol.CostTerms` for an agent whose
    cache terms are ``cache`` and whose summaries of ``summary`` tokens are written by
    ``summarizer`` (``(provider, model)``, :func:`summarizer_model`; ``None``: the agent's own
    model, which forks the cached request). A summarizer on another model reads a transcript
    prompt at its own input price and writes at its own output price, both over the agent's
    input price (``transcript_input``, ``output``); when the rules give no price for it, or
    none for the agent's model, the agent's own terms are kept."""
    terms = CostTerms(read=cache.read, write=cache.write, output=cache.output, summary=summary)
    price = model_price(*summarizer) if summarizer is not None else None
    if price is None or not cache.input_usd:
        return terms
    transcript, output = summary_ratios(price, float(cache.input_usd))
    return msgspec.structs.replace(terms, output=output, transcript_input=transcript)
