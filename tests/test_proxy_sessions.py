"""Sessions of the proxy: which session a request joins, what it admits, branches.

The proxy runs in process (Starlette's test client) in front of the scripted upstream
(``httpx.ASGITransport``); the stored engines are read back from the store and their transcripts
compared with what the client sent.
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

import regio
from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.proxy import turn as turn_module

BLUEPRINT = blueprint("proxy-sessions", "openai:gpt-5", window=8000, output=500, conversation=6000)
SYSTEM = {"role": "system", "content": "You are terse."}
_HEADERS = {"authorization": "Bearer sk-test"}


def _store() -> str:
    return f"sqlite:{tempfile.mkdtemp()}/proxy.db"


def _post(client: Any, history: list[dict[str, Any]], header: str | None = None) -> tuple[str, str]:
    """Send ``history``; returns (the session id, the reply text)."""
    headers = {"authorization": "Bearer sk-test", **({"x-regio-session": header} if header else {})}
    body = {"model": "gpt-5", "messages": [SYSTEM, *history]}
    response = client.post("/v1/chat/completions", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.headers["x-regio-session"], response.json()["choices"][0]["message"]["content"]


def _transcript(client: Any, session: str) -> list[tuple[str, str]]:
    state = client.app.state.proxy
    engine = regio.Engine.load_from(state.store, session)
    return [
        (r.entry.role, r.entry.text)
        for r in engine.transcript()
        if r.kind == "message" and r.entry is not None
    ]


def _expected(history: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in history]


def _upstream(n: int = 64) -> ScriptedUpstream:
    return ScriptedUpstream([Step(f"reply {i}") for i in range(n)], 8000, 500)


def test_each_request_reads_only_the_items_new_since_the_sessions_last_request(monkeypatch):
    read: list[int] = []
    real = turn_module.item_messages

    def counting(api: str, raw: Any, where: str, after: Any = None) -> Any:
        read.append(1)
        return real(api, raw, where, after)

    monkeypatch.setattr(turn_module, "item_messages", counting)
    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        history = [{"role": "user", "content": "u0"}]
        per_request = []
        for i in range(12):
            before = len(read)
            session, reply = _post(client, history)
            per_request.append(len(read) - before)
            history += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"u{i + 1}"},
            ]
        assert _transcript(client, session) == _expected(history[:-2])
    # the first request reads its one item; every later one the reply and the new user message
    assert per_request == [1] + [2] * 11


def test_a_retried_request_is_admitted_once():
    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        history = [{"role": "user", "content": "hello"}]
        first, _ = _post(client, history)
        again, _ = _post(client, history)
        assert first == again
        assert _transcript(client, first) == _expected(history)


def _then_a_large_message(
    client: Any, words: int
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """A session that said hello, then a request adding its reply and a user message of
    ``words`` words: (the session, that history, the request body)."""
    history = [{"role": "user", "content": "hello"}]
    session, reply = _post(client, history)
    history += [
        {"role": "assistant", "content": reply},
        {"role": "user", "content": " ".join(f"w{i}" for i in range(words))},
    ]
    return session, history, {"model": "gpt-5", "messages": [SYSTEM, *history]}


def test_a_message_the_window_refuses_is_never_taken_as_admitted_by_the_next_request():
    """A user message larger than the whole conversation region is answered 400 and nothing
    of that request is committed: the same request again is refused again (never sent on
    without the message), and the client's shortened retry extends the same session."""
    upstream = _upstream()
    with in_process(upstream, BLUEPRINT, _store()) as client:
        session, history, body = _then_a_large_message(client, 20_000)
        for _ in range(2):
            refused = client.post("/v1/chat/completions", json=body, headers=_HEADERS)
            assert refused.status_code == 400, refused.text
            assert "Shorten or split it" in refused.json()["error"]["message"]
            assert refused.headers["x-regio-session"] == session
        assert len(upstream.requests) == 1  # nothing went upstream without the message
        metrics = client.get("/metrics").text
        assert (
            f'regio_requests_total{{api="openai_chat",session="{session}",status="400"}} 2.0'
            in metrics
        )
        history[-1] = {"role": "user", "content": "in short: w0 to w19999"}
        again, _ = _post(client, history)
        assert again == session
        assert _transcript(client, session)[:3] == _expected(history)
        assert upstream.requests[-1]["messages"][-1]["content"] == history[-1]["content"]


