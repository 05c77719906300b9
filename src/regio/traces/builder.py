"""Shared machinery of the importers: call-id repair, synthetic timestamps, issue collection.

Every importer turns its source records into calls on a :class:`TraceBuilder`; the builder
emits the events of :mod:`regio.traces.format` and keeps the trace consistent:

* **call ids**: a missing id is generated deterministically (``call_<record>_<k>``, suffixed
  when taken); an id reused within one trace (tau-bench replays reuse OpenAI ids after they were
  answered) is renamed ``<id>~<n>`` and the result that answers it follows the rename, with a
  warning; a result without an id answers the oldest pending call; a result for no known call
  becomes a user observation message (warning), so no orphan tool_result reaches a provider;
  calls left unanswered when the next assistant message starts get a synthetic error result
  ``"[no result recorded]"`` (warning), because providers reject an unanswered tool_use.
* **timestamps**: sources carry none, so ``t`` follows :class:`Timing` (see there).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import attrs
import msgspec

from regio.content import Text, Thinking, ToolResult, ToolUse, canonical_json
from regio.traces.errors import ImportIssue, Severity
from regio.traces.format import (
    AssistantMessage,
    Header,
    SystemPrompt,
    ToolResults,
    Trace,
    TraceEvent,
    Usage,
    UserMessage,
)

__all__ = ["NO_RESULT", "RECORDED", "CallSpec", "ResultSpec", "Timing", "TraceBuilder"]

#: Content of the synthetic error result given to a call the source never answered.
NO_RESULT = "[no result recorded]"


class Timing(msgspec.Struct, frozen=True):
    """The deterministic clock used when a source records no timestamps.

    Starting at ``t = 0``:

    * a model call lasts ``model_latency_s + output_chars / output_chars_per_s`` seconds, where
      ``output_chars`` counts the reply's text, thinking, and tool names plus canonical JSON
      inputs (defaults: 1.0 s + 100 chars/s, about 25 tokens/s);
    * each tool result takes ``tool_s`` seconds (default 2.0), and so does an environment
      observation sent as a user message;
    * a user message that follows the assistant takes ``user_s`` seconds (default 10.0, a
      human or simulated user replying); messages before the first model call take no time;
    * system prompt, region and compaction events take no time.

    Times are rounded to milliseconds, so equal inputs give equal bytes.
    """

    model_latency_s: float = 1.0
    output_chars_per_s: float = 100.0
    tool_s: float = 2.0
    user_s: float = 10.0

    def describe(self) -> str:
        """The rule as one line, stored in each header's ``timing`` field."""
        return (
            f"synthetic: model call {self.model_latency_s}s + output chars/"
            f"{self.output_chars_per_s}; tool result {self.tool_s}s; "
            f"observation {self.tool_s}s; user reply {self.user_s}s"
        )


#: The clock of sources that record timestamps: no synthetic time passes, importers call
#: :meth:`TraceBuilder.at` with the recorded time (seconds from the first record) instead.
RECORDED = Timing(0.0, math.inf, 0.0, 0.0)


class CallSpec(msgspec.Struct, frozen=True):
    """A tool call as read from a source: raw ``id`` (``None`` when absent), ``name``,
    parsed ``input``."""

    id: str | None
    name: str
    input: dict[str, Any]


class ResultSpec(msgspec.Struct, frozen=True):
    """A tool result as read from a source: raw ``call_id`` (``None`` when absent)."""

    call_id: str | None
    content: str
    is_error: bool = False


