"""``--summarizer upstream``: the upstream model writes a session's compaction summaries, with
the client's own key, during the client's request.

By default (``--summarizer offline``) every summary is written by the offline
:class:`regio.ExtractiveSummarizer` (:mod:`regio.proxy.engines`). In ``upstream`` mode, for
the duration of one request (:meth:`SummaryClient.bind`, undone when the request ends, on
every path), the session's engine summarizes with an :class:`UpstreamSummarizer`: each summary
is one non-streamed request to the proxy's one upstream (never another host), on the API and
path of the client's request (Anthropic ``POST /v1/messages``, Chat Completions ``POST
/v1/chat/completions``, Responses ``POST /v1/responses``), with the client's headers as received
(its ``x-api-key`` / ``Authorization``, ``anthropic-version``, ...:
:func:`summary_headers`; not its ``Accept``, ``Content-Type`` nor ``Idempotency-Key``, which
belong to its own request). Its model is the blueprint's ``summarizer.model``,
else the client's; its output limit the blueprint's ``summarizer.max_summary_tokens``; its
prompt regio's summary prompt (:func:`regio.summarizers._llm.summary_prompt`, through
:class:`regio.summarizers.LLMSummarizer`): Anthropic and Responses carry the system text
top-level (``system`` / ``instructions``) and one user message, Chat Completions a system and a
user message. The headers live in the bound summarizer only, in memory, for that request: they
are never stored (the engine saves its summarizer's limits only) and never logged.

**A failed summary call never fails the client's request.** A status other than 200, a
timeout, a transport error, a reply without text, or a reply the engine refused (the same
entries come back for another try: refused, too long, ...) is written by the offline summarizer
instead (counted ``fallback``). After a call that failed (all but the engine's refusal), the
rest of the request's summaries are written offline without asking the upstream again (a
model name the upstream does not know, a key without rights, an upstream down: the next
request asks again). **The summary calls of one request take at most**
:attr:`SummaryClient.timeout` **seconds together** (``--summary-timeout``; each phase of a
call is bounded by the time left, and a reply is read no further past it): past that, the
offline summarizer writes the rest. One warning per request and reason names the session and
the reason (the status and the error's ``type`` / ``code``; no header, no body). A
context-length refusal (400/413 that :func:`regio.providers.overflow.classify_overflow`
recognises) is raised to the engine, which
summarizes in smaller chunks and retries (:mod:`regio.summarizers._hierarchy`); after
:data:`OVERFLOW_RETRIES` of them in one request the offline summarizer writes the rest.

What the calls cost goes in :class:`SummaryTally` (per request: calls, fallbacks, input and
output tokens from the upstream's ``usage``, the model), then to the request's stat (with the
tokens priced at that model's prices, :func:`regio.proxy.accounting.summary_cost`), its
``--request-log`` line, ``/metrics`` (:mod:`regio.proxy.metrics`) and the session's cost on the
status page (:mod:`regio.proxy.status`).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import httpx

from regio.providers.overflow import classify_overflow
from regio.session._usage import PROMPT_FIELDS
from regio.summarizers import LLMSummarizer
from regio.summarizers._validity import summary_defect

from .replies import summary_reply, summary_usage
from .upstream import client_headers, cookieless, unlinked

if TYPE_CHECKING:
    from regio.content import Entry
    from regio.engine import Engine

__all__ = [
    "OVERFLOW_RETRIES",
    "SummaryClient",
    "SummaryOverflow",
    "SummaryTally",
    "UpstreamSummarizer",
    "summary_body",
    "summary_headers",
    "summary_reply",
    "summary_usage",
]

log = logging.getLogger("regio.proxy")

#: Context-length refusals of summary calls raised to the engine per request (it halves its
#: chunks on each, as :data:`regio.summarizers._hierarchy._MAX_OVERFLOW_RETRIES` allows);
#: later ones are written offline.
OVERFLOW_RETRIES = 3

#: The client's headers that describe its own request, not a summary request (replaced, or
#: dropped: an ``Idempotency-Key`` reused for another body is refused or answered with the
#: first body's reply).
_OWN = frozenset({"accept", "content-type", "content-encoding", "idempotency-key"})
#: An error's ``type`` / ``code`` as logged: a short identifier, never free text.
_KIND = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def summary_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
    """The headers of a summary request: the client's as sent upstream
    (:func:`regio.proxy.upstream.client_headers`, its key included) but for those of its own
    request's body and answer (``Accept``, ``Content-Type``, ``Content-Encoding``,
    ``Idempotency-Key``), with a JSON body asking for a JSON answer."""
    out = [(k, v) for k, v in client_headers(headers) if k.lower() not in _OWN]
    return [*out, ("content-type", "application/json"), ("accept", "application/json")]


@attrs.define
class SummaryTally:
    """What one request's summary calls did: ``calls`` requests sent upstream, ``written``
    summaries the model wrote that the engine took, ``fallbacks`` summaries the offline
    summarizer wrote instead (module doc; a model summary the engine refused counts here,
    once), ``overflows`` context-length refusals raised to the engine, ``usage`` the upstream's
    reported usage of them by token class (:func:`summary_usage`: uncached input, cache reads,
    cache writes by TTL, output, summed over the calls, failed and refused ones included),
    ``model`` the model they named (the request's stat prices ``usage`` at its prices:
    :func:`regio.proxy.accounting.summary_cost`). ``input_tokens`` / ``output_tokens`` (the
    log's and the stat's figures) are read from ``usage``: the whole prompt, cached part
    included, and the output, the very tokens the cost is priced on."""

    calls: int = 0
    written: int = 0
    fallbacks: int = 0
    overflows: int = 0
    model: str = ""
    usage: dict[str, int] = attrs.field(factory=dict)

    @property
    def input_tokens(self) -> int:
        """The summary calls' prompt tokens (all classes of :attr:`usage`)."""
        return sum(self.usage.get(k, 0) for k in PROMPT_FIELDS)

    @property
    def output_tokens(self) -> int:
        """The summary calls' output tokens."""
        return self.usage.get("output_tokens", 0)

    def add(self, usage: Mapping[str, int]) -> None:
        """Add one summary call's :func:`summary_usage` counts to :attr:`usage`."""
        for key, n in usage.items():
            self.usage[key] = self.usage.get(key, 0) + n

    def fields(self) -> dict[str, int]:
        """The request log's and the stat's figures."""
        return {
            "summary_calls": self.calls,
            "summary_fallbacks": self.fallbacks,
            "summary_input_tokens": self.input_tokens,
            "summary_output_tokens": self.output_tokens,
        }


