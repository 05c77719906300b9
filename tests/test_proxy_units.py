"""The proxy's small parts: the event splitter, item digests, prefixes, the options."""

from __future__ import annotations

import json
import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.proxy.config import ProxyConfig, open_stores
from regio.proxy.errors import ProxyConfigError
from regio.proxy.history import common_prefix, digest, unmarked
from regio.proxy.sse import EventSplitter

EXAMPLES = settings(max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "150")), deadline=None)

LINE_END = st.sampled_from(["\n", "\r\n", "\r"])
EVENT = st.builds(
    lambda name, data, end: (
        (f"event: {name}{end}" if name else "") + "".join(f"data: {d}{end}" for d in data) + end
    ),
    st.one_of(st.none(), st.text("abcxyz_.", min_size=1, max_size=8)),
    st.lists(
        st.text(
            st.characters(blacklist_characters="\r\n", blacklist_categories=("Cs",)), max_size=20
        ),
        min_size=1,
        max_size=3,
    ),
    LINE_END,
)


@EXAMPLES
@given(st.lists(EVENT, min_size=1, max_size=8), st.lists(st.integers(1, 40), max_size=30))
def test_the_event_splitter_returns_every_byte_in_whole_events_however_the_stream_is_cut(
    events, cuts
):
    stream = "".join(events).encode()
    splitter, out, pos = EventSplitter(), [], 0
    for cut in [*cuts, len(stream)]:
        out += splitter.feed(stream[pos : pos + cut])
        pos += cut
    out += splitter.feed(stream[pos:]) + splitter.close()
    assert b"".join(e.raw for e in out) == stream
    one = EventSplitter()
    whole = one.feed(stream) + one.close()
    assert [e.raw for e in out if e.data or e.event != "message"] == [
        e.raw for e in whole if e.data or e.event != "message"
    ]


def test_an_event_is_parsed_by_the_sse_rules():
    (event,) = EventSplitter().feed(b": comment\r\nevent: delta\r\ndata: a\r\ndata:b\r\n\r\n")
    assert (event.event, event.data) == ("delta", "a\nb")


BLOCK = st.fixed_dictionaries(
    {"type": st.just("text"), "text": st.text(max_size=20)},
    optional={"cache_control": st.just({"type": "ephemeral"})},
)
MESSAGE = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant"]),
        "content": st.lists(BLOCK, min_size=1, max_size=3),
    }
)


def _unmarked(message: dict) -> dict:
    """``message`` without its blocks' markers, every key in its place."""
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} for b in message["content"]]
    return {k: blocks if k == "content" else v for k, v in message.items()}


@EXAMPLES
@given(MESSAGE)
def test_an_items_digest_ignores_where_the_client_put_its_cache_markers(message):
    for separators in (None, (",", ":")):
        marked = json.dumps(message, separators=separators).encode()
        plain = json.dumps(_unmarked(message), separators=separators).encode()
        assert digest(marked) == digest(plain)


@EXAMPLES
@given(MESSAGE, MESSAGE, st.sampled_from([None, (",", ":")]))
def test_two_items_have_one_digest_only_when_they_differ_at_most_in_their_markers(a, b, separators):
    def enc(m: dict) -> bytes:
        return json.dumps(m, separators=separators).encode()

    same = enc(_unmarked(a)) == enc(_unmarked(b))  # the same bytes but for the markers
    assert (digest(enc(a)) == digest(enc(b))) == same


def test_a_marker_first_in_its_object_is_cut_with_its_comma_and_a_quoted_one_is_kept():
    text = 'a \\"cache_control\\": {}'
    marker = '"cache_control": {"type": "ephemeral", "ttl": "5m"}'
    data = f'{{{marker}, "type": "text", "text": "{text}"}}'
    assert unmarked(data.encode()) == f'{{"type": "text", "text": "{text}"}}'.encode()


