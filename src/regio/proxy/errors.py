"""Errors of the proxy (:mod:`regio.proxy`)."""

from __future__ import annotations

from regio.errors import RegioError

__all__ = ["ClientRequestError", "PassThrough", "ProxyConfigError", "ProxyError"]


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
    request that continues a stored response): it goes upstream exactly as the client sent it,
    and ``reason`` says why (counted in ``regio_passthrough_total``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