class SummaryOverflow(Exception):
    """The upstream refused a summary request for length: ``status_code`` and ``body`` (the
    decoded error), as the provider SDKs' errors carry them, so
    :func:`regio.providers.overflow.classify_overflow` reads it."""

    def __init__(self, status_code: int, body: dict[str, Any]) -> None:
        super().__init__(f"summary request refused for length (status {status_code})")
        self.status_code = status_code
        self.body = body


class _Failed(Exception):
    """A summary call that gave no summary; ``reason`` is what is logged."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def summary_body(
    api: str, model: str, max_tokens: int, messages: list[dict[str, str]], limit_key: str
) -> dict[str, Any]:
    """The upstream body of one summary request of ``api`` (module doc). ``messages`` is
    regio's prompt (a system and a user message); ``limit_key`` the output limit's name in
    Chat Completions (``max_tokens``, or ``max_completion_tokens`` when the client uses it)."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    user = [{"role": "user", "content": m["content"]} for m in messages if m["role"] != "system"]
    if api == "anthropic":
        return {
            "model": model,
            "max_tokens": max_tokens,
            "system": system,
            "messages": user,
            "stream": False,
        }
    if api == "openai_responses":
        return {
            "model": model,
            "instructions": system,
            "input": user,
            "max_output_tokens": max_tokens,
            "store": False,
            "stream": False,
        }
    return {
        "model": model,
        "messages": [{"role": "system", "content": system}, *user],
        limit_key: max_tokens,
        "stream": False,
    }


def _entries_key(entries: Sequence[Entry]) -> tuple[tuple[str, int], ...]:
    return tuple((e.id, e.tokens) for e in entries)


