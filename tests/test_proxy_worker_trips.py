"""How often one request goes from the event loop to a worker thread and back
(:mod:`regio.proxy.state`): each trip waits for a thread and for the interpreter, a wait that
grows with the worker's load, so a request whose session's lease is free makes three it waits
for (find and open the session; admit and lay out; finish, commit and give the lease back),
however long its session is (the compaction a turn defers runs beside the upstream call). A
request whose session another writer holds waits for it on the loop and is then served."""

from __future__ import annotations

import json
import tempfile
import threading
from typing import Any

import anyio
import anyio.to_thread
import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

import regio
from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.proxy import ProxyConfig
from regio.proxy.dialects import parse_request
from regio.proxy.forward import _handle
from regio.proxy.history import digests, fingerprint, first_user
from regio.proxy.requestlog import Waits
from regio.proxy.sessions import session_key
from regio.proxy.state import ProxyState

BLUEPRINT = blueprint("proxy-trips", "openai:gpt-5", window=8000, output=500, conversation=6000)


def _trips(monkeypatch: Any) -> list[str]:
    """Every call to a worker thread from now on, by the function it ran."""
    trips: list[str] = []
    run_sync = anyio.to_thread.run_sync

    async def counted(fn: Any, *args: Any, **kwargs: Any) -> Any:
        trips.append(getattr(fn, "__name__", repr(fn)))
        return await run_sync(fn, *args, **kwargs)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    return trips


def _body(api: str, history: list[dict[str, Any]], stream: bool) -> tuple[str, dict[str, Any]]:
    if api == "anthropic":
        body = {"model": "gpt-5", "max_tokens": 100, "messages": history, "stream": stream}
        return "/v1/messages", body
    return "/v1/chat/completions", {"model": "gpt-5", "messages": history, "stream": stream}


