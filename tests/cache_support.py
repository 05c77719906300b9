"""Builders for cache-model tests (not a test module)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from regio.cache import CacheBlock, CacheRequest


def blk(digest: str, tokens: int = 200, mark: str | None = None, **kw: object) -> CacheBlock:
    """One block."""
    return CacheBlock(tokens=tokens, digest=digest, mark=mark, **kw)  # type: ignore[arg-type]


def texts(count: int, prefix: str = "b", tokens: int = 200) -> list[CacheBlock]:
    """``count`` text blocks ``prefix0..`` of ``tokens`` each."""
    return [blk(f"{prefix}{i}", tokens) for i in range(count)]


def mark(blocks: Sequence[CacheBlock], *indexes: int, ttl: str = "5m") -> list[CacheBlock]:
    """Copy of ``blocks`` with a mark on each index (default: the last block)."""
    out = list(blocks)
    for i in indexes or (len(out) - 1,):
        out[i] = msgspec.structs.replace(out[i], mark=ttl)
    return out


def req(rid: str, blocks: Sequence[CacheBlock], t: float = 0.0, **kw: object) -> CacheRequest:
    """A request at ``t`` (model defaults to Claude Sonnet 4.5, ttft 2 s as in spec 6)."""
    kw.setdefault("model", "claude-sonnet-4-5")
    kw.setdefault("ttft", 2.0)
    return CacheRequest(id=rid, blocks=tuple(blocks), t_start=t, **kw)  # type: ignore[arg-type]