def test_a_length_refusal_the_engine_cannot_recover_from_commits_nothing():
    """The upstream's window is smaller than the blueprint says: its length refusal gets one
    compaction and one retry, and when the message still cannot fit, the 400 commits nothing
    (the client's shortened retry extends the same session)."""
    upstream = ScriptedUpstream([Step(f"reply {i}") for i in range(8)], 4000, 0)
    with in_process(upstream, BLUEPRINT, _store()) as client:
        session, history, body = _then_a_large_message(client, 1_700)
        refused = client.post("/v1/chat/completions", json=body, headers=_HEADERS)
        assert refused.status_code == 400, refused.text
        assert refused.headers["x-regio-session"] == session
        history[-1] = {"role": "user", "content": "in short"}
        again, _ = _post(client, history)
        assert again == session
        assert _transcript(client, session)[:3] == _expected(history)


def test_an_item_passed_through_unmanaged_is_never_skipped_by_the_next_request():
    """A history item regio has no block for sends the request upstream as it came; nothing of
    it is committed, so the next request reads its items again (and passes through again while
    the item is there) instead of skipping the messages that came with it."""
    upstream = ScriptedUpstream([Step(f"ok{i}") for i in range(6)], 8000, 500)
    store = _store()
    with in_process(
        upstream, BLUEPRINT.replace("openai:gpt-5", "anthropic:claude-x"), store
    ) as client:
        headers = {"x-api-key": "k", "x-regio-session": "s1"}
        messages: list[dict[str, Any]] = [{"role": "user", "content": "think"}]

        def post() -> Any:
            body = {"model": "claude-x", "max_tokens": 50, "messages": messages}
            return client.post("/v1/messages", json=body, headers=headers)

        assert post().status_code == 200
        messages += [
            {"role": "assistant", "content": [{"type": "compaction", "content": "opaque"}]},
            {"role": "user", "content": "go on"},
        ]
        assert post().status_code == 200  # passed through as it came
        messages += [{"role": "assistant", "content": "fine"}, {"role": "user", "content": "next"}]
        assert post().status_code == 200
        sent = [str(m["content"]) for m in upstream.requests[-1]["messages"]]
        assert "go on" in sent and "next" in sent


def test_the_x_regio_session_header_names_the_session_and_keeps_equal_histories_apart():
    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        history = [{"role": "user", "content": "hello"}]
        a, _ = _post(client, history, header="ticket-1")
        b, _ = _post(client, history, header="ticket-2")
        c, _ = _post(client, history)
        assert (a, b) == ("ticket-1", "ticket-2")
        assert c not in (a, b)
        bad = client.post(
            "/v1/chat/completions",
            json={"model": "gpt-5", "messages": history},
            headers={"x-regio-session": "no spaces allowed"},
        )
        assert bad.status_code == 400 and "x-regio-session" in bad.json()["error"]["message"]


def test_an_edited_history_gets_a_branch_and_its_parent_is_left_as_it_was():
    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        history = [{"role": "user", "content": "write a poem"}]
        parent, reply = _post(client, history)
        history += [{"role": "assistant", "content": reply}, {"role": "user", "content": "shorter"}]
        assert _post(client, history)[0] == parent
        before = _transcript(client, parent)
        edited = [*history[:2], {"role": "user", "content": "longer"}]
        branch, _ = _post(client, edited)
        assert branch != parent
        assert _transcript(client, branch) == _expected(edited)
        assert _transcript(client, parent) == before
        status = client.get("/status.json").json()
        row = next(s for s in status["sessions"] if s["id"] == branch)
        assert row["parent"] == parent and row["forked_at"] == 2
        # a new first user message is another conversation (the fingerprint holds it)
        other, _ = _post(client, [{"role": "user", "content": "write a song"}, *history[1:]])
        assert other not in (parent, branch)
        row = next(s for s in client.get("/status.json").json()["sessions"] if s["id"] == other)
        assert row["parent"] is None
        # the original history still goes to the parent
        history += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "thanks"}]
        assert _post(client, history)[0] == parent


