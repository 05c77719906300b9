"""DeepSeek context caching on disk.

2024 rule (mechanism ``unit_prefix``): per user (``scope``); L = longest common prefix with a
stored prompt built by ``t_start`` (writer's ``t_start + sim.build_s``) and not older than
``sim.ttl_s``; ``hit = 64 * floor(L / 64)``, ``miss = n - hit``; every prompt is stored.

V4 (mechanism ``persisted_units``): hit = the longest live stored unit that prefixes the prompt
(0 below the inherited ``min_tokens``, 64).
Units are then stored at the prompt end (n), at prompt + output (n + g, needs the answer's
``output_digest`` to match later), at the longest common prefix with earlier prompts and at each
point where the prompt leaves an earlier prompt's path ([D]: block-level when no token ids), and
at multiples of ``fixed_interval`` when given.
"""

from __future__ import annotations

import attrs

from regio.cache.auto_prefix import _Entry, _Machine
from regio.cache.base import CacheModel
from regio.cache.prefix import PrefixIndex, Unit, branch_depths, chain, units_of
from regio.cache.types import CacheOutcome, CacheRequest

__all__ = ["DeepSeekCache"]


@attrs.define
class DeepSeekCache(CacheModel):
    """DeepSeek 2024 (``unit_prefix``) or V4 (``persisted_units``), by the rule's mechanism."""

    users: dict[str, _Machine] = attrs.field(factory=dict)
    prompts: dict[str, PrefixIndex] = attrs.field(factory=dict)
    ends: dict[str, dict[bytes, tuple[float, float]]] = attrs.field(factory=dict)
    partial: dict[str, dict[bytes, dict[Unit, tuple[float, float]]]] = attrs.field(factory=dict)
    _next: int = 0

    def reset(self) -> None:
        """Forget every stored prefix."""
        self.users.clear()
        self.prompts.clear()
        self.ends.clear()
        self.partial.clear()

    def _store(self, m: _Machine, t: float, units: list[Unit], hashes: list[bytes]) -> None:
        ttl = self.rule.param("ttl_s", 14400)
        build = float(self.rule.param("build_s", 5) or 0)
        self._next += 1
        m.store(
            self._next, _Entry(t, t, None, float(ttl) if ttl else None), t + build, units, hashes
        )

    def process(self, request: CacheRequest) -> CacheOutcome:
        """Simulate one request."""
        self.check(request)
        if self.rule.mechanism == "persisted_units":
            return self._v4(request)
        units = units_of(request)
        n = sum(u.tokens for u in units)
        hashes = chain(units, f"{request.scope}\x00{request.model}".encode())
        m = self.users.setdefault(request.scope, _Machine())
        m.advance(request.t_start)
        lcp, _ = m.index.lcp(units, hashes)
        unit = int(self.rule.param("unit", 64) or 64)
        hit = unit * (lcp // unit) if lcp >= (self.rule.min_tokens or 0) else 0
        if n > 0:
            self._store(m, request.t_start, units, hashes)
        return self.outcome(request, n, read=hit)

    def _v4(self, request: CacheRequest) -> CacheOutcome:
        seed = f"{request.scope}\x00{request.model}".encode()
        units = units_of(request)
        n = sum(u.tokens for u in units)
        hashes = chain(units, seed)
        t = request.t_start
        ends = self.ends.setdefault(request.scope, {})
        partial = self.partial.setdefault(request.scope, {})
        hit = 0
        cum = 0
        for k in range(len(units) + 1):
            h = hashes[k - 1] if k else b""
            if k and _live(ends.get(h), t):
                hit = cum
            if k < len(units):
                for p, life in partial.get(h, {}).items():
                    got, _ = units[k].match(p)
                    if got == p.tokens and _live(life, t):
                        hit = max(hit, cum + got)
                cum += units[k].tokens
        prompts = self.prompts.setdefault(request.scope, PrefixIndex())
        cuts: set[int] = {bounds for bounds in _bounds(units, branch_depths(prompts, hashes))}
        plcp, _ = prompts.lcp(units, hashes)
        if plcp > 0:
            cuts.add(plcp)
        interval = self.rule.param("fixed_interval")
        if interval:
            cuts.update(range(int(interval), n + 1, int(interval)))
        cuts.add(n)
        ttl = self.rule.param("ttl_s", 14400)
        life = (
            t + float(self.rule.param("build_s", 5) or 0),
            t + float(ttl) if ttl else float("inf"),
        )
        for c in sorted(cuts):
            if c > 0:
                seq = _cut(units, c)
                self._put(ends, partial, seq, seed, life, t, cut=seq[-1] != units[len(seq) - 1])
        out = units_of(request, with_output=True, drop_last=False)
        if len(out) > len(units):
            self._put(ends, partial, out, seed, life, t)
        self._next += 1
        prompts.add(self._next, units, hashes)
        if hit < (self.rule.min_tokens or 0):
            hit = 0
        return self.outcome(request, n, read=min(hit, n))

    @staticmethod
    def _put(
        ends: dict[bytes, tuple[float, float]],
        partial: dict[bytes, dict[Unit, tuple[float, float]]],
        seq: list[Unit],
        seed: bytes,
        life: tuple[float, float],
        t: float,
        cut: bool = False,
    ) -> None:
        """Store a unit: by its chained hash, and a unit cut inside a block also as
        (hash of the whole units before it -> the cut tail)."""
        hashes = chain(seq, seed)
        ends[hashes[-1]] = _merge(ends.get(hashes[-1]), life, t)
        if cut:
            parent = hashes[-2] if len(seq) > 1 else b""
            tails = partial.setdefault(parent, {})
            tails[seq[-1]] = _merge(tails.get(seq[-1]), life, t)


def _cut(units: list[Unit], tokens: int) -> list[Unit]:
    """The first ``tokens`` tokens of ``units`` (a partial last unit keeps its digest)."""
    out: list[Unit] = []
    left = tokens
    for u in units:
        if left <= 0:
            break
        if u.tokens <= left:
            out.append(u)
            left -= u.tokens
        else:
            out.append(Unit(u.digest, left, u.ids[:left] if u.ids is not None else None))
            left = 0
    return out


def _bounds(units: list[Unit], depths: list[int]) -> list[int]:
    """Token offsets of the given unit counts."""
    cum = [0]
    for u in units:
        cum.append(cum[-1] + u.tokens)
    return [cum[d] for d in depths]


def _live(life: tuple[float, float] | None, t: float) -> bool:
    return life is not None and life[0] <= t < life[1]


def _merge(
    old: tuple[float, float] | None, new: tuple[float, float], t: float
) -> tuple[float, float]:
    """(ready, expires) of a re-stored unit: one not expired at ``t`` keeps its ready time."""
    if old is None or old[1] <= t:
        return new
    return (min(old[0], new[0]), max(old[1], new[1]))
