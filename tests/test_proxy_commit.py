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
from regio.store import SessionStoreError

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