def test_a_rewound_history_gets_a_branch_from_where_it_parts():
    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        history = [{"role": "user", "content": "u0"}]
        for i in range(3):
            parent, reply = _post(client, history)
            history += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": f"u{i + 1}"},
            ]
        rewound = [*history[:3], {"role": "user", "content": "another way"}]
        branch, _ = _post(client, rewound)
        assert branch != parent
        assert _transcript(client, branch) == _expected(rewound)
        row = next(s for s in client.get("/status.json").json()["sessions"] if s["id"] == branch)
        assert row["forked_at"] == 3


def test_cache_markers_a_client_moves_between_requests_keep_the_session():
    """Claude Code marks its newest messages with ``cache_control``; the next request moves the
    markers. The same history with its markers moved is the same history."""
    bp = BLUEPRINT.replace("provider: openai, name: gpt-5", "provider: anthropic, name: claude-x")
    with in_process(_upstream(), bp, _store()) as client:
        marker = {"type": "ephemeral"}
        history: list[dict[str, Any]] = []
        sessions = set()
        for i in range(4):
            plain = [
                {**m, "content": [{"type": "text", "text": m["content"][0]["text"]}]}
                for m in history
            ]
            new = {
                "role": "user",
                "content": [{"type": "text", "text": f"u{i}", "cache_control": marker}],
            }
            body = {
                "model": "claude-x",
                "max_tokens": 50,
                "system": "Be terse.",
                "messages": [*plain, new],
            }
            response = client.post("/v1/messages", json=body, headers={"x-api-key": "k"})
            assert response.status_code == 200, response.text
            sessions.add(response.headers["x-regio-session"])
            reply = response.json()["content"][0]["text"]
            history = [
                *plain,
                new,
                {"role": "assistant", "content": [{"type": "text", "text": reply}]},
            ]
        assert len(sessions) == 1


OPS = st.lists(
    st.tuples(st.sampled_from(["extend", "extend", "edit", "rewind", "retry"]), st.integers(0, 50)),
    min_size=1,
    max_size=7,
)


def _apply(
    op: str, k: int, history: list[dict[str, Any]], reply: str, n: int
) -> list[dict[str, Any]]:
    users = [i for i, m in enumerate(history) if m["role"] == "user"]
    if op == "extend":
        return [
            *history,
            {"role": "assistant", "content": reply},
            {"role": "user", "content": f"u{n}"},
        ]
    if op == "edit":
        i = users[k % len(users)]
        return [
            *history[:i],
            {"role": "user", "content": f"{history[i]['content']} e{n}"},
            *history[i + 1 :],
        ]
    if op == "rewind":
        i = users[k % len(users)]
        return [*history[:i], {"role": "user", "content": f"r{n}"}]
    return history


@settings(
    max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "150")) // 10 or 1,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(OPS)
def test_edits_rewinds_and_retries_never_change_a_sessions_history_only_extend_it(ops):
    """Property: after any sequence of extends, edits, rewinds and retries, the session a request
    went to holds exactly the history the client sent, and every other session is unchanged."""
    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        history = [{"role": "user", "content": "u0"}]
        seen: dict[str, list[tuple[str, str]]] = {}
        session, reply = _post(client, history)
        seen[session] = _transcript(client, session)
        for n, (op, k) in enumerate(ops, start=1):
            history = _apply(op, k, history, reply, n)
            session, reply = _post(client, history)
            assert _transcript(client, session) == _expected(history)
            for other, transcript in seen.items():
                if other != session:
                    assert _transcript(client, other) == transcript
            seen[session] = _expected(history)


def test_a_damaged_session_in_the_store_answers_with_the_stores_words_never_a_bare_500():
    # before: a store error other than "session busy" (here a lease that can never expire,
    # which the store reports as SessionDamagedError naming the DELETE that clears it) left the
    # handler and reached the client as Starlette's bare "Internal Server Error"
    from store_support import stray_lease

    with in_process(_upstream(), BLUEPRINT, _store()) as client:
        session = "damaged-one"
        stray_lease(client.app.state.proxy.store, session)
        response = client.post(
            "/v1/chat/completions",
            json={"model": "gpt-5", "messages": [SYSTEM, {"role": "user", "content": "hi"}]},
            headers={"authorization": "Bearer sk-test", "x-regio-session": session},
        )
        assert response.status_code == 500
        message = response.json()["error"]["message"]
        assert "session store refused" in message and "DELETE" in message
