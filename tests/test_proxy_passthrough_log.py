"""A request sent upstream unmanaged is logged with the upstream's real status and where it
went unmanaged, and counted under a small fixed set of reasons (user report: a passed-through
request answered 200 was logged ``"status": 0``, and ``regio_passthrough_total``'s ``reason``
was the place, ``messages[1]``, one label value per place)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")
pytest.importorskip("prometheus_client", reason="prometheus-client is not installed")

from prometheus_client.parser import text_string_to_metric_families

from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.proxy.errors import PASSTHROUGH_REASONS, PassThrough

BLUEPRINT = blueprint(
    "proxy-passthrough-log",
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


def _reasons(client: Any) -> dict[str, float]:
    families = {f.name: f for f in text_string_to_metric_families(client.get("/metrics").text)}
    samples = families["regio_passthrough"].samples
    return {s.labels["reason"]: s.value for s in samples if s.name.endswith("_total")}


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_passed_through_request_is_logged_with_the_upstreams_status_and_its_place() -> None:
    upstream = ScriptedUpstream([Step("ok")] * 2, 8000, 500)
    log = Path(tempfile.mkdtemp()) / "requests.jsonl"
    store = f"sqlite:{tempfile.mkdtemp()}/p.db"
    with in_process(upstream, BLUEPRINT, store, request_log=str(log)) as client:
        body = {"model": "claude-x", "max_tokens": 50, "messages": REDACTED}
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
            messages = [{"role": "user", "content": f"q{i}"} for i in range(n)] + REDACTED
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
