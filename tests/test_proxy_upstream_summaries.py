"""``regio proxy --summarizer upstream``: the upstream model writes the compaction summaries,
with the client's own key, during the client's request (:mod:`regio.proxy.summaries`).

The official SDKs run a tool loop through the proxy against the scripted upstream, in a window
small enough to compact: each summary goes to the proxy's upstream on the client's API and
path, with the client's exact key header, the blueprint's summarizer model and
``max_summary_tokens``; the next upstream request carries the summary; the client's replies are
the upstream's bytes. A failed summary call (500, timeout) fails nothing: the offline
summarizer writes that summary and ``/metrics`` counts the fallback. The key is nowhere in the
store nor the request log. By default (``offline``) no summary request goes upstream.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("anthropic", reason="the anthropic SDK is not installed")
pytest.importorskip("openai", reason="the openai SDK is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_loops import (
    MODEL,
    OUTPUT,
    WINDOW,
    proxied,
    run_loop,
    script,
    summarizing_blueprint,
)
from proxy_support import ScriptedUpstream, metric_families, running
from regio import Engine
from regio.blueprint import load_blueprint
from regio.persistence.store import SQLiteStore
from regio.proxy.summaries import summary_reply

SUMMARY_MODEL, SUMMARY_TOKENS = "summary-model-x", 600
STEPS = 9
#: The key each SDK sends (:func:`proxy_loops.sdk_client`; in ``x-api-key`` or
#: ``Authorization: Bearer``, as the SDK's release does).
KEY = {
    "anthropic": "sk-ant-test-KEY-0001",
    "openai_chat": "sk-test-KEY-0001",
    "openai_responses": "sk-test-KEY-0001",
}
KEY_HEADERS = ("x-api-key", "authorization", "anthropic-version")


def _keys(headers: dict[str, str]) -> dict[str, str]:
    """The key headers (and ``anthropic-version``) of one request, as the upstream got them."""
    return {k: v for k, v in headers.items() if k in KEY_HEADERS}


PATH = {
    "anthropic": "/v1/messages",
    "openai_chat": "/v1/chat/completions",
    "openai_responses": "/v1/responses",
}


def _blueprint(api: str, model: str | None = SUMMARY_MODEL) -> str:
    return summarizing_blueprint(api, model)


def _run(
    api: str, tmp_path: Path, upstream: ScriptedUpstream | None = None, **config: Any
) -> tuple[ScriptedUpstream, Any, list[dict[str, Any]], dict[str, Any], str]:
    """The loop through a proxy: the upstream, the loop, the request log, the metric families
    and the store's URL."""
    upstream = upstream or ScriptedUpstream(script(STEPS, None, api), WINDOW, OUTPUT)
    log, store = tmp_path / "requests.jsonl", f"sqlite:{tmp_path}/proxy.db"
    bp = config.pop("bp", None) or _blueprint(api)
    with proxied(upstream, bp, store=store, request_log=str(log), **config) as url:
        loop = run_loop(api, url, STEPS)
        families = metric_families(httpx.get(f"{url}/metrics").text)
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return upstream, loop, rows, families, store


def _sample(families: dict[str, Any], name: str, **labels: str) -> float:
    family = families.get(name)
    if family is None:
        return 0.0
    return sum(
        s.value
        for s in family.samples
        if s.name.endswith("_total") and all(s.labels.get(k) == v for k, v in labels.items())
    )


def _window(api: str, body: dict[str, Any]) -> str:
    return json.dumps(body.get("input") if api == "openai_responses" else body["messages"])


