"""Reading fields of usage reports and responses, shared by the providers' parts: a field of an
SDK object or of its dict, and a token count checked as one."""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["count", "field", "has"]


def field(obj: object, key: str) -> object:
    """``obj[key]`` of a mapping, ``obj.key`` of an object, ``None`` when absent."""
    if obj is None:
        return None
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, key, None)


def has(obj: object, key: str) -> bool:
    """Whether ``obj`` has ``key`` with a value other than ``None``."""
    return field(obj, key) is not None


def count(value: object, place: str) -> int:
    """``value`` as a token count (``None``: 0). Raises
    :class:`regio.errors.UsageError` naming ``place`` for a value that is not a finite
    number in ``[0, MAX_TOKENS]`` (:data:`regio.tokens.protocol.MAX_TOKENS`)."""
    if value is None:
        return 0
    from regio.errors import UsageError
    from regio.tokens.protocol import MAX_TOKENS

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UsageError(f"usage field {place} must be a token count, got {value!r:.80}")
    if not math.isfinite(value) or value < 0 or value > MAX_TOKENS:
        raise UsageError(
            f"usage field {place} must be a finite count in [0, {MAX_TOKENS:,}], got {value!r}"
        )
    return int(value)
