"""Tool loops driven by the official SDKs through the proxy (shared by the proxy tests).

:func:`run_loop` plays an agent with one tool, ``read``, whose results are large (about 3,700
tokens each), against :class:`proxy_support.ScriptedUpstream` behind a proxy: each step the SDK
sends the whole history, the model (the script) calls ``read`` on the next file, the loop sends
the result back. Steps alternate between streamed and non-streamed calls. Every response body
the SDK receives is recorded as bytes (:func:`tee_client`, an httpx transport), so a test can
compare them with the bytes the upstream sent. At step ``restore_at`` the script calls regio's
``context_restore`` on the call of step 2 instead, which the proxy must answer itself.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import httpx

from proxy_support import ScriptedUpstream, Step, running
from proxy_support import blueprint as make_blueprint

WINDOW, OUTPUT = 16000, 1000
#: The loop's one tool, ``read``, in each API's shape around these two.
READ = {"name": "read", "description": "Read a file."}
READ_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
SYSTEM = "You are a careful coder. Read files with the read tool."
TASK = "Read every file of the repository, one at a time."
PREFIX = {"anthropic": "toolu", "openai_chat": "call", "openai_responses": "fc"}
MODEL = {"anthropic": "claude-sonnet-4-6", "openai_chat": "gpt-5", "openai_responses": "gpt-5"}
PROVIDER = {
    "anthropic": "anthropic",
    "openai_chat": "openai",
    "openai_responses": "openai_responses",
}


def blueprint(api: str) -> str:
    """The loop's blueprint: a 16,000-token window, relief with ``context_restore``."""
    return make_blueprint(
        "proxy-loop", f"{PROVIDER[api]}:{MODEL[api]}", window=WINDOW, output=OUTPUT,
        conversation="70%", history=2000, system=1500,
        extra="relief: {enabled: true, restore_tool: true, keep_last: 2, clear_at_least: 500}\n",
    )  # fmt: skip


def file_text(path: str) -> str:
    """A large tool result (about 3,700 tokens) that names its file on every line."""
    return "\n".join(
        f"line {j} of {path}: value_{j} = compute({j}, {path!r})  # {'x' * 40}" for j in range(120)
    )


def script(steps: int, restore_at: int | None, api: str) -> list[Step]:
    out = [
        Step(f"Step {i}: reading file {i}.", (("read", {"path": f"src/f{i}.py"}),))
        for i in range(steps - 1)
    ]
    out.append(Step("All files are read; done."))
    if restore_at is not None:
        call = f"{PREFIX[api]}_002_0"
        out.insert(
            restore_at, Step("I need file 1 again.", (("context_restore", {"call_id": call}),))
        )
    return out


def sdk_http() -> Any:
    """The httpx package the provider SDKs use (``httpx2`` in their newer releases)."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # older SDKs build on httpx itself
        return httpx


def tee_client(sink: list[bytearray]) -> Any:
    """An SDK http client whose transport records every response body it receives, as bytes,
    in ``sink`` (one bytearray per response)."""
    http = sdk_http()

    class Tee(http.HTTPTransport):  # type: ignore[misc,name-defined]
        def handle_request(self, request: Any) -> Any:
            response = super().handle_request(request)
            record = bytearray()
            sink.append(record)
            inner = response.stream

            class _Stream(http.SyncByteStream):  # type: ignore[misc,name-defined]
                def __iter__(self) -> Iterator[bytes]:
                    for chunk in inner:
                        record.extend(chunk)
                        yield chunk

                def close(self) -> None:
                    inner.close()

            response.stream = _Stream()
            return response

    return http.Client(transport=Tee(), timeout=60)


def summarizing_blueprint(api: str, model: str | None, name: str = "proxy-upsum") -> str:
    """A blueprint for :func:`run_loop` on ``api`` whose window compacts within its steps, its
    summarizer ``model`` (``None``: the client's) writing at most 600 tokens."""
    named = f"model: {model}, " if model else ""
    return make_blueprint(
        name, f"{PROVIDER[api]}:{MODEL[api]}", window=WINDOW, output=OUTPUT,
        conversation="70%", history=2000, system=1500,
        extra=f"summarizer: {{{named}max_summary_tokens: 600}}\n",
    )  # fmt: skip


@contextmanager
def proxied(upstream: ScriptedUpstream, bp: str, **config: Any) -> Iterator[str]:
    """A proxy for ``bp`` in front of ``upstream``, each on a loopback port; yields the proxy's
    base URL."""
    from regio.proxy import ProxyConfig, create_app

    store = config.pop("store", None) or f"sqlite:{tempfile.mkdtemp()}/proxy.db"
    with running(upstream.app()) as up_url:
        app = create_app(ProxyConfig(bp, up_url, store=store, **config))
        with running(app) as url:
            yield url


@attrs.define
class LoopResult:
    """What a loop saw: the bytes the SDK received per call, the calls the client saw, the
    history it held at the end."""

    received: list[bytearray]
    client_calls: list[list[str]]
    history: list[Any]
    steps: int


def _anthropic_step(client: Any, history: list[Any], stream: bool) -> list[tuple[str, str, Any]]:
    tools = [{**READ, "input_schema": READ_SCHEMA}]
    kwargs = dict(
        model=MODEL["anthropic"], max_tokens=OUTPUT, system=SYSTEM, tools=tools, messages=history
    )
    if stream:
        with client.messages.stream(**kwargs) as s:
            reply = s.get_final_message()
    else:
        reply = client.messages.create(**kwargs)
    history.append(
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]}
    )
    calls = [(b.id, b.name, b.input) for b in reply.content if b.type == "tool_use"]
    if calls:
        history.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": i, "content": file_text(a["path"])}
                    for i, _, a in calls
                ],
            }
        )
    return calls


