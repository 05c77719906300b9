"""Which part of a client's history the session already knows: per-item digests, compared by
prefix.

A client resends its whole history on every request. Each item (a message, or a Responses
input item) gets a 16-byte digest of its JSON bytes as sent: SHA-256 over the raw bytes, a C
loop over bytes the request carried anyway, so digesting a request costs microseconds per
kilobyte and no Python object is built for the items already known. Clients move their prompt
cache markers from one request to the next (Claude Code puts ``cache_control`` on its newest
messages), so an item that holds ``"cache_control"`` is decoded, its markers removed (on the
message and on its content blocks, never inside a tool's input) and re-encoded before it is
digested: the same message with its marker moved has the same digest.

The session stores the digests of the items it admitted, append-only
(:mod:`regio.proxy.records`). :func:`common_prefix` finds how far a request agrees with them:
one list comparison in C when the request extends the session (the usual case), else a scan to
the first difference. A request whose common prefix is shorter than the session's history
edited or rewound it and gets a branch (:mod:`regio.proxy.sessions`).

The session's **fingerprint** (:func:`fingerprint`) is the digest of the system prompt, the
tools and the first user message: requests without an ``x-regio-session`` header find their
session by it, then by the longest known prefix.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

__all__ = ["DIGEST_SIZE", "common_prefix", "digest", "digests", "fingerprint"]

#: Bytes of an item digest (the first 16 bytes of SHA-256).
DIGEST_SIZE = 16
_MARKER = b'"cache_control"'
_encoder = msgspec.json.Encoder()


def _strip(value: Any) -> Any:
    """``value`` without ``cache_control`` keys on it and on the blocks of its ``content``
    (and of a tool result's ``content``), recursively through those lists only."""
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if k != "cache_control"}
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [_strip(v) for v in content]
    return out


def digest(raw: Any) -> bytes:
    """The digest of one JSON value's bytes (module doc: markers removed first)."""
    data = bytes(raw) if not isinstance(raw, bytes) else raw
    if _MARKER in data:
        data = _encoder.encode(_strip(msgspec.json.decode(data)))
    return hashlib.sha256(data).digest()[:DIGEST_SIZE]


def digests(items: Iterable[Any]) -> list[bytes]:
    """:func:`digest` of every item, in order."""
    return [digest(raw) for raw in items]


def common_prefix(known: Sequence[bytes], incoming: Sequence[bytes]) -> int:
    """How many leading digests ``incoming`` shares with ``known`` (at most ``len(known)``)."""
    n = min(len(known), len(incoming))
    if list(known[:n]) == list(incoming[:n]):
        return n
    for i in range(n):
        if known[i] != incoming[i]:
            return i
    return n  # pragma: no cover - the comparison above found a difference


def fingerprint(system: Sequence[Any], tools: Any, first_user: Any) -> str:
    """Hex digest of the system prompt's raw pieces, the tools' raw JSON (``None``: none) and
    the first user item (``None``: none), markers removed (module doc)."""
    h = hashlib.sha256()
    for part in (*system, tools, first_user):
        h.update(digest(part) if part is not None else b"-" * DIGEST_SIZE)
    return h.hexdigest()[:32]
