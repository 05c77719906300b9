"""The cost-optimal periodic-compaction bound of a trace at a window (``DESIGN.md`` section 4).

A strategy that keeps ``R`` tokens after each compaction and compacts when the prompt would
pass a trigger ``T`` pays, per request, about (in input-price units)::

    r·(R + x/2) + w·Δ + Δ·(r·T + o·s + w·R) / x        with x = T − R

(``r`` cache-read, ``w`` cache-write and ``o`` output price as multiples of the input price;
``Δ`` new tokens per request; ``s`` summary tokens): between two compactions every request
reads the cached prompt (``R`` growing to ``T``, ``R + x/2`` on average) and writes what is
new, and once per ``x/Δ`` requests the summarizer reads the window from the cache (``r·T``),
writes the summary (``o·s``) and the next request writes the kept prefix again (``w·R``).
It is smallest at ``x* = √(2Δ·(R + (o·s + w·R)/r))`` (:func:`optimal_interval`). A
summarizer on another model than the agent's reads what it summarizes (``x``) in a transcript
prompt of its own, uncached, at its own input price (``i·x`` instead of ``r·T``), and writes
the summary at its own output price (``o`` is then its output price over the agent's input
price): :func:`with_summarizer`, and :mod:`regio.policies.costcontrol` for the formula.

:meth:`Schedule.bound` evaluates that schedule exactly on one trace rather than in its steady
state: the recorded requests' sizes give each request's new tokens ``Δ_i`` (so a short session
or uneven growth is priced as it happened), the first ``fixed`` tokens (tools and system
prompt) stay cached across a compaction, the recorded replies are billed at the output price
(the same for every strategy), no request may pass ``limit`` prompt tokens, and the trigger is
swept over the feasible range (never compacting included, when the whole session fits). The
bench computes it per strategy with the strategy's own mean kept size ``R`` (the prompt of the
requests where its prompt shrank), summary size ``s`` (the mean output of its summarizer
calls) and the share of its cuts that called a summarizer (``summarizes``: a strategy that
cuts without one, or whose package sometimes skips the call, pays the read and the summary
only on that share), at its summarizer's prices. It bounds the periodic family, not every
strategy: keeping less than ``R`` can be cheaper and keep less.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from regio.cache.billing import read_multiplier, write_multiplier
from regio.policies.costcontrol import CostTerms, interval, request_cost, summary_call_cost
from regio.session._cacheprices import priced, summary_ratios

if TYPE_CHECKING:
    from regio.cache.rules import Rule

__all__ = [
    "CostBound",
    "CostPrices",
    "Schedule",
    "cut_sizes",
    "kept_tokens",
    "optimal_interval",
    "periodic_hit_bound",
    "prices_of",
    "steady_state_cost",
    "with_summarizer",
]

#: Triggers tried between the smallest feasible one and the prompt limit (plus "never").
TRIGGER_STEPS = 64


@attrs.frozen
class CostPrices:
    """Prices of one cache rule: ``read`` / ``write`` / ``output`` as multiples of the input
    price, and ``input_usd`` the input price in USD per token. A summarizer on another model
    (:func:`with_summarizer`): ``summary_output`` its output price and ``transcript_input``
    its input price, both over this input price (``None``: the summary forks the agent's
    cached request on this rule's model, at ``read`` and ``output``)."""

    read: float
    write: float
    output: float
    input_usd: float
    summary_output: float | None = None
    transcript_input: float | None = None

    def terms(self, summary: float) -> CostTerms:
        """These prices as the cost controller's terms for ``summary``-token summaries."""
        output = self.output if self.summary_output is None else self.summary_output
        return CostTerms(
            read=self.read,
            write=self.write,
            output=output,
            summary=summary,
            transcript_input=self.transcript_input,
        )

    def compaction(self, prompt: int, kept: int, summary: int) -> float:
        """A summarizer call's cost (input-price units) on a ``prompt``-token request cut to
        ``kept`` tokens: the fork reads ``prompt`` from the cache, a transcript on another
        model the ``prompt - kept`` tokens it summarizes, uncached; plus the summary."""
        return summary_call_cost(kept, prompt - kept, self.terms(summary))


def prices_of(rule: Rule, ttl: str = "5m") -> CostPrices | None:
    """The :class:`CostPrices` of a cache rule (:class:`regio.cache.rules.Rule`) for cache
    writes of ``ttl`` (:func:`regio.cache.billing.write_multiplier`: ``write_<ttl>``, else
    the rule's TTL-less write, else its plain input);
    ``None`` when the rule records no input or output price (local engines), or an input
    price of ``0``: the terms are ratios of the input price, and a free input has none."""
    price = priced(rule.price)
    if price is None or not price[0]:
        return None
    return CostPrices(
        read=read_multiplier(rule.mult),
        write=write_multiplier(rule.mult, ttl),
        output=price[1] / price[0],
        input_usd=price[0] / 1e6,
    )


def with_summarizer(prices: CostPrices, rule: Rule) -> CostPrices | None:
    """``prices`` (the agent's) with its summaries written by the model of cache rule
    ``rule`` (a summarizer on another model: a transcript prompt of its own, its input and
    output prices over the agent's input price); ``None`` when ``rule`` records no input or
    output price (its summaries are unpriced: :mod:`regio.cache.billing`)."""
    price = priced(rule.price)
    if price is None:
        return None
    transcript, output = summary_ratios(price, prices.input_usd * 1e6)
    return attrs.evolve(prices, summary_output=output, transcript_input=transcript)


def steady_state_cost(
    delta: float, kept: float, summary: float, trigger: float, prices: CostPrices
) -> float:
    """The formula of the module doc: cost per request in input-price units for new tokens
    ``delta`` per request, ``kept`` tokens after a compaction, ``summary`` tokens per summary
    and a ``trigger`` above ``kept`` (:func:`regio.policies.costcontrol.request_cost`).
    Raises ``ValueError`` when ``trigger <= kept``."""
    x = trigger - kept
    if x <= 0:
        raise ValueError(f"trigger {trigger} must be above the kept size {kept}")
    return request_cost(delta, kept, x, prices.terms(summary))


def optimal_interval(delta: float, kept: float, summary: float, prices: CostPrices) -> float:
    """``x* = √(2Δ·(R + (o·s + w·R)/r))`` (``√(2Δ·(o·s + w·R)/r)`` for a summarizer on
    another model): the interval between compactions (tokens) that minimises
    :func:`steady_state_cost` (:func:`regio.policies.costcontrol.interval`)."""
    return interval(delta, kept, prices.terms(summary))


@attrs.frozen
class CostBound:
    """The bound (USD), the trigger that reaches it (tokens; ``None``: never compacting) and
    the kept size it assumed (tokens; ``None``: none measured)."""

    cost_usd: float
    trigger: int | None
    kept: int | None


@attrs.frozen(kw_only=True)
class Schedule:
    """A periodic-compaction schedule on one trace (module doc): ``sizes`` the recorded
    requests' prompt tokens, ``outputs`` their replies' tokens, ``limit`` the most prompt
    tokens a request may hold, ``fixed`` the tokens that stay cached across a compaction,
    ``kept`` the prompt after one (``None``: never compacts), ``summary`` a summary's tokens,
    ``summarizes`` the share (0 to 1) of compactions whose summarizer call reads the window and
    writes ``summary`` tokens, ``prices`` the cache rule's."""

    sizes: Sequence[int]
    outputs: Sequence[int]
    limit: int
    fixed: int
    kept: int | None
    summary: int
    summarizes: float
    prices: CostPrices

    def cost(self, trigger: int | None) -> float | None:
        """USD of compacting whenever a prompt would pass ``trigger`` tokens (``None``:
        never); ``None`` when the schedule cannot keep every request within ``limit``."""
        p = self.prices
        units = 0.0
        prompt = previous = 0
        for i, (size, out) in enumerate(zip(self.sizes, self.outputs, strict=True)):
            new = size if i == 0 else max(0, size - previous)
            previous = size
            candidate = prompt + new
            if i > 0 and trigger is not None and self.kept is not None and candidate > trigger:
                units += self.summarizes * p.compaction(prompt, self.kept, self.summary)
                base = min(self.fixed, self.kept)
                units += p.read * base + p.write * (self.kept - base)
                prompt = self.kept
            else:
                units += p.read * prompt + p.write * new
                prompt = candidate
            if prompt > self.limit:
                return None
            units += p.output * out
        return units * p.input_usd

    def bound(self, steps: int = TRIGGER_STEPS) -> CostBound | None:
        """The cheapest :meth:`cost` over the triggers (``steps`` of them evenly between the
        kept size and ``limit``, and never compacting); ``None`` when no schedule keeps every
        request within ``limit`` (or there are no requests)."""
        if not self.sizes:
            return None
        triggers: list[int | None] = [None]
        kept, limit = self.kept, self.limit
        if kept is not None and kept < limit:
            low = kept + 1
            triggers += sorted({round(low + (limit - low) * k / steps) for k in range(steps + 1)})
        best: CostBound | None = None
        for trigger in triggers:
            cost = self.cost(trigger)
            if cost is not None and (best is None or cost < best.cost_usd - 1e-15):
                best = CostBound(cost, trigger, kept)
        return best


def periodic_hit_bound(
    sizes: Sequence[int], limit: int, fixed: int, kept: int | None
) -> float | None:
    """The periodic-compaction bound on the hit rate (DESIGN.md section 6): a strategy that
    keeps ``kept`` tokens (R) after each compaction, ``fixed`` of them (S: tools and system
    prompt) still cached, and grows by D tokens per request up to the window's ``limit`` (W)
    rewrites (R − S) + (W − R) tokens per cycle of (W − R) / D requests, so its hit rate is at
    most ``1 − 2D(W − S) / ((W − R)(W + R))``. D is the recorded requests' mean growth
    (``sizes``, tokens). ``None`` without a kept size, or one at or above ``limit``."""
    if kept is None or kept >= limit or len(sizes) < 2:
        return None
    growth = sum(max(0, b - a) for a, b in itertools.pairwise(sizes)) / (len(sizes) - 1)
    w, r, f = limit, kept, min(fixed, kept)
    return max(0.0, 1.0 - 2 * growth * (w - f) / ((w - r) * (w + r)))


def cut_sizes(prompts: Sequence[int]) -> list[int]:
    """The prompts (tokens) of the requests smaller than the one before: a strategy's cuts."""
    return [n for before, n in itertools.pairwise(prompts) if n < before]


def kept_tokens(prompts: Sequence[int]) -> int | None:
    """A strategy's mean kept size: the mean of :func:`cut_sizes` (``None``: it never
    shrank)."""
    cuts = cut_sizes(prompts)
    return round(sum(cuts) / len(cuts)) if cuts else None
