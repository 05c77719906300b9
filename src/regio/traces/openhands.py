"""OpenHands event trajectories: a JSON list of serialized events (or runs holding one).

Accepted: a JSON list of events (``tests/runtime/trajs/*.json``, a saved trajectory), a JSON
object ``{"history": [events], "instance_id": ...}`` (one evaluation run), or JSONL with one
such run per line (an evaluation ``output.jsonl``: one trace per run, streamed).

The format is OpenHands' event serialization, All-Hands-AI/OpenHands
``openhands/events/serialization/event.py`` (``event_to_dict``: ``id``, ``timestamp``,
``source`` = ``user`` / ``agent`` / ``environment``, ``message``, and either ``action`` +
``args`` or ``observation`` + ``content`` + ``extras``, ``cause`` = the id of the action an
observation answers) and ``openhands/events/tool.py`` (``ToolCallMetadata``:
``function_name``, ``tool_call_id``, ``model_response``, ``total_calls_in_response``), as in
the test trajectories ``tests/runtime/trajs/*.json`` of that repository.

* a ``user`` ``message`` action → a user message (``args.content``, else ``message``);
* an ``agent`` action with ``tool_call_metadata`` → one model call per ``model_response.id``:
  the reply text and **all** tool calls of ``model_response.choices[0].message`` (an agent
  step that made several calls logs one action per call, all with the same response; the
  first one emits the call, the rest are skipped), and the response's ``usage``;
* an ``agent`` ``message`` action without metadata → a plain reply without usage;
* an observation with ``tool_call_metadata.tool_call_id`` → that call's tool result
  (``content``; ``is_error`` for ``observation: "error"``); an ``error`` observation without
  one → a user observation; other observations (state changes, recalls) are skipped.

``model_response.usage`` is LiteLLM's OpenAI-shaped usage. For Anthropic models LiteLLM adds
``cache_creation_input_tokens`` and ``cache_read_input_tokens`` and counts both inside
``prompt_tokens`` (checked on the real files: 3,486 = 4 + 0 + 3,482), so the Anthropic
``input_tokens`` is ``prompt_tokens - cache_read - cache_creation``; without those keys the
usage is OpenAI's (``prompt_tokens_details.cached_tokens``). The system prompt and tool
schemas are not logged. Timestamps are recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, TypeGuard

from regio.traces.builder import RECORDED, CallSpec, ResultSpec, TraceBuilder
from regio.traces.errors import ImportIssue, TraceFormatError
from regio.traces.format import Trace, Usage
from regio.traces.shared import (
    RECORDED_TIMING,
    RecordedClock,
    parse_arguments,
    source_header,
    trace_stem,
)

__all__ = ["import_openhands", "import_openhands_runs", "litellm_usage", "looks_openhands"]


def looks_openhands(data: object) -> TypeGuard[list[dict[str, Any]]]:
    """True for a non-empty list of objects with ``source`` and ``action`` / ``observation``."""
    return (
        isinstance(data, list)
        and bool(data)
        and all(isinstance(e, dict) for e in data)
        and all("source" in e and ("action" in e or "observation" in e) for e in data)
    )


def _int(value: object) -> int | None:
    if value is None:
        return 0
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def litellm_usage(raw: object, builder: TraceBuilder, record: int) -> Usage | None:
    """LiteLLM's ``usage`` → :class:`Usage` (see the module doc); ``None`` when absent or
    malformed (a warning)."""
    if not isinstance(raw, dict):
        return None
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    prompt, output = _int(raw.get("prompt_tokens")), _int(raw.get("completion_tokens"))
    read, write = (
        _int(raw.get("cache_read_input_tokens")),
        _int(raw.get("cache_creation_input_tokens")),
    )
    cached_n = _int(cached)
    if None in (prompt, output, read, write, cached_n):
        builder.issue(record, "usage", "token counts are not non-negative integers; dropped")
        return None
    assert prompt is not None and output is not None and read is not None and write is not None
    if "cache_read_input_tokens" in raw or "cache_creation_input_tokens" in raw:
        uncached = prompt - read - write
        if uncached < 0:
            builder.issue(record, "usage", "cache tokens exceed prompt_tokens; dropped")
            return None
        return Usage.anthropic(uncached, output, read, write)
    # an absent cached count stays unreported (unknown), not 0 (LiteLLM leaves out
    # prompt_tokens_details when the provider gives no cache figure)
    return Usage.openai(prompt, output, cached_tokens=None if cached is None else cached_n)


def _reply(response: dict[str, Any]) -> dict[str, Any]:
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    return message if isinstance(message, dict) else {}


def _text(value: object) -> str:
    if isinstance(value, list):
        return "\n".join(str(p.get("text", "")) for p in value if isinstance(p, dict))
    return "" if value is None else str(value)


def _agent_call(builder: TraceBuilder, j: int, meta: dict[str, Any]) -> None:
    response = meta.get("model_response")
    response = response if isinstance(response, dict) else {}
    reply = _reply(response)
    calls = []
    raw_calls = reply.get("tool_calls")
    for k, call in enumerate(raw_calls if isinstance(raw_calls, list) else []):
        if not isinstance(call, dict):
            continue
        raw_function = call.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        where = f"tool_call_metadata.model_response.choices[0].message.tool_calls[{k}]"
        args = parse_arguments(function.get("arguments"), builder, j, f"{where}.arguments")
        call_id = call.get("id")
        calls.append(CallSpec(str(call_id) if call_id else None, str(function.get("name")), args))
    if not calls and meta.get("tool_call_id"):
        calls.append(CallSpec(str(meta["tool_call_id"]), str(meta.get("function_name")), {}))
    usage = litellm_usage(response.get("usage"), builder, j)
    builder.assistant(_text(reply.get("content")), calls, usage=usage, record=j)


def _events_trace(
    events: list[Any], path: Path, trace_id: str, record: int | None, meta: dict[str, Any]
) -> tuple[Trace, list[ImportIssue]]:
    builder = TraceBuilder(str(path), RECORDED)
    clock = RecordedClock(builder)
    seen: set[str] = set()
    model: str | None = None
    for j, event in enumerate(events):
        where = j if record is None else record
        clock(event.get("timestamp"))
        tool_meta = event.get("tool_call_metadata")
        tool_meta = tool_meta if isinstance(tool_meta, dict) else None
        args = event.get("args") if isinstance(event.get("args"), dict) else {}
        if "action" in event:
            if event.get("source") == "user" and event["action"] == "message":
                builder.user(_text(args.get("content", event.get("message"))), record=where)
            elif event.get("source") == "agent" and tool_meta is not None:
                response = tool_meta.get("model_response")
                rid = str(response.get("id")) if isinstance(response, dict) else f"event-{j}"
                if rid in seen:
                    continue
                seen.add(rid)
                if isinstance(response, dict) and isinstance(response.get("model"), str):
                    model = model or response["model"]
                _agent_call(builder, where, tool_meta)
            elif event.get("source") == "agent" and event["action"] == "message":
                builder.assistant(_text(args.get("content", event.get("message"))), record=where)
            continue
        kind = event.get("observation")
        content = _text(event.get("content"))
        if tool_meta is not None and tool_meta.get("tool_call_id"):
            result = ResultSpec(str(tool_meta["tool_call_id"]), content, kind == "error")
            builder.tool_results([result], record=where, field="tool_call_metadata.tool_call_id")
        elif kind == "error":
            builder.user(content, observation=True, record=where)
    header = source_header(
        path,
        trace_id,
        "openhands",
        record=record,
        agent="OpenHands",
        model=model,
        timing=RECORDED_TIMING,
        meta=meta,
    )
    return builder.build(header), builder.issues


def _run_meta(run: dict[str, Any]) -> dict[str, Any]:
    return {k: run[k] for k in ("instance_id", "instruction") if isinstance(run.get(k), str)}


def import_openhands(data: object, path: Path) -> tuple[list[Trace], list[ImportIssue]]:
    """An OpenHands event list, or a run object ``{"history": [events], "instance_id": ...}``
    (an evaluation output record), → one trace (see the module doc). Raises
    :class:`TraceFormatError` when ``data`` is neither."""
    meta: dict[str, Any] = {}
    if isinstance(data, dict) and looks_openhands(data.get("history")):
        meta = _run_meta(data)
        data = data["history"]
    if not looks_openhands(data):
        raise TraceFormatError(
            str(path), "not an OpenHands trajectory: expected a list of events with source"
        )
    trace, issues = _events_trace(data, path, f"openhands/{trace_stem(path)}", None, meta)
    return [trace], issues


def import_openhands_runs(
    records: Iterable[tuple[int, Any]], path: Path
) -> tuple[list[Trace], list[ImportIssue]]:
    """OpenHands evaluation output JSONL (``output.jsonl``: one run ``{"instance_id",
    "history": [events], ...}`` per line, streamed) → one trace per run; a line whose
    ``history`` is not an event list is an issue."""
    traces: list[Trace] = []
    issues: list[ImportIssue] = []
    for n, run in records:
        if not (isinstance(run, dict) and looks_openhands(run.get("history"))):
            issues.append(ImportIssue(str(path), n, "history", "not an OpenHands event list"))
            continue
        meta = _run_meta(run)
        name = meta.get("instance_id") or f"{trace_stem(path)}#{n}"
        trace, found = _events_trace(run["history"], path, f"openhands/{name}", n, meta)
        traces.append(trace)
        issues.extend(found)
    return traces, issues
