"""Real recorded agent runs replayed through the proxy by the official SDKs, as the agent sent
them.

At each recorded model call the client sends its whole history so far (system prompt, tools,
messages) through the proxy; the scripted upstream answers with the recorded reply (text and
tool calls), and the client appends the reply it received and then the recorded tool results
(answering the call ids the upstream gave, as a live agent would) and the recorded user turns.
Runs: tau-bench airline runs (OpenAI Chat Completions, the recorded ``traj`` messages as they
are), and one SWE-agent function-calling run (Anthropic Messages, imported with regio's own
SWE-agent importer, :func:`regio.traces.detect.import_file`, and written as Messages blocks).
Neither source recorded its tool schemas: the client declares each tool the run calls, by name,
with an open object schema.

The window (8,000 tokens, 1,000 of output) is smaller than the recorded prompts, so the proxy
must cut. On every upstream request: it fits (the upstream's o200k count is at most
``context_window - max_output_tokens``; it refused none), every tool call has its result and
every result its call, and the newest tool result the client sent is in it verbatim; the
engine's payload for every request equals a whole render of the same request (no render log).
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

from proxy_loops import proxied, sdk_client
from proxy_support import ScriptedUpstream, Step
from proxy_support import blueprint as make_blueprint
from regio.content import Text, ToolResult, ToolUse
from regio.engine import Engine
from regio.layout.repair import check_anthropic, check_openai_chat
from regio.traces.bundled import bundled_traces_dir
from regio.traces.detect import import_file
from render_support import whole_render

WINDOW, OUTPUT = 8000, 1000
#: tau-bench runs (indexes in the bundled file): the longest recorded prompts of the file.
TAU_RUNS = (3, 33, 7)
SWE_RUN = "swe-agent/marshmallow-1867__function_calling_replace.traj"


def _blueprint(model: str) -> str:
    return make_blueprint(
        "recorded", model, window=WINDOW, output=OUTPUT, conversation="50%", history=800,
        system=2000,
    )  # fmt: skip


@pytest.fixture
def renders(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, dict[str, Any], dict[str, Any]]]:
    """Every (request, payload, whole render) the proxy's engines made, recorded as it is made
    (before anything downstream touches the payload)."""
    made: list[tuple[Any, dict[str, Any], dict[str, Any]]] = []
    original = Engine.request

    def request(self: Engine, *args: Any, **kwargs: Any) -> Any:
        req, payload = original(self, *args, **kwargs)
        api = kwargs["api"]  # the proxy always names the client's API
        made.append((req, json.loads(json.dumps(payload)), whole_render(req, payload, api)))
        return req, payload

    monkeypatch.setattr(Engine, "request", request)
    return made


def _tool(api: str, name: str) -> dict[str, Any]:
    schema = {"type": "object", "additionalProperties": True}
    description = f"The recorded agent's {name} tool."
    if api == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": schema},
    }


def _check_requests(api: str, upstream: ScriptedUpstream, newest: list[str | None]) -> None:
    check = check_anthropic if api == "anthropic" else check_openai_chat
    assert upstream.refused == 0, upstream.prompts
    assert len(upstream.requests) == len(newest)
    for n, body in enumerate(upstream.requests):
        assert upstream.prompts[n] <= WINDOW - OUTPUT, (n, upstream.prompts)
        assert check(body) == [], (n, check(body))
        if newest[n] is not None:
            assert json.dumps(newest[n])[1:-1] in json.dumps(body["messages"]), n


def _check_run(
    api: str,
    upstream: ScriptedUpstream,
    newest: list[str | None],
    renders: list[tuple[Any, dict[str, Any], dict[str, Any]]],
    status: dict[str, Any],
) -> None:
    """The module doc's checks, for a run of ``len(newest)`` recorded model calls."""
    _check_requests(api, upstream, newest)
    assert len(renders) >= len(newest)
    for n, (_, payload, whole) in enumerate(renders):
        assert payload == whole, n
    # the proxy cut (the recorded prompts do not fit: the last test), in one session
    (session,) = status["sessions"]
    assert session["compactions"] > 0, session
    assert session["requests"] == len(newest)


