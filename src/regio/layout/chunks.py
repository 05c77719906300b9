"""Frozen chunks for ``grows`` regions.

Entries are packed greedily into chunks of about ``chunk_tokens`` tokens: an entry joins the open
chunk unless that would pass ``chunk_tokens`` and the chunk is not empty. Chunks kept in the
:class:`regio.layout.model.ChunkState` of the previous request are reused as long as their
entries (ids and digests) are still the region's leading entries; only the last (open) chunk is
re-packed, so a closed chunk is never repacked and stays byte-identical. The first chunk carries
the region heading, every continuation chunk the constant label
``## <description or name> (continued)``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter

from regio.content import Entry

from .model import ChunkState

__all__ = ["DEFAULT_CHUNK_TOKENS", "chunk_text", "heading", "pack_chunks"]

#: Size in tokens of the frozen chunks ``grows`` regions are packed into; the one declaration
#: of this default (the engine's ``EngineOptions.chunk_tokens`` and the blueprint's
#: ``layout.chunk_tokens`` read it). 1024 is the smallest prefix Anthropic caches for most
#: models (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching) and the base of
#: OpenAI's 1024 + 128k caching grid (https://platform.openai.com/docs/guides/prompt-caching),
#: so each closed chunk can be a cache hit on its own; every engine and bench run has laid out
#: with it.
DEFAULT_CHUNK_TOKENS = 1024
_DIGEST: Callable[[Entry], str] = attrgetter("digest")


def heading(name: str, description: str) -> str:
    """The heading of a region's first chunk (as ``Region.render_text``)."""
    return f"## {description or name}"


def continuation_label(name: str, description: str = "") -> str:
    """The constant label of continuation chunks."""
    return f"## {description or name} (continued)"


def chunk_text(name: str, description: str, index: int, entries: Sequence[Entry]) -> str:
    """Text of chunk ``index`` (0 = first) of region ``name``: label, then entry texts, one per
    line."""
    head = heading(name, description) if index == 0 else continuation_label(name, description)
    return "\n".join([head, *(e.text for e in entries)])


def pack_chunks(
    entries: Sequence[Entry],
    previous: Sequence[ChunkState] = (),
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    digest: Callable[[Entry], str] = _DIGEST,
) -> list[ChunkState]:
    """Pack ``entries`` into chunks, keeping the closed chunks of ``previous`` that still match
    (``digest``: an entry's digest, default ``Entry.digest``; a session passes its render
    log's, which computes each entry's once).

    Raises ``ValueError`` when ``chunk_tokens`` is not positive.
    """
    if chunk_tokens <= 0:
        raise ValueError(f"chunk_tokens must be > 0 tokens, got {chunk_tokens}")
    out: list[ChunkState] = []
    i = 0
    for chunk in list(previous)[:-1]:  # the last previous chunk is open: re-pack it
        n = len(chunk.entry_ids)
        window = entries[i : i + n]
        if len(window) != n or any(
            e.id != eid or digest(e) != dg
            for e, eid, dg in zip(window, chunk.entry_ids, chunk.digests, strict=True)
        ):
            break
        out.append(chunk)
        i += n
    cur: list[Entry] = []
    cur_tokens = 0
    for e in entries[i:]:
        if cur and cur_tokens + e.tokens > chunk_tokens:
            out.append(_state(cur, digest))
            cur, cur_tokens = [], 0
        cur.append(e)
        cur_tokens += e.tokens
    if cur:
        out.append(_state(cur, digest))
    return out


def _state(entries: Sequence[Entry], digest: Callable[[Entry], str]) -> ChunkState:
    return ChunkState(
        entry_ids=tuple(e.id for e in entries),
        digests=tuple(digest(e) for e in entries),
        tokens=sum(e.tokens for e in entries),
    )
