"""Readers shared by the SDK-facing modules (:mod:`regio.sdk._objects`,
:mod:`regio.sdk._media`, :mod:`regio.adapters.chat`).

This module imports nothing of regio, so each of them can use it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["plain_dict"]


def plain_dict(obj: object, *, exclude_none: bool) -> dict[str, Any] | None:
    """``obj`` as a plain dict: a copy of a ``Mapping``, or the ``model_dump(mode="json")`` of a
    pydantic model (the provider SDKs' objects, https://docs.pydantic.dev/latest/concepts/serialization/);
    ``None`` for anything else, so the caller raises its own error naming the place."""
    if isinstance(obj, Mapping):
        return dict(obj)
    dump = getattr(obj, "model_dump", None)
    if callable(dump):
        out = dump(mode="json", exclude_none=exclude_none)
        if isinstance(out, dict):
            return out
    return None