def _reply(api: str, response: Any, stream: bool) -> str:
    if stream:
        return "r"  # the exact text does not matter: the proxy admits what the client sends
    if api == "anthropic":
        return str(response.json()["content"][0]["text"])
    return str(response.json()["choices"][0]["message"]["content"])


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["openai_chat", "anthropic"])
def test_a_request_whose_session_is_free_reaches_the_worker_threads_three_times(
    monkeypatch, api, stream
):
    upstream = ScriptedUpstream([Step(f"reply {i}") for i in range(12)], 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history: list[dict[str, Any]] = []
        counts = []
        for i in range(6):  # a session growing by two items a request
            history.append({"role": "user", "content": f"question {i} " + "word " * 50})
            path, body = _body(api, history, stream)
            with monkeypatch.context() as patch:
                trips = _trips(patch)
                response = client.post(path, json=body, headers={"x-regio-session": "s1"})
                response.read()
            assert response.status_code == 200, response.text
            # the compaction the turn defers runs beside the upstream call: no wait of the request
            counts.append(len([t for t in trips if t != "compact_deferred"]))
            history.append({"role": "assistant", "content": _reply(api, response, stream)})
        assert counts == [3] * 6, (counts, trips)
        assert client.app.state.proxy.records.meta("s1").count == len(history) - 1


def test_a_request_whose_session_another_writer_holds_is_served_once_it_lets_go():
    upstream = ScriptedUpstream([Step(f"r{i}") for i in range(4)], 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history = [{"role": "user", "content": "u0"}]
        headers = {"x-regio-session": "s1"}
        first = client.post(
            "/v1/chat/completions", json={"model": "gpt-5", "messages": history}, headers=headers
        )
        assert first.status_code == 200, first.text
        history += [
            {"role": "assistant", "content": first.json()["choices"][0]["message"]["content"]},
            {"role": "user", "content": "u1"},
        ]
        store = client.app.state.proxy.store
        lease = store.lease("s1", ttl=30, wait=0)  # e.g. `regio compact` on the stored session
        timer = threading.Timer(0.3, lease.release)
        timer.start()
        try:
            body = {"model": "gpt-5", "messages": history}
            second = client.post("/v1/chat/completions", json=body, headers=headers)
        finally:
            timer.join()
        assert second.status_code == 200, second.text
        assert second.headers["x-regio-session"] == "s1"
        engine = regio.Engine.load_from(store, "s1")
        texts = [r.entry.text for r in engine.transcript() if r.kind == "message" and r.entry]
        assert texts == [m["content"] for m in history]
        # the lease was given back: another writer takes it at once
        store.lease("s1", ttl=30, wait=0).release()


def test_a_request_cancelled_as_its_session_lease_arrives_gives_the_lease_back(monkeypatch):
    """A request whose session another writer held, cancelled (its client gone) right as the
    lease arrives, before the trip that opens the session starts, gives the lease back: the
    next request takes it at once instead of waiting ``--lease-seconds`` for it to lapse."""
    config = ProxyConfig(
        BLUEPRINT, "http://upstream.test", store=f"sqlite:{tempfile.mkdtemp()}/p.db"
    )
    state = ProxyState.build(config)
    body = {"model": "gpt-5", "messages": [{"role": "user", "content": "u0"}]}
    client = parse_request("openai_chat", json.dumps(body).encode())
    incoming = digests(client.items)
    key = session_key(
        "s1", fingerprint(client.system_raw, client.tools_raw, first_user(client.items))
    )
    holder = state.store.lease("s1", ttl=30, wait=0)  # another writer
    scopes: list[anyio.CancelScope] = []
    waiting: list[anyio.Event] = []
    lease_of = ProxyState.lease

    async def leased(self: ProxyState, session: str, deadline: float) -> Any:
        waiting[0].set()
        lease = await lease_of(self, session, deadline)
        scopes[0].cancel()  # the client went away while the request waited for the lease
        return lease

    monkeypatch.setattr(ProxyState, "lease", leased)

    async def main() -> None:
        scope = anyio.CancelScope()
        scopes.append(scope)
        waiting.append(anyio.Event())
        try:
            with anyio.fail_after(20):
                async with anyio.create_task_group() as tasks:

                    async def request() -> None:
                        with scope:
                            await _handle(state, client, key, "s1", incoming, Waits())
                            pytest.fail("the request went on past its cancellation")

                    tasks.start_soon(request)
                    await waiting[0].wait()  # the request waits for the lease on the loop
                    holder.release()
            assert scope.cancelled_caught
            state.store.lease("s1", ttl=30, wait=0).release()  # free at once
        finally:
            await state.close()

    anyio.run(main)


def test_a_request_whose_turn_cannot_be_set_up_gives_its_session_lease_back(monkeypatch):
    """A failure between taking the session's lease and the exchange that holds it (setting up
    the turn) answers the request with an error and gives the lease back: the next request of
    the session is served at once instead of waiting ``--lease-seconds`` for it to lapse."""
    import regio.proxy.forward as forward

    upstream = ScriptedUpstream([Step(f"r{i}") for i in range(4)], 8000, 500)
    with in_process(upstream, BLUEPRINT, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        body = {"model": "gpt-5", "messages": [{"role": "user", "content": "u0"}]}
        headers = {"x-regio-session": "s1"}
        first = client.post("/v1/chat/completions", json=body, headers=headers)
        assert first.status_code == 200, first.text
        turn = forward.Turn

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("turn set-up failed")

        history = [
            *body["messages"],
            {"role": "assistant", "content": first.json()["choices"][0]["message"]["content"]},
            {"role": "user", "content": "u1"},
        ]
        monkeypatch.setattr(forward, "Turn", broken)
        second = {"model": "gpt-5", "messages": history}
        with pytest.raises(RuntimeError, match="turn set-up failed"):
            client.post("/v1/chat/completions", json=second, headers=headers)
        monkeypatch.setattr(forward, "Turn", turn)
        store = client.app.state.proxy.store
        store.lease("s1", ttl=30, wait=0).release()  # free at once, not leased for 30 s
        again = client.post("/v1/chat/completions", json=second, headers=headers)
        assert again.status_code == 200, again.text
