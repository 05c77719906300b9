"""The worker's upstream responses are freed as each request ends, not by the collector.

httpx's body stream of a sent request refers back to its response, a reference cycle that keeps
the request, its body and the connection pool's state of it alive until a collection finds it;
a worker that left them to the collector paused for 64-268 ms every ~35 s in the proxy
benchmark (docs/proxy.md). Every path that is done with an upstream response (a stream relayed,
a whole answer read, an error answer, a summary call) cuts the cycle, so a collection finds
none of them."""

from __future__ import annotations

import contextlib
import gc
import json
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx

from mutation_support import fuzz_settings
from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.proxy.summaries import SummaryClient

UPSTREAM = "http://upstream.test"
BLUEPRINT = blueprint(
    "freed", "anthropic:claude-sonnet-4-6", window=16000, output=1000, conversation="80%"
)


def _cyclic_garbage(run: Callable[[], None]) -> list[Any]:
    """What the collector finds unreachable only through cycles after ``run()``."""
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def _upstream_responses(garbage: list[Any]) -> list[httpx.Response]:
    return [
        o
        for o in garbage
        if isinstance(o, httpx.Response) and str(o.request.url).startswith(UPSTREAM)
    ]


def _body(history: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-6", "max_tokens": 100, "messages": history, "stream": stream}


@contextlib.contextmanager
def _client(path: Path) -> Iterator[Any]:
    steps = [Step("Reading.", (("read", {"path": "f.py"}),))] * 20
    with in_process(ScriptedUpstream(steps), BLUEPRINT, f"sqlite:{path}") as c:
        yield c


def _turns(client: Any, history: list[dict[str, Any]], streams: list[bool]) -> None:
    for stream in streams:
        r = client.post("/v1/messages", json=_body(history, stream), headers={"x-api-key": "k"})
        assert r.status_code == 200, r.text
        call_id = f"call-{len(history)}"
        if stream:
            assert "tool_use" in r.text
        history.append({"role": "assistant", "content": [{"type": "text", "text": "Reading."}]})
        history.append({"role": "user", "content": f"result {call_id}: {'x ' * 50}"})


@given(streams=st.lists(st.booleans(), min_size=1, max_size=4))
@fuzz_settings(8)
def test_relayed_and_whole_upstream_answers_leave_no_cycle_for_the_collector(
    streams: list[bool],
) -> None:
    with tempfile.TemporaryDirectory() as tmp, _client(Path(tmp) / "p.db") as client:
        history: list[dict[str, Any]] = [{"role": "user", "content": "Read every file."}]
        _turns(client, history, [False])  # the session and the worker's first-use objects
        garbage = _cyclic_garbage(lambda: _turns(client, history, streams))
    assert _upstream_responses(garbage) == []


def test_an_upstream_error_answer_leaves_no_cycle_for_the_collector(tmp_path) -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(529, json={"type": "error", "error": {"type": "overloaded"}})

    def run() -> None:
        with in_process(ScriptedUpstream([]), BLUEPRINT, f"sqlite:{tmp_path}/p.db") as c:
            c.app.state.proxy.upstream.transport = httpx.MockTransport(refuse)
            body = _body([{"role": "user", "content": "Hello."}], False)
            r = c.post("/v1/messages", json=body, headers={"x-api-key": "k"})
            assert r.status_code == 529

    assert _upstream_responses(_cyclic_garbage(run)) == []


def test_a_summary_call_leaves_no_cycle_for_the_collector() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"content": [{"type": "text", "text": "A summary."}]})

    summaries = SummaryClient(UPSTREAM, transport=httpx.MockTransport(answer))
    summaries.post("/v1/messages", [], {"messages": []})  # the client and its pool exist
    calls: list[tuple[int, bytes]] = []
    garbage = _cyclic_garbage(lambda: calls.append(summaries.post("/v1/messages", [], {})))
    assert calls[0][0] == 200
    assert _upstream_responses(garbage) == []


