"""What a proxy request commits to its session: only a request that went upstream and was not
refused there. A failure while the request is read (before anything went upstream) and an
upstream refusal (4xx but 429) commit nothing, so the client's next request reads the same
items again and extends the same session; a pass-through leaves the session's warm engine
as it was (it is not loaded from the store again on every request)."""

from __future__ import annotations

import json
import tempfile
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from proxy_support import ScriptedUpstream, Step, blueprint, in_process, metric_families
from regio.proxy import engines as engines_module
from regio.proxy import turn as turn_module
from test_proxy_sessions import _HEADERS, BLUEPRINT, SYSTEM, _expected, _post, _transcript


def _store() -> str:
    return f"sqlite:{tempfile.mkdtemp()}/proxy.db"


def test_a_failure_while_the_request_is_read_commits_nothing(monkeypatch: Any) -> None:
    real, failing = turn_module.item_messages, {"on": False}

    def item_messages(*args: Any, **kwargs: Any) -> Any:
        if failing["on"]:
            raise RuntimeError("a reader bug")
        return real(*args, **kwargs)

    monkeypatch.setattr(turn_module, "item_messages", item_messages)
    upstream = ScriptedUpstream([Step(f"reply {i}") for i in range(8)], 8000, 500)
    with in_process(upstream, BLUEPRINT, _store()) as client:
        history: list[dict[str, Any]] = [{"role": "user", "content": "first"}]
        session, reply = _post(client, history)
        history += [{"role": "assistant", "content": reply}, {"role": "user", "content": "key"}]
        before = _transcript(client, session)
        failing["on"] = True
        body = {"model": "gpt-5", "messages": [SYSTEM, *history]}
        with pytest.raises(RuntimeError):
            client.post("/v1/chat/completions", json=body, headers=_HEADERS)
        failing["on"] = False
        assert _transcript(client, session) == before  # nothing of it
        again, _ = _post(client, history)
        assert again == session
        assert _transcript(client, session) == _expected(history)  # each item once


def test_an_upstream_refusal_commits_nothing_and_the_shortened_retry_extends_the_session() -> None:
    """The upstream's window (3,000 tokens) is smaller than the blueprint's: a long message is
    refused twice (regio's one compaction fits its own window, not the upstream's); the
    client's shorter retry continues the same session instead of branching."""
    upstream = ScriptedUpstream([Step(f"reply {i}") for i in range(40)], 3000, 0)
    with in_process(upstream, BLUEPRINT, _store()) as client:
        history: list[dict[str, Any]] = []
        for k in range(4):
            history.append({"role": "user", "content": " ".join(f"h{k}x{i}" for i in range(150))})
            session, reply = _post(client, history)
            history.append({"role": "assistant", "content": reply})
        big = {"role": "user", "content": " ".join(f"w{i}" for i in range(500))}
        body = {"model": "gpt-5", "messages": [SYSTEM, *history, big]}
        refused = client.post("/v1/chat/completions", json=body, headers=_HEADERS)
        assert refused.status_code == 400 and upstream.refused == 2
        assert ("user", big["content"]) not in _transcript(client, session)
        again, _ = _post(client, [*history, {"role": "user", "content": "in short"}])
        assert again == session


def test_a_session_passed_through_keeps_its_engine_warm(monkeypatch: Any) -> None:
    loads: list[str] = []
    real = engines_module.EngineFactory.load

    def load(self: Any, store: Any, session: str) -> Any:
        loads.append(session)
        return real(self, store, session)

    monkeypatch.setattr(engines_module.EngineFactory, "load", load)
    bp = blueprint("pt", "anthropic:claude-x", window=8000, output=500, conversation=6000)
    upstream = ScriptedUpstream([Step(f"ok{i}") for i in range(20)], 8000, 500)
    with in_process(upstream, bp, _store()) as client:
        headers = {"x-api-key": "k", "x-regio-session": "s1"}
        messages: list[dict[str, Any]] = []

        def post() -> Any:
            body = {"model": "claude-x", "max_tokens": 50, "messages": messages}
            return client.post("/v1/messages", json=body, headers=headers)

        for i in range(3):
            messages.append({"role": "user", "content": f"q{i}"})
            messages.append({"role": "assistant", "content": post().json()["content"][0]["text"]})
        messages[-1] = {"role": "assistant", "content": [{"type": "compaction", "content": "s"}]}
        before = len(loads)
        for i in range(5):  # passed through: the item has no reader
            messages.append({"role": "user", "content": f"p{i}"})
            assert post().status_code == 200
            messages.append({"role": "assistant", "content": "fine"})
        assert len(loads) == before
        assert len(upstream.requests) == 8


