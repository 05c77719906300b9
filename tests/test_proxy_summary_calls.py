"""One request's summary calls under ``regio proxy --summarizer upstream``
(:mod:`regio.proxy.summaries`), against an in-process upstream (``httpx.MockTransport``).

What the upstream bills is what is counted (Anthropic's input with its cache reads and writes);
a summary request carries the client's key but none of the headers of the client's own request
(its ``Accept``, ``Content-Length``, ``Idempotency-Key``, ``x-regio-session``); a reply of any
shape, a transport that raises anything, a model name the upstream refuses: each gives an
offline summary, never an exception into the client's request; after one failed call the
request's other summaries are written offline without asking again, with one warning naming
the status and the error's code (never its message); once the request's ``--summary-timeout``
is spent no call is made, and a reply is read no further past it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx

from regio import ExtractiveSummarizer
from regio.content import Entry, Text
from regio.proxy import summaries
from regio.proxy.summaries import SummaryClient, UpstreamSummarizer, summary_reply

KEY = "sk-ant-test-KEY-0042"
PATH = {
    "anthropic": "/v1/messages",
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
}
SUMMARY = "The agent read three files and keeps editing the parser; next it runs the tests."


def _entries(n: int = 3, tag: str = "a") -> list[Entry]:
    return [
        Entry(f"{tag}{i}", (Text(f"step {i}: read file {tag}{i}.py, 40 lines"),), "user", tokens=12)
        for i in range(n)
    ]


def _reply(api: str, text: str, usage: dict[str, int]) -> dict[str, Any]:
    if api == "anthropic":
        return {"type": "message", "content": [{"type": "text", "text": text}], "usage": usage}
    if api == "openai_responses":
        item = {"type": "message", "content": [{"type": "output_text", "text": text}]}
        return {"object": "response", "output": [item], "usage": usage}
    return {"choices": [{"message": {"role": "assistant", "content": text}}], "usage": usage}


def _bound(
    handler: Any, api: str = "anthropic", headers: list[tuple[str, str]] | None = None
) -> tuple[UpstreamSummarizer, SimpleNamespace]:
    """A summarizer bound as one request binds it, on a stand-in engine."""
    client = SummaryClient("https://upstream.test", 5.0, httpx.MockTransport(handler))
    engine = SimpleNamespace(summarizer=ExtractiveSummarizer())
    sent = headers or [("x-api-key", KEY), ("anthropic-version", "2023-06-01")]
    client.bind(
        engine,  # type: ignore[arg-type]  # a stand-in with a summarizer attribute
        api=api,
        path=PATH[api],
        headers=sent,
        model="summary-model",
        session="s-1",
        params={},
    )
    assert isinstance(engine.summarizer, UpstreamSummarizer)
    return engine.summarizer, engine


@pytest.mark.parametrize(
    ("api", "usage", "billed"),
    [
        (
            "anthropic",
            {
                "input_tokens": 30,
                "cache_read_input_tokens": 500,
                "cache_creation_input_tokens": 70,
                "output_tokens": 41,
            },
            (600, 41),
        ),
        ("openai_chat", {"prompt_tokens": 512, "completion_tokens": 40}, (512, 40)),
        ("openai_responses", {"input_tokens": 610, "output_tokens": 39}, (610, 39)),
    ],
)
def test_a_summary_call_counts_the_usage_the_upstream_bills_once(
    api: str, usage: dict[str, int], billed: tuple[int, int]
) -> None:
    summarizer, _ = _bound(lambda r: httpx.Response(200, json=_reply(api, SUMMARY, usage)), api)
    assert summarizer(_entries(), "", None) == SUMMARY
    tally = summarizer.tally
    assert (tally.calls, tally.written, tally.fallbacks) == (1, 1, 0)
    assert (tally.input_tokens, tally.output_tokens) == billed


def test_a_summary_request_carries_the_key_but_not_the_clients_own_request_headers() -> None:
    seen: list[httpx.Request] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=_reply("anthropic", SUMMARY, {"output_tokens": 9}))

    client_sent = [
        ("x-api-key", KEY),
        ("anthropic-version", "2023-06-01"),
        ("anthropic-beta", "context-management-2025-06-27"),
        ("accept", "text/event-stream"),
        ("accept-encoding", "gzip, br"),
        ("content-type", "application/json; charset=latin-1"),
        ("content-length", "987654"),
        ("idempotency-key", "stainless-retry-7f3a"),
        ("x-regio-session", "s-1"),
        ("connection", "keep-alive"),
    ]
    summarizer, _ = _bound(upstream, headers=client_sent)
    assert summarizer(_entries(), "", None) == SUMMARY
    (request,) = seen
    headers = request.headers
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
    assert headers["anthropic-beta"] == "context-management-2025-06-27"
    assert headers["accept"] == "application/json"
    assert headers["content-type"] == "application/json"
    assert headers["accept-encoding"] == "identity"
    assert headers["content-length"] == str(len(request.content))
    assert "idempotency-key" not in headers and "x-regio-session" not in headers
    assert [k for k, _ in headers.multi_items()].count("accept") == 1
    body = json.loads(request.content)
    assert body["max_tokens"] > 0 and body["stream"] is False and body["model"] == "summary-model"


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_after_a_refused_model_the_requests_other_summaries_are_written_offline_unasked(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The coding example's ``claude-haiku-4-5`` behind an OpenAI upstream: one call, one
    warning naming the status and code (not the message, which may quote the key), and every
    summary of the request still written."""
    caplog.set_level(logging.WARNING, logger="regio.proxy")
    calls: list[httpx.Request] = []
    message = f"The model `claude-haiku-4-5` does not exist (key {KEY})"

    def upstream(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        error = {"message": message, "type": "invalid_request_error", "code": "model_not_found"}
        return httpx.Response(404, json={"error": error})

    summarizer, _ = _bound(upstream, "openai_chat")
    written = [summarizer(_entries(tag=t), "", None) for t in "abcd"]
    assert all(text.strip() for text in written)
    assert len(calls) == 1
    tally = summarizer.tally
    assert (tally.calls, tally.written, tally.fallbacks) == (1, 0, 4)
    warned = _warnings(caplog)
    assert len(warned) == 1 and "status 404 (model_not_found)" in warned[0], warned
    assert not any(KEY in m or "does not exist" in m for m in warned)


def test_a_model_summary_the_engine_refused_is_counted_once_as_the_offline_fallback() -> None:
    """The engine refuses a summary by asking again for the same entries: the model's refused
    summary is not counted ``ok`` beside the offline one that replaced it (``ok`` + ``fallback``
    is the summaries written), and a refused offline summary is one more fallback."""
    calls: list[httpx.Request] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json=_reply("anthropic", SUMMARY, {"output_tokens": 20}))

    summarizer, _ = _bound(upstream)
    assert summarizer(_entries(), "", None) == SUMMARY
    assert (summarizer.tally.written, summarizer.tally.fallbacks) == (1, 0)
    retried = summarizer(_entries(), "", None)  # the engine refused it: same entries again
    assert retried.strip() and retried != SUMMARY
    tally = summarizer.tally
    assert (tally.calls, tally.written, tally.fallbacks) == (1, 0, 1)
    summarizer(_entries(), "", None)  # the offline summary refused too
    assert summarizer(_entries(tag="b"), "", None) == SUMMARY  # other entries: the model's
    assert (len(calls), tally.calls, tally.written, tally.fallbacks) == (2, 2, 1, 2)


