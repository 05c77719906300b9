"""Automatic whole-prompt prefix caches: OpenAI up to GPT-5.5 and Gemini implicit.

OpenAI (https://platform.openai.com/docs/guides/prompt-caching; mechanism
``auto_prefix_grid``): a request is routed by
``sha256(scope, prompt_cache_key, first 256 tokens)`` to its home machine, or, beyond
``overflow_per_min`` starts of that routing key in the last 60 s, to one of
``sim.overflow_machines`` overflow machines chosen by an RNG seeded with the request id. On that
machine entries idle for ``idle_s`` (``sim.idle_mode``: ``pessimistic`` 300 s, ``optimistic``
600 s, ``random`` seeded U(300, 600)) or older than ``max_s`` are dropped; the longest common
prefix L with a readable entry gives ``cached = q(L)`` = 0 below the minimum, else
``1024 + 128 * floor((L - 1024) / 128)``; the entry used is touched; a prompt of at least the
minimum is stored (readable after the writer's first token). With retention ``24h`` only
``max_s = 86400`` applies [D].

Gemini implicit (https://ai.google.dev/gemini-api/docs/caching; mechanism ``auto_prefix``):
one store per (project, model), no
routing, ``cached = g * floor(L / g)`` when L >= min (g = ``sim.granularity``), idle expiry
``sim.idle_s``.
"""

from __future__ import annotations

import hashlib
import heapq
import random
from collections import deque

import attrs

from regio.cache.base import CacheModel
from regio.cache.prefix import PrefixIndex, Unit, chain, units_of
from regio.cache.types import CacheOutcome, CacheRequest

__all__ = ["AutoPrefixCache", "openai_q"]


