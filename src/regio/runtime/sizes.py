"""Sizes and counts given to the engine, checked where they come in.

A measured size (``tokens=`` on ``Engine.add_message`` and the calls built on it) is stored in
the entry and summed into every budget, trigger and ceiling, so one bad value would poison
every later request: ``tokens=-5`` made the window's total negative and every later
``request()`` raise. :func:`measured_tokens` refuses anything but a whole number of tokens in
``[0, MAX_TOKENS]`` with a :class:`regio.runtime.errors.SizeError` (a ``RegioError`` and a
``ValueError``) naming the argument, before anything changes.
"""

from __future__ import annotations

import operator
from typing import Any

from .errors import SizeError

__all__ = ["MAX_TOKENS", "SizeError", "count_argument", "measured_tokens"]

#: The largest size accepted (tokens): 2**53 - 1, the largest integer every JSON reader holds
#: exactly; windows are six orders of magnitude smaller.
MAX_TOKENS = 2**53 - 1


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
        raise SizeError(f"{where}: {name} must be at least {minimum}, got {number}")
    if number > MAX_TOKENS:
        raise SizeError(f"{where}: {name} must be at most {MAX_TOKENS:,}, got {number:,}")
    return number


def measured_tokens(tokens: Any, where: str) -> int | None:
    """A caller's measured size: ``None`` (count it) or a count of tokens
    (:func:`count_argument`)."""
    return None if tokens is None else count_argument(tokens, "tokens", where)
