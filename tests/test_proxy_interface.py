"""The proxy's interface promises: keys pass through and are never kept, requests regio cannot
manage and other paths go upstream untouched, length refusals are recovered, errors come back in
the client's API shape, ``/metrics`` is Prometheus text with a ``session`` label."""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")
pytest.importorskip("prometheus_client", reason="prometheus-client is not installed")


from proxy_support import ScriptedUpstream, Step, blueprint, in_process, metric_families

BLUEPRINT = blueprint(
    "proxy-interface",
    "anthropic:claude-x",
    window=8000,
    output=500,
    conversation=6000,
    history=1000,
)
SECRET = "sk-ant-api03-SECRET-do-not-keep-4711"


def _anthropic(client: Any, messages: list[dict[str, Any]], **headers: str) -> Any:
    body = {"model": "claude-x", "max_tokens": 50, "system": "Be brief.", "messages": messages}
    return client.post("/v1/messages", json=body, headers={"x-api-key": SECRET, **headers})


def _families(client: Any) -> dict[str, Any]:
    return metric_families(client.get("/metrics").text)


def test_the_clients_key_reaches_the_upstream_and_is_never_stored_logged_or_shown(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    upstream = ScriptedUpstream([Step("hello")] * 3, 8000, 500)
    db = tmp_path / "proxy.db"
    with in_process(upstream, BLUEPRINT, f"sqlite:{db}") as client:
        response = _anthropic(
            client, [{"role": "user", "content": "hi"}], authorization=f"Bearer {SECRET}"
        )
        assert response.status_code == 200
        shown = client.get("/metrics").text + client.get("/status.json").text + client.get("/").text
    assert upstream.headers[-1]["x-api-key"] == SECRET
    assert upstream.headers[-1]["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in shown
    assert SECRET not in caplog.text
    for path in tmp_path.iterdir():  # the database, its WAL and shared-memory files
        assert SECRET.encode() not in Path(path).read_bytes(), path


def test_metrics_are_prometheus_text_per_session_with_requests_and_tokens_saved():
    upstream = ScriptedUpstream([Step("x" * 400)] * 14, 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history = [{"role": "user", "content": "start " + "word " * 900}]
        for i in range(12):
            response = _anthropic(client, history, **{"x-regio-session": "metrics-1"})
            assert response.status_code == 200
            history += [
                {"role": "assistant", "content": response.json()["content"]},
                {"role": "user", "content": f"more {i} " + "word " * 900},
            ]
        families = _families(client)
    requests = families["regio_requests"].samples
    assert [s.labels["session"] for s in requests if s.name == "regio_requests_total"] == [
        "metrics-1"
    ]
    assert sum(s.value for s in requests if s.name == "regio_requests_total") == 12
    saved = [
        s for s in families["regio_tokens_saved"].samples if s.name == "regio_tokens_saved_total"
    ]
    client_tokens = families["regio_client_tokens"].samples[0].value
    upstream_tokens = families["regio_upstream_tokens"].samples[0].value
    assert saved[0].labels == {"session": "metrics-1"}
    assert saved[0].value > 0 and client_tokens > upstream_tokens  # compaction kept the window
    for name in ("regio_cache_read_tokens", "regio_cache_write_tokens"):
        sources = {s.labels["source"] for s in families[name].samples if s.name.endswith("_total")}
        assert sources == {"reported", "predicted"}
    assert families["regio_compactions"].samples[0].value > 0
    assert "regio_first_cache_miss" in families


def test_a_request_with_an_item_regio_cannot_read_goes_upstream_exactly_as_sent():
    upstream = ScriptedUpstream([Step("ok")] * 2, 8000, 500)
    body = {
        "model": "claude-x",
        "max_tokens": 50,
        "messages": [
            {"role": "user", "content": "think"},
            {"role": "assistant", "content": [{"type": "compaction", "content": "opaque"}]},
            {"role": "user", "content": "go on"},
        ],
    }
    data = json.dumps(body, separators=(",", ":")).encode()
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        response = client.post(
            "/v1/messages",
            content=data,
            headers={"x-api-key": SECRET, "content-type": "application/json"},
        )
        assert response.status_code == 200, response.text
        assert upstream.raw[-1] == data
        passed = _families(client)["regio_passthrough"].samples
        assert any(s.value == 1 and s.labels["reason"] == "unreadable_item" for s in passed)


def test_other_paths_go_upstream_untouched():
    upstream = ScriptedUpstream([], 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        response = client.get("/v1/models", headers={"authorization": f"Bearer {SECRET}"})
    assert response.status_code == 200 and response.json()["data"][0]["id"] == "scripted"
    assert upstream.headers[-1]["authorization"] == f"Bearer {SECRET}"


def test_a_cookie_the_upstream_set_in_one_clients_answer_never_goes_with_anothers_request():
    """The worker's upstream client serves every client: a ``Set-Cookie`` in one client's
    answer (an edge's ``__cf_bm``) is not kept and sent upstream under another client's key; a
    client's own ``Cookie`` header goes upstream as received."""
    import httpx
    from starlette.testclient import TestClient

    from regio.proxy import ProxyConfig, create_app

    seen: list[tuple[str | None, str | None]] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        seen.append((request.headers.get("x-api-key"), request.headers.get("cookie")))
        body = {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 3},
        }  # fmt: skip
        cookie = {"set-cookie": f"__cf_bm=for-{request.headers.get('x-api-key')}; Path=/"}
        return httpx.Response(200, json=body, headers=cookie)

    config = ProxyConfig(
        BLUEPRINT, "http://upstream.test", store=f"sqlite:{tempfile.mkdtemp()}/p.db"
    )
    sent = [("a", {}), ("b", {}), ("c", {"cookie": "own=1"})]
    with TestClient(create_app(config, transport=httpx.MockTransport(upstream))) as client:
        for key, cookie in sent:
            client.cookies.clear()  # the test client keeps cookies; the clients here do not
            headers = {"x-api-key": key, "x-regio-session": key, **cookie}
            message = {"role": "user", "content": f"hello from {key}"}
            body = {"model": "claude-x", "max_tokens": 50, "messages": [message]}
            assert client.post("/v1/messages", json=body, headers=headers).status_code == 200
    assert seen == [(k, c.get("cookie")) for k, c in sent]


#: Two cookies an edge sets in one answer (as api.openai.com's does): an ``Expires`` date
#: holds a comma, so the two cannot be joined into one header.
EDGE_COOKIES = [
    "__cf_bm=abc; path=/; expires=Sat, 05-Dec-26 18:00:00 GMT; HttpOnly; Secure",
    "_cfuvid=def; path=/; HttpOnly; Secure",
]


@pytest.mark.parametrize("path", ["/v1/messages", "/v1/messages?stream", "/v1/models"])
def test_each_set_cookie_of_the_upstreams_answer_reaches_the_client_as_its_own_header(path):
    """The client gets the upstream's repeated headers as they came, one ``Set-Cookie`` per
    cookie, on a managed request (answered whole or streamed) and a passed-through one: joined
    into one header with commas, the cookies read wrong (the date's comma splits one)."""
    import httpx
    from starlette.testclient import TestClient

    from regio.proxy import ProxyConfig, create_app

    def upstream(request: httpx.Request) -> httpx.Response:
        headers = [("set-cookie", c) for c in EDGE_COOKIES] + [("x-request-id", "req_1")]
        if request.url.path == "/v1/models":
            return httpx.Response(200, stream=httpx.ByteStream(b'{"data":[]}'), headers=headers)
        if json.loads(request.content).get("stream"):
            events = [
                {"type": "message_start", "message": {
                    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 1}}},
                {"type": "content_block_start", "index": 0,
                 "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": "ok"}},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                 "stop_sequence": None}, "usage": {"output_tokens": 3}},
                {"type": "message_stop"},
            ]  # fmt: skip
            data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
            headers.append(("content-type", "text/event-stream"))
            return httpx.Response(200, stream=httpx.ByteStream(data.encode()), headers=headers)
        body = {
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 12, "output_tokens": 3},
        }  # fmt: skip
        return httpx.Response(200, json=body, headers=headers)

    config = ProxyConfig(
        BLUEPRINT, "http://upstream.test", store=f"sqlite:{tempfile.mkdtemp()}/p.db"
    )
    headers = {"x-api-key": SECRET, "x-regio-session": "s1"}
    with TestClient(create_app(config, transport=httpx.MockTransport(upstream))) as client:
        if path == "/v1/models":
            response = client.get(path, headers=headers)
        else:
            body = {
                "model": "claude-x",
                "max_tokens": 50,
                "messages": [{"role": "user", "content": "hello"}],
                "stream": path.endswith("?stream"),
            }
            response = client.post("/v1/messages", json=body, headers=headers)
        assert response.status_code == 200, response.text
        assert response.headers.get_list("set-cookie") == EDGE_COOKIES
        assert response.headers["x-request-id"] == "req_1"


