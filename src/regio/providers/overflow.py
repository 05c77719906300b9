"""Recognising a provider's context-length refusal.

:func:`classify_overflow` looks at an error the provider returned and says whether it is a
refusal *for length* (the prompt did not fit the model's context window), parsing the reported
prompt size and the maximum when the message carries them. Anything else -- a 429 rate limit,
a 500, a 400 for an invalid tool schema -- is not an overflow and gives ``None``, so the caller
re-raises it untouched.

Recognised forms (status 400 or 413, or no status at all for plain strings):

* Anthropic Messages API: ``invalid_request_error`` with ``prompt is too long: 210345 tokens >
  200000 maximum``, or ``input length and `max_tokens` exceed context limit: 197000 + 8192 >
  200000``; HTTP 413 ``request_too_large`` (the request exceeded the byte limit);
* OpenAI Chat Completions / Responses: error code ``context_length_exceeded``; messages
  ``This model's maximum context length is 128000 tokens. However, your messages resulted in
  130000 tokens`` / ``... you requested 130000 tokens``; ``Your input exceeds the context window
  of this model``;
* llama.cpp server: ``exceed_context_size_error`` with ``n_prompt_tokens`` / ``n_ctx``, or
  ``the request exceeds the available context size``.

Accepted inputs: SDK exceptions (``anthropic.BadRequestError``, ``openai.BadRequestError``:
``status_code`` and ``body``), objects with ``response.status_code``, dicts (``{"status": 400,
"error": {...}}`` or the bare error body) and strings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

__all__ = ["OverflowInfo", "classify_overflow"]

Provider = Literal["anthropic", "openai", "llamacpp", "unknown"]

_OVERFLOW_STATUSES = frozenset({400, 413})

_ANTHROPIC_TOO_LONG = re.compile(
    r"prompt is too long:\s*([\d,]+)\s*tokens?\s*>\s*([\d,]+)\s*(?:tokens?\s*)?maximum", re.I
)
_ANTHROPIC_EXCEED = re.compile(
    r"input length and `?max_tokens`? exceed context limit:\s*([\d,]+)\s*\+\s*([\d,]+)\s*>\s*"
    r"([\d,]+)",
    re.I,
)
_OPENAI_MAX = re.compile(r"maximum context length is\s*([\d,]+)\s*tokens?", re.I)
_OPENAI_REQUESTED = re.compile(
    r"(?:resulted in|you requested|requested)\s*([\d,]+)\s*tokens?", re.I
)
_LOOSE_PHRASES = (
    re.compile(r"exceeds? the context window", re.I),
    re.compile(r"exceeds? the available context size", re.I),
    re.compile(r"context[_ ]length[_ ]exceeded", re.I),
    re.compile(r"prompt is too long", re.I),
    re.compile(r"maximum context length is", re.I),
)
_OVERFLOW_CODES = frozenset(
    {
        "context_length_exceeded",
        "request_too_large",
        "exceed_context_size_error",
        "string_above_max_length_context",
    }
)


class OverflowInfo(msgspec.Struct, frozen=True):
    """A recognised context-length refusal.

    ``provider`` is the API family the message came from (``anthropic`` | ``openai`` |
    ``llamacpp`` | ``unknown``); ``status`` the HTTP status (``None`` when unknown); ``code`` the
    provider's error code or type; ``reported`` the prompt size the provider measured and
    ``maximum`` its limit (tokens; ``None`` when the message does not say); ``message`` the
    provider's text.
    """

    provider: Provider
    status: int | None
    code: str | None
    reported: int | None
    maximum: int | None
    message: str

    @property
    def excess(self) -> int | None:
        """``reported - maximum`` in tokens when both are known."""
        if self.reported is None or self.maximum is None:
            return None
        return self.reported - self.maximum


def _int(text: str) -> int:
    return int(text.replace(",", ""))


def _status_of(error: object) -> int | None:
    for attr in ("status_code", "status", "http_status"):
        value = getattr(error, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(error, Mapping):
        for key in ("status_code", "status", "http_status"):
            value = error.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def _error_body(error: object) -> Mapping[str, Any] | None:
    if isinstance(error, Mapping):
        return error
    body = getattr(error, "body", None)
    if isinstance(body, Mapping):
        return body
    return None


def _collect(body: Mapping[str, Any] | None, error: object) -> tuple[list[str], list[str], dict]:
    """Messages, codes/types and the innermost error dict found in ``body`` / ``error``."""
    messages: list[str] = []
    codes: list[str] = []
    inner: dict[str, Any] = {}
    node: Any = body
    depth = 0
    while isinstance(node, Mapping) and depth < 4:
        inner = dict(node)
        for key in ("message", "detail"):
            value = node.get(key)
            if isinstance(value, str):
                messages.append(value)
        for key in ("code", "type"):
            value = node.get(key)
            if isinstance(value, str):
                codes.append(value)
        node = node.get("error")
        if isinstance(node, str):
            messages.append(node)
        depth += 1
    if not isinstance(error, Mapping) and not isinstance(error, str):
        code = getattr(error, "code", None)
        if isinstance(code, str):
            codes.append(code)
        message = getattr(error, "message", None)
        if isinstance(message, str):
            messages.append(message)
        if isinstance(error, BaseException):
            messages.append(str(error))
    if isinstance(error, str):
        messages.append(error)
    return messages, codes, inner


def classify_overflow(error: object) -> OverflowInfo | None:
    """An :class:`OverflowInfo` when ``error`` is a context-length refusal, else ``None``.

    A known status other than 400 / 413 (429, 500, ...) is never an overflow, whatever its text
    says; a 400 is one only when its code or message is one of the forms in the module
    docstring (an invalid-schema 400 is not). Never raises.
    """
    status = _status_of(error)
    if status is not None and status not in _OVERFLOW_STATUSES:
        return None
    body = _error_body(error)
    messages, codes, inner = _collect(body, error)
    text = "\n".join(dict.fromkeys(messages))
    code = next((c for c in codes if c in _OVERFLOW_CODES), None)

    match = _ANTHROPIC_TOO_LONG.search(text)
    if match:
        return OverflowInfo(
            "anthropic",
            status,
            code or "invalid_request_error",
            _int(match.group(1)),
            _int(match.group(2)),
            text,
        )
    match = _ANTHROPIC_EXCEED.search(text)
    if match:
        return OverflowInfo(
            "anthropic",
            status,
            code or "invalid_request_error",
            _int(match.group(1)) + _int(match.group(2)),
            _int(match.group(3)),
            text,
        )
    maximum_match = _OPENAI_MAX.search(text)
    if code == "context_length_exceeded" or maximum_match:
        requested = _OPENAI_REQUESTED.search(text)
        return OverflowInfo(
            "openai",
            status,
            code or "context_length_exceeded",
            _int(requested.group(1)) if requested else None,
            _int(maximum_match.group(1)) if maximum_match else None,
            text,
        )
    if code == "exceed_context_size_error" or "n_ctx" in inner:
        reported = inner.get("n_prompt_tokens")
        maximum = inner.get("n_ctx")
        return OverflowInfo(
            "llamacpp",
            status,
            code or "exceed_context_size_error",
            reported if isinstance(reported, int) else None,
            maximum if isinstance(maximum, int) else None,
            text,
        )
    if code == "request_too_large" or (status == 413 and not codes):
        return OverflowInfo("anthropic", status, "request_too_large", None, None, text)
    if code is not None:
        return OverflowInfo("unknown", status, code, None, None, text)
    if any(p.search(text) for p in _LOOSE_PHRASES):
        return OverflowInfo("unknown", status, None, None, None, text)
    return None
