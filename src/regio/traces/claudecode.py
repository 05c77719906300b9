"""Claude Code session transcripts (``~/.claude/projects/<project>/<session-id>.jsonl``).

Anthropic documents where Claude Code keeps sessions but calls the record format internal, so
this follows the format as public tools read it: simonw/claude-code-transcripts
(``src/claude_code_transcripts/__init__.py``) and the reverse-engineered reference of
skillsynchq/txcript (``docs/formats/claude-code.md``). One JSON object per line:

* ``{"type": "user" | "assistant", "uuid", "parentUuid", "sessionId", "timestamp", "cwd",
  "version", "gitBranch", "isSidechain", "message": {...}}`` — ``message`` is an Anthropic
  Messages API message: ``role``, ``content`` (a string, or blocks ``text`` / ``thinking`` /
  ``tool_use`` / ``tool_result`` / ``image``), and on assistant lines ``id``, ``model`` and
  ``usage`` (``input_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``,
  ``output_tokens``);
* Claude Code writes **one assistant line per content block**, each repeating the message
  ``id`` and its ``usage``: consecutive assistant lines with the same ``message.id`` are one
  model call here (blocks in order, the last line's usage);
* tool results come back as ``user`` lines whose content holds ``tool_result`` blocks;
* ``isSidechain: true`` lines belong to a subagent's own conversation and are skipped (counted
  in ``meta.sidechain_lines``), unless the file is a subagent's own transcript (its first
  conversation line is a sidechain line, as in ``<session-id>/subagents/agent-<id>.jsonl``):
  then the sidechain lines are the trace and the others are skipped; ``summary`` lines give
  ``meta.summary``; a ``system`` line with ``subtype: "compact_boundary"`` becomes a
  ``compact`` event (the conversation was compacted there); other line types
  (``file-history-snapshot``, ``progress``, ...) are skipped.

Timestamps are recorded (seconds from the first line). Assistant lines whose model is
``<synthetic>`` (messages Claude Code writes itself, e.g. API errors) keep no usage. A
``tool_use`` whose ``input`` is not an object is kept in regio's invalid-arguments form, with
a warning (:func:`regio.traces.shared.parse_arguments`; a missing ``input`` is ``{}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs

from regio.content import Thinking
from regio.traces.builder import RECORDED, CallSpec, ResultSpec, TraceBuilder
from regio.traces.errors import ImportIssue
from regio.traces.format import Compaction, Trace, Usage
from regio.traces.shared import RecordedClock, parse_arguments, recorded_trace, trace_stem

__all__ = ["anthropic_usage", "import_claude_code", "is_subagent_transcript"]


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def anthropic_usage(raw: object, builder: TraceBuilder, record: int, field: str) -> Usage | None:
    """An Anthropic ``usage`` object → :class:`Usage` (missing counts are 0, and a missing
    cache count is left out of ``reported``: unknown); a usage whose counts are not
    non-negative integers is dropped with a warning."""
    if not isinstance(raw, dict):
        return None
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    counts = {k: _count(raw.get(k, 0) or 0) for k in keys}
    bad = [k for k, v in counts.items() if v is None]
    if bad:
        builder.issue(record, field, f"usage {bad} not non-negative integers; dropped", "warning")
        return None
    cache = {  # an absent cache count is unreported (unknown), not 0
        k: (None if raw.get(k) is None else int(counts[k] or 0)) for k in keys[2:]
    }
    return Usage.anthropic(
        int(counts["input_tokens"] or 0), int(counts["output_tokens"] or 0), **cache
    )


def _block_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image":
                parts.append("[image]")
        return "\n".join(parts)
    return "" if content is None else str(content)


@attrs.define
class _Call:
    message_id: str
    record: int
    text: list[str] = attrs.field(factory=list)
    thinking: list[Thinking] = attrs.field(factory=list)
    calls: list[CallSpec] = attrs.field(factory=list)
    usage: Usage | None = None


@attrs.define
class _Session:
    builder: TraceBuilder
    clock: RecordedClock
    sidechain: bool = False
    meta: dict[str, Any] = attrs.field(factory=dict)
    model: str | None = None
    call: _Call | None = None
    done_ids: set[str] = attrs.field(factory=set)

    def flush(self) -> None:
        call, self.call = self.call, None
        if call is None:
            return
        self.builder.assistant(
            "\n".join(t for t in call.text if t),
            call.calls,
            thinking=call.thinking,
            usage=call.usage,
            record=call.record,
        )
        self.done_ids.add(call.message_id)

    def assistant(self, n: int, message: dict[str, Any]) -> None:
        message_id = str(message.get("id") or f"line-{n}")
        if self.call is None or self.call.message_id != message_id:
            self.flush()
            self.call = _Call(message_id, n)
        call = self.call
        model = message.get("model")
        if isinstance(model, str) and model != "<synthetic>":
            self.model = self.model or model
            usage = anthropic_usage(message.get("usage"), self.builder, n, "message.usage")
            if message_id in self.done_ids:
                self.builder.issue(
                    n,
                    "message.id",
                    f"message {message_id!r} continues after other lines; its usage was "
                    "already counted, kept without usage",
                    "warning",
                )
                usage = None
            call.usage = usage or call.usage
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for k, block in enumerate(blocks):
            self._block(n, k, block, call)

    def _block(self, n: int, k: int, block: object, call: _Call) -> None:
        fields: dict[str, Any] = block if isinstance(block, dict) else {}
        kind = fields.get("type")
        if kind == "text":
            call.text.append(str(fields.get("text") or ""))
        elif kind == "thinking":
            call.thinking.append(
                Thinking(str(fields.get("thinking", "")), str(fields.get("signature", "")))
            )
        elif kind == "tool_use":
            where = f"message.content[{k}].input"
            call.calls.append(
                CallSpec(
                    str(fields["id"]) if fields.get("id") else None,
                    str(fields.get("name") or "tool"),
                    parse_arguments(fields.get("input"), self.builder, n, where),
                )
            )
        else:
            self.builder.issue(
                n, f"message.content[{k}]", f"block type {kind!r} not kept", "warning"
            )

    def user(self, n: int, message: dict[str, Any]) -> None:
        self.flush()
        content = message.get("content")
        if not isinstance(content, list):
            self.builder.user(_block_text(content), record=n, field="message.content")
            return
        results = [
            ResultSpec(
                str(b["tool_use_id"]) if b.get("tool_use_id") else None,
                _block_text(b.get("content")),
                bool(b.get("is_error", False)),
            )
            for b in content
            if isinstance(b, dict) and b.get("type") == "tool_result"
        ]
        if results:
            self.builder.tool_results(results, record=n, field="message.content")
        rest = [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        if rest:
            self.builder.user(_block_text(rest), record=n, field="message.content")

    def line(self, n: int, obj: object) -> None:
        if not isinstance(obj, dict):
            self.builder.issue(n, "", "line is not a JSON object; skipped")
            return
        kind = obj.get("type")
        if bool(obj.get("isSidechain")) != self.sidechain and kind in ("user", "assistant"):
            key = "main_lines" if self.sidechain else "sidechain_lines"
            self.meta[key] = self.meta.get(key, 0) + 1
            return
        if kind == "summary":
            self.meta.setdefault("summary", obj.get("summary"))
            return
        self.clock(obj.get("timestamp"))
        for key in ("sessionId", "agentId", "cwd", "version", "gitBranch"):
            if key in obj and key not in self.meta:
                self.meta[key] = obj[key]
        message = obj.get("message")
        if kind in ("user", "assistant") and not isinstance(message, dict):
            self.builder.issue(n, "message", f"{kind} line without a message object; skipped")
        elif kind == "assistant" and isinstance(message, dict):
            self.assistant(n, message)
        elif kind == "user" and isinstance(message, dict):
            self.user(n, message)
        elif kind == "system" and obj.get("subtype") == "compact_boundary":
            self.flush()
            self.builder.events.append(Compaction(self.builder.clock, None))


def is_subagent_transcript(head: Iterable[tuple[int, Any]]) -> bool:
    """True when the first user / assistant line of ``head`` is a sidechain line (the file is
    a subagent's own transcript)."""
    for _, obj in head:
        if isinstance(obj, dict) and obj.get("type") in ("user", "assistant"):
            return bool(obj.get("isSidechain"))
    return False


def import_claude_code(
    records: Iterable[tuple[int, Any]], path: Path, *, sidechain: bool = False
) -> tuple[list[Trace], list[ImportIssue]]:
    """A Claude Code session JSONL (streamed ``(line, object)`` records) → one trace; with
    ``sidechain`` the file is a subagent's transcript (see the module doc)."""
    builder = TraceBuilder(str(path), RECORDED)
    session = _Session(builder, RecordedClock(builder), sidechain)
    for n, obj in records:
        session.line(n, obj)
    session.flush()
    trace_id = f"claude-code/{session.meta.get('sessionId') or trace_stem(path)}"
    if sidechain:
        trace_id += f"/agent-{session.meta.get('agentId') or trace_stem(path)}"
    version = session.meta.get("version")
    return recorded_trace(
        builder,
        path,
        trace_id,
        "claude-code",
        ("Claude Code", version),
        session.model,
        session.meta,
    )