class _Answers:
    """An Anthropic upstream answering each request with the next ``(status, body)``, then a
    plain reply; ``requests`` records the bodies it received."""

    def __init__(self, answers: list[tuple[int, dict[str, Any]]]) -> None:
        self.answers, self.requests = list(answers), []  # type: list[dict[str, Any]]

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        async def messages(request: Request) -> JSONResponse:
            self.requests.append(json.loads(await request.body()))
            status, body = self.answers.pop(0) if self.answers else (200, _reply("done"))
            return JSONResponse(body, status_code=status)

        return Starlette(routes=[Route("/v1/messages", messages, methods=["POST"])])


def _reply(*content: Any, stop: str = "end_turn") -> dict[str, Any]:
    blocks = [{"type": "text", "text": c} if isinstance(c, str) else c for c in content]
    usage = {"input_tokens": 100, "output_tokens": 10}
    head = {"id": "msg", "type": "message", "role": "assistant", "model": "claude-x"}
    return {**head, "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": usage}


_ERROR = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad image"}}
_RESTORING = blueprint(
    "ps", "anthropic:claude-x", window=8000, output=500, conversation=6000,
    extra="relief: {enabled: true, restore_tool: true, keep_last: 2, clear_at_least: 500}\n",
)  # fmt: skip


def _statuses(client: Any) -> dict[str, float]:
    samples = metric_families(client.get("/metrics").text)["regio_requests"].samples
    return {s.labels["status"]: s.value for s in samples if s.name.endswith("_total")}


@pytest.mark.parametrize(("status", "commits"), [(400, False), (422, False), (429, True)])
def test_an_upstream_status_commits_only_when_the_client_retries_the_same_request(
    status: int, commits: bool
) -> None:
    """400 and 422 (an invalid request: the client changes it) commit nothing; 429 (retried as
    it was) commits; each is counted with its status, and the retry admits nothing twice."""
    up = _Answers([(200, _reply("hi")), (status, _ERROR)])
    with in_process(up, _RESTORING, _store()) as client:
        headers = {"x-api-key": "k", "x-regio-session": "s1"}
        messages: list[dict[str, Any]] = [{"role": "user", "content": "hi"}]

        def post() -> Any:
            body = {"model": "claude-x", "max_tokens": 50, "messages": messages}
            return client.post("/v1/messages", json=body, headers=headers)

        assert post().status_code == 200
        messages += [{"role": "assistant", "content": "hi"}, {"role": "user", "content": "again"}]
        assert post().status_code == status
        held = _transcript(client, "s1")
        assert (("user", "again") in held) is commits
        assert _statuses(client).get(str(status)) == 1  # counted, committed or not
        assert post().status_code == 200  # the retry, as it was
        assert _transcript(client, "s1").count(("user", "again")) == 1


@pytest.mark.parametrize("kind", ["server_tool_use", "mcp_tool_use"])
def test_a_paused_turn_served_after_a_restore_round_goes_upstream_as_sent(kind: str) -> None:
    """Round one calls regio's own ``context_restore`` (answered by the proxy), round two is
    paused (``pause_turn``) with a server or MCP call unanswered; the client sends that turn
    back to continue it. It was the reply the proxy recorded (skipped when read back), and it
    still passes through as sent: nothing may follow it."""
    call = {"type": kind, "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
    restore = {"type": "tool_use", "id": "toolu_r", "name": "context_restore", "input": {}}
    up = _Answers([(200, _reply(restore, stop="tool_use")), (200, _reply("Searching.", call))])
    up.answers[1][1]["stop_reason"] = "pause_turn"
    with in_process(up, _RESTORING, _store()) as client:
        headers = {"x-api-key": "k", "x-regio-session": "s1"}
        messages: list[dict[str, Any]] = [{"role": "user", "content": "search"}]
        tools = [{"name": "read", "description": "r", "input_schema": {"type": "object"}}]
        body = {"model": "claude-x", "max_tokens": 50, "messages": messages, "tools": tools}
        first = client.post("/v1/messages", json=body, headers=headers)
        messages.append({"role": "assistant", "content": first.json()["content"]})
        assert client.post("/v1/messages", json=body, headers=headers).status_code == 200
        samples = metric_families(client.get("/metrics").text)["regio_passthrough"].samples
    assert up.requests[-1]["messages"] == messages
    assert {s.labels["reason"]: s.value for s in samples if s.name.endswith("_total")} == {
        "paused_turn": 1
    }
