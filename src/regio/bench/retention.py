"""Retention: what a compaction keeps, measured by surface match.

:func:`plant_canaries` adds seeded, unique facts to a trace at the top (first tenth), middle
and bottom (last tenth) of the session:

* ``fact`` — a line appended to a tool result (or an observation) ``Reference code for this
  result: CANARY-F-<hex>``;
* ``constraint`` — a user turn (``Constraint: every reply must cite ticket CANARY-C-<hex>``)
  and one in the system prompt (placed at the top);
* ``todo`` — an open item in a user turn (``Open TODO CANARY-T-<hex>: ...``);
* ``update`` — a value set in a user turn and changed by a later one (``The deploy target is
  CANARY-U-<hex>`` then ``... is now CANARY-U-<hex2>``); only the newest value counts.

:func:`trace_facts` picks the trace's own facts from its tool results and observations: file
paths, identifiers (``snake_case`` / ``CamelCase`` / upper-case codes), numbers of 3+ digits and
error lines; at most ``limit`` of them, spread evenly over the session.

:class:`RetentionMeter` counts, for each measured request, the share of the probes planted
before that request whose text still occurs in the request (case-sensitive substring). The
bench scores every strategy of one run from the same model call on: the first call at which any
of them had cut something (trim, eviction, clearing or summary), so all are scored on the same
requests and the same probe observations (:func:`regio.bench.replay.replay`). A substring
that survives is not proof that the model can use it, so the figures are an **upper bound** on
what is retained.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

import attrs
import msgspec

from regio.content import Text, ToolResult
from regio.traces.format import SystemPrompt, ToolResults, Trace, TraceEvent, UserMessage

__all__ = ["PROBE_TYPES", "Probe", "RetentionMeter", "plant_canaries", "trace_facts"]

#: Probe types in report order (``trace_fact`` = the trace's own facts).
PROBE_TYPES: tuple[str, ...] = ("fact", "constraint", "todo", "update", "trace_fact")


@attrs.frozen
class Probe:
    """A text to look for: ``type`` (one of :data:`PROBE_TYPES`), ``needle`` (the exact text),
    ``event`` (index of the trace event that carries it: the probe counts from the next
    model call on), ``until`` (event index after which it no longer counts: an updated value),
    ``position`` (``top`` / ``middle`` / ``bottom`` / ``""``)."""

    type: str
    needle: str
    event: int
    until: int | None = None
    position: str = ""


def _positions(indexes: Sequence[int]) -> dict[str, int]:
    """Event index at the top (first tenth), middle and bottom (last tenth) of ``indexes``."""
    if not indexes:
        return {}
    n = len(indexes)
    return {
        "top": indexes[min(n - 1, n // 10)],
        "middle": indexes[n // 2],
        "bottom": indexes[max(0, n - 1 - n // 10)],
    }


def _append_user(event: UserMessage, text: str) -> UserMessage:
    return msgspec.structs.replace(event, blocks=(*event.blocks, Text(text)))


def _append_result(event: ToolResults, text: str) -> ToolResults:
    first = event.results[0]
    rest = event.results[1:]
    changed = msgspec.structs.replace(first, content=f"{first.content}\n{text}")
    return msgspec.structs.replace(event, results=(changed, *rest))


def _append(event: TraceEvent, text: str) -> TraceEvent:
    """``event`` with ``text`` added: a user message gets a text block, tool results get it
    at the end of the first result."""
    if isinstance(event, UserMessage):
        return _append_user(event, text)
    if isinstance(event, ToolResults):
        return _append_result(event, text)
    return event


def plant_canaries(trace: Trace, seed: int = 0) -> tuple[Trace, tuple[Probe, ...]]:
    """``trace`` with canaries planted (module doc) and the probes that find them. The same
    ``seed`` plants the same canaries. A trace without tool results or user turns gets only
    the kinds it has room for."""
    rng = random.Random(seed)
    events = list(trace.events)
    users = [i for i, e in enumerate(events) if isinstance(e, UserMessage) and not e.observation]
    outputs = [
        i
        for i, e in enumerate(events)
        if (isinstance(e, ToolResults) and e.results)
        or (isinstance(e, UserMessage) and e.observation)
    ]
    probes: list[Probe] = []

    def code(kind: str) -> str:
        return f"CANARY-{kind}-{rng.getrandbits(32):08x}"

    for where, i in _positions(outputs).items():
        needle = code("F")
        line = f"Reference code for this result: {needle}"
        e = events[i]
        events[i] = _append(e, line)
        probes.append(Probe("fact", needle, i, position=where))
    # User turns: with few of them, the later user-visible messages carry the canaries.
    carriers = users if len(users) >= 3 else sorted(set(users) | set(outputs))
    for where, i in _positions(carriers).items():
        needle, todo = code("C"), code("T")
        e = events[i]
        text = (
            f"Constraint: every reply must cite ticket {needle}.\n"
            f"Open TODO {todo}: confirm the change with the requester before closing."
        )
        events[i] = _append(e, text)
        probes.append(Probe("constraint", needle, i, position=where))
        probes.append(Probe("todo", todo, i, position=where))
    spots = _positions(carriers)
    if "top" in spots and "bottom" in spots and spots["top"] < spots["bottom"]:
        old, new = code("U"), code("U")
        first, later = spots["top"], spots["bottom"]
        for i, text in (
            (first, f"The deploy target is {old}."),
            (later, f"Update: the deploy target is now {new}."),
        ):
            e = events[i]
            events[i] = _append(e, text)
        probes.append(Probe("update", old, first, until=later, position="top"))
        probes.append(Probe("update", new, later, position="bottom"))
    system = next((i for i, e in enumerate(events) if isinstance(e, SystemPrompt)), None)
    if system is not None:
        needle = code("C")
        e = events[system]
        assert isinstance(e, SystemPrompt)
        text = f"{e.text}\n\nConstraint: every reply must cite ticket {needle}."
        events[system] = msgspec.structs.replace(e, text=text)
        probes.append(Probe("constraint", needle, system, position="system"))
    return msgspec.structs.replace(trace, events=tuple(events)), tuple(probes)


_PATH = re.compile(r"(?<![\w/])(?:/[\w.-]+)+\.\w{1,5}\b|\b[\w-]+(?:/[\w.-]+)+\.\w{1,5}\b")
_IDENT = re.compile(r"\b(?:[a-z]+_[a-z0-9_]+|[A-Z][a-z]+[A-Z]\w+|[A-Z0-9]{6,})\b")
_NUMBER = re.compile(r"(?<![\w.])\d{3,}(?:\.\d+)?(?![\w.])")
_ERROR = re.compile(r"(?m)^[^\n]*(?:Error|Exception|Traceback|FAILED|error:)[^\n]*$")


def _facts_of(text: str) -> list[str]:
    found: list[str] = []
    for pattern in (_ERROR, _PATH, _IDENT, _NUMBER):
        for m in pattern.finditer(text):
            value = m.group(0).strip()
            if 4 <= len(value) <= 160:
                found.append(value)
    return found


def trace_facts(trace: Trace, limit: int = 48) -> tuple[Probe, ...]:
    """The trace's own facts (module doc) as ``trace_fact`` probes, first occurrence of each,
    at most ``limit`` evenly spread."""
    seen: dict[str, int] = {}
    for i, e in enumerate(trace.events):
        texts: list[str] = []
        if isinstance(e, ToolResults):
            texts = [r.content for r in e.results if isinstance(r, ToolResult)]
        elif isinstance(e, UserMessage) and e.observation:
            texts = [b.text for b in e.blocks]
        for text in texts:
            for fact in _facts_of(text):
                seen.setdefault(fact, i)
    items = list(seen.items())
    if len(items) > limit:
        step = len(items) / limit
        items = [items[int(k * step)] for k in range(limit)]
    return tuple(Probe("trace_fact", needle, event) for needle, event in items)


@attrs.define
class RetentionMeter:
    """Surface-match retention of ``probes`` over the requests a strategy renders (module
    doc). ``call_events``: event index of each model call's reply. ``every``: measure one
    request in ``every`` (requests are long; 1 measures all). Every measured request is kept
    apart (``counts``), so the share can be taken from any common first call
    (:meth:`result` ``since``): the bench scores every strategy of a run from the same call."""

    probes: tuple[Probe, ...]
    call_events: Sequence[int]
    every: int = 1
    counts: dict[int, dict[str, tuple[int, int]]] = attrs.field(factory=dict)

    def wants(self, call: int) -> bool:
        """Whether request ``call`` is measured."""
        return bool(self.probes) and call % max(1, self.every) == 0

    def observe(self, call: int, text: str) -> None:
        """Count the probes planted before model call ``call`` that occur in ``text``
        (``counts[call][type] = (found, total)``; observing a call again replaces it)."""
        at = self.call_events[call]
        seen: dict[str, tuple[int, int]] = {}
        for p in self.probes:
            if p.event >= at or (p.until is not None and p.until < at):
                continue
            found, total = seen.get(p.type, (0, 0))
            seen[p.type] = (found + (p.needle in text), total + 1)
        self.counts[call] = seen

    def observations(self, since: int = 0) -> dict[str, int]:
        """Probe observations per type over the requests measured from call ``since`` on:
        the denominators of :meth:`result` (type -> count; types never counted are absent)."""
        return {k: v[1] for k, v in self._sums(since).items() if v[1]}

    def _sums(self, since: int) -> dict[str, tuple[int, int]]:
        out: dict[str, tuple[int, int]] = {}
        for call, seen in self.counts.items():
            if call < since:
                continue
            for kind, (found, total) in seen.items():
                f, t = out.get(kind, (0, 0))
                out[kind] = (f + found, t + total)
        return out

    def result(self, since: int = 0) -> dict[str, float] | None:
        """``{"overall": share, "canaries": share, <type>: share, ...}`` in [0, 1] over the
        requests measured from model call ``since`` on, each the found share of the probe
        observations counted; ``canaries`` pools the planted types (every type but
        ``trace_fact``) and is absent when none was measured. ``None`` when nothing was
        measured (no request from ``since`` on, or no probe planted yet)."""
        sums = self._sums(since)
        total = sum(t for _, t in sums.values())
        if not total:
            return None
        out = {"overall": sum(f for f, _ in sums.values()) / total}
        planted = [k for k, (_, t) in sums.items() if k != "trace_fact" and t]
        if planted:
            out["canaries"] = sum(sums[k][0] for k in planted) / sum(sums[k][1] for k in planted)
        for kind in PROBE_TYPES:
            found, count = sums.get(kind, (0, 0))
            if count:
                out[kind] = found / count
        return out
