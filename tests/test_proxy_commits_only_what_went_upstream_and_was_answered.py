"""What a proxy request commits to its session: only a request that went upstream and was not
refused there. A failure while the request is read (before anything went upstream) and an
upstream refusal (4xx but 429) commit nothing, so the client's next request reads the same
items again and extends the same session; a pass-through leaves the session's warm engine
as it was (it is not loaded from the store again on every request)."""

from __future__ import annotations

import tempfile
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from proxy_support import ScriptedUpstream, Step, blueprint, in_process
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
