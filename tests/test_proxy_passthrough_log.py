"""A request sent upstream unmanaged is logged with the upstream's real status and where it
went unmanaged, and counted under a small fixed set of reasons (user report: a passed-through
request answered 200 was logged ``"status": 0``, and ``regio_passthrough_total``'s ``reason``
was the place, ``messages[1]``, one label value per place). A session's request sent upstream
unmanaged holds the session's lease only until the upstream's answer has started (its status is
logged): never across the answer's stream, and never past an upstream that cannot be reached."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")
pytest.importorskip("prometheus_client", reason="prometheus-client is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx

from proxy_loops import proxied
from proxy_support import ScriptedUpstream, Step, blueprint, in_process, metric_families
from regio.proxy.errors import PASSTHROUGH_REASONS, PassThrough

BLUEPRINT = blueprint(
    "proxy-passthrough-log",
    "anthropic:claude-x",
    window=8000,
    output=500,
    conversation=6000,
    history=1000,
)
UNREADABLE = [
    {"role": "user", "content": "think"},
    {"role": "assistant", "content": [{"type": "compaction", "content": "opaque"}]},
    {"role": "user", "content": "go on"},
]
BODY = {"model": "claude-x", "max_tokens": 50, "messages": UNREADABLE}
HEADERS = {"x-api-key": "k", "x-regio-session": "s1"}


def _reasons(client: Any) -> dict[str, float]:
    samples = metric_families(client.get("/metrics").text)["regio_passthrough"].samples
    return {s.labels["reason"]: s.value for s in samples if s.name.endswith("_total")}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_a_passed_through_request_is_logged_with_the_upstreams_status_and_its_place() -> None:
    upstream = ScriptedUpstream([Step("ok")] * 2, 8000, 500)
    log = Path(tempfile.mkdtemp()) / "requests.jsonl"
    store = f"sqlite:{tempfile.mkdtemp()}/p.db"
    with in_process(upstream, BLUEPRINT, store, request_log=str(log)) as client:
        body = {"model": "claude-x", "max_tokens": 50, "messages": UNREADABLE}
        response = client.post("/v1/messages", json=body, headers={"x-api-key": "k"})
        assert response.status_code == 200, response.text
        reasons = _reasons(client)
    (line,) = _lines(log)
    assert line["status"] == 200
    assert line["passthrough"]["reason"] == "unreadable_item"
    assert line["passthrough"]["place"].startswith("messages[1]")
    assert reasons == {"unreadable_item": 1.0}


def test_passthrough_reasons_are_a_fixed_set_never_the_place() -> None:
    upstream = ScriptedUpstream([Step("ok")] * 4, 8000, 500)
    log = Path(tempfile.mkdtemp()) / "requests.jsonl"
    store = f"sqlite:{tempfile.mkdtemp()}/p.db"
    with in_process(upstream, BLUEPRINT, store, request_log=str(log)) as client:
        for n in range(3):  # the unreadable item at another place each time
            messages = [{"role": "user", "content": f"q{i}"} for i in range(n)] + UNREADABLE
            if n % 2:
                messages.insert(n, {"role": "assistant", "content": "a"})
            body = {"model": "claude-x", "max_tokens": 50, "messages": messages}
            client.post("/v1/messages", json=body, headers={"x-api-key": "k"})
        client.get("/v1/models", headers={"x-api-key": "k"})
        reasons = _reasons(client)
    assert set(reasons) <= set(PASSTHROUGH_REASONS)
    assert reasons["unreadable_item"] == 3 and reasons["unsupported_api"] == 1
    other = [line for line in _lines(log) if line["session"] is None]
    assert [(o["status"], o["passthrough"]["reason"]) for o in other] == [(200, "unsupported_api")]
    assert other[0]["passthrough"]["place"] == "GET /v1/models"


def test_a_passthrough_of_an_unknown_reason_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="none of"):
        PassThrough("messages[1]", "a place is not a reason")


def test_a_streamed_passthrough_gives_its_lease_back_before_the_stream_ends() -> None:
    upstream = ScriptedUpstream([Step("a long answer " * 8)], 8000, 500, event_delay=0.05)
    log = Path(tempfile.mkdtemp()) / "requests.jsonl"
    with proxied(upstream, BLUEPRINT, request_log=str(log)) as url:
        body = {**BODY, "stream": True}
        with httpx.stream("POST", url + "/v1/messages", json=body, headers=HEADERS) as response:
            assert response.status_code == 200
            chunks = response.iter_raw()
            next(chunks)  # the stream has started, most of it still to come
            during = _lines(log)
            rest = b"".join(chunks)
        assert rest and b"message_stop" in rest
    (line,) = during
    assert line["session"] == "s1" and line["status"] == 200
    assert line["released"] is not None
    assert line["passthrough"]["reason"] == "unreadable_item"  # type: ignore[index]


def test_a_passthrough_to_an_unreachable_upstream_gives_its_lease_back() -> None:
    from starlette.testclient import TestClient

    from regio.proxy import ProxyConfig, create_app

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    log = Path(tempfile.mkdtemp()) / "requests.jsonl"
    store = f"sqlite:{tempfile.mkdtemp()}/p.db"
    config = ProxyConfig(BLUEPRINT, "http://upstream.test", store=store, request_log=str(log))
    app = create_app(config, transport=httpx.MockTransport(refuse))
    with TestClient(app) as client:
        refused = client.post("/v1/messages", json=BODY, headers=HEADERS)
        assert refused.status_code == 502, refused.text
        with client.app.state.proxy.store.lease("s1", ttl=30, wait=0):  # free: it let go
            pass
    (line,) = _lines(log)
    assert line["session"] == "s1" and line["status"] == 502