@attrs.define
class TraceBuilder:
    """Builds one :class:`Trace` from normalized source records (see module docstring).

    ``file`` names the source in issues; ``timing`` is the synthetic clock. Methods take the
    ``record`` index and ``field`` path of the source record so issues can point at it.
    """

    file: str
    timing: Timing = attrs.field(factory=Timing)
    events: list[TraceEvent] = attrs.field(factory=list)
    issues: list[ImportIssue] = attrs.field(factory=list)
    clock: float = 0.0
    _pending: list[tuple[str | None, str]] = attrs.field(factory=list)  # (raw id, unique id)
    _used: set[str] = attrs.field(factory=set)
    _renames: int = 0
    _model_called: bool = False

    # -- issues -----------------------------------------------------------------------------
    def issue(
        self, record: int | None, field: str, message: str, severity: Severity = "error"
    ) -> None:
        """Record an :class:`ImportIssue` for this file."""
        self.issues.append(ImportIssue(self.file, record, field, message, severity))

    # -- clock --------------------------------------------------------------------------------
    def _advance(self, seconds: float) -> float:
        self.clock = round(self.clock + seconds, 3)
        return self.clock

    def at(self, t: float) -> None:
        """Move the clock to the recorded time ``t`` (seconds); never backwards, so a source
        whose timestamps go back keeps its order (the times stay monotonic)."""
        if math.isfinite(t) and t > self.clock:
            self.clock = round(t, 3)

    # -- events -------------------------------------------------------------------------------
    @property
    def started(self) -> bool:
        """True once a model call (assistant message) was recorded."""
        return self._model_called

    def system(self, text: str) -> None:
        """Set or replace the system prompt."""
        self.events.append(SystemPrompt(self.clock, text))

    def user(
        self, text: str, *, observation: bool = False, record: int | None = None, field: str = ""
    ) -> None:
        """A user message (``observation``: an environment observation). Calls still pending
        are closed first (see module docstring)."""
        if self._pending:
            self._close_pending(record, field)
        self._user_event(text, observation)

    def _user_event(self, text: str, observation: bool) -> None:
        if self._model_called and self.events and not isinstance(self.events[-1], UserMessage):
            self._advance(self.timing.tool_s if observation else self.timing.user_s)
        self.events.append(UserMessage(self.clock, (Text(text),), observation))

    def assistant(
        self,
        text: str,
        calls: Sequence[CallSpec] = (),
        *,
        thinking: Sequence[Thinking] = (),
        usage: Usage | None = None,
        record: int | None = None,
        field: str = "",
    ) -> None:
        """One model call's reply. Calls get unique ids (generated or renamed as needed)."""
        if self._pending:
            self._close_pending(record, field)
        blocks: list[Thinking | Text | ToolUse] = list(thinking)
        if text:
            blocks.append(Text(text))
        chars = len(text) + sum(len(t.thinking) for t in thinking)
        for k, call in enumerate(calls):
            unique = self._unique_id(call.id, record, k, field)
            self._pending.append((call.id, unique))
            blocks.append(ToolUse(unique, call.name, call.input))
            chars += len(call.name) + len(canonical_json(call.input))
        self._model_called = True
        self._advance(self.timing.model_latency_s + chars / self.timing.output_chars_per_s)
        self.events.append(AssistantMessage(self.clock, tuple(blocks), usage))

    def tool_results(
        self, results: Sequence[ResultSpec], *, record: int | None = None, field: str = ""
    ) -> None:
        """One message of tool results, matched to pending calls (see module docstring)."""
        matched: list[ToolResult] = []
        for k, spec in enumerate(results):
            where = f"{field}[{k}]" if len(results) > 1 else field
            unique = self._match(spec.call_id, record, where)
            if unique is None:
                self._flush_results(matched)
                matched = []
                label = spec.call_id if spec.call_id is not None else "(no id)"
                self._user_event(f"[tool result for unknown call {label}]\n{spec.content}", True)
                continue
            matched.append(ToolResult(unique, spec.content, spec.is_error))
        self._flush_results(matched)

    def _flush_results(self, matched: list[ToolResult]) -> None:
        if matched:
            self._advance(self.timing.tool_s * len(matched))
            self.events.append(ToolResults(self.clock, tuple(matched)))

    # -- ids ----------------------------------------------------------------------------------
    def _unique_id(self, raw: str | None, record: int | None, k: int, field: str) -> str:
        if raw:
            candidate = raw
            if candidate in self._used:
                self._renames += 1
                candidate = f"{raw}~{self._renames}"
                while candidate in self._used:
                    self._renames += 1
                    candidate = f"{raw}~{self._renames}"
                self.issue(
                    record,
                    f"{field}tool_calls[{k}].id" if field else f"tool_calls[{k}].id",
                    f"tool call id {raw!r} was already used in this trace; renamed {candidate!r}",
                    "warning",
                )
        else:
            base = f"call_{record if record is not None else len(self.events)}_{k}"
            candidate, n = base, 0
            while candidate in self._used:
                n += 1
                candidate = f"{base}_{n}"
        self._used.add(candidate)
        return candidate

    def _match(self, raw: str | None, record: int | None, field: str) -> str | None:
        if raw is None:
            if self._pending:
                return self._pending.pop(0)[1]
            self.issue(record, field, "tool result without a call id and no pending call")
            return None
        for i, (pending_raw, unique) in enumerate(self._pending):
            if pending_raw == raw or unique == raw:
                del self._pending[i]
                return unique
        self.issue(
            record,
            field,
            f"tool result answers {raw!r}, which no earlier pending tool call has; "
            "kept as a user observation",
            "warning",
        )
        return None

    def _close_pending(self, record: int | None, field: str) -> None:
        ids = [unique for _, unique in self._pending]
        self.issue(
            record,
            field,
            f"tool calls {ids} were not answered before the next message; "
            f"added error results {NO_RESULT!r}",
            "warning",
        )
        self._pending = []
        self._flush_results([ToolResult(i, NO_RESULT, True) for i in ids])

    # -- result -------------------------------------------------------------------------------
    def build(self, header: Header) -> Trace:
        """The finished trace. ``header.timing`` is filled with :meth:`Timing.describe` when
        empty."""
        if not header.timing:
            header = msgspec.structs.replace(header, timing=self.timing.describe())
        return Trace(header, tuple(self.events))