@attrs.define(eq=False)
class UpstreamSummarizer:
    """The summarizer one request binds to its session's engine (module doc): ``client`` the
    worker's :class:`SummaryClient`, ``api`` / ``path`` / ``headers`` those of the client's
    request (``headers`` as :func:`summary_headers` makes them), ``model`` the summary model,
    ``offline`` the engine's own summarizer (its limits are this one's; it writes the
    fallbacks), ``session`` the session id (for the log); ``spent`` the seconds its calls
    took so far (once they reach the client's ``timeout``, ``--summary-timeout``, no call is
    made)."""

    client: SummaryClient
    api: str
    path: str
    headers: list[tuple[str, str]] = attrs.field(repr=False)
    model: str
    offline: Any
    session: str
    limit_key: str = "max_tokens"
    spent: float = 0.0
    tally: SummaryTally = attrs.field(
        default=attrs.Factory(lambda self: SummaryTally(model=self.model), takes_self=True)
    )
    #: Why a call of this request failed (the rest are written offline), else ``None``.
    _down: str | None = None
    _warned: set[str] = attrs.field(factory=set)
    #: Whether the last summary was the offline one (the engine then treats it as the
    #: extractor's: :attr:`extracts_items`).
    _offline_last: bool = False
    #: The entries the model summarized in this request, and those whose model summary the
    #: engine refused (it asked again for the same entries): the latter are written offline.
    _by_model: set[tuple[tuple[str, int], ...]] = attrs.field(factory=set)
    _refused: set[tuple[tuple[str, int], ...]] = attrs.field(factory=set)
    _llm: LLMSummarizer = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self._llm = LLMSummarizer(
            self._complete,
            context_window=self.context_window,
            max_summary_tokens=self.max_summary_tokens,
            reserve_tokens=self.reserve_tokens,
            model=self.model,
        )

    @property
    def context_window(self) -> int:
        return int(self.offline.context_window)

    @property
    def max_summary_tokens(self) -> int:
        return int(self.offline.max_summary_tokens)

    @property
    def reserve_tokens(self) -> int | None:
        return getattr(self.offline, "reserve_tokens", None)

    @property
    def extracts_items(self) -> bool:
        """True when the summary just written is the offline extractor's (the engine keeps
        its prose only, as for :class:`regio.ExtractiveSummarizer`)."""
        return self._offline_last and bool(getattr(self.offline, "extracts_items", False))

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str:
        key = _entries_key(entries)
        if key in self._by_model:  # the engine refused the model's summary of these: not
            self._by_model.discard(key)  # written by the model, the offline one stands in
            self._refused.add(key)
            self.tally.written -= 1
        try:
            if key in self._refused:
                raise _Failed("the engine refused the model's summary")
            if self._down is not None:
                raise _Failed(self._down)
            text = self._llm(entries, standing_instructions, extra_instructions)
        except _Failed as exc:
            if exc.reason not in self._warned:  # once per request and reason
                self._warned.add(exc.reason)
                log.warning(
                    "session %s: the upstream's summary failed (%s); the offline summarizer "
                    "writes the request's summaries that fail so",
                    self.session,
                    exc.reason,
                )
            self.tally.fallbacks += 1
            self._offline_last = True
            return str(self.offline(entries, standing_instructions, extra_instructions))
        assert isinstance(text, str)  # _complete is sync
        self.tally.written += 1
        self._by_model.add(key)
        self._offline_last = False
        return text

    def _complete(self, messages: list[dict[str, str]]) -> str:
        try:
            return self._ask(messages)
        except _Failed as exc:
            if not exc.reason.startswith("the reply is no summary"):
                self._down = exc.reason  # the next summaries of this request: offline
            raise

    def _ask(self, messages: list[dict[str, str]]) -> str:
        left = self.client.timeout - self.spent
        if left <= 0:
            raise _Failed(f"the request's {self.client.timeout:g} s of summary calls are spent")
        body = summary_body(self.api, self.model, self.max_summary_tokens, messages, self.limit_key)
        self.tally.calls += 1
        started = time.monotonic()
        try:
            status, data = self.client.post(self.path, self.headers, body, left)
        except httpx.TimeoutException:
            raise _Failed(f"timed out ({self.client.timeout:g} s per request)") from None
        except Exception as exc:  # httpx.HTTPError, or a header httpx cannot encode
            raise _Failed(f"upstream unreachable: {type(exc).__name__}") from None
        finally:
            self.spent += time.monotonic() - started
        if status != 200:
            error = _decoded(data)
            length = status in (400, 413) and classify_overflow({"status": status, **error})
            if length and self.tally.overflows < OVERFLOW_RETRIES:
                self.tally.overflows += 1
                raise SummaryOverflow(status, error)
            raise _Failed(f"status {status}{_kind(error)}")
        try:
            reply = json.loads(data)
            text = summary_reply(self.api, reply)[0]
        except (ValueError, RecursionError):
            raise _Failed("unreadable reply") from None
        self.tally.add(summary_usage(self.api, reply))
        defect = summary_defect(text)
        if defect is not None:
            raise _Failed(f"the reply is no summary ({defect})")
        return text


