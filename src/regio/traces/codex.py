"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl``).

The format is defined by the Codex source, openai/codex ``codex-rs/protocol/src/protocol.rs``
(``RolloutLine {timestamp, #[serde(flatten)] item: RolloutItem}``, with ``RolloutItem``
tagged ``#[serde(tag = "type", content = "payload")]``: ``session_meta``, ``response_item``,
``compacted``, ``turn_context``, ``event_msg``) and ``codex-rs/protocol/src/models.rs``
(``ResponseItem``, the OpenAI Responses API input/output items). One JSON object per line:

* ``session_meta``: ``id``, ``cwd``, ``cli_version``, ``originator``, ``model_provider``,
  ``instructions`` (or ``base_instructions.text``) → the system prompt;
* ``turn_context``: ``model`` (the first one names the trace's model);
* ``response_item``: ``message`` (``role`` user / developer / assistant, ``content`` parts
  ``input_text`` / ``output_text``), ``reasoning`` (``summary`` parts → a thinking block),
  ``function_call`` (``name``, ``arguments`` JSON string, ``call_id``), ``custom_tool_call``
  (``input`` string), ``local_shell_call`` (``action``), and their outputs
  ``function_call_output`` / ``custom_tool_call_output`` (``call_id``, ``output``);
* ``event_msg`` with ``payload.type == "token_count"``: ``info.last_token_usage``
  (``TokenUsage {input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens,
  total_tokens}``) is the usage of the model call that just finished; it is kept as an OpenAI
  usage (``input_tokens`` is the whole prompt, ``cached_tokens`` = ``cached_input_tokens``).
  Other ``event_msg`` lines repeat response items for the UI and are skipped.

A model call is the run of output items (assistant message, reasoning, tool calls) between two
input items; a ``token_count`` closes it, or, when the tool's output was recorded first (a
tool that ran while the response streamed), gives its usage to the call just before.
``developer`` messages are imported as user messages (they sit in the request's input in that
order). Older rollouts without the ``payload``
wrapper (a bare ``{id, timestamp, instructions}`` first line, then bare response items) are
read too. ``compacted`` lines become ``compact`` events. Timestamps are recorded.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import attrs
import msgspec

from regio.content import Thinking
from regio.traces.builder import RECORDED, CallSpec, ResultSpec, TraceBuilder
from regio.traces.errors import ImportIssue
from regio.traces.format import AssistantMessage, Compaction, Trace, Usage
from regio.traces.shared import RecordedClock, parse_arguments, recorded_trace, trace_stem

__all__ = ["ROLLOUT_TYPES", "import_codex"]

#: The ``type`` tags of ``RolloutItem``.
ROLLOUT_TYPES = ("session_meta", "response_item", "compacted", "turn_context", "event_msg")
_OUTPUT_ITEMS = ("reasoning", "function_call", "custom_tool_call", "local_shell_call")


def _parts_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    out = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
        elif isinstance(part, dict) and part.get("type") in ("input_image", "image"):
            out.append("[image]")
    return "\n".join(out)


def _output_text(output: object) -> str:
    if isinstance(output, dict):
        return _parts_text(output.get("content", output.get("output", "")))
    return _parts_text(output)


@attrs.define
class _Rollout:
    builder: TraceBuilder
    clock: RecordedClock
    meta: dict[str, Any] = attrs.field(factory=dict)
    model: str | None = None
    record: int = 0
    text: list[str] = attrs.field(factory=list)
    thinking: list[Thinking] = attrs.field(factory=list)
    calls: list[CallSpec] = attrs.field(factory=list)
    open: bool = False
    last_total: Any = None
    unbilled: int | None = None  # index in builder.events of the last call still without usage

    def flush(self, usage: Usage | None = None) -> None:
        if not self.open:
            return
        self.builder.assistant(
            "\n".join(t for t in self.text if t),
            self.calls,
            thinking=self.thinking,
            usage=usage,
            record=self.record,
        )
        self.unbilled = None if usage is not None else len(self.builder.events) - 1
        self.text, self.thinking, self.calls, self.open = [], [], [], False

    def _bill_last(self, usage: Usage) -> bool:
        """Give ``usage`` to the last call when it has none yet (its tool output was recorded
        before the token count, as happens when a tool runs while the response streams)."""
        index, self.unbilled = self.unbilled, None
        if index is None:
            return False
        event = self.builder.events[index]
        if not isinstance(event, AssistantMessage) or event.usage is not None:
            return False
        self.builder.events[index] = msgspec.structs.replace(event, usage=usage)
        return True

    def _start(self, n: int) -> None:
        if not self.open:
            self.open, self.record = True, n

    def item(self, n: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message" and item.get("role") == "assistant":
            self._start(n)
            self.text.append(_parts_text(item.get("content")))
        elif kind == "message":
            self.flush()
            self.builder.user(_parts_text(item.get("content")), record=n, field="payload.content")
        elif kind in _OUTPUT_ITEMS:
            self._start(n)
            self._output_item(n, kind, item)
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            self.flush()
            call_id = item.get("call_id")
            self.builder.tool_results(
                [ResultSpec(str(call_id) if call_id else None, _output_text(item.get("output")))],
                record=n,
                field="payload.call_id",
            )
        else:
            self.builder.issue(n, "payload.type", f"response item {kind!r} not kept", "warning")

    def _output_item(self, n: int, kind: str, item: dict[str, Any]) -> None:
        if kind == "reasoning":
            summary = _parts_text(item.get("summary"))
            if summary:
                self.thinking.append(Thinking(summary, ""))
            return
        call_id = item.get("call_id") or item.get("id")
        if kind == "function_call":
            args = parse_arguments(item.get("arguments"), self.builder, n, "payload.arguments")
        elif kind == "custom_tool_call":
            args = {"input": item.get("input", "")}
        else:
            action = item.get("action")
            args = action if isinstance(action, dict) else {"action": action}
        name = item.get("name") or ("local_shell" if kind == "local_shell_call" else "tool")
        self.calls.append(CallSpec(str(call_id) if call_id else None, str(name), args))

    def token_count(self, n: int, payload: dict[str, Any]) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        if total == self.last_total or not isinstance(last, dict):
            return  # a repeated report (Codex re-sends it with rate-limit updates)
        self.last_total = total
        counts = [last.get(k, 0) for k in ("input_tokens", "output_tokens")]
        cached = last.get("cached_input_tokens")  # absent: unreported, not 0
        checked = [*counts, cached] if cached is not None else counts
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in checked):
            self.builder.issue(n, "payload.info.last_token_usage", "counts invalid; dropped")
            return
        usage = Usage.openai(counts[0], counts[1], cached_tokens=cached)
        if self.open:
            self.flush(usage)
        elif not self._bill_last(usage):
            self.builder.issue(
                n, "payload.info", "token_count without a model call before it; ignored", "warning"
            )

    def line(self, n: int, obj: object) -> None:
        if not isinstance(obj, dict):
            self.builder.issue(n, "", "line is not a JSON object; skipped")
            return
        self.clock(obj.get("timestamp"))
        kind, payload = obj.get("type"), obj.get("payload")
        if kind not in ROLLOUT_TYPES:  # an older rollout: bare items, bare meta first line
            kind, payload = ("session_meta", obj) if "instructions" in obj else (None, obj)
            if kind is None and "type" in obj:
                kind = "response_item"
        if not isinstance(payload, dict):
            if kind is not None and "record_type" not in obj:
                self.builder.issue(n, "payload", f"{kind} line without a payload; skipped")
            return
        if kind == "session_meta":
            self._session_meta(payload)
        elif kind == "turn_context":
            model = payload.get("model")
            self.model = self.model or (model if isinstance(model, str) else None)
        elif kind == "response_item":
            self.item(n, payload)
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self.token_count(n, payload)
        elif kind == "compacted":
            self.flush()
            self.builder.events.append(Compaction(self.builder.clock, None))

    def _session_meta(self, payload: dict[str, Any]) -> None:
        for key in ("id", "cwd", "cli_version", "originator", "model_provider", "source"):
            if key in payload and key not in self.meta:
                self.meta[key] = payload[key]
        instructions = payload.get("instructions")
        base = payload.get("base_instructions")
        if not isinstance(instructions, str) and isinstance(base, dict):
            instructions = base.get("text")
        if isinstance(instructions, str) and instructions:
            self.builder.system(instructions)


def import_codex(
    records: Iterable[tuple[int, Any]], path: Path
) -> tuple[list[Trace], list[ImportIssue]]:
    """A Codex CLI rollout JSONL (streamed ``(line, object)`` records) → one trace."""
    builder = TraceBuilder(str(path), RECORDED)
    rollout = _Rollout(builder, RecordedClock(builder))
    for n, obj in records:
        rollout.line(n, obj)
    rollout.flush()
    trace_id = f"codex/{rollout.meta.get('id') or trace_stem(path)}"
    version = rollout.meta.get("cli_version")
    return recorded_trace(
        builder, path, trace_id, "codex", ("Codex CLI", version), rollout.model, rollout.meta
    )
