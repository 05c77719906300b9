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
:func:`regio.proxy.upstream.client_headers`). Its model is the blueprint's ``summarizer.model``,
else the client's; its output limit the blueprint's ``summarizer.max_summary_tokens``; its
prompt regio's summary prompt (:func:`regio.summarizers._llm.summary_prompt`, through
:class:`regio.summarizers.LLMSummarizer`): Anthropic and Responses carry the system text
top-level (``system`` / ``instructions``) and one user message, Chat Completions a system and a
user message. The headers live in the bound summarizer only, in memory, for that request: they
are never stored (the engine saves its summarizer's limits only) and never logged.

**A failed summary call never fails the client's request.** A status other than 200, a
timeout (:attr:`SummaryClient.timeout`), a transport error, a reply without text, or a reply the
engine refused (the same entries come back for another try: refused, too long, ...) is written
by the offline summarizer instead (a warning names the session and the reason: no header, no
body; counted ``fallback``). A context-length refusal (400/413 that
:func:`regio.providers.overflow.classify_overflow` recognises) is raised to the engine, which
summarizes in smaller chunks and retries (:mod:`regio.summarizers._hierarchy`); after
:data:`OVERFLOW_RETRIES` of them in one request the offline summarizer writes the rest.

What the calls cost goes in :class:`SummaryTally` (per request: calls, fallbacks, input and
output tokens from the upstream's ``usage``), then to the request's stat, its
``--request-log`` line and ``/metrics`` (:mod:`regio.proxy.metrics`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import httpx

from regio.providers.overflow import classify_overflow
from regio.summarizers import LLMSummarizer
from regio.summarizers._validity import summary_defect

from .upstream import client_headers

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
    "summary_reply",
]

log = logging.getLogger("regio.proxy")

#: Context-length refusals of summary calls raised to the engine per request (it halves its
#: chunks on each, as :data:`regio.summarizers._hierarchy._MAX_OVERFLOW_RETRIES` allows);
#: later ones are written offline.
OVERFLOW_RETRIES = 3


@attrs.define
class SummaryTally:
    """What one request's summary calls did: ``calls`` requests sent upstream, ``written``
    summaries the model wrote, ``fallbacks`` summaries the offline summarizer wrote instead
    (module doc), ``overflows`` context-length refusals raised to the engine,
    ``input_tokens`` / ``output_tokens`` the upstream's reported usage of them (all of them,
    failed ones included)."""

    calls: int = 0
    written: int = 0
    fallbacks: int = 0
    overflows: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

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


def _number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def summary_reply(api: str, data: object) -> tuple[str, int, int]:
    """``(text, input tokens, output tokens)`` of a summary reply of ``api`` (usage missing:
    0). Anthropic input counts cache reads and writes too. Raises ``ValueError`` when ``data``
    is no reply of that API."""
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    found = data.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    if api == "anthropic":
        content = data.get("content")
        if not isinstance(content, list):
            raise ValueError("no content")
        blocks = [b for b in content if isinstance(b, dict) and b.get("type") == "text"]
        text = "".join(str(b.get("text", "")) for b in blocks)
        keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        used = sum(_number(usage.get(k)) for k in keys)
        return text, used, _number(usage.get("output_tokens"))
    if api == "openai_responses":
        output = data.get("output")
        if not isinstance(output, list):
            raise ValueError("no output")
        text = "".join(
            str(part.get("text", ""))
            for item in output
            if isinstance(item, dict) and item.get("type") == "message"
            for part in item.get("content") or []
            if isinstance(part, dict) and part.get("type") == "output_text"
        )
        return text, _number(usage.get("input_tokens")), _number(usage.get("output_tokens"))
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ValueError("no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    text = content if isinstance(content, str) else ""
    return text, _number(usage.get("prompt_tokens")), _number(usage.get("completion_tokens"))


def _entries_key(entries: Sequence[Entry]) -> tuple[tuple[str, int], ...]:
    return tuple((e.id, e.tokens) for e in entries)


@attrs.define(eq=False)
class UpstreamSummarizer:
    """The summarizer one request binds to its session's engine (module doc): ``client`` the
    worker's :class:`SummaryClient`, ``api`` / ``path`` / ``headers`` those of the client's
    request, ``model`` the summary model, ``offline`` the engine's own summarizer (its limits
    are this one's; it writes the fallbacks), ``session`` the session id (for the log)."""

    client: SummaryClient
    api: str
    path: str
    headers: list[tuple[str, str]] = attrs.field(repr=False)
    model: str
    offline: Any
    session: str
    limit_key: str = "max_tokens"
    tally: SummaryTally = attrs.field(factory=SummaryTally)
    #: Whether the last summary was the offline one (the engine then treats it as the
    #: extractor's: :attr:`extracts_items`).
    _offline_last: bool = False
    _by_model: set[tuple[tuple[str, int], ...]] = attrs.field(factory=set)
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
        try:
            if key in self._by_model:  # the engine refused the model's summary of these
                raise _Failed("the engine refused the model's summary")
            text = self._llm(entries, standing_instructions, extra_instructions)
        except _Failed as exc:
            log.warning(
                "session %s: the upstream's summary failed (%s); the offline summarizer wrote it",
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
        body = summary_body(self.api, self.model, self.max_summary_tokens, messages, self.limit_key)
        self.tally.calls += 1
        try:
            status, data = self.client.post(self.path, self.headers, body)
        except httpx.TimeoutException:
            raise _Failed(f"timed out after {self.client.timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise _Failed(f"upstream unreachable: {type(exc).__name__}") from None
        if status != 200:
            error = _decoded(data)
            length = status in (400, 413) and classify_overflow({"status": status, **error})
            if length and self.tally.overflows < OVERFLOW_RETRIES:
                self.tally.overflows += 1
                raise SummaryOverflow(status, error)
            raise _Failed(f"status {status}")
        try:
            text, used_in, used_out = summary_reply(self.api, json.loads(data))
        except ValueError:
            raise _Failed("unreadable reply") from None
        self.tally.input_tokens += used_in
        self.tally.output_tokens += used_out
        defect = summary_defect(text)
        if defect is not None:
            raise _Failed(f"the reply is no summary ({defect})")
        return text


def _decoded(data: bytes) -> dict[str, Any]:
    try:
        error = json.loads(data)
    except ValueError:
        return {"error": {"message": data.decode(errors="replace")[:500]}}
    return error if isinstance(error, dict) else {"error": {"message": str(error)}}


@attrs.define
class SummaryClient:
    """One worker's summary requests to its upstream ``base_url``: one sync ``httpx.Client``
    (made on first use, shared by the worker's threads: its connections are reused), each
    request bounded by ``timeout`` seconds (connect, write, each read, pool);
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
                )
            return self._client

    def post(
        self, path: str, headers: list[tuple[str, str]], body: dict[str, Any]
    ) -> tuple[int, bytes]:
        """``(status, body)`` of ``body`` posted to the upstream's ``path`` (path and query).
        Raises ``httpx.HTTPError`` (``httpx.TimeoutException`` after :attr:`timeout`)."""
        url = self.base_url.rstrip("/") + path
        data = json.dumps(body).encode()
        response = self.client.post(url, headers=headers, content=data)
        return response.status_code, response.content

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
        it when the request ends, on every path)."""
        offline = engine.summarizer
        key = "max_completion_tokens" if "max_completion_tokens" in params else "max_tokens"
        bound = UpstreamSummarizer(
            self, api, path, client_headers(headers), model, offline, session, key
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
