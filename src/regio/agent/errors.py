"""Error types of the agent layer (:mod:`regio.agent`).

All derive from :class:`regio.errors.RegioError`. Provider refusals raised by the official SDKs
(``openai.BadRequestError``, ``anthropic.BadRequestError``) pass through unchanged so that
:func:`regio.providers.overflow.classify_overflow` can read their ``status_code`` and ``body``;
:class:`ProviderHTTPError` has the same two attributes for providers without an SDK (scripted
tests, replays).
"""

from __future__ import annotations

from typing import Any

from regio.errors import ProviderNotInstalledError, ProviderResponseError, RegioError

__all__ = [
    "AgentConfigError",
    "ProviderHTTPError",
    "ProviderNotInstalledError",
    "ProviderResponseError",
    "ReplayExhaustedError",
    "ScriptExhaustedError",
]


class AgentConfigError(RegioError, ValueError):
    """The loop or a provider was configured with an invalid option (the message names it)."""


class ProviderHTTPError(RegioError):
    """An HTTP error from a provider that has no SDK exception of its own.

    ``status_code`` is the HTTP status and ``body`` the provider's JSON error body, the same
    attributes the SDK exceptions carry, so the engine's overflow classification treats both
    alike (e.g. ``ProviderHTTPError(400, {"error": {"code": "context_length_exceeded",
    "message": "..."}})``).
    """

    def __init__(self, status_code: int, body: dict[str, Any] | None = None) -> None:
        body = body or {}
        error = body.get("error")
        message = error.get("message", "") if isinstance(error, dict) else str(error or "")
        super().__init__(f"HTTP {status_code}: {message}" if message else f"HTTP {status_code}")
        self.status_code = status_code
        self.body = body
        self.message = message


class ScriptExhaustedError(RegioError):
    """A :class:`regio.agent.ScriptedProvider` was called more often than it has responses."""


class ReplayExhaustedError(RegioError):
    """A :class:`regio.agent.ReplayProvider` has no recorded assistant message left."""