def _chat_step(client: Any, history: list[Any], stream: bool) -> list[tuple[str, str, Any]]:
    tools = [{"type": "function", "function": {**READ, "parameters": READ_SCHEMA}}]
    messages = [{"role": "system", "content": SYSTEM}, *history]
    if stream:
        chunks = client.chat.completions.create(
            model=MODEL["openai_chat"],
            messages=messages,
            tools=tools,
            stream=True,
            stream_options={"include_usage": True},
        )
        text, calls_acc = "", {}
        for chunk in chunks:
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    acc = calls_acc.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                    acc["id"] = tc.id or acc["id"]
                    acc["name"] = (tc.function.name or acc["name"]) if tc.function else acc["name"]
                    acc["arguments"] += (tc.function.arguments or "") if tc.function else ""
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        raw_calls = [calls_acc[k] for k in sorted(calls_acc)]
    else:
        reply = client.chat.completions.create(
            model=MODEL["openai_chat"], messages=messages, tools=tools
        )
        m = reply.choices[0].message
        message = {"role": "assistant", "content": m.content}
        raw_calls = [
            {"id": c.id, "name": c.function.name, "arguments": c.function.arguments}
            for c in m.tool_calls or []
        ]
    if raw_calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for c in raw_calls
        ]
    history.append(message)
    calls = [(c["id"], c["name"], json.loads(c["arguments"])) for c in raw_calls]
    for i, _, a in calls:
        history.append({"role": "tool", "tool_call_id": i, "content": file_text(a["path"])})
    return calls


def _responses_step(client: Any, history: list[Any], stream: bool) -> list[tuple[str, str, Any]]:
    tools = [{"type": "function", **READ, "parameters": READ_SCHEMA}]
    kwargs = dict(model=MODEL["openai_responses"], instructions=SYSTEM, input=history, tools=tools)
    if stream:
        with client.responses.stream(**kwargs) as s:
            reply = s.get_final_response()
    else:
        reply = client.responses.create(**kwargs)
    calls = []
    for item in reply.output:
        data = item.model_dump(exclude_none=True)
        history.append(data)
        if item.type == "function_call":
            calls.append((item.call_id, item.name, json.loads(item.arguments)))
    for i, _, a in calls:
        history.append(
            {"type": "function_call_output", "call_id": i, "output": file_text(a["path"])}
        )
    return calls


def sdk_client(api: str, url: str, sink: list[bytearray], **headers: str) -> Any:
    http = tee_client(sink)
    if api == "anthropic":
        import anthropic

        return anthropic.Anthropic(
            base_url=url,
            api_key="sk-ant-test-KEY-0001",
            http_client=http,
            max_retries=0,
            default_headers=headers,
        )
    import openai

    return openai.OpenAI(
        base_url=url + "/v1",
        api_key="sk-test-KEY-0001",
        http_client=http,
        max_retries=0,
        default_headers=headers,
    )


STEP = {
    "anthropic": _anthropic_step,
    "openai_chat": _chat_step,
    "openai_responses": _responses_step,
}


def run_loop(api: str, url: str, steps: int, **headers: str) -> LoopResult:
    """Play the loop of ``api`` through the proxy at ``url`` (module doc)."""
    received: list[bytearray] = []
    client = sdk_client(api, url, received, **headers)
    history: list[Any] = [{"role": "user", "content": TASK}]
    seen: list[list[str]] = []
    for step in range(steps + 2):
        calls = STEP[api](client, history, stream=step % 2 == 0)
        seen.append([name for _, name, _ in calls])
        if not calls:
            return LoopResult(received, seen, history, step + 1)
    raise AssertionError(f"the loop did not end after {steps + 2} steps")
