"""The official SDKs pointed at the proxy (``base_url``), against a scripted upstream: a 40-step
tool loop with large results (about 3,700 tokens each, 150,000 over the run) in a 16,000-token
window, streamed and non-streamed calls alternating, for the Anthropic Messages and OpenAI Chat
Completions APIs (and a shorter loop for the Responses API).

On every upstream request: the prompt fits the window (the upstream's own count is at most
``context_window - max_output_tokens``, and it refused none), tool calls and results are
paired as the API requires, and the newest tool result the client sent is there verbatim. The
bytes the SDK received are exactly the bytes the upstream sent, but for the one reply in which
the model called regio's ``context_restore`` (answered by the proxy: the client never sees that
tool, and the next upstream request carries the original result).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("anthropic", reason="the anthropic SDK is not installed")
pytest.importorskip("openai", reason="the openai SDK is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx

from proxy_loops import OUTPUT, WINDOW, blueprint, file_text, proxied, run_loop, script
from proxy_support import ScriptedUpstream
from regio.layout.render.openai import check_openai_responses
from regio.layout.repair import check_anthropic, check_openai_chat

#: The client step at which the model calls ``context_restore`` (even steps stream).
RESTORE_AT = {"anthropic": 20, "openai_chat": 21, "openai_responses": 8}


def _texts(body: dict, api: str) -> str:
    return json.dumps(body.get("input") if api == "openai_responses" else body["messages"])


def _paired(api: str, body: dict) -> list[str]:
    if api == "anthropic":
        return check_anthropic(body)
    if api == "openai_chat":
        return check_openai_chat(body)
    problems = check_openai_responses(body)
    calls = {i["call_id"] for i in body["input"] if i.get("type") == "function_call"}
    outputs = {i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"}
    return problems + [f"call {c} has no output" for c in sorted(calls - outputs)]


def _check_loop(api: str, steps: int, **config: Any) -> None:
    upstream = ScriptedUpstream(script(steps, RESTORE_AT[api], api), WINDOW, OUTPUT)
    with proxied(upstream, blueprint(api), **config) as url:
        loop = run_loop(api, url, steps)
        status = httpx.get(f"{url}/status.json").json()
    assert loop.steps == steps
    # the client never saw regio's tool: every call it saw was its own
    assert all(calls in ([], ["read"]) for calls in loop.client_calls), loop.client_calls
    # every upstream request fits the window, by the upstream's own count; none was refused
    assert upstream.refused == 0
    assert max(upstream.prompts) <= WINDOW - OUTPUT, upstream.prompts
    # tool pairs intact in every upstream request
    for n, body in enumerate(upstream.requests):
        assert _paired(api, body) == [], (n, _paired(api, body))
    # the model called context_restore once; the proxy's next request answers it with the
    # original result of call 2 (file 1)
    held = [i for i, b in enumerate(upstream.sent) if b"context_restore" in b]
    assert held == [RESTORE_AT[api]]
    restored = upstream.requests[held[0] + 1]
    assert json.dumps(file_text("src/f1.py"))[1:-1] in _texts(restored, api)
    # the newest result the client sent is in the request that follows it, verbatim
    client_requests = [r for i, r in enumerate(upstream.requests) if i != held[0] + 1]
    assert len(client_requests) == steps
    for n, body in enumerate(client_requests[1:], start=1):
        assert json.dumps(file_text(f"src/f{n - 1}.py"))[1:-1] in _texts(body, api), n
    # bytes: every reply the client received is the upstream's, byte for byte, but the one
    # continued after the restore
    received = [bytes(b) for b in loop.received]
    continued = received.pop(held[0])
    assert b"context_restore" not in continued
    plain = [b for i, b in enumerate(upstream.sent) if i not in (held[0], held[0] + 1)]
    assert received == plain
    # the window was under pressure; one session served the whole loop
    assert len(status["sessions"]) == 1
    session = status["sessions"][0]
    assert session["compactions"] > 0 and session["restores"] == 1
    assert session["requests"] == steps


#: A region the ``park`` capture moves each large result to, keeping only the newest (the
#: conversation keeps a stub): by the restore, call 2's output was displaced long before.
PARK = (
    "  - {name: tool_output, kind: temporary, volatility: rewritten, budget: 6000, "
    "capture: [{rule: park, min_tokens: 1000, keep: 1}]}\n"
)


@pytest.mark.parametrize("api", ["anthropic", "openai_chat"])
def test_a_restore_through_the_proxy_brings_back_a_parked_output_a_newer_one_displaced(api):
    """The loop with each result parked (one kept): when the model calls ``context_restore``
    for call 2, whose output a newer park displaced, the proxy answers with the whole output
    (not the stub the conversation holds), and every upstream request still fits and keeps
    its tool pairs."""
    steps = 24
    upstream = ScriptedUpstream(script(steps, RESTORE_AT[api], api), WINDOW, OUTPUT)
    with proxied(upstream, blueprint(api) + PARK) as url:
        loop = run_loop(api, url, steps)
    assert loop.steps == steps and upstream.refused == 0
    assert max(upstream.prompts) <= WINDOW - OUTPUT, upstream.prompts
    for n, body in enumerate(upstream.requests):
        assert _paired(api, body) == [], (n, _paired(api, body))
    [held] = [i for i, b in enumerate(upstream.sent) if b"context_restore" in b]
    before, restored = upstream.requests[held], upstream.requests[held + 1]
    whole = json.dumps(file_text("src/f1.py"))[1:-1]
    assert whole not in _texts(before, api)  # parked, then displaced: only its stub was sent
    assert whole in _texts(restored, api)


def test_an_anthropic_sdk_loop_of_40_steps_fits_the_window_keeps_tool_pairs_and_upstream_bytes():
    _check_loop("anthropic", 40)


def test_an_anthropic_sdk_loop_is_the_same_with_the_stores_writes_in_a_process_of_their_own():
    _check_loop("anthropic", 40, store_writer="process")


def test_an_openai_chat_sdk_loop_of_40_steps_fits_the_window_keeps_tool_pairs_and_upstream_bytes():
    _check_loop("openai_chat", 40)


def test_an_openai_responses_sdk_loop_fits_the_window_keeps_tool_pairs_and_upstream_bytes():
    _check_loop("openai_responses", 16)
