"""Values regio can render and save: lone UTF-16 surrogates and unstorable numbers repaired.

A Python ``str`` may hold UTF-16 surrogate code points (U+D800 to U+DFFF) that have no UTF-8
encoding: ``"\\ud800"`` written in Python, JSON or a YAML double-quoted string; bytes decoded
with ``errors="surrogateescape"`` (``os.listdir`` of a file name that is not UTF-8, a
subprocess's output, U+DC80 to U+DCFF); half of an emoji cut by a stream. Every Python API
accepts such a string until it is encoded, which every request payload, content hash and save
does, so one admitted surrogate makes every later request and save of a session fail.

:func:`repair_text` gives the text a provider and a file can hold: a high surrogate followed by
a low one becomes the character the pair encodes in UTF-16 (``"\\ud83d\\ude00"`` is one emoji),
and every other surrogate becomes U+FFFD, the replacement character, as UTF-8 decoding with
``errors="replace"`` would have given.

:func:`repair_value` does it for every string of a value (text, dict keys, nested lists and
dicts, msgspec structs such as blocks and entries) and says where (:class:`TextRepair`). In
the JSON data of a value (tool-call arguments, metadata: the dicts and lists), numbers no
request or store can hold are kept as their text: an integer outside the 64-bit range
(msgpack, the session stores' format, holds none) as its digits, ``NaN`` and the infinities
(which no provider's JSON parser accepts) as ``"NaN"``, ``"Infinity"``, ``"-Infinity"``. It
raises :class:`UnencodableValueError` for a value no JSON can hold (an object of another type,
nesting deeper than :data:`MAX_DEPTH`, such a number in a field of a struct). The engine calls
it once when a value is admitted (``regio.session._textadmit``).

This module imports nothing of regio but its errors, so any layer can use it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from regio.errors import RegioError

__all__ = [
    "MAX_DEPTH",
    "REPLACEMENT",
    "SURROGATE",
    "TextRepair",
    "UnencodableValueError",
    "describe_repairs",
    "repair_text",
    "repair_value",
]

#: One UTF-16 surrogate code point.
SURROGATE = re.compile("[\ud800-\udfff]")
#: U+FFFD, the character a lone surrogate becomes.
REPLACEMENT = "\ufffd"
#: Deepest nesting of lists, dicts and structs :func:`repair_value` walks (regio's structures
#: use about 10 levels; tool-call arguments are bounded at 64, :mod:`regio.callargs`).
MAX_DEPTH = 200
#: The integers msgpack holds: ``[-2**63, 2**64 - 1]``.
INT_RANGE = (-(2**63), 2**64 - 1)

_json = msgspec.json.Encoder()
_msgpack = msgspec.msgpack.Encoder()
#: msgpack's float64 marker: packed data without it holds no float.
_FLOAT64 = b"\xcb"


class UnencodableValueError(RegioError, TypeError):
    """A value that no JSON can hold (an object of another type, nesting deeper than
    :data:`MAX_DEPTH`); the message names its place."""


class TextRepair(msgspec.Struct, frozen=True):
    """What was repaired in one place: ``place`` is where it is in the value
    (``blocks[0].text``, ``input["path"]``, ``""`` for the value itself; ``(key)`` marks a dict
    key), ``position`` the index (code points) of its first surrogate (0 for a number),
    ``replaced`` the lone surrogates that became U+FFFD, ``joined`` the pairs that became one
    character and ``converted`` the numbers kept as their text (module doc)."""

    place: str
    position: int
    replaced: int
    joined: int
    converted: int = 0


def repair_text(text: str) -> tuple[str, TextRepair | None]:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD (module doc),
    and what changed (``None``: ``text`` itself is returned, it had no surrogate). Linear;
    an ASCII text is answered without a scan."""
    if text.isascii():
        return text, None
    found = SURROGATE.search(text)
    if found is None:
        return text, None
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    joined = len(text) - len(fixed)
    surrogates = len(SURROGATE.findall(text))
    return fixed, TextRepair("", found.start(), surrogates - 2 * joined, joined)


def _number(value: int | float, place: str, data: bool, out: list[TextRepair]) -> Any:
    """``value``, or its text when no store or request can hold it (in JSON ``data`` only)."""
    if isinstance(value, int):
        if INT_RANGE[0] <= value <= INT_RANGE[1]:
            return value
        text = str(value) if abs(value) < 10**4000 else f"{'-' if value < 0 else ''}<huge integer>"
    elif math.isfinite(value):
        return value
    else:
        text = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if not data:
        raise UnencodableValueError(
            f"{place or 'the value'} is {text}, which no request or store can hold"
        )
    out.append(TextRepair(place, 0, 0, 0, 1))
    return text


