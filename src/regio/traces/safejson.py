"""Bounded JSON for untrusted trace files: size, depth, integer and string limits.

A trace file from the internet can hold JSON nested thousands deep (``RecursionError`` in any
recursive parser), integers of thousands of digits (CPython refuses to convert more than 4,300,
and big ones are slow), lone UTF-16 surrogate escapes such as ``"\\ud800"`` (valid JSON, but no
UTF-8 encoding exists, so writing the trace fails), and files of any size. Every importer
parses through :func:`parse_json`, which enforces :class:`TraceLimits`:

==========================  =========  =========================================================
limit                       default    when exceeded
==========================  =========  =========================================================
``max_depth``               64         refused: :class:`TraceFormatError` naming file:line
``max_int_digits``          128        refused the same way
``max_document_bytes``      64 MiB     a whole-document JSON file (or a non-streamed JSONL
                                       format) larger than this is refused before it is read;
                                       a JSONL line longer than this is refused, naming it
``max_line_bytes``          32 MiB     the most read at once: a longer JSONL line is read in
                                       pieces of this size and joined (it loads)
``max_file_bytes``          1 GiB      any larger file is refused before it is read
==========================  =========  =========================================================

Lone surrogates are **replaced** by U+FFFD (the Unicode replacement character) when a source
file is imported, with a warning issue saying how many were replaced; the regio trace format
itself refuses them (its reader names the line), because a regio trace is always written as
valid UTF-8. Pass ``limits=TraceLimits(...)`` to :func:`regio.traces.import_file` or
:func:`regio.traces.read_trace` to change them.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from regio.textrepair import SURROGATE, repair_text
from regio.traces.errors import TraceFormatError

__all__ = [
    "DEFAULT_LIMITS",
    "TraceLimits",
    "check_depth",
    "clean_value",
    "parse_json",
    "replace_surrogates",
]

_SURROGATE = SURROGATE


class TraceLimits(msgspec.Struct, frozen=True):
    """Limits applied when reading untrusted trace files (defaults in the module doc).

    ``max_depth`` counts nested arrays / objects (a bare scalar is depth 0, ``[]`` depth 1);
    ``max_int_digits`` the digits of one JSON integer; the byte limits are in bytes.
    """

    max_depth: int = 64
    max_int_digits: int = 128
    max_document_bytes: int = 64 * 2**20
    max_line_bytes: int = 32 * 2**20
    max_file_bytes: int = 2**30


#: The limits used when none are passed.
DEFAULT_LIMITS = TraceLimits()


class _LimitExceeded(ValueError):
    pass


def _int_parser(limit: int) -> Any:
    def parse_int(text: str) -> int:
        digits = len(text) - (text[:1] == "-")
        if digits > limit:
            raise _LimitExceeded(f"an integer of {digits} digits (the limit is {limit})")
        return int(text)

    return parse_int


def replace_surrogates(text: str) -> tuple[str, int]:
    """``text`` repaired by :func:`regio.textrepair.repair_text` (each lone surrogate replaced
    by U+FFFD, a pair joined into its character), and how many surrogates were changed."""
    fixed, repair = repair_text(text)
    return fixed, (0 if repair is None else repair.replaced + 2 * repair.joined)


def check_depth(value: object, limit: int) -> int | None:
    """The first nesting depth above ``limit`` found in ``value``, else ``None`` (iterative,
    so it never recurses)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple, set)):
            depth += 1
            if depth > limit:
                return depth
            children = item.values() if isinstance(item, dict) else item
            if isinstance(item, tuple):
                children = list(item)
            stack.extend(
                (child, depth) for child in children if isinstance(child, (dict, list, tuple, set))
            )
    return None


def _clean(value: object) -> tuple[Any, int]:
    """Replace lone surrogates in every string and key of ``value`` (iteratively, in place for
    containers); returns the value and the count replaced."""
    if isinstance(value, str):
        return replace_surrogates(value)
    total = 0
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            for i, child in enumerate(item):
                if isinstance(child, str):
                    item[i], n = replace_surrogates(child)
                    total += n
                elif isinstance(child, (dict, list)):
                    stack.append(child)
        elif isinstance(item, dict):
            for key in list(item):
                child = item[key]
                if isinstance(key, str) and _SURROGATE.search(key):
                    fixed, n = replace_surrogates(key)
                    total += n
                    del item[key]
                    item[fixed] = child
                    key = fixed
                if isinstance(child, str):
                    item[key], n = replace_surrogates(child)
                    total += n
                elif isinstance(child, (dict, list)):
                    stack.append(child)
    return value, total


def parse_json(
    text: str | bytes, file: str, where: str = "", limits: TraceLimits = DEFAULT_LIMITS
) -> tuple[Any, int]:
    """Parse one JSON document under ``limits``; returns ``(value, surrogates_replaced)``.

    ``where`` (e.g. ``"line 12"``) is put in error messages after ``file``. Raises
    :class:`TraceFormatError` for invalid JSON, nesting deeper than ``max_depth`` and integers
    longer than ``max_int_digits`` — never ``RecursionError`` or ``ValueError``.
    """
    prefix = f"{where}: " if where else ""
    try:
        value = json.loads(text, parse_int=_int_parser(limits.max_int_digits))
    except _LimitExceeded as exc:
        raise TraceFormatError(file, f"{prefix}{exc}; refused") from None
    except RecursionError:
        raise TraceFormatError(
            file, f"{prefix}JSON nested deeper than {limits.max_depth} levels; refused"
        ) from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError of bytes input
        raise TraceFormatError(file, f"{prefix}not valid JSON: {exc}") from None
    return clean_value(value, file, where, limits)


def clean_value(
    value: object, file: str = "", where: str = "", limits: TraceLimits = DEFAULT_LIMITS
) -> tuple[Any, int]:
    """Check ``value`` (parsed JSON or a Python literal: dicts, lists, scalars) against
    ``max_depth`` and replace its lone surrogates; returns ``(value, replaced)``. Raises
    :class:`TraceFormatError` when it nests too deep."""
    depth = check_depth(value, limits.max_depth)
    if depth is not None:
        prefix = f"{where}: " if where else ""
        raise TraceFormatError(
            file, f"{prefix}JSON nested {depth}+ levels deep (the limit is {limits.max_depth})"
        )
    return _clean(value)
