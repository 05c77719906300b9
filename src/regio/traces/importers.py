"""Importers: public agent-run formats → :class:`regio.traces.format.Trace`.

Each importer takes the parsed file (``data``), the path (for issues and headers) and the
:class:`~regio.traces.builder.Timing`, and returns the traces it could build; problems in single
records are collected as :class:`~regio.traces.errors.ImportIssue` and the rest still imports.
A file whose top-level shape is wrong for the format raises
:class:`~regio.traces.errors.TraceFormatError`.

Formats (checked against the runs bundled in ``examples/traces``, see ``PROVENANCE.md``):

* ``swe-agent`` — a ``.traj`` object; ``history`` is the message list the model saw: ``role``,
  ``content``, ``message_type`` (``system_prompt`` / ``observation`` / ``action`` /
  ``demonstration``), and in function-calling runs ``tool_calls`` (a list, or that list stored
  as a string) on assistant messages and ``tool_call_ids`` on ``role: tool`` messages.
  Plain-text runs put the action in the assistant text and the observation in a user message
  (``observation: true``). Model from ``replay_config.agent.model.name`` when present.
* ``mini-swe-agent`` — ``.traj.json``: either a bare list of ``{role, content}`` messages (the
  bundled test data) or an object with ``messages`` (and ``info``); strictly append-only,
  plain-text actions, observations are user messages.
* ``tau-bench`` — a JSON list of runs ``{task_id, trial, reward, info, traj}``; one trace per
  run; ``traj`` is an OpenAI chat message list. tau-bench reuses OpenAI call ids within a run
  after they were answered; the builder renames the reuse (warning).
* ``openai`` — a JSON list of OpenAI chat messages, an object ``{"messages": [...],
  "tools": [...]}``, or JSONL (one message per line, or one ``{"messages": ...}`` conversation
  per line, one trace each).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from regio.content import Thinking
from regio.traces.builder import ResultSpec, Timing, TraceBuilder
from regio.traces.errors import ImportIssue, TraceFormatError
from regio.traces.format import Trace
from regio.traces.openai_chat import (
    content_text,
    feed_openai_messages,
    loose_literal,
    parse_tool_calls,
)
from regio.traces.shared import source_header, trace_stem

__all__ = [
    "import_mini_swe_agent",
    "import_openai",
    "import_swe_agent",
    "import_tau_bench",
]

#: (record or line, parsed object) pairs of a JSONL file, or the parsed JSON document.
Records = list[tuple[int, Any]]


def _dict_field(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


# -- SWE-agent ----------------------------------------------------------------------------------


def _swe_model(data: dict[str, Any]) -> str | None:
    config = loose_literal(data.get("replay_config"))
    if isinstance(config, dict):
        agent = config.get("agent")
        model = agent.get("model") if isinstance(agent, dict) else None
        if isinstance(model, dict) and isinstance(model.get("name"), str):
            return str(model["name"])
    return None


def import_swe_agent(
    data: object, path: Path, timing: Timing
) -> tuple[list[Trace], list[ImportIssue]]:
    """A SWE-agent ``.traj`` object → one trace (see module docstring)."""
    if not isinstance(data, dict) or not isinstance(data.get("history"), list):
        raise TraceFormatError(str(path), "not a SWE-agent trajectory: no 'history' list")
    builder = TraceBuilder(str(path), timing)
    history: list[Any] = data["history"]
    agent_names: list[str] = []
    for j, message in enumerate(history):
        if not isinstance(message, dict):
            builder.issue(j, "", "history entry is not an object; skipped")
            continue
        role = message.get("role")
        if isinstance(message.get("agent"), str) and message["agent"] not in agent_names:
            agent_names.append(message["agent"])
        text, _ = content_text(message.get("content"), builder, j, "content")
        if role == "assistant":
            calls = parse_tool_calls(message.get("tool_calls"), builder, j, "tool_calls")
            thinking = [
                Thinking(str(b.get("thinking", "")), str(b.get("signature", "")))
                for b in message.get("thinking_blocks") or ()
                if isinstance(b, dict)
            ]
            builder.assistant(text, calls, thinking=thinking, record=j, field="")
        elif role == "tool":
            ids = loose_literal(message.get("tool_call_ids"))
            if isinstance(ids, str):
                ids = [ids]
            if not isinstance(ids, list) or not ids:
                ids = [None]
            results = [ResultSpec(str(ids[0]) if ids[0] else None, text)]
            results += [ResultSpec(str(i), "") for i in ids[1:]]
            builder.tool_results(results, record=j, field="tool_call_ids")
        else:
            _plain_message(builder, role, text, j, "history entry")
    info = _dict_field(data, "info")
    meta: dict[str, Any] = {k: info[k] for k in ("exit_status", "model_stats") if k in info}
    if agent_names:
        meta["agent_names"] = agent_names
    trace = builder.build(
        source_header(
            path,
            f"swe-agent/{trace_stem(path)}",
            "swe-agent",
            agent="SWE-agent",
            model=_swe_model(data),
            meta=meta,
        )
    )
    return [trace], builder.issues


def _plain_message(builder: TraceBuilder, role: object, text: str, j: int, what: str) -> None:
    """A ``system`` or ``user`` message of record ``j`` into ``builder``; any other role is an
    issue (``what``: the record's name in it), the record skipped."""
    if role == "system":
        builder.system(text)
    elif role == "user":
        builder.user(text, observation=builder.started, record=j, field="content")
    elif role is None:
        builder.issue(j, "role", f"{what} has no role; skipped")
    else:
        builder.issue(j, "role", f"unknown role {role!r}; skipped")


# -- mini-swe-agent ----------------------------------------------------------------------------


def import_mini_swe_agent(
    data: object, path: Path, timing: Timing
) -> tuple[list[Trace], list[ImportIssue]]:
    """A mini-swe-agent trajectory (bare message list or ``{"messages": ...}``) → one trace."""
    info: dict[str, Any] = {}
    if isinstance(data, dict):
        info = _dict_field(data, "info")
        data = data.get("messages")
    if not isinstance(data, list):
        raise TraceFormatError(
            str(path), "not a mini-swe-agent trajectory: expected a message list or 'messages'"
        )
    builder = TraceBuilder(str(path), timing)
    for j, message in enumerate(data):
        if not isinstance(message, dict):
            builder.issue(j, "", "message is not an object; skipped")
            continue
        role = message.get("role")
        text, _ = content_text(message.get("content"), builder, j, "content")
        if role == "assistant":
            builder.assistant(text, record=j)
        else:
            _plain_message(builder, role, text, j, "message")
    model = None
    config = info.get("config")
    if isinstance(config, dict) and isinstance(config.get("model"), dict):
        name = config["model"].get("model_name")
        model = name if isinstance(name, str) else None
    meta = {k: info[k] for k in ("exit_status", "mini_version") if k in info}
    trace = builder.build(
        source_header(
            path,
            f"mini-swe-agent/{trace_stem(path)}",
            "mini-swe-agent",
            agent="mini-swe-agent",
            model=model,
            meta=meta,
        )
    )
    return [trace], builder.issues


def _run_locator(record: int, key: str) -> Callable[[int], tuple[int | None, str]]:
    """Issues of message ``j`` point at ``record`` and field ``<key>[j].``."""

    def locate(j: int) -> tuple[int | None, str]:
        return record, f"{key}[{j}]."

    return locate


# -- tau-bench -----------------------------------------------------------------------------------


def import_tau_bench(
    data: object, path: Path, timing: Timing
) -> tuple[list[Trace], list[ImportIssue]]:
    """A tau-bench result list → one trace per run (record = run index)."""
    runs = [data] if isinstance(data, dict) else data
    if not isinstance(runs, list):
        raise TraceFormatError(str(path), "not a tau-bench result list: expected a JSON list")
    traces: list[Trace] = []
    issues: list[ImportIssue] = []
    stem = trace_stem(path)
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or not isinstance(run.get("traj"), list):
            issues.append(ImportIssue(str(path), i, "traj", "run has no 'traj' list; skipped"))
            continue
        builder = TraceBuilder(str(path), timing)
        feed_openai_messages(builder, run["traj"], _run_locator(i, "traj"))
        issues.extend(builder.issues)
        meta = {k: run[k] for k in ("task_id", "trial", "reward") if k in run}
        run_info = run.get("info")
        if isinstance(run_info, dict) and "user_cost" in run_info:
            meta["user_cost_usd"] = run_info["user_cost"]
        traces.append(
            builder.build(
                source_header(
                    path,
                    f"tau-bench/{stem}#{i}",
                    "tau-bench",
                    record=i,
                    agent="tau-bench tool-calling agent",
                    meta=meta,
                )
            )
        )
    if runs and not traces:
        raise TraceFormatError(str(path), "no run of the tau-bench list has a 'traj' list")
    return traces, issues


# -- plain OpenAI --------------------------------------------------------------------------------


def _conversation(
    messages: Sequence[Any],
    path: Path,
    timing: Timing,
    trace_id: str,
    locate: Callable[[int], tuple[int | None, str]],
    *,
    tools: object = None,
    record: int | None = None,
    model: object = None,
) -> tuple[Trace, list[ImportIssue]]:
    builder = TraceBuilder(str(path), timing)
    feed_openai_messages(builder, messages, locate)
    tool_schemas = tuple(t for t in tools if isinstance(t, dict)) if isinstance(tools, list) else ()
    header = source_header(
        path,
        trace_id,
        "openai",
        record=record,
        tools=tool_schemas,
        model=model if isinstance(model, str) else None,
    )
    return builder.build(header), builder.issues


def import_openai(
    data: object, path: Path, timing: Timing, *, lines: Records | None = None
) -> tuple[list[Trace], list[ImportIssue]]:
    """OpenAI chat messages → traces.

    ``data`` is a message list or ``{"messages": [...]}``; for JSONL files pass ``lines`` (line
    number, object) instead: lines that are messages form one trace, lines that hold
    ``messages`` form one trace each.
    """
    stem = trace_stem(path)
    if lines is not None:
        traces: list[Trace] = []
        issues: list[ImportIssue] = []
        singles = [
            (n, obj) for n, obj in lines if not (isinstance(obj, dict) and "messages" in obj)
        ]
        for n, obj in lines:
            if isinstance(obj, dict) and "messages" in obj:
                if not isinstance(obj["messages"], list):
                    issues.append(ImportIssue(str(path), n, "messages", "not a list; skipped"))
                    continue
                trace, found = _conversation(
                    obj["messages"],
                    path,
                    timing,
                    f"openai/{stem}#{n}",
                    _run_locator(n, "messages"),
                    tools=obj.get("tools"),
                    record=n,
                    model=obj.get("model"),
                )
                traces.append(trace)
                issues.extend(found)
        if singles:
            trace, found = _conversation(
                [obj for _, obj in singles],
                path,
                timing,
                f"openai/{stem}",
                lambda j: (singles[j][0], ""),
            )
            traces.append(trace)
            issues.extend(found)
        return traces, issues
    tools = model = None
    if isinstance(data, dict):
        tools, model = data.get("tools"), data.get("model")
        data = data.get("messages")
    if not isinstance(data, list):
        raise TraceFormatError(
            str(path), "not an OpenAI message list: expected a list or {'messages': [...]}"
        )
    trace, issues = _conversation(
        data, path, timing, f"openai/{stem}", lambda j: (j, ""), tools=tools, model=model
    )
    return [trace], issues
