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

:func:`bill` is that rule; the usage ledger (:mod:`regio.session._usage`), the cache
simulator's outcomes (:mod:`regio.cache.base`), the proxy's request, as-is and summary costs
(:mod:`regio.proxy.accounting`) and the bench's summarizer costs all price through it, and
:func:`total` sums bills the same way (``None`` once one is unpriced).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["bill", "total"]


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
