"""The adapter conformance harness: one agent task, run through each framework's own loop with
its own offline model, and the checks every model call must pass.

The task: the agent reads ``STEPS`` files with a real tool (``read_file``, whose synthetic
output is about 700 tokens and unique line by line), then answers. The engine's window is
``WINDOW`` tokens, so the window compacts at least twice on the way. Each framework's fake
model (or HTTP mock) turns what it received into a :class:`Call` and :func:`check_call` checks
it: the request fits the window; each tool result is the tool's real output or a relief form
of it (its cleared placeholder, or its head and tail around the trim marker), answering its call
in the message before; no call is left unanswered, and the request is valid under W-A and W-O of
the field cases (:func:`request_problems`); the
agent's system prompt and instructions are present; an Anthropic-bound request carries at most
four ``cache_control`` marks, exactly as many as the layout planned (1..4 on every call but the
first, whose prompt is under the cacheable minimum); no line of text appears twice.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import attrs

import regio

ROOT = Path(__file__).resolve().parents[1]
BLUEPRINT = ROOT / "examples" / "blueprints" / "coding-agent.yaml"

#: The model's context window in the harness (tokens): small, so 40 reads compact it twice.
WINDOW = 14_000
#: Tool steps before the final answer.
STEPS = 40
SYSTEM_PROMPT = "HARNESS SYSTEM PROMPT: you are the harness agent; read every file you are asked."
INSTRUCTIONS = "HARNESS INSTRUCTIONS: answer in one sentence when all files are read."
TASK = "Read the files src/mod1.py to src/mod40.py and report what they compute."
FINAL = "All forty files compute sums."
TOOL = "read_file"
#: Lines at least this long must not appear twice in one request.
LINE_MIN = 40


def tool_output(path: str) -> str:
    """The real output of ``read_file(path)``: 60 lines, each unique across all paths."""
    return "\n".join(
        f"{path}:{i}: total_{i} = accumulate(values[{i}], start={i * 7}) + offset_{path[-6:-3]}"
        for i in range(60)
    )


def path_of(step: int) -> str:
    """The file the model reads at model call ``step`` (1-based)."""
    return f"src/mod{step}.py"


def engine(**options: Any) -> regio.Engine:
    """The harness engine: the coding blueprint at a :data:`WINDOW`-token window."""
    options.setdefault("context_window", WINDOW)
    options.setdefault("output_reserve", 0)
    return regio.Engine.from_blueprint(BLUEPRINT, **options)


@attrs.define
class Part:
    """One part of a normalised message: ``kind`` is ``text``, ``call`` or ``result``;
    ``id`` the call id of a call or result; ``args`` a call's arguments."""

    kind: str
    text: str = ""
    id: str = ""
    args: dict[str, Any] = attrs.field(factory=dict)


@attrs.define
class Call:
    """What one model call received, normalised. ``marks``: the ``cache_control`` marks on
    the wire of an Anthropic-bound call (``None`` otherwise); ``planned``: the breakpoints
    the layout planned for it; ``raw``: the request body as it reached the wire, when it
    did."""

    system: list[str]
    messages: list[tuple[str, list[Part]]]
    marks: int | None = None
    planned: int | None = None
    raw: dict[str, Any] | None = None


class Compactions:
    """Counts the engine's completed compactions (``compaction_completed`` events)."""

    def __init__(self, eng: regio.Engine) -> None:
        self.count = 0
        eng.subscribe(self._seen)

    def _seen(self, event: Any) -> None:
        if type(event).__name__ == "CompactionCompleted":
            self.count += 1


def planned_marks(eng: regio.Engine) -> int:
    """Breakpoints of the engine's last laid-out request."""
    last = eng.state.last_request
    return len(last.breakpoints) if last is not None else 0


# ----- normalisers -----------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"):
            texts.append(str(part.get("text", "")))
    return "\n\n".join(texts)


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {"unreadable": raw}
    return value if isinstance(value, dict) else {"value": value}


