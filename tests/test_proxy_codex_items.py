"""Codex CLI's tool items through the proxy: the official ``openai`` SDK (``responses.create``,
streamed and not) runs a tool loop whose model calls a custom (freeform) tool ``apply_patch``
(``custom_tool_call`` / ``custom_tool_call_output``), the local shell (``local_shell_call``,
answered by ``function_call_output`` as Codex CLI does, or by ``local_shell_call_output``) and
a function tool ``read``, against the scripted upstream, in a 16,000-token window the loop's
large outputs overflow.

On every upstream request: the session is managed (nothing passed through unmanaged), the
prompt fits the window, every call has its output and every output its call, of the matching
type, every custom tool and local shell item that is there is the item the client sent, the
same fields in the same order (an output cleared to a placeholder differs in its ``output``
only), and the newest outputs the client sent are there verbatim. The window was compacted;
the bytes the SDK received are the upstream's.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("openai", reason="the openai SDK is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")
pytest.importorskip("prometheus_client", reason="prometheus-client is not installed")

import httpx

from proxy_loops import OUTPUT, READ, READ_SCHEMA, WINDOW, blueprint, file_text, proxied, sdk_client
from proxy_support import ScriptedUpstream, Step, metric_families
from regio.layout.render.openai import check_openai_responses

SYSTEM = "You are Codex, a coding agent. Edit files with apply_patch, run commands in the shell."
TASK = "Fix every module of the repository."
PATCH_GRAMMAR = (
    'start: "*** Begin Patch" LF hunk+ "*** End Patch"\nhunk: /(.|\\n)+/\n%import common.LF'
)
TOOLS: list[dict[str, Any]] = [
    {"type": "function", **READ, "parameters": READ_SCHEMA},
    {
        "type": "custom",
        "name": "apply_patch",
        "description": "Edit files with a patch in the apply_patch format.",
        "format": {"type": "grammar", "syntax": "lark", "definition": PATCH_GRAMMAR},
    },
    {"type": "local_shell"},
]
CALL_TYPES = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def _patch(i: int) -> str:
    lines = "\n".join(f"-old_{j} = {j}\n+new_{j} = {j} * {i}" for j in range(12))
    return f"*** Begin Patch\n*** Update File: src/f{i}.py\n@@\n{lines}\n*** End Patch\n"


def _shell(i: int) -> dict[str, Any]:
    return {
        "type": "exec",
        "command": ["bash", "-lc", f"python -m pytest tests/test_f{i}.py"],
        "env": {"CI": "1"},
        "timeout_ms": 60000,
        "working_directory": "/repo",
    }


def _script(steps: int) -> list[Step]:
    """A step per call, cycling apply_patch (custom), the local shell and read (function)."""
    out = []
    for i in range(steps - 1):
        call = [
            ("apply_patch", _patch(i)),
            ("local_shell", _shell(i)),
            ("read", {"path": f"src/f{i}.py"}),
        ]
        out.append(Step(f"Step {i}.", (call[i % 3],)))
    out.append(Step("Every module is fixed."))
    return out


def _output(item: Any, n: int) -> dict[str, Any]:
    """The client's output for a call item (Codex CLI's shapes; every other local shell call
    is answered with the documented ``local_shell_call_output``)."""
    if item.type == "custom_tool_call":
        return {
            "type": "custom_tool_call_output",
            "call_id": item.call_id,
            "output": f"Success. Updated the following files:\nM {item.input.splitlines()[1][16:]}",
        }
    if item.type == "local_shell_call":
        text = file_text(" ".join(item.action.command))
        if n % 2:
            return {
                "type": "local_shell_call_output",
                "id": item.call_id,
                "output": text,
                "status": "completed",
            }
        return {"type": "function_call_output", "call_id": item.call_id, "output": text}
    path = json.loads(item.arguments)["path"]
    return {"type": "function_call_output", "call_id": item.call_id, "output": file_text(path)}


def _run(
    url: str, steps: int
) -> tuple[list[dict[str, Any]], list[bytearray], list[list[dict[str, Any]]]]:
    """The loop (module doc); returns the client's final history, the bytes it received and
    the outputs it sent with each request."""
    received: list[bytearray] = []
    client = sdk_client("openai_responses", url, received)
    history: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    sent: list[list[dict[str, Any]]] = [[]]
    for step in range(steps + 2):
        kwargs = dict(model="gpt-5", instructions=SYSTEM, input=history, tools=TOOLS)
        if step % 2 == 0:
            with client.responses.stream(**kwargs) as s:
                reply = s.get_final_response()
        else:
            reply = client.responses.create(**kwargs)
        calls = [item for item in reply.output if item.type in CALL_TYPES]
        history.extend(item.model_dump(exclude_none=True) for item in reply.output)
        outputs = [_output(item, step) for item in calls]
        history.extend(outputs)
        sent.append(outputs)
        if not calls:
            return history, received, sent
    raise AssertionError(f"the loop did not end after {steps + 2} steps")


def _answered(item: dict[str, Any]) -> str:
    return item["id"] if item["type"] == "local_shell_call_output" else item["call_id"]


def _unpaired(body: dict[str, Any]) -> list[str]:
    calls = {i["call_id"] for i in body["input"] if i.get("type") in CALL_TYPES}
    outputs = {_answered(i) for i in body["input"] if i.get("type") in OUTPUT_TYPES}
    return sorted(calls ^ outputs)


def _passed_through(url: str) -> float:
    family = metric_families(httpx.get(f"{url}/metrics").text).get("regio_passthrough")
    return sum(s.value for s in family.samples if s.name.endswith("_total")) if family else 0.0


def test_a_codex_loop_of_custom_tool_and_local_shell_calls_is_managed_paired_and_sent_as_sent():
    steps = 18
    upstream = ScriptedUpstream(_script(steps), WINDOW, OUTPUT)
    with proxied(upstream, blueprint("openai_responses")) as url:
        history, received, sent = _run(url, steps)
        passed = _passed_through(url)
        status = httpx.get(f"{url}/status.json").json()
    # managed: nothing went upstream as the client sent it, one session served every request
    assert passed == 0
    assert len(status["sessions"]) == 1
    session = status["sessions"][0]
    assert session["requests"] == steps == len(upstream.requests)
    assert session["compactions"] > 0
    # every upstream request fits the window, by the upstream's own count; none was refused
    assert upstream.refused == 0
    assert max(upstream.prompts) <= WINDOW - OUTPUT, upstream.prompts
    client_items = {
        (i["type"], _answered(i) if i["type"] in OUTPUT_TYPES else i["call_id"]): i
        for i in history
        if i.get("type") in CALL_TYPES + OUTPUT_TYPES
    }
    for n, body in enumerate(upstream.requests):
        assert check_openai_responses(body) == [], (n, check_openai_responses(body))
        assert _unpaired(body) == [], (n, _unpaired(body))
        # the custom tools the client defined went upstream as it defined them
        assert [t for t in body["tools"] if t["type"] != "function"] == TOOLS[1:]
        for item in body["input"]:
            kind = item.get("type")
            if kind not in CALL_TYPES + OUTPUT_TYPES or kind.startswith("function_call"):
                continue
            key = _answered(item) if kind in OUTPUT_TYPES else item["call_id"]
            theirs = client_items[(kind, key)]
            assert list(item) == list(theirs), (n, item, theirs)  # same fields, same order
            if item == theirs:
                continue
            assert kind in OUTPUT_TYPES and "cleared to save context" in item["output"], (n, item)
            assert {k: v for k, v in item.items() if k != "output"} == {
                k: v for k, v in theirs.items() if k != "output"
            }
        # the outputs the client just sent are there verbatim
        for output in sent[n]:
            assert output in body["input"], (n, output)
    kinds = {i.get("type") for body in upstream.requests for i in body["input"]}
    assert set(CALL_TYPES + OUTPUT_TYPES) <= kinds
    # the client received the upstream's bytes, streamed and not
    assert [bytes(b) for b in received] == upstream.sent
