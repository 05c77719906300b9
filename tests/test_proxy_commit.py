"""A request's commit is three writes (positions with a pending mark, the engine, the meta);
a worker that stops between two of them leaves the session consistent: the next request adopts
the pending mark when the engine was saved and drops it when it was not, so every item the
client sent is admitted exactly once."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

import regio
from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.persistence.store import SessionStoreError

BLUEPRINT = blueprint("proxy-commit", "openai:gpt-5", window=8000, output=500, conversation=6000)


def _post(client: Any, history: list[dict[str, Any]]) -> tuple[str, str]:
    body = {"model": "gpt-5", "messages": history}
    response = client.post("/v1/chat/completions", json=body, headers={"x-regio-session": "s1"})
    assert response.status_code == 200, response.text
    return response.headers["x-regio-session"], response.json()["choices"][0]["message"]["content"]


def _texts(client: Any) -> list[str]:
    engine = regio.Engine.load_from(client.app.state.proxy.store, "s1")
    return [r.entry.text for r in engine.transcript() if r.kind == "message" and r.entry]


def _stop(*_: Any, **__: Any) -> bool:
    raise SessionStoreError("the worker stopped here")


@pytest.mark.parametrize("stop_before", ["engine save", "meta commit"])
def test_a_worker_stopped_mid_commit_leaves_every_item_admitted_once(monkeypatch, stop_before):
    upstream = ScriptedUpstream([Step(f"r{i}") for i in range(8)], 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history = [{"role": "user", "content": "u0"}]
        _, reply = _post(client, history)
        history += [{"role": "assistant", "content": reply}, {"role": "user", "content": "u1"}]
        records = client.app.state.proxy.records
        with monkeypatch.context() as patch:
            if stop_before == "engine save":
                patch.setattr(regio.Engine, "save_to", _stop)
            else:
                patch.setattr(records, "commit", _stop)
            _, reply = _post(client, history)  # the client got its reply; the commit stopped
        meta = records.meta("s1")
        assert meta.pending is not None  # the positions were written, marked pending
        history += [{"role": "assistant", "content": reply}, {"role": "user", "content": "u2"}]
        _post(client, history)
        assert _texts(client) == [m["content"] for m in history]
        meta = records.meta("s1")
        assert meta.pending is None and meta.count == len(history)


def test_a_session_another_writer_leased_in_the_store_waits_for_it_and_is_never_written_meanwhile():
    """The proxy's hold on a session is the store's lease (``regio compact`` and any other
    writer take the same one): while another writer holds it, a request waits (past
    ``--lease-wait``: 503, which the SDKs retry) and writes nothing; once it is released the
    retry is served and committed."""
    upstream = ScriptedUpstream([Step(f"r{i}") for i in range(4)], 8000, 500)
    store = f"sqlite:{tempfile.mkdtemp()}/p.db"
    with in_process(upstream, BLUEPRINT, store, lease_wait=0.3) as client:
        history = [{"role": "user", "content": "u0"}]
        _, reply = _post(client, history)
        history += [{"role": "assistant", "content": reply}, {"role": "user", "content": "u1"}]
        engines = client.app.state.proxy.store
        with engines.lease("s1", ttl=30, wait=0):  # e.g. `regio compact` on the stored session
            body = {"model": "gpt-5", "messages": history}
            busy = client.post("/v1/chat/completions", json=body, headers={"x-regio-session": "s1"})
            assert busy.status_code == 503, busy.text
            assert busy.json()["error"]["type"] == "server_error"
            assert len(upstream.requests) == 1  # nothing went upstream
            assert client.app.state.proxy.records.meta("s1").count == 1
        _post(client, history)  # the retry, once the other writer is done
        assert _texts(client) == [m["content"] for m in history]
        assert client.app.state.proxy.records.meta("s1").count == len(history)


@pytest.mark.parametrize("api", ["openai_chat", "anthropic", "openai_responses"])
def test_a_streamed_answer_ends_only_after_its_turn_is_committed(monkeypatch, api):
    """An SDK sends its next request as soon as it has read the stream's last event; the session
    must be committed by then, or that request finds no session and opens a second one.

    The store's commit waits until the client has read the answer's text: so the text is
    streamed before the commit (nothing is buffered whole), and the last event, held back
    until the commit is done, cannot have reached the client before it."""
    import threading

    import httpx

    from proxy_loops import proxied
    from regio.proxy.records.sqlite import SQLiteRecords

    upstream = ScriptedUpstream([Step("r0-answer")], 8000, 500)
    text_read, committed = threading.Event(), threading.Event()
    original = SQLiteRecords.commit

    def gated_commit(self: Any, *args: Any) -> bool:
        streamed = text_read.wait(timeout=20)  # a slow store, slow until the client read the text
        ok = original(self, *args)
        if streamed:
            committed.set()
        return ok

    monkeypatch.setattr(SQLiteRecords, "commit", gated_commit)
    path = {
        "anthropic": "/v1/messages",
        "openai_chat": "/v1/chat/completions",
        "openai_responses": "/v1/responses",
    }[api]
    body: dict[str, Any] = {"model": "claude-sonnet-4-5" if api == "anthropic" else "gpt-5"}
    if api == "openai_responses":
        body["input"] = [{"role": "user", "content": "u0"}]
    else:
        body["messages"] = [{"role": "user", "content": "u0"}]
    if api == "anthropic":
        body["max_tokens"] = 500
    body["stream"] = True
    with proxied(upstream, BLUEPRINT) as url:
        chunks: list[tuple[bool, bytes]] = []
        received = b""
        with httpx.stream("POST", url + path, json=body, timeout=30) as response:
            assert response.status_code == 200
            for chunk in response.iter_raw():
                chunks.append((committed.is_set(), chunk))
                received += chunk
                if b"r0-answer" in received:
                    text_read.set()
        status = httpx.get(f"{url}/status.json").json()
    assert text_read.is_set(), "the answer's text never reached the client"
    assert committed.is_set(), "the text reached the client only after the commit: not streamed"
    assert chunks[-1][0], "the stream's last bytes reached the client before the commit"
    assert not chunks[0][0], "the commit ran before the first event was relayed"
    assert [s["requests"] for s in status["sessions"]] == [1]


def test_an_upstream_that_fails_mid_stream_still_delivers_every_event_it_sent():
    """The proxy holds a stream's last event back until the turn is committed; when the
    upstream breaks off instead of ending, that held event must still reach the client."""
    import json

    import httpx
    from starlette.applications import Starlette
    from starlette.responses import StreamingResponse
    from starlette.routing import Route

    from proxy_support import running
    from regio.proxy import ProxyConfig, create_app

    def chunk(text: str) -> bytes:
        delta = {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
        event = {"id": "c1", "object": "chat.completion.chunk", **delta}
        return f"data: {json.dumps(event)}\n\n".encode()

    async def broken(_request: Any) -> StreamingResponse:
        async def body() -> Any:
            for text in ("first-part ", "second-part ", "third-part"):
                yield chunk(text)
            raise RuntimeError("the upstream went away mid-stream")

        return StreamingResponse(body(), media_type="text/event-stream")

    upstream = Starlette(routes=[Route("/v1/chat/completions", broken, methods=["POST"])])
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": "u0"}], "stream": True}
    received = bytearray()
    with running(upstream) as up_url:
        app = create_app(ProxyConfig(BLUEPRINT, up_url, store=f"sqlite:{tempfile.mkdtemp()}/p.db"))
        with running(app) as url:
            try:
                with httpx.stream("POST", url + "/v1/chat/completions", json=body, timeout=30) as r:
                    for piece in r.iter_raw():
                        received.extend(piece)
            except httpx.HTTPError:
                pass  # the stream ends broken, as the upstream's did
    assert b"first-part" in received and b"second-part" in received
    assert b"third-part" in received  # the held-back last event
