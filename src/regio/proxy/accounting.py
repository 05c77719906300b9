"""What one request cost, what the cache simulator predicted for it, and what sending the
client's history as it is would have cost.

* **Prediction** (:func:`predict_blocks`): the blueprint's cache model
  (:func:`regio.providers.cache_model_for` of ``cache.profile``) run on the previous request the
  session sent and then this one, both as laid out (block digests and planned breakpoints,
  :func:`regio.layout.to_cache_request`), at their real times: what this request reads and
  writes if the provider's cache holds what the previous request left there. The session's
  previous request is in the engine's saved state, so any worker predicts the same. A llama.cpp
  upstream is predicted per token instead (:mod:`regio.proxy.slot`). The session keeps the last
  request it predicted as converted for the cache model and its prefix hashes
  (:class:`CachePrediction`): the next request's "previous" is that very request, and its own
  blocks that are the previous one's very blocks (the layout's settled prefix, found by
  comparing the two block tuples in C) are neither converted, hashed nor walked again: the
  conversion, the hashing and the cache model's walk over the blocks (token sums, marks,
  lookback positions, :mod:`regio.cache.walk`) follow the blocks that changed, and what is
  left per block is slices and comparisons in C. Each prediction still runs a fresh
  cache model on the two requests, so a worker that loaded the session from the store (and
  converts and hashes the previous request whole once) predicts the same figures.
* **First miss** (:func:`first_miss`): the region of the first block past the prefix the
  upstream reported as read from cache (block tokens scaled to the reported prompt): the region
  whose change broke the cache for this request (``None`` when the whole prompt was read or
  nothing was reported).
* **As is** (:func:`as_is_cost`): the reference the status page compares with: the client's own
  requests sent unchanged, each reading the previous one's history from the cache when it
  extends it and came within the cache's time to live (a client that resends a growing history
  with prompt caching; written at the write price where the rule has one). Tokens are regio's
  count of the client's request scaled by this request's reported / estimated ratio. Past the
  model's window such a request would be refused: the figure is what not managing the window
  would cost, not a bill anyone could have paid.
* **Summary calls** (:func:`summary_cost`): with ``--summarizer upstream``, the usage the
  upstream reported for a request's summary requests (:mod:`regio.proxy.summaries`) at the
  summary model's prices, as the ledger prices a call: uncached input at the input price, the
  cache reads and writes the upstream reported at the cache rule's read and write prices,
  output at the output price; unpriced (``None``) when a price they need is not recorded. The
  status page adds it to the session's cost.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from regio.cache import CacheRuleError
from regio.cache.billing import bill, input_units
from regio.cache.prefix import HashMemo, common_prefix
from regio.cache.walk import BlockWalk
from regio.layout import Request, to_cache_request
from regio.layout.cachebridge import cache_blocks
from regio.providers import cache_model_for
from regio.session._usage import PROMPT_FIELDS, usage_cost

if TYPE_CHECKING:
    from regio.session import ModelPricing

__all__ = ["CachePrediction", "as_is_cost", "first_miss", "predict_blocks", "summary_cost"]


@attrs.define
class CachePrediction:
    """One session's prediction state (module doc): the last request converted for the cache
    model, its ``regio.cache.CacheBlock`` tuple and its last message index, the prefix
    hashes of the last request the model hashed (``hashes``) and the per-block facts of the
    last one it walked (``walk``, :mod:`regio.cache.walk`). Belongs to the session (kept with
    its warm engine); a new one starts empty and gives the same figures."""

    request: Request | None = None
    blocks: tuple[Any, ...] = ()
    hashes: HashMemo = attrs.field(factory=HashMemo)
    walk: BlockWalk = attrs.field(factory=BlockWalk)
    #: the highest message index through each block of the last request, and the indexes
    #: of its tail blocks
    reach: list[int] = attrs.field(factory=list)
    tails: list[int] = attrs.field(factory=list)
    #: blocks converted by this state (each prediction's new work; a count, for tests; the
    #: blocks hashed are ``hashes.hashed``)
    converted: int = 0

    @property
    def last_msg(self) -> int:
        """The last request's highest message index (``-1``: none): its tail blocks close
        message ``last_msg + 1`` (:func:`regio.layout.cachebridge.last_message`)."""
        return self.reach[-1] if self.reach else -1

    def blocks_of(self, request: Request) -> tuple[Any, ...]:
        """``request``'s cache blocks, converting only the blocks that are not the last
        converted request's very blocks at the same place; ``request`` becomes the last. The
        blocks it shares with the last request (compared in C,
        :func:`regio.cache.prefix.common_prefix`) are neither converted nor looked at again:
        the message they reach and where their tail blocks are is kept (``reach``,
        ``tails``)."""
        if request is self.request:
            return self.blocks
        blocks = request.blocks
        start = 0
        if self.request is not None:
            start = common_prefix(blocks, self.request.blocks)
        reach = self.reach[:start]
        tails = self.tails[: bisect_left(self.tails, start)]
        top = reach[-1] if reach else -1
        for i in range(start, len(blocks)):
            b = blocks[i]
            if b.message is not None and b.message > top:
                top = b.message
            reach.append(top)
            if b.level == "tail":
                tails.append(i)
        keep = start
        if top != self.last_msg and tails and tails[0] < start:
            keep = tails[0]  # a tail block closes another message now: converted again
        earlier = None
        if self.request is not None:
            earlier = (self.request.blocks, self.blocks, self.last_msg)
        converted, count = cache_blocks(request, top, earlier, keep)
        self.converted += count
        self.request, self.blocks = request, converted
        self.reach, self.tails = reach, tails
        return converted


def predict_blocks(
    profile: str,
    previous: tuple[Request, float, int] | None,
    request: Request,
    t: float,
    state: CachePrediction | None = None,
) -> tuple[int, int] | None:
    """``(read, written)`` tokens the cache model ``profile`` predicts for ``request`` sent at
    ``t`` (seconds) after ``previous`` = (request, sent at, output tokens), or ``None`` when the
    profile names no cache model. ``state``: the session's :class:`CachePrediction` (``None``:
    a fresh one; the figures are the same)."""
    state = state if state is not None else CachePrediction()
    try:
        model = cache_model_for(profile, hash_memo=state.hashes, walk_memo=state.walk)
    except (CacheRuleError, ValueError, KeyError):
        return None
    start = max(t, 0.0)
    if previous is not None:
        before, t_before, output = previous
        model.process(
            to_cache_request(
                before,
                t_start=t_before,
                id="previous",
                ttft=0.0,
                output_tokens=output,
                blocks=state.blocks_of(before),
            )
        )
        start = max(start, t_before)
    blocks = state.blocks_of(request)
    outcome = model.process(
        to_cache_request(request, t_start=start, id="this", ttft=0.0, blocks=blocks)
    )
    return int(outcome.read), int(outcome.creation)


def first_miss(
    request: Request | None, prompt_tokens: int, read_tokens: int, conversation: str
) -> str | None:
    """The region of the first block not read from cache (module doc): a conversation block is
    ``conversation``'s (the conversation region's name), a tool definition ``tools``."""
    if request is None or prompt_tokens <= 0 or read_tokens >= prompt_tokens:
        return None
    scale = request.tokens / prompt_tokens if request.tokens else 1.0
    read = read_tokens * scale
    pos = 0
    for block in request.blocks:
        pos += block.tokens
        if pos > read:
            if block.region is not None:
                return block.region
            return conversation if block.level in ("messages", "tail") else block.level
    return None


def as_is_cost(
    pricing: ModelPricing | None, previous: int, tokens: int, output: int, *, cached: bool
) -> float | None:
    """USD of one request sent as the client sent it (module doc): ``tokens`` prompt tokens of
    which the ``previous`` request's are read from cache when ``cached``; ``pricing`` a
    :class:`regio.session.ModelPricing`. ``None`` (unpriced) without a pricing or when a price
    the tokens need is not recorded (:func:`regio.cache.billing.bill`)."""
    if pricing is None:
        return None
    read = min(previous, tokens) if cached else 0
    write = tokens - read
    units = input_units(pricing.mult, read=read, write_5m=write)
    return bill(
        pricing.input, pricing.output, input_tokens=tokens, input_units=units, output_tokens=output
    )


def summary_cost(pricing: ModelPricing | None, usage: Mapping[str, int]) -> float | None:
    """USD of summary requests whose summed usage is ``usage`` (the token counts of
    :func:`regio.session._usage.normalize_usage`: uncached input, cache reads and writes apart,
    output), at the summary model's ``pricing`` (:class:`regio.session.ModelPricing`), through
    the ledger's :func:`regio.session._usage.usage_cost`: cache reads at the rule's read price,
    writes at its write price; ``0.0`` when they used no tokens, ``None`` (unpriced) when the
    model has no pricing or a price their tokens need is not recorded, never a guessed one."""
    if not any(usage.get(k, 0) for k in (*PROMPT_FIELDS, "output_tokens")):
        return 0.0
    counts = {k: int(usage.get(k, 0)) for k in (*PROMPT_FIELDS, "output_tokens")}
    return usage_cost(counts, pricing)