def openai_q(tokens: int, minimum: int = 1024, base: int = 1024, step: int = 128) -> int:
    """OpenAI's reported ``cached_tokens`` for a shared prefix of ``tokens``:
    0 below ``max(minimum, base)``, else ``base + step * floor((tokens - base) / step)``."""
    if tokens < max(minimum, base):
        return 0
    return base + step * ((tokens - base) // step)


@attrs.define
class _Entry:
    created: float
    last_used: float
    idle_s: float | None
    max_s: float | None

    def expiry(self) -> float:
        out = float("inf")
        if self.idle_s is not None:
            out = self.last_used + self.idle_s
        if self.max_s is not None:
            out = min(out, self.created + self.max_s)
        return out


@attrs.define
class _Machine:
    index: PrefixIndex = attrs.field(factory=PrefixIndex)
    entries: dict[int, _Entry] = attrs.field(factory=dict)
    by_prompt: dict[bytes, int] = attrs.field(factory=dict)
    expiry: list[tuple[float, int]] = attrs.field(factory=list)
    pending: list[tuple[float, int, list[Unit], list[bytes]]] = attrs.field(factory=list)

    def advance(self, t: float) -> None:
        """Drop entries expired at ``t``; make entries readable by ``t`` visible."""
        while self.expiry and self.expiry[0][0] <= t:
            _, eid = heapq.heappop(self.expiry)
            e = self.entries.get(eid)
            if e is None:
                continue
            exp = e.expiry()
            if exp <= t:
                self._drop(eid)
            else:
                heapq.heappush(self.expiry, (exp, eid))
        while self.pending and self.pending[0][0] <= t:
            _, eid, units, hashes = heapq.heappop(self.pending)
            if eid in self.entries:
                self.index.add(eid, units, hashes)

    def _drop(self, eid: int) -> None:
        self.entries.pop(eid, None)
        self.index.remove(eid)
        if len(self.by_prompt) > 4 * len(self.entries) + 64:
            self.by_prompt = {k: v for k, v in self.by_prompt.items() if v in self.entries}

    def store(
        self, eid: int, e: _Entry, ready: float, units: list[Unit], hashes: list[bytes]
    ) -> None:
        """Store a prompt; an identical stored prompt is renewed in place (it stays readable
        from its first writer's first token)."""
        key = hashes[-1] if hashes else b""
        old = self.by_prompt.get(key)
        if old is not None and old in self.entries:
            prev = self.entries[old]
            prev.created = prev.last_used = e.created
            prev.idle_s, prev.max_s = e.idle_s, e.max_s
            heapq.heappush(self.expiry, (prev.expiry(), old))
            return
        self.by_prompt[key] = eid
        self.entries[eid] = e
        heapq.heappush(self.expiry, (e.expiry(), eid))
        heapq.heappush(self.pending, (ready, eid, units, hashes))


@attrs.define
class AutoPrefixCache(CacheModel):
    """OpenAI legacy automatic caching or Gemini implicit caching, chosen by the rule's
    ``mechanism`` (``auto_prefix_grid`` | ``auto_prefix``).

    ``retention``: ``in_memory`` | ``24h`` (default: ``sim.retention`` or ``in_memory``);
    ``idle_mode``: ``pessimistic`` | ``optimistic`` | ``random`` (default ``sim.idle_mode``).
    """

    retention: str | None = None
    idle_mode: str | None = None
    machines: dict[tuple[bytes, int], _Machine] = attrs.field(factory=dict)
    starts: dict[bytes, deque[float]] = attrs.field(factory=dict)
    _next: int = 0

    def reset(self) -> None:
        """Forget every machine and routing counter."""
        self.machines.clear()
        self.starts.clear()

    @property
    def grid(self) -> bool:
        """True for OpenAI's 1024 + 128k reporting grid."""
        return self.rule.mechanism == "auto_prefix_grid"

    def quantize(self, tokens: int) -> int:
        """Reported cached tokens for a shared prefix of ``tokens``."""
        minimum = self.rule.min_tokens or 0
        if self.grid:
            g = self.rule.extra.get("grid") or {}
            return openai_q(tokens, minimum, int(g.get("base", 1024)), int(g.get("step", 128)))
        if tokens < minimum:
            return 0
        gran = int(self.rule.param("granularity", 1) or 1)
        return gran * (tokens // gran)

    def _lifetimes(self, req: CacheRequest) -> tuple[float | None, float | None]:
        rule = self.rule
        if not self.grid:
            idle = rule.param("idle_s", 300)
            return (float(idle) if idle is not None else None), None
        retention = self.retention or rule.sim.get("retention", "in_memory")
        table = rule.extra.get("retention") or {}
        if retention == "24h":
            spec = table.get("24h") or {"max_s": 86400}
            return None, float(spec.get("max_s") or 86400)
        spec = table.get("in_memory") or {"idle_s": [300, 600], "max_s": 3600}
        lo, hi = (spec.get("idle_s") or [300, 600])[:2]
        mode = self.idle_mode or rule.sim.get("idle_mode", "pessimistic")
        if mode == "optimistic":
            idle = float(hi)
        elif mode == "random":
            idle = _rng(req.id, "idle").uniform(lo, hi)
        else:
            idle = float(lo)
        max_s = spec.get("max_s")
        return idle, (float(max_s) if max_s is not None else None)

    def _route(self, req: CacheRequest, units: list[Unit]) -> tuple[bytes, int]:
        h = hashlib.sha256(f"{req.scope}\x00{req.model}\x00".encode())
        if not self.grid:
            return h.digest(), 0
        routing = self.rule.extra.get("routing") or {}
        budget = int(routing.get("prefix_tokens", 256))
        h.update(f"{req.key}\x00".encode())
        for u in units:
            if budget <= 0:
                break
            if u.ids is not None:
                h.update(repr(u.ids[:budget]).encode())
            else:
                h.update(u.digest.encode() + b"\x00")
            budget -= u.tokens
        rk = h.digest()
        window = self.starts.setdefault(rk, deque())
        t = req.t_start
        while window and window[0] <= t - 60:
            window.popleft()
        window.append(t)
        limit = int(routing.get("overflow_per_min", 15))
        if len(window) > limit:
            spare = int(self.rule.sim.get("overflow_machines", 2))
            return rk, 1 + _rng(req.id, "route").randrange(max(spare, 1))
        return rk, 0

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Simulate one request; O(blocks) plus amortized expiry."""
        self.check(request)
        units = units_of(request)
        n = sum(u.tokens for u in units)
        seed = f"{request.scope}\x00{request.model}".encode()
        hashes = chain(units, seed)
        machine = self.machines.setdefault(self._route(request, units), _Machine())
        t = request.t_start
        machine.advance(t)
        lcp, eid = machine.index.lcp(units, hashes)
        cached = self.quantize(lcp)
        if cached > 0 and eid is not None:
            machine.entries[eid].last_used = t
            heapq.heappush(machine.expiry, (machine.entries[eid].expiry(), eid))
        if n >= (self.rule.min_tokens or 0) and n > 0:
            idle, max_s = self._lifetimes(request)
            self._next += 1
            machine.store(self._next, _Entry(t, t, idle, max_s), t + request.ttft, units, hashes)
        return self.outcome(request, n, read=cached)


def _rng(request_id: str, purpose: str) -> random.Random:
    seed = int.from_bytes(hashlib.sha256(f"{purpose}\x00{request_id}".encode()).digest()[:8], "big")
    return random.Random(seed)