# ----- tau-bench: OpenAI Chat Completions -----------------------------------------------------


def _tau_runs() -> list[dict[str, Any]]:
    path = bundled_traces_dir() / "tau-bench" / "gpt-4o-airline.first40.json"
    runs: list[dict[str, Any]] = json.loads(path.read_text())
    return runs


def _chat_reply(client: Any, messages: list[Any], tools: list[Any], stream: bool) -> dict[str, Any]:
    if not stream:
        m = (
            client.chat.completions.create(
                model="gpt-4o", messages=messages, tools=tools, max_completion_tokens=OUTPUT
            )
            .choices[0]
            .message
        )
        out: dict[str, Any] = {"role": "assistant", "content": m.content}
        calls = [(c.id, c.function.name, c.function.arguments) for c in m.tool_calls or []]
    else:
        chunks = client.chat.completions.create(
            model="gpt-4o", messages=messages, tools=tools, max_completion_tokens=OUTPUT,
            stream=True, stream_options={"include_usage": True},
        )  # fmt: skip
        text, acc = "", dict[int, list[str]]()
        for chunk in chunks:
            for choice in chunk.choices:
                text += choice.delta.content or ""
                for tc in choice.delta.tool_calls or []:
                    a = acc.setdefault(tc.index, ["", "", ""])
                    a[0] = tc.id or a[0]
                    a[1] = (tc.function.name or a[1]) if tc.function else a[1]
                    a[2] += (tc.function.arguments or "") if tc.function else ""
        out = {"role": "assistant", "content": text or None}
        calls = [(acc[k][0], acc[k][1], acc[k][2]) for k in sorted(acc)]
    if calls:
        out["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": name, "arguments": args}}
            for i, name, args in calls
        ]
    return out


@pytest.mark.parametrize("run", TAU_RUNS)
def test_a_recorded_tau_bench_run_through_the_proxy_fits_the_window_and_keeps_tool_pairs(
    run: int, renders: list[Any]
) -> None:
    traj = _tau_runs()[run]["traj"]
    names = sorted({c["function"]["name"] for m in traj for c in m.get("tool_calls") or []})
    tools = [_tool("openai_chat", n) for n in names]
    at = [i for i, m in enumerate(traj) if m["role"] == "assistant"]
    steps = []
    for i in at:
        m = traj[i]
        calls = tuple(
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in m.get("tool_calls") or []
        )
        steps.append(Step(m.get("content") or "", calls))
    upstream = ScriptedUpstream(steps, WINDOW, OUTPUT)
    history: list[dict[str, Any]] = []
    newest: list[str | None] = []
    last_result: str | None = None
    ids: dict[str, str] = {}  # recorded call id -> the id the upstream gave
    received: list[Any] = []
    with proxied(upstream, _blueprint("openai:gpt-4o")) as url:
        client = sdk_client("openai_chat", url, received)
        for j, m in enumerate(traj):
            if m["role"] == "assistant":
                newest.append(last_result)
                reply = _chat_reply(client, history, tools, stream=len(newest) % 2 == 0)
                recorded = [c["id"] for c in m.get("tool_calls") or []]
                got = [c["id"] for c in reply.get("tool_calls") or []]
                assert len(got) == len(recorded), j
                ids.update(zip(recorded, got, strict=True))
                assert (reply["content"] or "") == (m.get("content") or ""), j
                history.append(reply)
            elif m["role"] == "tool":
                history.append({**m, "tool_call_id": ids[m["tool_call_id"]]})
                last_result = m["content"]
            else:
                history.append(dict(m))
        status = httpx.get(f"{url}/status.json").json()
    _check_run("openai_chat", upstream, newest, renders, status)


# ----- SWE-agent: Anthropic Messages ----------------------------------------------------------


