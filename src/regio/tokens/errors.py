"""Errors of the token counters."""

from __future__ import annotations

from regio.errors import RegioError

__all__ = ["TokenCountError"]


class TokenCountError(RegioError, ValueError):
    """Content cannot be counted: a value that is neither text nor JSON-able, or a tokenizer
    failure on a chunk (the message names the counter, the size and the setting to change)."""