def test_a_length_refusal_is_answered_by_one_compaction_and_one_retry():
    # the upstream's window is smaller than the blueprint says: the first request over it is
    # refused, the proxy compacts to half the allowance and retries once
    upstream = ScriptedUpstream([Step("ok")] * 12, 4500, 0)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
        statuses = []
        for i in range(6):
            history.append({"role": "user", "content": f"chunk {i} " + "word " * 900})
            response = _anthropic(client, history)
            statuses.append(response.status_code)
            history.append({"role": "assistant", "content": response.json().get("content") or "ok"})
    assert statuses == [200] * 6
    assert upstream.refused >= 1
    refusals = [n for n, p in enumerate(upstream.prompts) if p > 4500]
    assert all(upstream.prompts[n + 1] <= 4500 for n in refusals)  # each retry fit


def test_a_body_that_is_no_request_is_answered_400_in_the_apis_error_shape():
    upstream = ScriptedUpstream([], 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        anthropic = client.post("/v1/messages", content=b"not json", headers={"x-api-key": "k"})
        chat = client.post("/v1/chat/completions", content=b"[1, 2]")
    assert anthropic.status_code == 400 and anthropic.json()["type"] == "error"
    assert "JSON object" in anthropic.json()["error"]["message"]
    assert chat.status_code == 400 and "JSON object" in chat.json()["error"]["message"]
    assert upstream.requests == []


def test_a_client_gone_mid_stream_leaves_its_session_committed_and_free():
    import httpx

    from proxy_loops import proxied

    upstream = ScriptedUpstream([Step("word " * 40)] * 3, 8000, 500, event_delay=0.05)
    history = [{"role": "user", "content": "tell me a long story"}]
    body = {"model": "claude-x", "max_tokens": 50, "messages": history}
    headers = {"x-api-key": SECRET, "x-regio-session": "gone-1"}
    # a busy session answers 503 after 2 s: the next request must find it free
    with proxied(upstream, BLUEPRINT, lease_wait=2.0) as url:
        with httpx.stream(
            "POST", f"{url}/v1/messages", json={**body, "stream": True}, headers=headers
        ) as response:
            assert next(response.iter_raw())  # the first bytes, then the client goes away
        again = httpx.post(f"{url}/v1/messages", json=body, headers=headers, timeout=30)
        assert again.status_code == 200, again.text
        (session,) = httpx.get(f"{url}/status.json").json()["sessions"]
    assert session["id"] == "gone-1" and session["history_items"] == 1
    assert session["requests"] == 2