class _Body(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A reply body that sends one chunk, then fails (``fail``) or ends; records its close."""

    def __init__(self, fail: bool) -> None:
        self.fail, self.closed = fail, False

    def __iter__(self) -> Iterator[bytes]:
        yield b'{"content": '
        if self.fail:
            raise httpx.ReadError("connection reset")
        yield b"[]}"

    async def __aiter__(self) -> Any:
        for chunk in self:
            yield chunk

    def close(self) -> None:
        self.closed = True

    async def aclose(self) -> None:
        self.closed = True


def test_a_summary_reply_broken_off_mid_body_gives_its_connection_back() -> None:
    bodies: list[_Body] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(_Body(fail=True))
        return httpx.Response(200, stream=bodies[-1])

    summaries = SummaryClient(UPSTREAM, transport=httpx.MockTransport(answer))
    with pytest.raises(httpx.ReadError):
        summaries.post("/v1/messages", [], {})
    assert bodies[0].closed  # the transport's stream closed: its connection back in the pool


def _started(message: dict[str, Any]) -> bool:
    return message["type"] == "http.response.start" and message["status"] == 200


def _asgi_post(
    client: Any,
    body: dict[str, Any],
    path: str = "/v1/messages",
    gone: Callable[[dict[str, Any]], bool] = _started,
    after: Callable[[], None] = lambda: None,
) -> None:
    """POST ``body`` to the proxy as a client that is gone at the first message ``gone``
    picks (by default before the answer starts: the server's ``send`` of it fails, ASGI spec
    2.4's ``OSError``); ``after`` runs once the app has returned, on its event loop, with the
    collector off (nothing the request left is finalized before it)."""
    data = json.dumps(body).encode()
    scope = {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"x-api-key", b"k")],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
        "state": {},
    }
    received = [{"type": "http.request", "body": data, "more_body": False}]

    async def receive() -> dict[str, Any]:
        return received.pop() if received else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if gone(message):
            raise OSError("the client is gone")

    async def run() -> None:
        gc.disable()
        try:
            with contextlib.suppress(Exception):
                await client.app(scope, receive, send)
            after()
        finally:
            gc.enable()

    client.portal.call(run)


@pytest.mark.parametrize("passed_through", [False, True], ids=["session", "passthrough"])
def test_a_streamed_answer_its_client_left_before_it_started_gives_its_connection_back(
    tmp_path: Path, passed_through: bool
) -> None:
    bodies: list[_Body] = []

    def answer(request: httpx.Request) -> httpx.Response:
        bodies.append(_Body(fail=False))
        return httpx.Response(200, stream=bodies[-1], headers={"content-type": "text/event-stream"})

    with in_process(ScriptedUpstream([]), BLUEPRINT, f"sqlite:{tmp_path}/p.db") as c:
        c.app.state.proxy.upstream.transport = httpx.MockTransport(answer)
        body = _body([{"role": "user", "content": "Hello."}], True)
        _asgi_post(c, body, "/v1/models/x" if passed_through else "/v1/messages")
    assert len(bodies) == 1
    assert bodies[0].closed  # the transport's stream closed: its connection back in the pool


class _Watched(httpx.AsyncByteStream):
    """An upstream response's body stream that records when it is closed."""

    def __init__(self, inner: httpx.AsyncByteStream) -> None:
        self.inner, self.closed = inner, False

    async def __aiter__(self) -> Any:
        async for chunk in self.inner:
            yield chunk

    async def aclose(self) -> None:
        self.closed = True
        await self.inner.aclose()


class _Watching(httpx.AsyncBaseTransport):
    """The in-process upstream's transport, each response's body stream :class:`_Watched`."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner
        self.bodies: list[_Watched] = []

    def closed(self) -> list[bool]:
        return [b.closed for b in self.bodies]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        self.bodies.append(_Watched(response.stream))
        return httpx.Response(
            response.status_code, headers=response.headers, stream=self.bodies[-1]
        )


def test_a_restore_rounds_streamed_answer_its_client_left_is_given_back_when_the_request_ends(
    tmp_path: Path,
) -> None:
    # the model calls regio's restore tool (an unknown id: the proxy answers it with text) and
    # the proxy continues upstream; the client is gone while the second round is relayed
    steps = [Step("", (("context_restore", {"id": "no-such-id"}),)), Step("Done.")]
    bp = BLUEPRINT + "relief: {enabled: true, restore_tool: true}\n"
    with in_process(ScriptedUpstream(steps), bp, f"sqlite:{tmp_path}/p.db") as c:
        watching = _Watching(c.app.state.proxy.upstream.transport)
        c.app.state.proxy.upstream.transport = watching
        rounds_open: list[int] = []
        closed: list[list[bool]] = []

        def second_round(message: dict[str, Any]) -> bool:
            if message["type"] == "http.response.body" and len(watching.bodies) == 2:
                rounds_open.append(2)
                return True
            return False

        body = _body([{"role": "user", "content": "Hello."}], True)
        _asgi_post(c, body, gone=second_round, after=lambda: closed.append(watching.closed()))
    assert rounds_open, "the client never left during the second round: the check is too easy"
    assert closed == [[True, True]]  # each round's answer given back as the request ended
