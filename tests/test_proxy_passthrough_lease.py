"""A request of a session sent upstream unmanaged holds the session's lease only until the
upstream's answer has started (its status is logged): never across the answer's stream, and
never past an upstream that cannot be reached."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

from proxy_loops import proxied
from proxy_support import ScriptedUpstream, Step, blueprint

BLUEPRINT = blueprint(
    "proxy-passthrough-lease",
    "anthropic:claude-x",
    window=8000,
    output=500,
    conversation=6000,
    history=1000,
)
REDACTED = [
    {"role": "user", "content": "think"},
    {"role": "assistant", "content": [{"type": "redacted_thinking", "data": "opaque"}]},
    {"role": "user", "content": "go on"},
]
BODY = {"model": "claude-x", "max_tokens": 50, "messages": REDACTED}
HEADERS = {"x-api-key": "k", "x-regio-session": "s1"}


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


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
    config = ProxyConfig(
        BLUEPRINT, "http://upstream.test", store=store, request_log=str(log)
    )
    app = create_app(config, transport=httpx.MockTransport(refuse))
    with TestClient(app) as client:
        refused = client.post("/v1/messages", json=BODY, headers=HEADERS)
        assert refused.status_code == 502, refused.text
        with client.app.state.proxy.store.lease("s1", ttl=30, wait=0):  # free: it let go
            pass
    (line,) = _lines(log)
    assert line["session"] == "s1" and line["status"] == 502
