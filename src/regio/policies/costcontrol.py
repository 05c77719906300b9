"""The cost controller: when a conversation compacts, from the cache economics
(``docs/runtime.md``, "The cost controller"; DESIGN section 4, "Cost per step decides when").

A strategy that keeps ``R`` tokens after each compaction (the whole request: tools, system,
summaries and the kept turns) and compacts when the request reaches ``T = R + x`` pays, per
request, about

    c(x) = r (R + x/2) + w D + D (r T + o s + w R) / x

in input-token equivalents: the cached prefix read at ``r``, averaging ``R + x/2``; the ``D``
new tokens of each request written at ``w``; and, once every ``x / D`` requests, the
compaction: a summary request that reads the cached ``T`` tokens (``r T``) and writes ``s``
output tokens (``o s``), then the kept ``R`` tokens written to the cache again (``w R``). ``r``
/ ``w`` are the cache read / write multipliers of the input price, ``o`` the output price over
the input price (the cache rules data). ``c`` is least at

    x* = sqrt(2 D (R + (o s + w R) / r))

tens of thousands of tokens whatever the window. :func:`interval` is ``x*``,
:func:`request_cost` is ``c(x)``, and :func:`controlled_trigger` the trigger a conversation uses
for what its compaction keeps: ``R + x*``, never later than the window allows (``limit``: the
window-fill trigger).
"""

from __future__ import annotations

import math

import msgspec

__all__ = ["DEFAULT_OUTPUT", "CostTerms", "controlled_trigger", "interval", "request_cost"]

#: Output price over input price when the rules do not give both: Anthropic's Claude Sonnet
#: 4.6 (https://docs.anthropic.com/en/docs/about-claude/pricing: $3 input, $15 output).
DEFAULT_OUTPUT = 5.0


class CostTerms(msgspec.Struct, frozen=True):
    """The prices a controller weighs, as multiples of the input price per token: ``read``
    (``r``) and ``write`` (``w``) of the provider's prefix cache, ``output`` (``o``) of a
    generated token; ``summary``: the tokens a summary is expected to take (``s``)."""

    read: float
    write: float
    output: float = DEFAULT_OUTPUT
    summary: float = 0.0


def interval(delta: float, kept: float, terms: CostTerms) -> float:
    """``x*`` (tokens): the growth between two compactions that costs least per request when
    each request adds ``delta`` tokens and a compaction keeps ``kept`` (module doc). ``0``
    with no growth or a free cache read."""
    if delta <= 0 or terms.read <= 0:
        return 0.0
    rewrite = (terms.output * terms.summary + terms.write * kept) / terms.read
    return math.sqrt(2.0 * delta * (kept + rewrite))


def request_cost(delta: float, kept: float, growth: float, terms: CostTerms) -> float:
    """``c(x)`` for ``x = growth`` (module doc): input-token equivalents per request of
    compacting ``growth`` tokens past ``kept``. Raises :class:`ValueError` for
    ``growth <= 0``."""
    if growth <= 0:
        raise ValueError(f"growth between compactions must be > 0 tokens, got {growth}")
    r, w = terms.read, terms.write
    trigger = kept + growth
    step = r * trigger + terms.output * terms.summary + w * kept
    return r * (kept + growth / 2) + w * delta + delta * step / growth


def controlled_trigger(limit: int, delta: float, kept: float, terms: CostTerms) -> int:
    """The trigger (tokens of the whole request) for a compaction that keeps ``kept`` tokens
    when each request adds ``delta``: ``ceil(kept + x*)``, never later than ``limit`` (the
    window-fill trigger). ``limit`` without a measured growth (``delta <= 0``)."""
    if delta <= 0:
        return limit
    return min(limit, math.ceil(kept + interval(delta, kept, terms)))