def _summary_messages(api: str, body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The system text and the other messages of a summary request of ``api``."""
    if api == "anthropic":
        return body["system"], body["messages"]
    if api == "openai_responses":
        return body["instructions"], body["input"]
    system, *rest = body["messages"]
    assert system["role"] == "system"
    return system["content"], rest


def _check_written_upstream(api: str, tmp_path: Path) -> None:
    upstream, loop, rows, families, _ = _run(api, tmp_path, summarizer="upstream")
    assert loop.steps == STEPS and len(upstream.requests) == STEPS
    assert all(r["status"] == 200 and r["committed"] for r in rows)
    calls = [r["summary_calls"] for r in rows]
    assert sum(calls) == len(upstream.summaries) > 0, calls
    assert sum(r["summary_fallbacks"] for r in rows) == 0
    # each summary request: the client's API and path, its exact key, the configured model and
    # limit, regio's prompt as a system text and one user message, not streamed
    client = _keys(upstream.headers[0])
    assert KEY[api] in json.dumps(client)
    for body, headers, path in zip(
        upstream.summaries, upstream.summary_headers, upstream.summary_paths, strict=True
    ):
        assert path == PATH[api]
        assert _keys(headers) == client  # exactly the client's, as received
        assert body["model"] == SUMMARY_MODEL and body["stream"] is False
        limit = "max_output_tokens" if api == "openai_responses" else "max_tokens"
        assert body[limit] == SUMMARY_TOKENS
        system, user = _summary_messages(api, body)
        assert system.startswith("You compact an AI agent's working context.")
        assert [m["role"] for m in user] == ["user"]
        assert user[0]["content"].startswith("Transcript to summarize:")
    # the request after the one whose compactions wrote a summary carries the last of them
    written = 0
    for k, n in enumerate(calls[:-1]):
        written += n
        if n:
            text = upstream.summary_text(written)
            assert text in _window(api, upstream.requests[k + 1]), (k, text)
    # every upstream request fits; the client received the upstream's bytes
    assert upstream.refused == 0 and max(upstream.prompts) <= WINDOW - OUTPUT
    assert [bytes(b) for b in loop.received] == upstream.sent
    # what the summaries cost: in the log and in /metrics
    assert sum(r["summary_input_tokens"] for r in rows) > 0
    assert sum(r["summary_output_tokens"] for r in rows) > 0
    ok = _sample(families, "regio_summary_requests", result="ok")
    assert ok == len(upstream.summaries)
    assert _sample(families, "regio_summary_output_tokens") == sum(
        r["summary_output_tokens"] for r in rows
    )


def test_an_anthropic_sdk_loop_has_the_upstream_write_its_summaries_with_the_clients_key(
    tmp_path: Path,
) -> None:
    _check_written_upstream("anthropic", tmp_path)


def test_an_openai_chat_sdk_loop_has_the_upstream_write_its_summaries_with_the_clients_key(
    tmp_path: Path,
) -> None:
    _check_written_upstream("openai_chat", tmp_path)


def test_an_openai_responses_sdk_loop_has_the_upstream_write_its_summaries(
    tmp_path: Path,
) -> None:
    _check_written_upstream("openai_responses", tmp_path)


def test_without_a_summarizer_model_the_summaries_ask_for_the_clients_model(
    tmp_path: Path,
) -> None:
    upstream, *_ = _run(
        "anthropic", tmp_path, summarizer="upstream", bp=_blueprint("anthropic", None)
    )
    assert upstream.summaries
    assert {b["model"] for b in upstream.summaries} == {MODEL["anthropic"]}


def _history_summaries(store: str, rows: list[dict[str, Any]], api: str) -> list[str]:
    """The summary texts in the session's history region, as the store holds it."""
    (session,) = {r["session"] for r in rows}
    engine = Engine.load_from(
        SQLiteStore(store.removeprefix("sqlite:")),
        session,
        blueprint=load_blueprint(_blueprint(api)),
    )
    region = engine.window.region("conversation_history")
    return [e.text for e in region.entries if e.meta.get("summary")]


@pytest.mark.parametrize(
    ("failure", "setup"),
    [("status 500", {"summary_status": 500}), ("timed out", {"summary_delay": 2.0})],
)
def test_a_failed_summary_call_leaves_the_summary_to_the_offline_summarizer_and_is_counted(
    tmp_path: Path, failure: str, setup: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="regio.proxy")
    upstream = ScriptedUpstream(script(STEPS, None, "anthropic"), WINDOW, OUTPUT, **setup)
    upstream, loop, rows, families, store = _run(
        "anthropic", tmp_path, upstream, summarizer="upstream", summary_timeout=0.5
    )
    # every client request succeeded, with the upstream's bytes
    assert loop.steps == STEPS and all(r["status"] == 200 and r["committed"] for r in rows)
    assert [bytes(b) for b in loop.received] == upstream.sent
    assert upstream.refused == 0 and max(upstream.prompts) <= WINDOW - OUTPUT
    # the first failed call of a request leaves its summaries to the offline summarizer, which
    # writes them without asking the upstream again; each is counted so
    tried = len(upstream.summaries)
    assert tried > 0
    assert sum(r["summary_calls"] for r in rows) == tried
    assert all(r["summary_calls"] <= 1 for r in rows), [r["summary_calls"] for r in rows]
    fallbacks = sum(r["summary_fallbacks"] for r in rows)
    assert fallbacks >= tried
    assert all(r["summary_fallbacks"] >= r["summary_calls"] for r in rows)
    assert _sample(families, "regio_summary_requests", result="fallback") == fallbacks
    assert _sample(families, "regio_summary_requests", result="ok") == 0
    summaries = _history_summaries(store, rows, "anthropic")
    assert summaries and not any(upstream.summary in s for s in summaries), failure
    assert not any(upstream.summary in _window("anthropic", b) for b in upstream.requests)
    # one warning per request says so, naming the reason, never the key nor the body
    warned = [
        r.getMessage() for r in caplog.records if "offline summarizer writes" in r.getMessage()
    ]
    assert len(warned) == tried and all(failure in m for m in warned), warned
    assert not any(KEY["anthropic"] in r.getMessage() for r in caplog.records)
    assert not any("Transcript to summarize" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("api", ["anthropic", "openai_chat"])
def test_the_clients_key_is_nowhere_in_the_store_nor_the_request_log(
    api: str, tmp_path: Path
) -> None:
    upstream, _, rows, _, _ = _run(api, tmp_path, summarizer="upstream")
    assert upstream.summaries
    assert all(KEY[api] in json.dumps(_keys(h)) for h in upstream.summary_headers)
    secret = KEY[api].encode()
    files = [p for p in tmp_path.iterdir() if p.is_file()]
    assert any(p.name == "proxy.db" for p in files) and any(p.suffix == ".jsonl" for p in files)
    for path in files:  # the database, its journal files, the request log
        assert secret not in path.read_bytes(), path.name
    assert any(r["summary_calls"] for r in rows)


def test_by_default_the_proxy_sends_no_summary_request_upstream(tmp_path: Path) -> None:
    upstream, _, rows, families, store = _run("anthropic", tmp_path)
    assert any(r["compacted"] for r in rows), "the session never compacted: the check is too easy"
    assert upstream.summaries == []
    assert all(r["summary_calls"] == 0 for r in rows)
    assert _history_summaries(store, rows, "anthropic")
    assert "regio_summary_requests" not in families or not [
        s for s in families["regio_summary_requests"].samples if s.name.endswith("_total")
    ]


def test_the_upstream_summarizer_is_bound_for_one_request_only_whatever_its_end(
    tmp_path: Path,
) -> None:
    """The warm engines a worker keeps between requests summarize offline again once a request
    ends: after a loop that compacted, and after a request whose upstream was gone (502)."""
    from contextlib import ExitStack

    from regio import ExtractiveSummarizer
    from regio.proxy import ProxyConfig, create_app
    from regio.proxy.state import ProxyState

    upstream = ScriptedUpstream(script(STEPS, None, "anthropic"), WINDOW, OUTPUT)
    store = f"sqlite:{tmp_path}/proxy.db"

    def offline(state: ProxyState) -> list[type]:
        warm = state.directory.engines._engines.values()  # the worker's warm engines
        return [type(w.engine.summarizer) for w in warm]

    with ExitStack() as up:
        up_url = up.enter_context(running(upstream.app()))
        config = ProxyConfig(_blueprint("anthropic"), up_url, store=store, summarizer="upstream")
        state = ProxyState.build(config)
        with running(create_app(state)) as url:
            loop = run_loop("anthropic", url, STEPS)
            assert upstream.summaries
            assert offline(state) == [ExtractiveSummarizer]
            up.close()  # the upstream goes away
            body = {
                "model": MODEL["anthropic"],
                "max_tokens": 50,
                "messages": [*loop.history, {"role": "user", "content": "one more"}],
            }
            answer = httpx.post(
                f"{url}/v1/messages", json=body, headers={"x-api-key": KEY["anthropic"]}
            )
            assert answer.status_code == 502
            assert offline(state) == [ExtractiveSummarizer] * 2


def test_a_warm_engine_summarizes_offline_again_before_its_sessions_lease_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The request's summarizer (its client's key) is unbound from the engine the worker keeps
    warm before the session's lease is given back: once the lease goes, the session's next
    request, on any thread, may take that engine, and must not summarize (nor save as the
    engine's own summarizer) with the previous client's key."""
    from regio import ExtractiveSummarizer
    from regio.persistence.store import SessionLease
    from regio.proxy import ProxyConfig, create_app
    from regio.proxy.state import ProxyState

    upstream = ScriptedUpstream(script(STEPS, None, "anthropic"), WINDOW, OUTPUT)
    at_release: list[list[type]] = []
    release = SessionLease.release

    def released(lease: SessionLease) -> None:
        warm = state.directory.engines._engines.values()  # the worker's warm engines
        at_release.append([type(w.engine.summarizer) for w in warm])
        release(lease)

    monkeypatch.setattr(SessionLease, "release", released)
    with running(upstream.app()) as up_url:
        store = f"sqlite:{tmp_path}/proxy.db"
        config = ProxyConfig(_blueprint("anthropic"), up_url, store=store, summarizer="upstream")
        state = ProxyState.build(config)
        with running(create_app(state)) as url:
            run_loop("anthropic", url, STEPS)
    assert upstream.summaries  # the upstream summarizer was bound and used
    assert len(at_release) >= STEPS
    assert all(kinds in ([], [ExtractiveSummarizer]) for kinds in at_release), at_release


def test_a_summary_refused_for_length_is_summarized_again_in_smaller_chunks(
    tmp_path: Path,
) -> None:
    upstream = ScriptedUpstream(
        script(STEPS, None, "anthropic"), WINDOW, OUTPUT, summary_window=6000
    )
    upstream, loop, rows, families, store = _run(
        "anthropic", tmp_path, upstream, summarizer="upstream"
    )
    assert loop.steps == STEPS and all(r["status"] == 200 and r["committed"] for r in rows)
    refused = upstream.refused  # the client's own requests fit: only summaries were refused
    assert refused > 0 and max(upstream.prompts) <= WINDOW - OUTPUT
    assert _sample(families, "regio_summary_requests", result="overflow") == refused
    # the chunks' summaries (and their merge) were the model's, none offline
    assert sum(r["summary_fallbacks"] for r in rows) == 0
    assert (
        _sample(families, "regio_summary_requests", result="ok")
        == len(upstream.summaries) - refused
    )
    summaries = _history_summaries(store, rows, "anthropic")
    assert summaries and all(upstream.summary in s for s in summaries)


def test_an_unknown_summarizer_mode_is_refused_naming_the_option() -> None:
    from regio.proxy import ProxyConfig
    from regio.proxy.errors import ProxyConfigError

    with pytest.raises(ProxyConfigError, match=r"--summarizer 'model'.*offline.*upstream"):
        ProxyConfig(_blueprint("anthropic"), "http://127.0.0.1:9", summarizer="model")
    with pytest.raises(ProxyConfigError, match="--summary-timeout"):
        ProxyConfig(_blueprint("anthropic"), "http://127.0.0.1:9", summary_timeout=0)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def _or_any(shape: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The field as the API shapes it, or any JSON value in its place."""
    return st.one_of(shape, _JSON)


def _list_of(shape: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return _or_any(st.lists(_or_any(shape), max_size=3))


_USAGE = _or_any(
    st.dictionaries(
        st.sampled_from(
            [
                *("input_tokens", "output_tokens", "cache_read_input_tokens"),
                *("cache_creation_input_tokens", "prompt_tokens", "completion_tokens"),
            ]
        ),
        _or_any(st.integers()),
    )
)
_TEXT = _or_any(st.text(max_size=8))


def _part(kind: str) -> st.SearchStrategy[Any]:
    return st.fixed_dictionaries({"type": _or_any(st.just(kind)), "text": _TEXT})


_MESSAGE = st.fixed_dictionaries({"message": _or_any(st.fixed_dictionaries({"content": _TEXT}))})
#: Replies shaped as each API's, any field of them (at any depth) replaced by any JSON value.
_REPLIES = {
    "anthropic": st.fixed_dictionaries(
        {"content": _list_of(_part("text"))},
        optional={"usage": _USAGE},
    ),
    "openai_responses": st.fixed_dictionaries(
        {
            "output": _list_of(
                st.fixed_dictionaries(
                    {
                        "type": _or_any(st.just("message")),
                        "content": _list_of(_part("output_text")),
                    }
                )
            )
        },
        optional={"usage": _USAGE},
    ),
    "openai_chat": st.fixed_dictionaries(
        {"choices": _list_of(_MESSAGE)},
        optional={"usage": _USAGE},
    ),
}


@settings(max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "200")), deadline=None)
@given(
    reply=st.sampled_from(sorted(PATH)).flatmap(
        lambda a: st.tuples(st.just(a), _or_any(_REPLIES[a]))
    )
)
def test_any_summary_reply_is_read_as_text_and_usage_or_refused_as_unreadable(
    reply: tuple[str, object],
) -> None:
    """Whatever the upstream answers 200 with, the summarizer gets text and non-negative usage,
    or ``ValueError`` (the offline summarizer then writes the summary): nothing else escapes
    into the client's request, and no count goes down."""
    api, data = reply
    try:
        text, used_in, used_out = summary_reply(api, data)
    except ValueError:
        return
    assert isinstance(text, str) and used_in >= 0 and used_out >= 0