def test_a_cookie_one_clients_summary_reply_set_never_goes_with_anothers_summary_request() -> None:
    """The worker's summary client serves every client's requests: a ``Set-Cookie`` in the
    reply to one client's summary request is not sent with another client's, under its key."""
    seen: list[tuple[str | None, str | None]] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        key = request.headers.get("x-api-key")
        seen.append((key, request.headers.get("cookie")))
        reply = _reply("anthropic", SUMMARY, {"output_tokens": 20})
        return httpx.Response(200, json=reply, headers={"set-cookie": f"__cf_bm=for-{key}"})

    client = SummaryClient("https://upstream.test", 5.0, httpx.MockTransport(upstream))
    for key in ("key-a", "key-b"):
        engine = SimpleNamespace(summarizer=ExtractiveSummarizer())
        client.bind(
            engine,  # type: ignore[arg-type]  # a stand-in with a summarizer attribute
            api="anthropic",
            path=PATH["anthropic"],
            headers=[("x-api-key", key)],
            model="summary-model",
            session=key,
            params={},
        )
        assert engine.summarizer(_entries(), "", None) == SUMMARY
    assert seen == [("key-a", None), ("key-b", None)]


def _bad_reply(api: str) -> dict[str, Any]:
    if api == "anthropic":
        return {"content": {"type": "text", "text": SUMMARY}}
    if api == "openai_responses":
        return {"output": [{"type": "message", "content": 5}]}
    return {"choices": [{"message": 5}]}


@pytest.mark.parametrize("api", sorted(PATH))
def test_a_reply_of_an_unexpected_shape_gives_an_offline_summary_not_an_exception(
    api: str,
) -> None:
    summarizer, _ = _bound(lambda r: httpx.Response(200, json=_bad_reply(api)), api)
    text = summarizer(_entries(), "", None)
    assert text.strip() and text != SUMMARY
    assert (summarizer.tally.calls, summarizer.tally.fallbacks) == (1, 1)


def test_a_transport_that_raises_anything_gives_an_offline_summary() -> None:
    def upstream(request: httpx.Request) -> httpx.Response:
        raise RuntimeError(f"proxy tunnel refused {request.headers['x-api-key']}")

    summarizer, _ = _bound(upstream)
    assert summarizer(_entries(), "", None).strip()
    assert (summarizer.tally.calls, summarizer.tally.fallbacks) == (1, 1)


def test_once_the_requests_summary_time_is_spent_no_call_goes_upstream(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="regio.proxy")
    calls: list[httpx.Request] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json=_reply("anthropic", SUMMARY, {"output_tokens": 9}))

    summarizer, _ = _bound(upstream)
    summarizer.spent = 5.0  # the request's calls took its --summary-timeout already
    assert summarizer(_entries(), "", None).strip()
    assert calls == [] and (summarizer.tally.calls, summarizer.tally.fallbacks) == (0, 1)
    assert any("summary calls are spent" in m for m in _warnings(caplog))


class _Clock:
    """``time.monotonic`` advancing one second per reading (no test waits)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def test_a_reply_that_trickles_in_is_read_no_further_than_its_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def trickle() -> Iterator[bytes]:
        for _ in range(50):  # one byte a "second"; each read well inside the read timeout
            yield b" "

    client = SummaryClient(
        "https://upstream.test",
        10.0,
        httpx.MockTransport(lambda r: httpx.Response(200, content=trickle())),
    )
    monkeypatch.setattr(summaries.time, "monotonic", _Clock())
    with pytest.raises(httpx.TimeoutException):
        client.post("/v1/messages", [], {"model": "m"}, 4.0)


def test_a_responses_content_that_is_no_list_reads_as_no_text() -> None:
    data = {"output": [{"type": "message", "content": 5}], "usage": {"input_tokens": 3}}
    assert summary_reply("openai_responses", data) == ("", 3, 0)
