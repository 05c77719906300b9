"""The oracle bound.

For requests in one scope (and model), with no capacity or TTL limits and sequential requests,
the best any cache can read for request i is ``c_i = Q(max_{j<i} LCP(x_i, S_j))`` where ``S_j``
is what request j left reusable: ``request`` (request-side caches: Anthropic, OpenAI, Gemini,
DeepSeek-2024) ``S_j = x_j``; ``output`` (llama.cpp, SGLang, vLLM) ``S_j = x_j + y_j[:-1]``;
``output_full`` (DeepSeek V4) ``S_j = x_j + y_j``. Q quantizes to what the provider can report:
``block`` (Anthropic, GPT-5.6: the largest block boundary <= L, ideal marks), ``openai``
(1024 + 128k), ``gemini`` (granularity), ``deepseek`` (64-token units), ``paged`` (vLLM /
SGLang: ``p * floor(min(L, n - 1) / p)``), ``slot`` (llama.cpp: ``min(L, n - 1)``) or ``exact``;
each gives 0 below the rule's minimum. ``H_max = sum c_i / sum n_i`` is the report's hit rate.
LCP is per token when both sides carry token ids, else in whole blocks (a lower bound).
Lookup uses a :class:`~regio.cache.prefix.PrefixIndex`: O(blocks) per request.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import attrs

from regio.cache.auto_prefix import openai_q
from regio.cache.base import CacheModel
from regio.cache.prefix import PrefixIndex, chain, units_of
from regio.cache.types import CacheOutcome, CacheRequest, CacheRequestError

__all__ = ["QUANTIZERS", "OracleCache", "persistence_for", "quantizer_for"]

QUANTIZERS = ("block", "openai", "gemini", "deepseek", "paged", "slot", "exact")
PERSISTENCE = ("request", "output", "output_full")

_BY_MECHANISM = {
    "breakpoint_lookback": ("block", "request"),
    "breakpoint_exact": ("block", "request"),
    "explicit_object": ("block", "request"),
    "auto_prefix_grid": ("openai", "request"),
    "auto_prefix": ("gemini", "request"),
    "unit_prefix": ("deepseek", "request"),
    "persisted_units": ("exact", "output_full"),
    "paged_blocks": ("paged", "output"),
    "radix": ("paged", "output"),
    "slot": ("slot", "output"),
}


def quantizer_for(mechanism: str) -> str:
    """Default quantizer name for a rule mechanism."""
    return _BY_MECHANISM.get(mechanism, ("exact", "request"))[0]


def persistence_for(mechanism: str) -> str:
    """Default persistence (``request`` | ``output`` | ``output_full``) for a mechanism."""
    return _BY_MECHANISM.get(mechanism, ("exact", "request"))[1]


@attrs.define
class OracleCache(CacheModel):
    """Upper bound on reads for the rule's provider. ``quantize`` / ``persist`` default from the
    rule's mechanism. Outcomes bill ``read = c_i`` and the rest as plain input (no writes)."""

    quantize: str | None = None
    persist: str | None = None
    index: dict[str, PrefixIndex] = attrs.field(factory=dict)
    seen: set[bytes] = attrs.field(factory=set)
    _next: int = 0

    def __attrs_post_init__(self) -> None:
        if self.quantize is None:
            self.quantize = quantizer_for(self.rule.mechanism)
        if self.persist is None:
            self.persist = persistence_for(self.rule.mechanism)
        if self.quantize not in QUANTIZERS:
            raise CacheRequestError(f"oracle quantize={self.quantize!r}; use one of {QUANTIZERS}")
        if self.persist not in PERSISTENCE:
            raise CacheRequestError(f"oracle persist={self.persist!r}; use one of {PERSISTENCE}")

    def reset(self) -> None:
        """Forget every earlier request."""
        self.index.clear()
        self.seen.clear()

    def q(self, lcp: int, request: CacheRequest) -> int:
        """Q(L) for ``request``."""
        n = request.prompt_tokens
        minimum = self.rule.min_tokens or 0
        kind = self.quantize
        if kind == "openai":
            g = self.rule.extra.get("grid") or {}
            return openai_q(lcp, minimum, int(g.get("base", 1024)), int(g.get("step", 128)))
        if kind == "paged":
            key = "page_size" if self.rule.mechanism == "radix" else "block_size"
            p = int(self.rule.param(key, 16) or 1)
            return p * (min(lcp, max(n - 1, 0)) // p)
        if kind == "slot":
            return min(lcp, max(n - 1, 0))
        if lcp < minimum:
            return 0
        if kind == "block":
            cum = list(accumulate(b.tokens for b in request.blocks))
            i = bisect_right(cum, lcp)
            return cum[i - 1] if i else 0
        if kind == "gemini":
            g = int(self.rule.param("granularity", 1) or 1)
            return g * (lcp // g)
        if kind == "deepseek":
            u = int(self.rule.param("unit", 64) or 64)
            return u * (lcp // u)
        return lcp

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Bound for one request, then remember what it leaves reusable."""
        self.check(request)
        seed = f"{request.scope}\x00{request.model}".encode()
        idx = self.index.setdefault(request.scope + "\x00" + request.model, PrefixIndex())
        units = units_of(request)
        n = sum(u.tokens for u in units)
        hashes = chain(units, seed)
        lcp, _ = idx.lcp(units, hashes)
        cached = self.q(lcp, request)
        kept = units
        if self.persist != "request" and request.output_tokens > 0:
            kept = units_of(request, with_output=True, drop_last=self.persist == "output")
            hashes = chain(kept, seed)
        if hashes and hashes[-1] + seed not in self.seen:
            self.seen.add(hashes[-1] + seed)
            self._next += 1
            idx.add(self._next, kept, hashes)
        return self.outcome(request, n, read=cached)
