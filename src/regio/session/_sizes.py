"""Sizes and counts given to the engine, checked where they come in.

A measured size (``tokens=`` on ``Engine.add_message`` and the calls built on it) is stored in
the entry and summed into every budget, trigger and ceiling, so one bad value would poison
every later request: ``tokens=-5`` made the window's total negative and every later
``request()`` raise. :func:`measured_tokens` refuses anything but a whole number of tokens in
``[0, MAX_TOKENS]`` with a :class:`regio.errors.SizeError` (a ``RegioError`` and a
``ValueError``) naming the argument, before anything changes.

An entry the engine counts on admission is counted only up to the most its region could ever
admit (:func:`entry_cap`: the region's budget, its per-entry limit and the window's size), with
:func:`regio.tokens.count_entry_up_to`: a 100 MiB tool result over a 92,000-token
conversation is refused after a few chunks of counting, not after the whole text (74 s).
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING, Any

from regio.content import Entry
from regio.errors import SizeError
from regio.regions import Region, Window
from regio.tokens import count_entry_up_to
from regio.tokens.protocol import MAX_TOKENS

if TYPE_CHECKING:
    from regio.tokens import TokenCounter

__all__ = [
    "MAX_TOKENS",
    "SizeError",
    "admission_tokens",
    "count_argument",
    "count_up_to",
    "entry_cap",
    "measured_tokens",
]


def count_argument(value: Any, name: str, where: str, *, minimum: int = 0) -> int:
    """``value`` as an ``int`` of at least ``minimum`` and at most :data:`MAX_TOKENS` (any
    integer type, ``numpy.int64`` included; not a bool, a float or text). Raises
    :class:`SizeError` naming ``name`` and ``where``."""
    if isinstance(value, bool):
        raise SizeError(f"{where}: {name} must be a whole number, got {value!r}")
    try:
        number = operator.index(value)
    except TypeError:
        raise SizeError(
            f"{where}: {name} must be a whole number, got {type(value).__name__} {value!r:.60}"
        ) from None
    if number < minimum:
        raise SizeError(f"{where}: {name} must be >= {minimum}, got {number}")
    if number > MAX_TOKENS:
        raise SizeError(f"{where}: {name} must be at most {MAX_TOKENS:,}, got {number:,}")
    return number


def measured_tokens(tokens: object, where: str) -> int | None:
    """A caller's measured size: ``None`` (count it) or a count of tokens
    (:func:`count_argument`)."""
    return None if tokens is None else count_argument(tokens, "tokens", where)


def entry_cap(window: Window, region: Region) -> int | None:
    """The most tokens an entry written to ``region`` can have and still be admitted: the
    smallest of the region's budget (a larger entry is refused as ``too_large``), its
    ``max_entry_tokens`` and the window's ``max_tokens``. ``None`` for a region whose
    ``on_write`` hook may change the entry before it is planned (a ``custom`` region)."""
    if type(region).plan_write is not Region.plan_write:
        return None
    caps = [region.budget, window.max_tokens]
    if region.max_entry_tokens is not None:
        caps.append(region.max_entry_tokens)
    return min(caps)


def admission_tokens(window: Window, region: Region, entry: Entry) -> int:
    """The tokens of ``entry`` for admission into ``region``: exact when the region could
    admit it, else some number over :func:`entry_cap` (counting stopped there, an estimate
    the refusal reports)."""
    counter = window.counter
    assert counter is not None  # the engine refuses a window without one
    cap = entry_cap(window, region)
    return (
        int(counter.count_entry(entry)) if cap is None else count_entry_up_to(counter, entry, cap)
    )


def count_up_to(counter: TokenCounter, text: str, limit: int | None) -> int:
    """Tokens of ``text`` by ``counter``, counted only up to ``limit`` when it is given and
    the counter can stop early (:meth:`regio.tokens.CachedCounter.count_up_to`)."""
    capped = getattr(counter, "count_up_to", None)
    if limit is None or not callable(capped):
        return int(counter.count(text))
    return int(capped(text, limit))
