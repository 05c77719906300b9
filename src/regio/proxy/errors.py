"""Errors of the proxy (:mod:`regio.proxy`)."""

from __future__ import annotations

from regio.errors import RegioError

__all__ = [
    "PASSTHROUGH_REASONS",
    "ClientRequestError",
    "PassThrough",
    "ProxyConfigError",
    "ProxyError",
]

#: Why a request went upstream unmanaged (the ``reason`` label of ``regio_passthrough_total``):
#: a history item regio has no block for; a system part that is not text; a Responses request
#: whose history is stored upstream (``previous_response_id`` / ``conversation``); a path that
#: is none of the three APIs the proxy manages; an Anthropic turn the API paused
#: (``stop_reason: pause_turn``) sent back to continue, its server tool call not yet answered
#: (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/web-search-tool): the API
#: refuses a user turn after it, and the window would add one.
PASSTHROUGH_REASONS = (
    "unreadable_item",
    "non_text_system",
    "stored_history",
    "unsupported_api",
    "paused_turn",
)


class ProxyError(RegioError):
    """Base of the proxy's errors."""


class ProxyConfigError(ProxyError, ValueError):
    """A ``regio proxy`` option or its blueprint is unusable (the message names the option and
    the fix)."""


class ClientRequestError(ProxyError, ValueError):
    """A client's request body is not a request of the API it was sent to (not JSON, a field of
    the wrong type); answered with HTTP 400 in that API's error shape, naming the place."""


class PassThrough(ProxyError):
    """A request the proxy does not manage (a history item regio has no block for, a Responses
    request that continues a stored response): it goes upstream exactly as the client sent it.
    ``reason`` says why, one of :data:`PASSTHROUGH_REASONS` (the label it is counted under in
    ``regio_passthrough_total``); ``place`` where and what (``"messages[1]: ..."``, written
    to the ``--request-log`` line). Raises ``ValueError`` for another ``reason``."""

    def __init__(self, reason: str, place: str) -> None:
        if reason not in PASSTHROUGH_REASONS:
            raise ValueError(f"passthrough reason {reason!r} is none of {PASSTHROUGH_REASONS}")
        super().__init__(f"{reason}: {place}")
        self.reason = reason
        self.place = place
