"""Which part of a client's history the session already knows: per-item digests, compared by
prefix.

A client resends its whole history on every request. Each item (a message, or a Responses
input item) gets a 16-byte digest of its JSON bytes as sent: SHA-256 over the raw bytes, a C
loop over bytes the request carried anyway, so digesting a request costs microseconds per
kilobyte and no Python object is built for the items already known. Clients move their prompt
cache markers from one request to the next (Claude Code puts ``cache_control`` on its newest
messages), so every ``"cache_control"`` member is cut out of an item's bytes before it is
digested (:func:`unmarked`, the other bytes left as sent): the same message with its marker
moved has the same digest. (A tool input key of that name is cut too: inputs are the model's
and never change in a history.)

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
import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from regio.cache.prefix import common_prefix as shared_prefix

if TYPE_CHECKING:
    import msgspec

__all__ = [
    "DIGEST_SIZE",
    "common_prefix",
    "digest",
    "digests",
    "fingerprint",
    "first_user",
    "unmarked",
]

#: Bytes of an item digest (the first 16 bytes of SHA-256).
DIGEST_SIZE = 16
_MARKER = b'"cache_control"'


_KEY = re.compile(r'([{,])(\s*)"cache_control"\s*:\s*')
_decoder = json.JSONDecoder()


def unmarked(data: bytes) -> bytes:
    """``data`` (one JSON value) with every ``"cache_control": ...`` member cut out of the bytes
    as sent, with its comma; every other byte stays as the client wrote it, so an item sent
    with a marker and later without one has the same bytes. A string value can hold the
    characters ``"cache_control"`` only escaped (``\\"``), so only real members match."""
    text = data.decode("utf-8")
    out: list[str] = []
    pos = 0
    for found in _KEY.finditer(text):
        if found.start() < pos:
            continue
        try:
            _, end = _decoder.raw_decode(text, found.end())
        except ValueError:
            continue
        if found.group(1) == ",":  # {..., "cache_control": {...}} -> drop ', "cache_control": ...'
            out.append(text[pos : found.start()])
        else:  # {"cache_control": {...}, ...} -> drop the member, its comma and what follows it
            out.append(text[pos : found.start() + 1])
            after = re.match(r"\s*,\s*", text[end:])
            end += after.end() if after else 0
        pos = end
    out.append(text[pos:])
    return "".join(out).encode("utf-8")


def digest(raw: bytes | msgspec.Raw) -> bytes:
    """The digest of one JSON value's bytes (module doc: markers cut out first)."""
    data = bytes(raw) if not isinstance(raw, bytes) else raw
    if _MARKER in data:
        data = unmarked(data)
    return hashlib.sha256(data).digest()[:DIGEST_SIZE]


def digests(items: Iterable[Any]) -> list[bytes]:
    """:func:`digest` of every item, in order."""
    return [digest(raw) for raw in items]


def common_prefix(known: Sequence[bytes], incoming: Sequence[bytes]) -> int:
    """How many leading digests ``incoming`` shares with ``known`` (at most ``len(known)``;
    :func:`regio.cache.prefix.common_prefix` on the two as lists, whatever sequences they
    are)."""
    return shared_prefix(list(known), list(incoming))


def first_user(items: Sequence[msgspec.Raw]) -> msgspec.Raw | None:
    """The first of a request's raw history ``items`` naming the ``"user"`` role, else the
    first item (``None``: no items): the item :func:`fingerprint` takes."""
    for raw in items:
        if b'"user"' in bytes(raw):
            return raw
    return items[0] if items else None


def fingerprint(
    system: Sequence[msgspec.Raw], tools: msgspec.Raw | None, first_user: msgspec.Raw | None
) -> str:
    """Hex digest of the system prompt's raw pieces, the tools' raw JSON (``None``: none) and
    the first user item (``None``: none), markers removed (module doc)."""
    h = hashlib.sha256()
    for part in (*system, tools, first_user):
        h.update(digest(part) if part is not None else b"-" * DIGEST_SIZE)
    return h.hexdigest()[:32]
