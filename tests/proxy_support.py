"""A scripted upstream for the proxy tests, and servers run in threads.

:class:`ScriptedUpstream` is a loopback server speaking the three APIs the proxy serves
(Anthropic Messages, Chat Completions, Responses), streamed and not. It answers from a script
(:class:`Step`: text and tool calls, consumed in order), counts every prompt it receives with
o200k (every text, tool input and result, tool schema, plus 4 tokens per message: the figure it
reports as the prompt's size), simulates a prefix cache (the longest common prefix, in whole
content pieces, with the previous request) and reports usage in each API's shape. A prompt over
``context_window - max_output`` is refused with the API's length error, as a provider would.
It keeps every request body it received and the exact bytes of every response it sent; a
stream's events are sent in two chunks each, cut mid-event, so a relay must cut at event
boundaries itself. A summary request (regio's summary prompt, ``--summarizer upstream``) is
kept apart (:attr:`ScriptedUpstream.summaries`, with its headers) and answered with the
scripted ``summary`` text and usage, or with ``summary_status``, or after ``summary_delay``, or
refused for length over ``summary_window`` tokens; it consumes no step and is not in
``requests``.

:func:`running` serves an ASGI app with uvicorn on a free loopback port, in a thread.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from regio.tokens import get_counter

__all__ = ["ScriptedUpstream", "Step", "free_port", "running"]


def metric_families(text: str) -> dict[str, Any]:
    """The Prometheus metric families of a ``/metrics`` page ``text``, by name."""
    from prometheus_client.parser import text_string_to_metric_families

    return {f.name: f for f in text_string_to_metric_families(text)}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running(app: Any, port: int | None = None) -> Iterator[str]:
    """Serve ``app`` (ASGI) on ``127.0.0.1``; yields its base URL; stops it after. Without a
    ``port`` the server gets a socket already bound to a free one, so a test running beside it
    (another pytest-xdist worker) can never take that port in between."""
    import uvicorn

    sockets: list[socket.socket] = []
    if port is None:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        sockets.append(sock)
        port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    run = {"sockets": sockets} if sockets else {}
    thread = threading.Thread(target=server.run, kwargs=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        for sock in sockets:
            sock.close()


@attrs.frozen
class Step:
    """One scripted reply: ``text`` and ``calls`` ((tool name, arguments) pairs; in the
    Responses API, text arguments make a ``custom_tool_call`` and the name ``local_shell`` a
    ``local_shell_call`` whose arguments are its ``action``)."""

    text: str = ""
    calls: tuple[tuple[str, Any], ...] = ()


def _texts(api: str, body: dict[str, Any]) -> list[str]:
    """The prompt as content pieces, in order (the unit of the simulated prefix cache)."""
    pieces: list[str] = []
    for tool in body.get("tools") or []:
        pieces.append(
            json.dumps({k: v for k, v in tool.items() if k != "cache_control"}, sort_keys=True)
        )
    system = body.get("system") if api == "anthropic" else body.get("instructions")
    if isinstance(system, str):
        pieces.append(system)
    elif isinstance(system, list):
        pieces.extend(str(b.get("text", "")) for b in system)
    items = body.get("messages") if api != "openai_responses" else body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    for m in items or []:
        pieces.append(f"<{m.get('role') or m.get('type')}>")
        content = m.get("content", m.get("output", m.get("arguments")))
        for part in content if isinstance(content, list) else [content]:
            if isinstance(part, dict):
                inner = part.get("content")
                if isinstance(inner, list):
                    inner = " ".join(str(x.get("text", "")) for x in inner)
                pieces.append(str(part.get("text") or part.get("input") or inner or ""))
            elif part is not None:
                pieces.append(str(part))
        for call in m.get("tool_calls") or []:
            pieces.append(json.dumps(call.get("function"), sort_keys=True))
        if isinstance(m.get("input"), str):  # a custom tool call's input
            pieces.append(m["input"])
        if isinstance(m.get("action"), dict):  # a local shell call's action
            pieces.append(json.dumps(m["action"], sort_keys=True))
    return pieces


@attrs.define
class ScriptedUpstream:
    """The scripted upstream (module doc). ``context_window`` / ``max_output`` in tokens."""

    steps: list[Step]
    context_window: int = 200_000
    max_output: int = 0
    requests: list[dict[str, Any]] = attrs.field(factory=list)
    headers: list[dict[str, str]] = attrs.field(factory=list)
    raw: list[bytes] = attrs.field(factory=list)
    prompts: list[int] = attrs.field(factory=list)
    sent: list[bytes] = attrs.field(factory=list)
    refused: int = 0
    delay: float = 0.0
    summary: str = "Scripted summary: the agent read files and continues with the next one."
    summary_status: int = 200
    summary_delay: float = 0.0
    summary_window: int | None = None
    summaries: list[dict[str, Any]] = attrs.field(factory=list)
    summary_headers: list[dict[str, str]] = attrs.field(factory=list)
    summary_paths: list[str] = attrs.field(factory=list)
    event_delay: float = 0.0
    _previous: list[tuple[str, int]] = attrs.field(factory=list)
    _counter: Any = attrs.field(factory=lambda: get_counter("o200k_base"))
    _n: int = 0

    def app(self) -> Starlette:
        routes = [
            Route("/v1/messages", self._serve("anthropic"), methods=["POST"]),
            Route("/v1/chat/completions", self._serve("openai_chat"), methods=["POST"]),
            Route("/v1/responses", self._serve("openai_responses"), methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
        ]
        return Starlette(routes=routes)

    async def _models(self, request: Request) -> Response:
        self.headers.append(dict(request.headers))
        return JSONResponse({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

    def _usage(self, api: str, body: dict[str, Any]) -> tuple[int, int]:
        pieces = [(p, self._counter.count(p)) for p in _texts(api, body)]
        n_messages = len(body.get("messages") or body.get("input") or [])
        prompt = sum(t for _, t in pieces) + 4 * n_messages
        read = 0
        for (a, ta), (b, _) in zip(pieces, self._previous, strict=False):
            if a != b:
                break
            read += ta
        self._previous = pieces
        return prompt, read

    def _serve(self, api: str) -> Any:
        async def endpoint(request: Request) -> Response:
            data = await request.body()
            body = json.loads(data)
            if _is_summary(api, body):
                return await self._summarize(api, request, body)
            self.raw.append(data)
            self.headers.append(dict(request.headers))
            self.requests.append(body)
            prompt, read = self._usage(api, body)
            self.prompts.append(prompt)
            if prompt > self.context_window - self.max_output:
                self.refused += 1
                return JSONResponse(_too_long(api, prompt, self.context_window), status_code=400)
            step = self.steps[self._n] if self._n < len(self.steps) else Step("done")
            self._n += 1
            if self.delay:
                import anyio

                await anyio.sleep(self.delay)
            usage = (prompt, read, 7 + len(step.text) // 4)
            if body.get("stream"):
                events = _EVENTS[api](self._n, body, step, usage)
                return StreamingResponse(self._chunks(events), media_type="text/event-stream")
            data = json.dumps(_BODIES[api](self._n, body, step, usage)).encode()
            self.sent.append(data)
            return Response(data, media_type="application/json")

        return endpoint

    def summary_text(self, n: int) -> str:
        """The text of the ``n``-th summary answered (from 1)."""
        return f"{self.summary} [summary {n}]"

    async def _summarize(self, api: str, request: Request, body: dict[str, Any]) -> Response:
        self.summaries.append(body)
        self.summary_headers.append(dict(request.headers))
        self.summary_paths.append(request.url.path)
        if self.summary_delay:
            import anyio

            await anyio.sleep(self.summary_delay)
        if self.summary_status != 200:
            error = {"error": {"type": "api_error", "message": "scripted summary failure"}}
            return JSONResponse(error, status_code=self.summary_status)
        prompt = sum(self._counter.count(p) for p in _texts(api, body)) + 8
        if self.summary_window is not None and prompt > self.summary_window:
            self.refused += 1
            return JSONResponse(_too_long(api, prompt, self.summary_window), status_code=400)
        text = self.summary_text(len(self.summaries))
        usage = (prompt, 0, self._counter.count(text))
        return JSONResponse(_BODIES[api](1000 + len(self.summaries), body, Step(text), usage))

    async def _chunks(self, events: list[bytes]) -> AsyncIterator[bytes]:
        whole = b"".join(events)
        self.sent.append(whole)
        for event in events:
            cut = max(1, len(event) // 3)
            yield event[:cut]
            yield event[cut:]
            if self.event_delay:
                import anyio

                await anyio.sleep(self.event_delay)


#: How regio's summary prompt opens (:func:`regio.summarizers._llm.summary_prompt`).
SUMMARY_PROMPT = "You compact an AI agent's working context."


def _is_summary(api: str, body: dict[str, Any]) -> bool:
    if api == "anthropic":
        system = body.get("system")
    elif api == "openai_responses":
        system = body.get("instructions")
    else:
        first = (body.get("messages") or [{}])[0]
        system = first.get("content") if first.get("role") == "system" else None
    return isinstance(system, str) and system.startswith(SUMMARY_PROMPT)


def _too_long(api: str, prompt: int, window: int) -> dict[str, Any]:
    if api == "anthropic":
        message = f"prompt is too long: {prompt} tokens > {window} maximum"
        return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    message = (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {prompt} tokens."
    )
    return {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": None,
            "code": "context_length_exceeded",
        }
    }


def _sse(data: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def _call_id(api: str, n: int, k: int) -> str:
    return {"anthropic": "toolu", "openai_chat": "call", "openai_responses": "fc"}[
        api
    ] + f"_{n:03d}_{k}"


def _anthropic_usage(usage: tuple[int, int, int]) -> dict[str, Any]:
    prompt, read, out = usage
    return {
        "input_tokens": prompt - read,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": read,
        "output_tokens": out,
    }


def _anthropic_body(
    n: int, body: dict[str, Any], step: Step, usage: tuple[int, int, int]
) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": step.text}] if step.text else []
    for k, (name, args) in enumerate(step.calls):
        content.append(
            {"type": "tool_use", "id": _call_id("anthropic", n, k), "name": name, "input": args}
        )
    return {
        "id": f"msg_{n:03d}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": content,
        "stop_reason": "tool_use" if step.calls else "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(usage),
    }


def _anthropic_events(
    n: int, body: dict[str, Any], step: Step, usage: tuple[int, int, int]
) -> list[bytes]:
    message = _anthropic_body(n, body, step, usage)
    start = dict(message, content=[], stop_reason=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    events = [
        _sse({"type": "message_start", "message": start}, "message_start"),
        _sse({"type": "ping"}, "ping"),
    ]
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": {"type": "text", "text": ""},
                    },
                    "content_block_start",
                )
            )
            for piece in _pieces(block["text"]):
                events.append(
                    _sse(
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                        "content_block_delta",
                    )
                )
        else:
            events.append(
                _sse(
                    {
                        "type": "content_block_start",
                        "index": i,
                        "content_block": dict(block, input={}),
                    },
                    "content_block_start",
                )
            )
            for piece in _pieces(json.dumps(block["input"])):
                events.append(
                    _sse(
                        {
                            "type": "content_block_delta",
                            "index": i,
                            "delta": {"type": "input_json_delta", "partial_json": piece},
                        },
                        "content_block_delta",
                    )
                )
        events.append(_sse({"type": "content_block_stop", "index": i}, "content_block_stop"))
    events.append(
        _sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage[2]},
            },
            "message_delta",
        )
    )
    events.append(_sse({"type": "message_stop"}, "message_stop"))
    return events


def _pieces(text: str, size: int = 12) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _chat_usage(usage: tuple[int, int, int]) -> dict[str, Any]:
    prompt, read, out = usage
    return {
        "prompt_tokens": prompt,
        "completion_tokens": out,
        "total_tokens": prompt + out,
        "prompt_tokens_details": {"cached_tokens": read},
    }


def _chat_body(
    n: int, body: dict[str, Any], step: Step, usage: tuple[int, int, int]
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
    if step.calls:
        message["tool_calls"] = [
            {
                "id": _call_id("openai_chat", n, k),
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for k, (name, args) in enumerate(step.calls)
        ]
    return {
        "id": f"chatcmpl-{n:03d}",
        "object": "chat.completion",
        "created": 1700000000 + n,
        "model": body.get("model"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if step.calls else "stop",
            }
        ],
        "usage": _chat_usage(usage),
    }


def _chat_events(
    n: int, body: dict[str, Any], step: Step, usage: tuple[int, int, int]
) -> list[bytes]:
    head = {
        "id": f"chatcmpl-{n:03d}",
        "object": "chat.completion.chunk",
        "created": 1700000000 + n,
        "model": body.get("model"),
    }
    include = bool((body.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = dict(head, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
        if include:
            data["usage"] = None
        return _sse(data)

    events = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": p}) for p in (_pieces(step.text) if step.text else [])]
    for k, (name, args) in enumerate(step.calls):
        first = {
            "index": k,
            "id": _call_id("openai_chat", n, k),
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        events.append(chunk({"tool_calls": [first]}))
        for piece in _pieces(json.dumps(args)):
            events.append(chunk({"tool_calls": [{"index": k, "function": {"arguments": piece}}]}))
    events.append(chunk({}, "tool_calls" if step.calls else "stop"))
    if include:
        events.append(_sse(dict(head, choices=[], usage=_chat_usage(usage))))
    events.append(b"data: [DONE]\n\n")
    return events


def _responses_call(n: int, k: int, name: str, args: Any) -> dict[str, Any]:
    """A Responses call item: a ``local_shell_call`` for the name ``local_shell`` (``args``:
    its ``action``), a ``custom_tool_call`` when ``args`` is text (its ``input``), else a
    ``function_call``."""
    call_id = _call_id("openai_responses", n, k)
    if name == "local_shell":
        return {
            "type": "local_shell_call",
            "id": f"lsitem_{n:03d}_{k}",
            "call_id": call_id,
            "action": args,
            "status": "completed",
        }
    if isinstance(args, str):
        return {
            "type": "custom_tool_call",
            "id": f"ctitem_{n:03d}_{k}",
            "call_id": call_id,
            "name": name,
            "input": args,
            "status": "completed",
        }
    return {
        "type": "function_call",
        "id": f"fcitem_{n:03d}_{k}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }


def _responses_body(
    n: int, body: dict[str, Any], step: Step, usage: tuple[int, int, int]
) -> dict[str, Any]:
    prompt, read, out = usage
    output: list[dict[str, Any]] = []
    if step.text:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n:03d}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}],
            }
        )
    for k, (name, args) in enumerate(step.calls):
        output.append(_responses_call(n, k, name, args))
    return {
        "id": f"resp_{n:03d}",
        "object": "response",
        "created_at": 1700000000 + n,
        "status": "completed",
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "temperature": 1.0,
        "top_p": 1.0,
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": read},
            "output_tokens": out,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + out,
        },
    }


def _responses_tool_events(seq: Any, i: int, item: dict[str, Any]) -> list[bytes]:
    """The events before ``response.output_item.done`` of a custom tool or local shell call:
    the item added (a custom call's input empty, then streamed in
    ``response.custom_tool_call_input.delta`` events and a ``.done``)."""
    if item["type"] == "local_shell_call":
        added = dict(item, status="in_progress")
    else:
        added = dict(item, input="", status="in_progress")
    kind = "response.output_item.added"
    events = [
        _sse({"type": kind, "sequence_number": next(seq), "output_index": i, "item": added}, kind)
    ]
    if item["type"] != "custom_tool_call":
        return events
    at = {"output_index": i, "item_id": item["id"]}
    for piece in _pieces(item["input"]):
        kind = "response.custom_tool_call_input.delta"
        events.append(
            _sse({"type": kind, "sequence_number": next(seq), **at, "delta": piece}, kind)
        )
    kind = "response.custom_tool_call_input.done"
    done = {"type": kind, "sequence_number": next(seq), **at, "input": item["input"]}
    events.append(_sse(done, kind))
    return events


def _responses_events(
    n: int, body: dict[str, Any], step: Step, usage: tuple[int, int, int]
) -> list[bytes]:
    final = _responses_body(n, body, step, usage)
    seq = iter(range(10_000))
    started = dict(final, status="in_progress", output=[], usage=None)
    events = [
        _sse(
            {"type": "response.created", "sequence_number": next(seq), "response": started},
            "response.created",
        ),
        _sse(
            {"type": "response.in_progress", "sequence_number": next(seq), "response": started},
            "response.in_progress",
        ),
    ]
    for i, item in enumerate(final["output"]):
        if item["type"] == "message":
            events.append(
                _sse(
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(seq),
                        "output_index": i,
                        "item": dict(item, status="in_progress", content=[]),
                    },
                    "response.output_item.added",
                )
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            events.append(
                _sse(
                    {
                        "type": "response.content_part.added",
                        "sequence_number": next(seq),
                        "output_index": i,
                        "item_id": item["id"],
                        "content_index": 0,
                        "part": part,
                    },
                    "response.content_part.added",
                )
            )
            for piece in _pieces(step.text):
                events.append(
                    _sse(
                        {
                            "type": "response.output_text.delta",
                            "sequence_number": next(seq),
                            "output_index": i,
                            "item_id": item["id"],
                            "content_index": 0,
                            "delta": piece,
                            "logprobs": [],
                        },
                        "response.output_text.delta",
                    )
                )
            events.append(
                _sse(
                    {
                        "type": "response.output_text.done",
                        "sequence_number": next(seq),
                        "output_index": i,
                        "item_id": item["id"],
                        "content_index": 0,
                        "text": step.text,
                        "logprobs": [],
                    },
                    "response.output_text.done",
                )
            )
            events.append(
                _sse(
                    {
                        "type": "response.content_part.done",
                        "sequence_number": next(seq),
                        "output_index": i,
                        "item_id": item["id"],
                        "content_index": 0,
                        "part": dict(part, text=step.text),
                    },
                    "response.content_part.done",
                )
            )
        elif item["type"] != "function_call":
            events.extend(_responses_tool_events(seq, i, item))
        else:
            events.append(
                _sse(
                    {
                        "type": "response.output_item.added",
                        "sequence_number": next(seq),
                        "output_index": i,
                        "item": dict(item, arguments="", status="in_progress"),
                    },
                    "response.output_item.added",
                )
            )
            for piece in _pieces(item["arguments"]):
                events.append(
                    _sse(
                        {
                            "type": "response.function_call_arguments.delta",
                            "sequence_number": next(seq),
                            "output_index": i,
                            "item_id": item["id"],
                            "delta": piece,
                        },
                        "response.function_call_arguments.delta",
                    )
                )
            events.append(
                _sse(
                    {
                        "type": "response.function_call_arguments.done",
                        "sequence_number": next(seq),
                        "output_index": i,
                        "item_id": item["id"],
                        "arguments": item["arguments"],
                    },
                    "response.function_call_arguments.done",
                )
            )
        events.append(
            _sse(
                {
                    "type": "response.output_item.done",
                    "sequence_number": next(seq),
                    "output_index": i,
                    "item": item,
                },
                "response.output_item.done",
            )
        )
    events.append(
        _sse(
            {"type": "response.completed", "sequence_number": next(seq), "response": final},
            "response.completed",
        )
    )
    return events


_BODIES = {
    "anthropic": _anthropic_body,
    "openai_chat": _chat_body,
    "openai_responses": _responses_body,
}
_EVENTS = {
    "anthropic": _anthropic_events,
    "openai_chat": _chat_events,
    "openai_responses": _responses_events,
}


@contextmanager
def in_process(
    upstream: ScriptedUpstream, blueprint: str, store: str, **config: Any
) -> Iterator[Any]:
    """A proxy for ``blueprint`` in front of ``upstream``, both in this process (Starlette's
    ``TestClient`` for the proxy, ``httpx.ASGITransport`` for the upstream: no socket); yields
    the test client (its ``app.state.proxy`` is the worker's state)."""
    import httpx
    from starlette.testclient import TestClient

    from regio.proxy import ProxyConfig, create_app

    transport = httpx.ASGITransport(app=upstream.app())
    app = create_app(
        ProxyConfig(blueprint, "http://upstream.test", store=store, **config), transport=transport
    )
    with TestClient(app) as client:
        yield client


def blueprint(
    name: str,
    model: str,
    *,
    window: int,
    output: int,
    conversation: int | str,
    history: int | None = None,
    system: int | None = None,
    extra: str = "",
    tokenizer: str = "o200k_base",
) -> str:
    """The YAML of a proxy test blueprint: ``model`` is ``provider:name``; a pinned ``system``
    region capturing the client's system prompt when ``system`` (tokens) is given; a
    ``conversation_history`` of ``history`` tokens, into which the conversation compacts, when
    given; ``extra`` top-level YAML lines (``relief: ...``). No context tools."""
    provider, model_name = model.split(":", 1)
    regions = []
    if system is not None:
        regions.append(
            f"  - {{name: system, kind: pinned, volatility: stable, budget: {system}, "
            "heading: false, capture: [{rule: system_prompt}]}"
        )
    conv = f"  - {{name: conversation, kind: sliding_window, budget: {json.dumps(conversation)}"
    if history is not None:
        regions.append(
            "  - {name: conversation_history, kind: compact_history, source: conversation, "
            f"volatility: grows, budget: {history}}}"
        )
        conv += ", max_items: 2000, eviction: {strategy: compact, compact_count: 20}"
    regions.append(conv + "}")
    head = (
        f"version: 1\nname: {name}\nmodel: {{provider: {provider}, name: {model_name}, "
        f"context_window: {window}, max_output_tokens: {output}}}\ntokenizer: {tokenizer}\n"
        "tools: {context: none}\n"
    )
    return head + extra + "regions:\n" + "\n".join(regions) + "\n"


def wait_for_port(port: int, proc: Any, what: str = "server") -> None:
    """Return once ``127.0.0.1:port`` accepts connections; raise when ``proc`` (a ``Popen``)
    exited first or a minute passed."""
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the {what} did not start") from None
            time.sleep(0.05)


def proxy_command(bp: Any, upstream: str, store: str, port: int, *options: str) -> list[str]:
    """The command line of a ``regio proxy`` worker (run it with the source on ``PYTHONPATH``)."""
    import sys

    return [
        sys.executable, "-m", "regio.cli", "proxy", "--blueprint", str(bp), "--upstream",
        upstream, "--store", store, "--port", str(port), *options,
    ]  # fmt: skip