def _kind(error: dict[str, Any]) -> str:
    """`` (kind)`` of an error body: its ``code`` or ``type`` when a short identifier (a
    message is free text and may quote the request: never logged), else ``""``."""
    inner = error.get("error")
    for source in (inner if isinstance(inner, dict) else {}, error):
        for key in ("code", "type"):
            value = source.get(key)
            if isinstance(value, str) and value != "error" and _KIND.fullmatch(value):
                return f" ({value})"
    return ""


def _decoded(data: bytes) -> dict[str, Any]:
    try:
        error = json.loads(data)
    except ValueError:
        return {"error": {"message": data.decode(errors="replace")[:500]}}
    return error if isinstance(error, dict) else {"error": {"message": str(error)}}


@attrs.define
class SummaryClient:
    """One worker's summary requests to its upstream ``base_url``: one sync ``httpx.Client``
    (made on first use, shared by the worker's threads: its connections are reused, no cookie
    is kept: :func:`regio.proxy.upstream.cookieless`); the
    summary calls of one client request take at most ``timeout`` seconds together
    (``--summary-timeout``, :meth:`bind`);
    ``transport``: an httpx transport instead of the network (tests)."""

    base_url: str
    timeout: float = 120.0
    transport: httpx.BaseTransport | None = None
    _client: httpx.Client | None = None
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    @property
    def client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.timeout),
                    trust_env=False,
                    transport=self.transport,
                    limits=httpx.Limits(keepalive_expiry=4.0),
                    cookies=cookieless(),  # one client's cookies never go with another's
                )
            return self._client

    def post(
        self,
        path: str,
        headers: list[tuple[str, str]],
        body: dict[str, Any],
        timeout: float | None = None,
    ) -> tuple[int, bytes]:
        """``(status, body)`` of ``body`` posted to the upstream's ``path`` (path and query),
        within ``timeout`` seconds (at most :attr:`timeout`): connecting, writing and each read
        are bounded by it, and the reply is read no further past it. Raises
        ``httpx.HTTPError`` (``httpx.TimeoutException`` when the time is up)."""
        limit = self.timeout if timeout is None else min(timeout, self.timeout)
        deadline = time.monotonic() + limit
        url = self.base_url.rstrip("/") + path
        data = json.dumps(body).encode()
        chunks: list[bytes] = []
        with self.client.stream(
            "POST", url, headers=headers, content=data, timeout=httpx.Timeout(limit)
        ) as response:
            try:
                for chunk in response.iter_bytes():
                    chunks.append(chunk)
                    if time.monotonic() > deadline:
                        raise httpx.ReadTimeout(
                            "summary reply past its time", request=response.request
                        )
                return response.status_code, b"".join(chunks)
            finally:  # closed first: the stream unlinked would leave its connection taken
                response.close()
                unlinked(response)

    def bind(
        self,
        engine: Engine,
        *,
        api: str,
        path: str,
        headers: Iterable[tuple[str, str]],
        model: str,
        session: str,
        params: dict[str, Any],
    ) -> tuple[SummaryTally, Callable[[], None]]:
        """Bind an :class:`UpstreamSummarizer` for the client's request (``api``, ``path`` with
        its query, its ``headers`` as received, its body's ``params``) to ``engine``; returns
        the request's tally and the function that restores the engine's own summarizer (call
        it when the request ends, on every path). Its summary calls take at most
        :attr:`timeout` seconds together."""
        offline = engine.summarizer
        key = "max_completion_tokens" if "max_completion_tokens" in params else "max_tokens"
        bound = UpstreamSummarizer(
            self, api, path, summary_headers(headers), model, offline, session, key
        )
        engine.summarizer = bound

        def restore() -> None:
            if engine.summarizer is bound:
                engine.summarizer = offline

        return bound.tally, restore

    def close(self) -> None:
        """Close the connections."""
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
