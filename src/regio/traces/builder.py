"""Shared machinery of the importers: call-id repair, synthetic timestamps, issue collection.

Every importer turns its source records into calls on a :class:`TraceBuilder`; the builder
emits the events of :mod:`regio.traces.format` and keeps the trace consistent:

* **call ids**: a missing id is generated deterministically (``call_<record>_<k>``, suffixed
  when taken); every other id follows the one rule of :mod:`regio.callids` (an id a provider
  refuses, such as ``functions.Bash:0``, is mapped; an id reused within one trace, as tau-bench
  replays reuse OpenAI ids after they were answered, is renamed ``<id>-<n>`` and the result
  that answers it follows the rename), each change with a warning; a result without an id
  answers the oldest pending call; a result for no known call becomes a user observation
  message (warning), so no orphan tool_result reaches a provider; calls left unanswered when
  the next assistant message starts get a synthetic error result ``"[no result recorded]"``
  (warning), because providers reject an unanswered tool_use.
* **as recorded** (``repair=False``, what ``regio repair`` imports: :func:`as_recorded`): ids
  are kept as the source wrote them (only a missing one is generated), a result for no pending
  call stays a tool result of its id, and unanswered calls stay unanswered, so the repair of
  the history (:func:`regio.engine._history.repair_history`) makes and reports every change.
* **timestamps**: sources carry none, so ``t`` follows :class:`Timing` (see there).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from typing import Any

import attrs
import msgspec

from regio.callids import CallIdBook, name_blocks
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

__all__ = [
    "NO_RESULT",
    "RECORDED",
    "CallSpec",
    "ResultSpec",
    "Timing",
    "TraceBuilder",
    "as_recorded",
]

#: Whether the builders made in this context keep the history as recorded (:func:`as_recorded`).
_AS_RECORDED: ContextVar[bool] = ContextVar("regio_traces_as_recorded", default=False)


@contextlib.contextmanager
def as_recorded() -> Iterator[None]:
    """Within the block, every :class:`TraceBuilder` made keeps the history as recorded
    (``repair=False``, module doc): what ``regio repair`` imports a trace with."""
    token = _AS_RECORDED.set(True)
    try:
        yield
    finally:
        _AS_RECORDED.reset(token)


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

    ``file`` names the source in issues; ``timing`` is the synthetic clock; ``repair``: keep
    the call ids consistent (module doc; default: unless made inside :func:`as_recorded`).
    Methods take the ``record`` index and ``field`` path of the source record so issues can
    point at it.
    """

    file: str
    timing: Timing = attrs.field(factory=Timing)
    events: list[TraceEvent] = attrs.field(factory=list)
    issues: list[ImportIssue] = attrs.field(factory=list)
    clock: float = 0.0
    repair: bool = attrs.field(factory=lambda: not _AS_RECORDED.get())
    _pending: list[tuple[str | None, str]] = attrs.field(factory=list)  # (raw id, unique id)
    _ids: CallIdBook = attrs.field(factory=CallIdBook)
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
        if self._pending and self.repair:
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
        if self._pending and self.repair:
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
        where = f"{field}tool_calls[{k}].id" if field else f"tool_calls[{k}].id"
        if raw and not self.repair:
            self._ids.add_call(raw, raw)
            return raw
        if raw:
            named, changes = name_blocks(self._ids, "assistant", (ToolUse(raw, ""),))
            for change in changes:
                why = (
                    "was already used in this trace; renamed"
                    if change.action == "call_renamed"
                    else "is not an id every provider accepts; mapped to"
                )
                self.issue(record, where, f"tool call id {raw!r} {why} {change.given!r}", "warning")
            return named[0].id  # type: ignore[union-attr]
        base = f"call_{record if record is not None else len(self.events)}_{k}"
        candidate, n = base, 0
        while self._ids.in_use(candidate):
            n += 1
            candidate = f"{base}_{n}"
        self._ids.add_call(candidate, candidate)
        return candidate

    def _match(self, raw: str | None, record: int | None, field: str) -> str | None:
        if raw is None:
            if self._pending:
                unique = self._pending.pop(0)[1]
                self._ids.add_result(unique, True)
                return unique
            self.issue(record, field, "tool result without a call id and no pending call")
            return None
        if not self.repair:
            found = next((i for i, p in enumerate(self._pending) if raw in p), None)
            if found is not None:
                del self._pending[found]
            return raw
        named, _ = name_blocks(self._ids, "tool", (ToolResult(raw, ""),))
        target = named[0].tool_use_id  # type: ignore[union-attr]
        for i, (_, unique) in enumerate(self._pending):
            if unique == target:
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
        for i in ids:
            self._ids.add_result(i, True)
        self._flush_results([ToolResult(i, NO_RESULT, True) for i in ids])

    # -- result -------------------------------------------------------------------------------
    def build(self, header: Header) -> Trace:
        """The finished trace. ``header.timing`` is filled with :meth:`Timing.describe` when
        empty."""
        if not header.timing:
            header = msgspec.structs.replace(header, timing=self.timing.describe())
        return Trace(header, tuple(self.events))
