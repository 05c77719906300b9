"""The one upstream the proxy talks to, through httpx.

``--upstream`` is a base URL without the API path (``https://api.anthropic.com``,
``http://127.0.0.1:8080``); a request goes to that URL plus the path and query the client used
(``/v1/messages?beta=true``). The client's headers are passed on as received, its key
(``x-api-key``, ``Authorization``) included, except the hop-by-hop headers (RFC 9110 section
7.6.1), ``Host`` and ``Content-Length`` (set for the new body), ``Accept-Encoding`` (the proxy
asks for an unencoded body, which it reads event by event) and the proxy's own
``x-regio-session``. The upstream's response headers come back the same way, each as received:
a repeated one stays repeated (one ``Set-Cookie`` per cookie; joined with commas, as a
mapping of headers would, a cookie's ``Expires`` date splits it). Headers are held
in memory for the request only: never stored, never logged (the proxy logs no header at all).

httpx (https://www.python-httpx.org) streams a response body as it arrives
(``AsyncClient.send(..., stream=True)`` and ``aiter_raw``), keeps connections to the upstream
alive between requests, and has a timeout per phase: connecting is bounded, reading is not
(a model may think for minutes before its first token). An idle connection is dropped after 4
seconds, before the common 5-second server keep-alive lapses; a request whose connection the
upstream closed before it answered (the race of reusing a connection as the server closes it)
is sent once more, on a new connection. The worker's clients keep no cookie
(:func:`cookieless`): they serve every client of the proxy.
"""

from __future__ import annotations

from collections.abc import Iterable
from http.cookiejar import CookieJar, DefaultCookiePolicy

import anyio
import attrs
import httpx

__all__ = [
    "Upstream",
    "client_headers",
    "cookieless",
    "drained",
    "release",
    "response_headers",
    "unlinked",
]

_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    }
)
_NOT_SENT = _HOP | {"host", "content-length", "accept-encoding", "x-regio-session"}
_NOT_RETURNED = _HOP | {"content-length", "content-encoding", "date", "server"}
#: A kept-alive connection the upstream closed as it was reused: sent once more on a new one.
_STALE = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)


def client_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The client's headers to send upstream (module doc)."""
    out = [(k, v) for k, v in headers if k.lower() not in _NOT_SENT]
    out.append(("accept-encoding", "identity"))
    return out


def cookieless() -> CookieJar:
    """The cookie jar of a worker's upstream client: it keeps no cookie. httpx keeps what a
    response's ``Set-Cookie`` sets and sends it with the client's later requests, and one
    client of the proxy's serves every client, so a cookie set in one client's answer (a load
    balancer's, an edge's) would go upstream with another client's requests, under its key.
    A client's own ``Cookie`` header is passed on as received (:func:`client_headers`)."""
    return CookieJar(DefaultCookiePolicy(allowed_domains=[]))


def response_headers(headers: httpx.Headers) -> list[tuple[bytes, bytes]]:
    """The upstream's response headers to return to the client (module doc): raw ``(name,
    value)`` pairs in the order received, names lower-cased, a repeated header repeated (never
    joined: ``httpx.Headers.items`` joins them with commas)."""
    return [
        (k.lower(), v) for k, v in headers.raw if k.lower().decode("latin-1") not in _NOT_RETURNED
    ]


@attrs.define
class Upstream:
    """The upstream at ``base_url`` (module doc); ``connect_timeout`` in seconds;
    ``transport``: an httpx transport to use instead of the network (an in-process upstream,
    ``httpx.ASGITransport``, in tests)."""

    base_url: str
    connect_timeout: float = 30.0
    transport: httpx.AsyncBaseTransport | None = None
    _client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:
            timeout = httpx.Timeout(None, connect=self.connect_timeout)
            limits = httpx.Limits(
                max_connections=None, max_keepalive_connections=64, keepalive_expiry=4.0
            )
            self._client = httpx.AsyncClient(
                timeout=timeout,
                limits=limits,
                trust_env=False,
                transport=self.transport,
                cookies=cookieless(),
            )
        return self._client

    def url(self, path: str, query: str = "") -> str:
        """The upstream URL of the client's ``path`` and ``query``."""
        return self.base_url.rstrip("/") + path + (f"?{query}" if query else "")

    async def open(
        self, method: str, path: str, query: str, headers: list[tuple[str, str]], body: bytes
    ) -> httpx.Response:
        """Send the request; returns the response with its body not read yet (iterate
        ``aiter_raw`` or read it with :func:`drained`; give it back with :func:`release`)."""
        for attempt in (1, 2):
            request = self.client.build_request(
                method, self.url(path, query), headers=headers, content=body
            )
            try:
                return await self.client.send(request, stream=True)
            except _STALE:
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self) -> None:
        """Close the connections."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    @staticmethod
    def status_text(error: BaseException) -> str:
        """A one-line description of a transport error (no header, no body)."""
        return f"{type(error).__name__}: {error}"


def unlinked(response: httpx.Response) -> None:
    """Drop the body stream of ``response``, closed or read. The stream httpx sets on a sent
    request's response refers back to that response (``BoundAsyncStream``,
    ``BoundSyncStream``): a reference cycle that keeps the request, its body and the connection
    pool's state of the request alive until the collector finds it. A worker that left them to
    the collector freed ~45,000 objects at once every ~35 s in the proxy benchmark, in pauses
    that grew from 64 to 268 ms as the windows grew (docs/proxy.md); cut here, reference
    counting frees them as each request ends."""
    response.stream = httpx.ByteStream(b"")


async def release(response: httpx.Response) -> None:
    """Close ``response`` (``aclose``: its connection goes back to the pool) and
    :func:`unlinked` it; shielded: a request cancelled mid-way (its client gone) still gives
    the connection back."""
    with anyio.CancelScope(shield=True):
        await response.aclose()
    unlinked(response)


async def drained(response: httpx.Response) -> bytes:
    """The whole body of ``response``; it is :func:`release`-d after, read or not."""
    try:
        return await response.aread()
    finally:
        await release(response)