def count_marks(value: Any) -> int:
    """``cache_control`` keys anywhere in a JSON value."""
    if isinstance(value, dict):
        return int("cache_control" in value) + sum(count_marks(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_marks(v) for v in value)
    return 0


def from_anthropic(body: dict[str, Any], planned: int | None = None) -> Call:
    """A :class:`Call` of an Anthropic Messages request body (as sent on the wire)."""
    system = body.get("system") or []
    texts = [system] if isinstance(system, str) else [b.get("text", "") for b in system]
    messages = []
    for m in body["messages"]:
        content = m["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        parts = []
        for b in blocks:
            if b["type"] == "text":
                parts.append(Part("text", b["text"]))
            elif b["type"] == "tool_use":
                parts.append(Part("call", id=b["id"], args=_args(b.get("input"))))
            elif b["type"] == "tool_result":
                parts.append(Part("result", _text_of(b.get("content")), id=b["tool_use_id"]))
        messages.append((m["role"], parts))
    return Call(texts, messages, marks=count_marks(body), planned=planned, raw=body)


def from_chat(body: dict[str, Any], planned: int | None = None) -> Call:
    """A :class:`Call` of a Chat Completions request body (``marks`` counted when
    ``planned`` is given: an Anthropic-bound body in Chat form, as LiteLLM takes it)."""
    system, messages = [], []
    for m in body["messages"]:
        role = m["role"]
        if role in ("system", "developer"):
            system.append(_text_of(m.get("content")))
        elif role == "tool":
            part = Part("result", _text_of(m.get("content")), id=m["tool_call_id"])
            messages.append(("tool", [part]))
        else:
            parts = [Part("text", _text_of(m.get("content")))] if m.get("content") else []
            for call in m.get("tool_calls") or []:
                fn = call["function"]
                parts.append(Part("call", id=call["id"], args=_args(fn.get("arguments"))))
            messages.append((role, parts))
    marks = count_marks(body) if planned is not None else None
    return Call(system, messages, marks=marks, planned=planned)


def from_responses(items: list[Any], instructions: str | None) -> Call:
    """A :class:`Call` of Responses input items and instructions."""
    system = [instructions] if instructions else []
    messages: list[tuple[str, list[Part]]] = []
    for item in items:
        item = item if isinstance(item, dict) else item.model_dump(exclude_none=True)
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") in ("system", "developer"):
            system.append(_text_of(item.get("content")))
        elif kind == "message":
            messages.append((item["role"], [Part("text", _text_of(item.get("content")))]))
        elif kind == "function_call":
            part = Part("call", id=item["call_id"], args=_args(item.get("arguments")))
            if messages and messages[-1][0] == "assistant":
                messages[-1][1].append(part)
            else:
                messages.append(("assistant", [part]))
        elif kind == "function_call_output":
            part = Part("result", _text_of(item.get("output")), id=item["call_id"])
            messages.append(("tool", [part]))
    return Call(system, messages)


# ----- checks ----------------------------------------------------------------------------


#: The heading regio puts on each summary and note (one per summary: not a repeated text).
HEADING = re.compile(r"^\[(summary of earlier context|context note) -> region '[^']*'\]$")


def _lines(call: Call) -> list[str]:
    """The lines of every text of the call, headings left out."""
    texts = list(call.system)
    for _, parts in call.messages:
        texts.extend(p.text for p in parts)
    lines = (line.strip() for t in texts for line in t.splitlines())
    return [line for line in lines if not HEADING.match(line)]


#: The marker between a trimmed result's head and tail (regio.policies.relief.trim_marker).
TRIM = re.compile(r"\n\[\.\.\. \d+ characters cut to save context \.\.\.\]\n")


#: The placeholder of a cleared result of a call sent without an id (Gemini's): it names the
#: id the engine gave the call, which the model never sees.
PLACED_CLEARED = re.compile(rf"\[{TOOL} result of call adk-regio-\d+ cleared")


def is_output_or_relief(text: str, output: str, call_id: str) -> bool:
    """Whether ``text`` is the tool's ``output``, its cleared placeholder, or its trimmed form
    (a head and a tail of it around the trim marker). A call the harness named by its place
    (sent without an id) has the placeholder of the id the engine gave it."""
    if text == output or text.startswith(f"[{TOOL} result of call {call_id} cleared"):
        return True
    if call_id.startswith("placed-") and PLACED_CLEARED.match(text):
        return True
    parts = TRIM.split(text)
    return len(parts) == 2 and output.startswith(parts[0]) and output.endswith(parts[1])


def _answered(call: Call, n: int) -> None:
    """Pairing: each result answers a call of the assistant message before its run of
    result messages; each call is answered before the next assistant message."""
    open_calls: dict[str, dict[str, Any]] = {}
    seen: set[str] = set()
    for index, (role, parts) in enumerate(call.messages):
        if role == "assistant":
            assert not open_calls, f"call {n}: calls {sorted(open_calls)} unanswered at {index}"
            for p in parts:
                if p.kind == "call":
                    assert p.id not in seen, f"call {n}: call id {p.id} sent twice"
                    seen.add(p.id)
                    open_calls[p.id] = p.args
            continue
        for p in parts:
            if p.kind != "result":
                continue
            assert p.id in open_calls, f"call {n}: orphaned result {p.id} at message {index}"
            path = open_calls.pop(p.id).get("path", "")
            assert is_output_or_relief(p.text, tool_output(path), p.id), (
                f"call {n}: result {p.id} is neither the tool's output for {path!r} nor a "
                f"relief form of it: {p.text[:120]!r}"
            )
    assert not open_calls, f"call {n}: calls {sorted(open_calls)} never answered"


def as_chat(call: Call) -> list[dict[str, Any]]:
    """The call's messages as Chat Completions messages, in order: a run of results becomes
    ``tool`` messages, a run of other user-side parts one ``user`` message."""
    out: list[dict[str, Any]] = []
    for role, parts in call.messages:
        if role == "assistant":
            calls = [{"id": p.id, "function": {"name": TOOL}} for p in parts if p.kind == "call"]
            out.append({"role": "assistant", "content": "", "tool_calls": calls})
            continue
        for p in parts:
            if p.kind == "result":
                out.append({"role": "tool", "tool_call_id": p.id, "content": p.text})
            elif out and out[-1]["role"] == "user":
                out[-1]["content"] += p.text
            else:
                out.append({"role": "user", "content": p.text})
    return out


def as_anthropic(call: Call) -> list[dict[str, Any]]:
    """The call's messages as Anthropic messages: the user-side messages between two assistant
    messages join one ``user`` message, their parts in order."""
    out: list[dict[str, Any]] = []
    for role, parts in call.messages:
        blocks = []
        for p in parts:
            if p.kind == "call":
                blocks.append({"type": "tool_use", "id": p.id, "name": TOOL, "input": p.args})
            elif p.kind == "result":
                blocks.append({"type": "tool_result", "tool_use_id": p.id, "content": p.text})
            else:
                blocks.append({"type": "text", "text": p.text})
        side = "assistant" if role == "assistant" else "user"
        if out and out[-1]["role"] == side == "user":
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": side, "content": blocks})
    return out


#: The tool ids Anthropic's Messages API accepts (a ``tool_use.id`` outside it is a 400:
#: "String should match pattern '^[a-zA-Z0-9_-]+$'").
ANTHROPIC_TOOL_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def request_problems(call: Call) -> list[str]:
    """What makes the call's request invalid under W-A and W-O of the field cases (and L):
    :func:`regio.layout.wellformed.anthropic_problems` and ``openai_chat_problems`` of its
    messages in both forms; for a request that reached Anthropic's wire (``raw``), a tool id
    outside :data:`ANTHROPIC_TOOL_ID` too (empty: valid)."""
    from regio.layout.wellformed import anthropic_problems, openai_chat_problems

    problems = [*anthropic_problems(as_anthropic(call)), *openai_chat_problems(as_chat(call))]
    if call.raw is not None:
        ids = {p.id for _, parts in call.messages for p in parts if p.kind != "text"}
        problems += [
            f"tool id {i!r} refused by Anthropic"
            for i in sorted(ids)
            if not ANTHROPIC_TOOL_ID.match(i)
        ]
    return problems


def check_call(
    call: Call, n: int, eng: regio.Engine, *, system: str = SYSTEM_PROMPT, instructions: str = ""
) -> None:
    """Every check of the module doc on model call ``n`` (1-based)."""
    problems = request_problems(call)
    assert not problems, f"call {n}: an invalid request: {problems[:3]}"
    texts = [*call.system]
    for _, parts in call.messages:
        texts.extend(p.text for p in parts)
        texts.extend(json.dumps(p.args) for p in parts if p.kind == "call")
    tokens = eng.counter.count("\n".join(texts))
    assert tokens <= WINDOW, f"call {n}: {tokens} tokens, over the {WINDOW}-token window"
    joined = "\n".join(call.system)
    assert system in joined, f"call {n}: the agent's system prompt is missing"
    assert instructions in joined, f"call {n}: the agent's instructions are missing"
    _answered(call, n)
    if call.marks is not None:
        assert call.marks <= 4, f"call {n}: {call.marks} cache_control marks"
        assert call.marks == call.planned, (
            f"call {n}: {call.marks} cache_control marks on the wire, {call.planned} planned"
        )
    twice = [t for t, c in Counter(x for x in _lines(call) if len(x) >= LINE_MIN).items() if c > 1]
    assert not twice, f"call {n}: text sent twice: {twice[0][:100]!r}"


def check_run(calls: list[Call], eng: regio.Engine, compactions: Compactions, **kw: Any) -> None:
    """Every call checked; the run made every step and compacted at least twice."""
    assert len(calls) == STEPS + 1, f"{len(calls)} model calls, expected {STEPS + 1}"
    for n, call in enumerate(calls, 1):
        check_call(call, n, eng, **kw)
    assert compactions.count >= 2, f"the window compacted {compactions.count} times"
    marked = [c.marks for c in calls if c.marks is not None]
    if marked:  # Anthropic-bound: a prompt under the cacheable minimum plans no mark
        assert sum(1 for m in marked if m >= 1) >= len(marked) - 2, marked


# ----- the scripted model ----------------------------------------------------------------


def reply(step: int) -> tuple[str, str, str] | None:
    """The model's move at call ``step`` (1-based): ``(call id, tool, path)``, or ``None``
    for the final answer."""
    if step > STEPS:
        return None
    return (f"call_{step}", TOOL, path_of(step))


#: A model's move: ``(call id, tool, path)`` for a tool call, ``None`` for the final answer.
Move = tuple[str, str, str] | None


def anthropic_reply(step: int) -> dict[str, Any]:
    """An Anthropic Messages response for call ``step``."""
    return anthropic_message(reply(step), step)


def chat_reply(step: int) -> dict[str, Any]:
    """An OpenAI Chat Completions response for call ``step``."""
    return chat_completion(reply(step), step)


def anthropic_message(move: Move, step: int) -> dict[str, Any]:
    """An Anthropic Messages response making ``move`` (at model call ``step``)."""
    if move is None:
        content: list[dict[str, Any]] = [{"type": "text", "text": FINAL}]
    else:
        call_id, name, path = move
        content = [{"type": "tool_use", "id": call_id, "name": name, "input": {"path": path}}]
    return {
        "id": f"msg_{step}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": "end_turn" if move is None else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 50},
    }


def chat_completion(move: Move, step: int) -> dict[str, Any]:
    """An OpenAI Chat Completions response making ``move`` (at model call ``step``)."""
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if move is None:
        message["content"] = FINAL
    else:
        call_id, name, path = move
        arguments = json.dumps({"path": path})
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        ]
    return {
        "id": f"chatcmpl-{step}",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-5",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop" if move is None else "tool_calls",
                "message": message,
            }
        ],
        "usage": {
            "prompt_tokens": 150,
            "completion_tokens": 10,
            "total_tokens": 160,
            "prompt_tokens_details": {"cached_tokens": 50},
        },
    }


#: The tool as Chat Completions and Anthropic tool dicts.
TOOL_SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}},
    "required": ["path"],
}
CHAT_TOOL = {
    "type": "function",
    "function": {"name": TOOL, "description": "Read a file.", "parameters": TOOL_SCHEMA},
}
ANTHROPIC_TOOL = {"name": TOOL, "description": "Read a file.", "input_schema": TOOL_SCHEMA}