@EXAMPLES
@given(
    st.lists(st.binary(min_size=1, max_size=2), max_size=12),
    st.lists(st.binary(min_size=1, max_size=2), max_size=12),
)
def test_the_common_prefix_is_the_longest_shared_start_bounded_by_the_known_history(
    known, incoming
):
    n = 0
    while n < min(len(known), len(incoming)) and known[n] == incoming[n]:
        n += 1
    assert common_prefix(known, incoming) == n


@pytest.mark.parametrize(
    ("upstream", "words"),
    [
        ("api.anthropic.com", "base URL"),
        ("https://api.anthropic.com/v1/messages", "leave out the API path /v1/messages"),
        ("http://127.0.0.1:8080/v1/chat/completions", "leave out the API path"),
    ],
)
def test_an_upstream_that_is_no_base_url_is_refused_naming_the_option(upstream, words):
    with pytest.raises(ProxyConfigError, match="--upstream") as info:
        ProxyConfig("examples/blueprints/proxy.yaml", upstream)
    assert words in str(info.value)


@pytest.mark.parametrize("seconds", [0, -1, math.nan, math.inf, 86_400.5])
def test_a_lease_lifetime_the_store_would_refuse_is_refused_at_start_naming_the_option(seconds):
    with pytest.raises(ProxyConfigError, match="--lease-seconds"):
        ProxyConfig("examples/blueprints/proxy.yaml", "http://up.example", lease_seconds=seconds)
    ProxyConfig("examples/blueprints/proxy.yaml", "http://up.example", lease_seconds=86_400)


def test_a_store_writer_other_than_process_or_thread_is_refused_naming_both():
    with pytest.raises(ProxyConfigError, match=r"--store-writer 'fork'.*thread.*process"):
        ProxyConfig("examples/blueprints/proxy.yaml", "http://up.example", store_writer="fork")


@pytest.mark.parametrize("writer", ["process", "thread"])
def test_the_sqlite_stores_write_where_the_store_writer_says(tmp_path, writer):
    store, records = open_stores(f"sqlite:{tmp_path}/p.db", writer=writer)
    try:
        assert (store._process is not None) is (writer == "process")
        assert (records._process is not None) is (writer == "process")
        assert store.try_lease("s", "tok", 30.0) is None
    finally:
        records.close()
        store.close()


def test_the_command_line_writes_the_sqlite_store_in_the_thread_unless_told(monkeypatch):
    pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
    import regio.proxy.app
    from regio.cli import main

    seen: list[ProxyConfig] = []
    monkeypatch.setattr(regio.proxy.app, "serve", seen.append)
    base = ["proxy", "--blueprint", "examples/blueprints/proxy.yaml", "--upstream", "http://u.x"]
    assert main(base) == 0
    assert main([*base, "--store-writer", "process"]) == 0
    assert [c.store_writer for c in seen] == ["thread", "process"]


def test_a_store_of_another_scheme_is_refused_naming_both_forms():
    with pytest.raises(ProxyConfigError, match=r"sqlite:PATH .* redis://HOST:PORT/DB"):
        open_stores("postgres://db/1")


def test_the_command_line_reports_a_bad_upstream_with_exit_status_2(capsys):
    pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
    from regio.cli import main

    status = main(
        ["proxy", "--blueprint", "examples/blueprints/proxy.yaml", "--upstream", "nowhere"]
    )
    assert status == 2
    assert "--upstream" in capsys.readouterr().err


def test_a_request_whose_kept_alive_connection_the_upstream_closed_is_sent_once_more():
    pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
    anyio = pytest.importorskip(
        "anyio", reason="anyio (the proxy extra's event loop) is not installed"
    )
    httpx = pytest.importorskip("httpx", reason="httpx is not installed")

    from regio.proxy.upstream import Upstream

    calls = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.content)
        if len(calls) == 1:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        return httpx.Response(200, json={"ok": True})

    async def send() -> int:
        upstream = Upstream("http://upstream.test", transport=httpx.MockTransport(handler))
        response = await upstream.open("POST", "/v1/messages", "", [], b"{}")
        await response.aclose()
        await upstream.close()
        return response.status_code

    assert anyio.run(send) == 200
    assert calls == [b"{}", b"{}"]