def _walk(value: object, place: str, depth: int, data: bool, out: list[TextRepair]) -> Any:
    """``value`` repaired (the same object when nothing changed), appending to ``out``;
    ``data``: ``value`` is inside a dict or list (JSON data, where numbers may become text)."""
    if isinstance(value, str):
        fixed, repair = repair_text(value)
        if repair is not None:
            out.append(msgspec.structs.replace(repair, place=place))
        return fixed
    if value is None or isinstance(value, bool | bytes | msgspec.UnsetType):
        return value
    if isinstance(value, int | float):
        return _number(value, place, data, out)
    if depth >= MAX_DEPTH:
        raise UnencodableValueError(
            f"{place or 'the value'} is nested more than {MAX_DEPTH} levels deep; flatten it"
        )
    if isinstance(value, msgspec.Struct):
        changes = {}
        for name in value.__struct_fields__:
            child = getattr(value, name)
            fixed = _walk(child, f"{place}.{name}" if place else name, depth + 1, False, out)
            if fixed is not child:
                changes[name] = fixed
        return msgspec.structs.replace(value, **changes) if changes else value
    if isinstance(value, Mapping):
        return _walk_mapping(value, place, depth, out)
    if isinstance(value, list | tuple | set | frozenset):
        children = list(value)
        inner = data or not isinstance(value, tuple)  # a struct's tuple field holds structs
        fixed_children = [
            _walk(child, f"{place}[{i}]", depth + 1, inner, out) for i, child in enumerate(children)
        ]
        if all(a is b for a, b in zip(children, fixed_children, strict=True)):
            return value
        return tuple(fixed_children) if isinstance(value, tuple) else fixed_children
    try:  # another type msgspec may encode (a datetime, a UUID, an enum ...)
        _json.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        raise UnencodableValueError(
            f"{place or 'the value'} is a {type(value).__name__}, which JSON cannot hold "
            f"({exc}); pass text, numbers, lists or dicts"
        ) from exc
    return value


def _walk_mapping(
    value: Mapping[Any, Any], place: str, depth: int, out: list[TextRepair]
) -> Mapping[Any, Any]:
    items = []
    changed = False
    for key, child in value.items():
        new_key = key
        if isinstance(key, str):
            new_key, repair = repair_text(key)
            if repair is not None:
                out.append(msgspec.structs.replace(repair, place=f"{place}[{key!r}](key)"))
                changed = True
        fixed = _walk(child, f"{place}[{key!r}]", depth + 1, True, out)
        changed = changed or fixed is not child
        items.append((new_key, fixed))
    return dict(items) if changed else value


def _stores(value: object) -> bool:
    """Whether ``value`` needs no repair: msgpack holds it (so it has no surrogate, no integer
    past 64 bits and no object of another type) and it holds no float (a NaN needs a look)."""
    try:
        packed = _msgpack.encode(value)
    except (UnicodeEncodeError, TypeError, ValueError, OverflowError, RecursionError):
        return False
    return _FLOAT64 not in packed


def repair_value(value: object, place: str = "") -> tuple[Any, tuple[TextRepair, ...]]:
    """``value`` with every string repaired by :func:`repair_text` (dict keys and the fields of
    msgspec structs included) and its unstorable numbers kept as text (module doc), and where
    it changed; ``value`` itself when nothing did. The common case (nothing to repair) costs
    one msgpack encode. ``place`` prefixes each :attr:`TextRepair.place`. Raises
    :class:`UnencodableValueError` naming the place for a value no JSON can hold."""
    if _stores(value):
        return value, ()
    out: list[TextRepair] = []
    fixed = _walk(value, place, 0, False, out)
    try:
        _msgpack.encode(fixed)
        _json.encode(fixed)
    except (TypeError, ValueError, OverflowError, RecursionError) as exc:
        raise UnencodableValueError(f"{place or 'the value'} cannot be encoded: {exc}") from exc
    return fixed, tuple(out)


def describe_repairs(repairs: tuple[TextRepair, ...], limit: int = 3) -> str:
    """One line naming the places repaired (at most ``limit``, then how many more)."""
    parts = []
    for r in repairs[:limit]:
        where = r.place or "the text"
        if r.converted:
            parts.append(f"{where}: a number no store or request holds, kept as text")
        else:
            parts.append(f"{where} at {r.position} ({r.replaced} replaced, {r.joined} joined)")
    if len(repairs) > limit:
        parts.append(f"{len(repairs) - limit} more")
    return "; ".join(parts)
