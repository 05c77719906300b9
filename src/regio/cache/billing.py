"""When a cost has a price, and what it is: the one rule every bill in regio uses.

A call is billed in two parts: its prompt, as *input units* (each prompt token class --
uncached, cache read, cache write -- counted at its multiplier of the base input price, as the
cache rules give them: ``regio/data/cache-rules.yaml``), and its output tokens. A part is
priced at the rule's ``input`` / ``output`` price (USD per million tokens). The bill has a price
only when **every price its tokens need is known**: prompt tokens need the input price, output
tokens the output price. When one is missing (``None``: "not recorded" in the rules, e.g. a
model whose output price is not recorded) the bill is ``None`` -- unpriced -- never ``$0``
for the missing part and never the sum of the parts that do have a price. A part with no tokens
needs no price.

A prompt's *input units* (:func:`input_units`) weigh each token class by the rule's ``mult``:
``plain`` (uncached input), ``read`` (cache read), and a cache write at
:func:`write_multiplier`: the multiplier the rule records for a write of that TTL
(``write_5m`` / ``write_1h``), else its TTL-less ``write`` (GPT-5.6's ``cache_write_tokens``),
else ``create`` (Gemini's explicit cache creation), else **a plain input token** (``plain``,
1.0 when absent). A rule with no write multiplier is a provider without a write surcharge:
OpenAI's automatic caching, Gemini's implicit caching, DeepSeek bill the prompt at the input
price and discount only reads (../shared/spec/cache-rules.md section 5, "OpenAI legacy and
Gemini: m_r = 1 - discount, writes free"). A read the rule records no multiplier for is a
plain input token too (:func:`read_multiplier`), and ``plain`` itself is 1.0, the base input
price, when the rule does not list it.

:func:`bill` is that rule; the usage ledger (:mod:`regio.session._usage`), the cache
simulator's outcomes (:mod:`regio.cache.base`), the proxy's request, as-is and summary costs
(:mod:`regio.proxy.accounting`) and the bench's summarizer costs all price through it, and
:func:`total` sums bills the same way (``None`` once one is unpriced). The same four -- and
the bench's cost terms (:func:`regio.bench.costbound.prices_of`) and the engine's controller
(:func:`regio.session._cacheprices.cache_terms`) -- weigh a cache write by
:func:`write_multiplier`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

__all__ = ["bill", "input_units", "read_multiplier", "total", "write_multiplier"]

#: the keys a rule's ``mult`` may record a cache write under, after the TTL's own
#: ``write_<ttl>``, in the order they apply (module doc)
_WRITE_KEYS = ("write", "create")


def write_multiplier(mult: Mapping[str, float], ttl: str | None = None) -> float:
    """Price multiplier (x the base input price) of one cache-written token of ``ttl``
    (``"5m"`` / ``"1h"``; ``None``: a write whose TTL the usage does not say) under a cache
    rule's ``mult`` (:attr:`regio.cache.rules.Rule.mult`,
    :attr:`regio.session.ModelPricing.mult`): ``mult["write_<ttl>"]``, else ``mult["write"]``,
    else ``mult["create"]``, else the plain input multiplier ``mult["plain"]`` (1.0 when
    absent): a rule that records no write surcharge bills a write as a plain input token
    (module doc)."""
    keys = (f"write_{ttl}", *_WRITE_KEYS) if ttl is not None else _WRITE_KEYS
    for key in keys:
        if key in mult:
            return float(mult[key])
    return float(mult.get("plain", 1.0))


def read_multiplier(mult: Mapping[str, float]) -> float:
    """Price multiplier (x the base input price) of one cache-read token under a cache rule's
    ``mult``: ``mult["read"]``, else the plain input multiplier ``mult["plain"]`` (1.0 when
    absent): a rule that records no read discount bills a read as a plain input token, as
    :func:`write_multiplier` does a write."""
    return float(mult.get("read", mult.get("plain", 1.0)))


def input_units(
    mult: Mapping[str, float],
    *,
    uncached: int = 0,
    read: int = 0,
    write_5m: int = 0,
    write_1h: int = 0,
    write: int = 0,
    read_mult: float | None = None,
) -> float:
    """A prompt's input units (base-input-price tokens) under a cache rule's ``mult``:
    ``uncached`` tokens at ``plain``, ``read`` at :func:`read_multiplier` (or ``read_mult``,
    a simulator's own read price), cache writes of 5 minutes, 1 hour and an unsaid TTL at
    :func:`write_multiplier`. All counts are tokens (>= 0)."""
    read_at = read_multiplier(mult) if read_mult is None else read_mult
    return (
        float(mult.get("plain", 1.0)) * uncached
        + read_at * read
        + write_multiplier(mult, "5m") * write_5m
        + write_multiplier(mult, "1h") * write_1h
        + write_multiplier(mult, None) * write
    )


def bill(
    input_usd: float | None,
    output_usd: float | None,
    *,
    input_tokens: int,
    input_units: float,
    output_tokens: int,
) -> float | None:
    """USD of a call of ``input_tokens`` prompt tokens worth ``input_units`` base-input-price
    tokens (the prompt's token classes at their multipliers) and ``output_tokens`` output
    tokens, at ``input_usd`` / ``output_usd`` USD per million tokens (``None``: not recorded).
    ``None`` (unpriced) exactly when ``input_tokens > 0`` and ``input_usd`` is ``None``, or
    ``output_tokens > 0`` and ``output_usd`` is ``None`` (module doc)."""
    if input_tokens and input_usd is None:
        return None
    if output_tokens and output_usd is None:
        return None
    cost = 0.0
    if input_tokens and input_usd is not None:
        cost += float(input_usd) / 1e6 * input_units
    if output_tokens and output_usd is not None:
        cost += float(output_usd) / 1e6 * output_tokens
    return cost


def total(costs: Iterable[float | None]) -> float | None:
    """The sum of ``costs`` (USD), ``None`` when any of them is ``None``: a total of bills
    some of which are unpriced is unpriced too, never the sum of the priced ones."""
    out = 0.0
    for c in costs:
        if c is None:
            return None
        out += c
    return out