def _anthropic_blocks(blocks: Any, ids: dict[str, str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for b in blocks:
        if isinstance(b, Text):
            if b.text:
                out.append({"type": "text", "text": b.text})
        elif isinstance(b, ToolResult):
            out.append(
                {"type": "tool_result", "tool_use_id": ids[b.tool_use_id], "content": b.content}
            )
        else:
            raise AssertionError(f"unexpected block in a recorded input message: {b!r}")
    return out


def test_a_recorded_swe_agent_run_through_the_proxy_fits_the_window_and_keeps_tool_pairs(
    renders: list[Any],
) -> None:
    (trace,) = import_file(bundled_traces_dir() / SWE_RUN).traces
    system = trace.system_prompt
    names = sorted({c.name for c in trace.tool_calls()})
    tools = [_tool("anthropic", n) for n in names]
    steps = []
    for message in trace.messages():
        if message.role == "assistant":
            text = "".join(b.text for b in message.blocks if isinstance(b, Text))
            calls = tuple((b.name, b.input) for b in message.blocks if isinstance(b, ToolUse))
            steps.append(Step(text, calls))
    upstream = ScriptedUpstream(steps, WINDOW, OUTPUT)
    history: list[dict[str, Any]] = []
    newest: list[str | None] = []
    last_result: str | None = None
    ids: dict[str, str] = {}
    received: list[Any] = []
    with proxied(upstream, _blueprint("anthropic:claude-sonnet-4-6")) as url:
        client = sdk_client("anthropic", url, received)
        for message in trace.messages():
            if message.role == "assistant":
                newest.append(last_result)
                kwargs = dict(
                    model="claude-sonnet-4-6", max_tokens=OUTPUT, system=system, tools=tools,
                    messages=history,
                )  # fmt: skip
                if len(newest) % 2 == 0:
                    with client.messages.stream(**kwargs) as s:
                        reply = s.get_final_message()
                else:
                    reply = client.messages.create(**kwargs)
                recorded = [b.id for b in message.blocks if isinstance(b, ToolUse)]
                got = [b.id for b in reply.content if b.type == "tool_use"]
                ids.update(zip(recorded, got, strict=True))
                history.append(
                    {
                        "role": "assistant",
                        "content": [b.model_dump(exclude_none=True) for b in reply.content],
                    }
                )
                continue
            blocks = _anthropic_blocks(message.blocks, ids)
            results = [b.content for b in message.blocks if isinstance(b, ToolResult)]
            last_result = results[-1] if results else last_result
            if history and history[-1]["role"] == "user":  # tool results then text: one turn
                history[-1]["content"].extend(blocks)
            else:
                history.append({"role": "user", "content": blocks})
        status = httpx.get(f"{url}/status.json").json()
    _check_run("anthropic", upstream, newest, renders, status)


def test_the_recorded_runs_do_not_fit_the_window_uncut() -> None:
    """The replays above must cut: each run's last recorded request, sent whole, is over the
    window's input allowance by the upstream's own count."""
    upstream = ScriptedUpstream([], WINDOW, OUTPUT)
    for run in TAU_RUNS:
        traj = _tau_runs()[run]["traj"]
        last = max(i for i, m in enumerate(traj) if m["role"] == "assistant")
        names = {c["function"]["name"] for m in traj for c in m.get("tool_calls") or []}
        body = {"messages": traj[:last], "tools": [_tool("openai_chat", n) for n in names]}
        prompt, _ = upstream._usage("openai_chat", body)
        assert prompt > WINDOW - OUTPUT, (run, prompt)
    (trace,) = import_file(bundled_traces_dir() / SWE_RUN).traces
    ids = {c.id: c.id for c in trace.tool_calls()}
    messages = [
        {"role": m.role if m.role == "assistant" else "user", "content": blocks}
        for m in trace.steps()[-1].messages
        for blocks in [
            [{"type": "text", "text": b.text} for b in m.blocks if isinstance(b, Text)]
            + [{"type": "tool_use", "input": b.input} for b in m.blocks if isinstance(b, ToolUse)]
            if m.role == "assistant"
            else _anthropic_blocks(m.blocks, ids)
        ]
    ]
    names = {c.name for c in trace.tool_calls()}
    body = {
        "system": trace.system_prompt,
        "messages": messages,
        "tools": [_tool("anthropic", n) for n in names],
    }
    prompt, _ = upstream._usage("anthropic", body)
    assert prompt > WINDOW - OUTPUT, prompt
