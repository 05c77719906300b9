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

A fork whose range reaches past the last request (the reply to it, when a compaction keeps
only the newest message: ``regio.compaction._forking``) also reads those tokens uncached, at
most one request's ``D``: up to ``(1 - r) D`` more per compaction than ``r T`` counts, so up to
``(1 - r) D^2 / x`` more per request. It is left out here: at ``D`` = 1,400 and ``x`` = 10,000
tokens (a chat session at a 32k window) that is at most 176 input-token equivalents a request,
under 10% of what a request pays, and ``0`` when the compaction keeps the newest turn whole.

A summarizer on another model than the agent's (``CostTerms.transcript_input`` set) cannot read
the agent's cache (a prefix cache is per model): it is sent a transcript prompt of its own
holding what it summarizes, about the ``x`` tokens that came since the last compaction, at its
own input price ``i`` (a multiple of the agent's input price), and writes the summary at its
own output price (``o``, over the agent's input price). Its ``r T`` term becomes ``i x``, so

    c(x) = r (R + x/2) + w D + D i + D (o s + w R) / x,    x* = sqrt(2 D (o s + w R) / r)

(the summarizer's read no longer depends on when it runs: it reads each token once).

``x*`` assumes the session goes on long enough for a compaction to pay for itself. A
compaction before the window forces it is a bet on the session's future: it costs
:func:`compaction_cost` once and saves about ``r x`` on each later request (the prefix it no
longer reads), so it pays after ``compaction_cost / (r x)`` requests. How many requests a
session has left is unknown; the estimate that assumes nothing about its length is the
Copernican one (J. R. Gott, "Implications of the Copernican principle for our future
prospects", Nature 363, 1993): the share of the session already past is uniform, so a
session that has made ``n`` requests has at least ``n k`` more with probability
``1 / (1 + k)``: at least ``n`` with probability 1/2, at least ``n / 3`` with probability 3/4.
The cost is sure and the saving is not, so :func:`pays_back` asks that the compaction pay
within :data:`PAYBACK_SHARE` ``= 1/3`` of the requests so far (three chances in four), and
:func:`controlled_trigger` given those requests (``elapsed``) keeps the window-fill trigger
until it does: a short session (the bundled 2-15-call coding runs at 12,288 tokens) is not
compacted early to save reads it will probably never make, a long one from its first few
dozen requests on.
"""

from __future__ import annotations

import math

import msgspec

__all__ = [
    "DEFAULT_OUTPUT",
    "PAYBACK_SHARE",
    "CostTerms",
    "compaction_cost",
    "controlled_trigger",
    "interval",
    "payback_requests",
    "pays_back",
    "request_cost",
    "summary_call_cost",
]

#: Share of a session's requests so far within which an early compaction must pay for itself
#: (module doc: three chances in four that the session lasts that long).
PAYBACK_SHARE = 1 / 3

#: Output price over input price when the rules do not give both: Anthropic's Claude Sonnet
#: 4.6 (https://docs.anthropic.com/en/docs/about-claude/pricing: $3 input, $15 output).
DEFAULT_OUTPUT = 5.0


class CostTerms(msgspec.Struct, frozen=True):
    """The prices a controller weighs, as multiples of the agent model's input price per
    token: ``read`` (``r``) and ``write`` (``w``) of the provider's prefix cache, ``output``
    (``o``) of a summary's generated token (the summarizer model's output price);
    ``summary``: the tokens a summary is expected to take (``s``); ``transcript_input``
    (``i``): ``None`` when the summary request reads the agent's cached request (a fork on
    the agent's own model), else the input price of a summarizer on another model, which
    reads what it summarizes uncached in a transcript prompt (module doc)."""

    read: float
    write: float
    output: float = DEFAULT_OUTPUT
    summary: float = 0.0
    transcript_input: float | None = None


def summary_call_cost(kept: float, growth: float, terms: CostTerms) -> float:
    """The summary request's cost in input-token equivalents when the compaction keeps
    ``kept`` tokens after ``growth`` tokens came (``T = kept + growth``): its read (``r T``
    from the agent's cache, or ``i x`` as a transcript on another model, ``x`` never below 0)
    and its summary (``o s``)."""
    read = (
        terms.read * (kept + growth)
        if terms.transcript_input is None
        else terms.transcript_input * max(0.0, growth)
    )
    return read + terms.output * terms.summary


def compaction_cost(kept: float, growth: float, terms: CostTerms) -> float:
    """One compaction's cost in input-token equivalents: :func:`summary_call_cost` and the
    kept prefix written again (``w R``)."""
    return summary_call_cost(kept, growth, terms) + terms.write * kept


def interval(delta: float, kept: float, terms: CostTerms) -> float:
    """``x*`` (tokens): the growth between two compactions that costs least per request when
    each request adds ``delta`` tokens and a compaction keeps ``kept`` (module doc). ``0``
    with no growth or a free cache read."""
    if delta <= 0 or terms.read <= 0:
        return 0.0
    rewrite = (terms.output * terms.summary + terms.write * kept) / terms.read
    if terms.transcript_input is None:  # the fork reads R + x at r: R of it fixed
        return math.sqrt(2.0 * delta * (kept + rewrite))
    return math.sqrt(2.0 * delta * rewrite)  # the transcript reads x: no fixed read


def request_cost(delta: float, kept: float, growth: float, terms: CostTerms) -> float:
    """``c(x)`` for ``x = growth`` (module doc): input-token equivalents per request of
    compacting ``growth`` tokens past ``kept``. Raises :class:`ValueError` for
    ``growth <= 0``."""
    if growth <= 0:
        raise ValueError(f"growth between compactions must be > 0 tokens, got {growth}")
    step = compaction_cost(kept, growth, terms)
    return terms.read * (kept + growth / 2) + terms.write * delta + delta * step / growth


def pays_back(elapsed: int, kept: float, growth: float, terms: CostTerms) -> bool:
    """Whether a compaction keeping ``kept`` tokens after ``growth`` tokens came pays for
    itself within the requests a session that has made ``elapsed`` has left with three
    chances in four (module doc):
    ``PAYBACK_SHARE * elapsed * r * growth >= compaction_cost(kept, growth)``."""
    saved = PAYBACK_SHARE * elapsed * terms.read * growth
    return saved >= compaction_cost(kept, growth, terms)


def payback_requests(kept: float, growth: float, terms: CostTerms) -> int | None:
    """The fewest requests a session must have made before :func:`pays_back` passes for a
    compaction keeping ``kept`` tokens after ``growth`` came; ``None`` when it never does
    (no growth, or a free cache read)."""
    per_request = PAYBACK_SHARE * terms.read * growth
    if per_request <= 0:
        return None
    ratio = compaction_cost(kept, growth, terms) / per_request
    if not math.isfinite(ratio):
        return None
    n = max(0, math.ceil(ratio))
    while n > 0 and pays_back(n - 1, kept, growth, terms):  # agree with pays_back exactly
        n -= 1
    while not pays_back(n, kept, growth, terms):
        n += 1
    return n


def controlled_trigger(
    limit: int, delta: float, kept: float, terms: CostTerms, *, elapsed: int | None = None
) -> int:
    """The trigger (tokens of the whole request) for a compaction that keeps ``kept`` tokens
    when each request adds ``delta``: ``ceil(kept + x*)``, never later than ``limit`` (the
    window-fill trigger). ``limit`` without a measured growth (``delta <= 0``), and, given
    ``elapsed`` (the session's requests so far), while an early compaction would not
    :func:`pay back <pays_back>` in as many requests again."""
    if delta <= 0:
        return limit
    growth = interval(delta, kept, terms)
    trigger = min(limit, math.ceil(kept + growth))
    if trigger < limit and elapsed is not None and not pays_back(elapsed, kept, growth, terms):
        return limit
    return trigger
