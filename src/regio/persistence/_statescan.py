"""Nesting depth of a state file, measured before it is decoded (:mod:`.persistence`).

A decoder recurses once per nesting level; a file of a million ``[`` would otherwise reach
Python's recursion limit inside the decoder. Both scans are linear in the file size, never
recurse, and stop as soon as the depth passes ``limit``. They only measure: a malformed file
gets a depth here and its error from the decoder.
"""

from __future__ import annotations

import re

__all__ = ["max_json_depth", "max_msgpack_depth"]

# a JSON string (closed or running to the end of the data), as an unrolled loop (no
# alternation per escape; about 12% less CPU than ``"(?:[^"\\]+|\\.)*"?`` on a 3.3 MB state
# file); always matches, so never backtracks
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_AS_PARENS = bytes.maketrans(b"[{]}", b"(())")


def max_json_depth(data: bytes, limit: int) -> int:
    """Deepest nesting of arrays and objects in JSON ``data`` (brackets inside strings do not
    count) when it is above ``limit`` (returned as soon as the limit is passed), else a value
    of at most ``limit``.

    The brackets left once strings are removed are peeled one level per pass (each pass
    removes every innermost ``()`` pair, in C), so the work is the bracket count times the
    depth, never a Python loop per byte; what an unbalanced file leaves unpeeled counts as
    that many more levels."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return min(limit, data.count(b"[") + data.count(b"{"))
    brackets = _JSON_STRING.sub(b"", data).translate(_AS_PARENS, _NOT_BRACKETS)
    depth = 0
    while brackets:
        peeled = brackets.replace(b"()", b"")
        if len(peeled) == len(brackets):
            break
        brackets = peeled
        depth += 1
        if depth > limit:
            return depth
    return depth + brackets.count(b"(")


# msgpack first byte -> bytes to skip after it (fixed-size scalars)
_FIXED = {0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}
_FIXED.update({0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8})
_FIXED.update({0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17})
# first byte -> (width of the length field, extra bytes after it) for str / bin / ext
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1)}
_SIZED.update({0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0)})
# first byte -> (width of the count field, items per counted element)
_CONTAINERS = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}


def _item(data: bytes, pos: int) -> tuple[int, int] | None:
    """``(next position, items the value contains)`` of the msgpack value at ``pos`` (items
    is -1 for a scalar, 0 for an empty array or map), or ``None`` when the data ends or the
    byte is invalid."""
    end = len(data)
    if pos >= end:
        return None
    first = data[pos]
    pos += 1
    if first <= 0x7F or first >= 0xE0:
        return pos, -1
    if first <= 0x8F:
        return pos, 2 * (first & 0x0F)
    if first <= 0x9F:
        return pos, first & 0x0F
    if first <= 0xBF:
        return pos + (first & 0x1F), -1
    if first in _FIXED:
        return pos + _FIXED[first], -1
    if first in _SIZED:
        width, extra = _SIZED[first]
        if pos + width > end:
            return None
        return pos + width + extra + int.from_bytes(data[pos : pos + width], "big"), -1
    if first in _CONTAINERS:
        width, per = _CONTAINERS[first]
        if pos + width > end:
            return None
        return pos + width, per * int.from_bytes(data[pos : pos + width], "big")
    return None  # 0xC1 is never used


def max_msgpack_depth(data: bytes, limit: int) -> int:
    """Deepest nesting of arrays and maps in the first msgpack value of ``data``; returns
    early with a value above ``limit`` once the limit is passed."""
    remaining: list[int] = []  # items still to read in each open container
    pos = 0
    deepest = 0
    while True:
        step = _item(data, pos)
        if step is None:
            return deepest
        pos, contains = step
        if remaining:
            remaining[-1] -= 1
        if contains >= 0:  # an array or a map, empty or not
            deepest = max(deepest, len(remaining) + 1)
            if deepest > limit:
                return deepest
            if contains:
                remaining.append(contains)
        while remaining and remaining[-1] == 0:
            remaining.pop()
        if not remaining:
            return deepest
