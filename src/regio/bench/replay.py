"""Replay: a trace under a blueprint -> one request sequence per layout and baseline.

For every model call of the trace (each assistant step), replay builds the request each
layout produces at that point and converts it to the cache model input
(:class:`regio.cache.types.CacheRequest`) with deterministic timestamps from the trace clock
(``t_start`` = when the call was sent, ``t_end`` = when the reply completed, seconds).

The window is driven directly (a :class:`regio.regions.Window` built by
:func:`regio.blueprint.build.build_window`): messages go through ``Window.add_message``,
captured state through ``Window.write`` (:mod:`regio.bench.capture`), and pending compactions
are flushed at turn boundaries with the :class:`~regio.runtime.extractive.ExtractiveSummarizer`
(what the engine does). The layout is pure, so one window serves all four strategies; each
strategy keeps its own :class:`regio.layout.LayoutState`. The baselines see the same captured
stream (:mod:`regio.bench.baselines`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import attrs

from regio.bench.baselines import (
    BASELINES,
    SummarizeBaseline,
    TrimBaseline,
    plain_request,
    trim_available,
)
from regio.bench.capture import AddMessage, Call, CaptureRule, RegionOp, capture_stream, rules_for
from regio.cache.types import CacheRequest
from regio.content import Entry, Message, canonical_json
from regio.errors import CompactionError
from regio.layout import assemble, to_cache_request
from regio.regions import Refusal, Window
from regio.runtime.extractive import ExtractiveSummarizer
from regio.traces.format import Trace

__all__ = ["ALL_LAYOUTS", "LAYOUTS", "ReplayOutput", "raw_request_sizes", "replay"]

#: Layout strategies of :func:`regio.layout.assemble`, in report order.
LAYOUTS: tuple[str, ...] = ("naive", "kind", "volatility", "regio")
#: Layouts and baselines.
ALL_LAYOUTS: tuple[str, ...] = LAYOUTS + BASELINES


@attrs.frozen
class ReplayOutput:
    """What :func:`replay` produced for one trace.

    ``requests``: layout or baseline name -> its requests in order; ``raw_sizes``: prompt
    tokens of the raw (append-only, uncaptured) request of each call; ``region_writes``:
    region operations made after the first call; ``refused_writes``: writes a region refused;
    ``notes``: what was skipped or approximated.
    """

    trace: str
    requests: dict[str, list[CacheRequest]]
    raw_sizes: list[int]
    region_writes: int
    refused_writes: int
    notes: tuple[str, ...] = ()


def raw_request_sizes(trace: Trace, counter: Any) -> list[int]:
    """Prompt tokens of each model call's raw request: system prompt + every message
    recorded before the call, counted with ``counter`` (``count`` / ``count_entry``)."""
    sizes: list[int] = []
    for step in trace.steps():
        n = int(counter.count(step.system)) if step.system else 0
        for m in step.messages:
            n += _message_tokens(counter, m)
        sizes.append(n)
    return sizes


_COUNT_CACHE: dict[tuple[int, bytes], int] = {}


def _message_tokens(counter: Any, message: Message) -> int:
    key = (id(counter), canonical_json([message.role, list(message.blocks)]))
    found = _COUNT_CACHE.get(key)
    if found is None:
        found = int(counter.count_entry(Entry(id="", blocks=message.blocks, role=message.role)))
        if len(_COUNT_CACHE) > 200_000:
            _COUNT_CACHE.clear()
        _COUNT_CACHE[key] = found
    return found


def _system_text(window: Window) -> tuple[str, int]:
    parts = [r.render_text() for r in window.regions if not r.is_conversation and r.entries]
    text = "\n\n".join(p for p in parts if p)
    return text, int(window.counter.count(text)) if text else 0


def _apply(window: Window, op: RegionOp) -> bool:
    """Apply one region operation; False when the region refused the write."""
    region = window.region(op.region)
    if op.action == "release":
        if op.key is not None:
            with contextlib.suppress(KeyError):
                window.release(region, key=op.key)
        else:
            window.clear(region)
        return True
    if op.action == "replace":
        window.clear(region)
    elif op.action == "trim" and op.keep is not None:
        extra = len(region.entries) - (op.keep - 1)
        if extra > 0:
            window.release(region, oldest=extra)
    result = window.write(region, op.text, key=op.key)
    return not isinstance(result, Refusal)


def _flush(window: Window, summarizer: ExtractiveSummarizer, instructions: str) -> None:
    for pending in window.pending_compactions():
        region = window.region(pending.region)
        wanted = set(pending.entry_ids)
        entries = [e for e in region.entries if e.id in wanted]
        try:
            text = summarizer(entries, instructions, None)
            window.complete_compaction(pending.id, text)
        except CompactionError as exc:
            window.fail_compaction(pending.id, str(exc))


def replay(
    trace: Trace,
    blueprint: Any,
    *,
    layouts: Sequence[str] = ALL_LAYOUTS,
    rules: Sequence[CaptureRule] | None = None,
    counter: Any = None,
) -> ReplayOutput:
    """Replay ``trace`` under ``blueprint`` (a :class:`regio.blueprint.Blueprint`).

    ``layouts``: names from :data:`ALL_LAYOUTS`; ``rules``: capture rules (default
    :func:`regio.bench.capture.rules_for` the blueprint's regions); ``counter``: token counter
    (default: the blueprint's). The ``trim`` baseline is skipped with a note when
    langchain-core is not installed. Raises ``ValueError`` for an unknown layout name and the
    layout's :class:`regio.layout.LayoutError` for a request it cannot build.
    """
    from regio.blueprint.build import build_window

    unknown = [x for x in layouts if x not in ALL_LAYOUTS]
    if unknown:
        raise ValueError(f"unknown layouts {unknown}; use names from {', '.join(ALL_LAYOUTS)}")
    window = build_window(blueprint, counter=counter)
    counter = window.counter
    notes: list[str] = []
    chosen = rules if rules is not None else rules_for(window.regions)
    summarizer = ExtractiveSummarizer(
        max_summary_tokens=blueprint.summarizer.max_summary_tokens, counter=counter
    )
    instructions = blueprint.summarizer.instructions
    conv = window.conversation
    conv_budget = conv.budget if conv is not None else blueprint.window_tokens
    baselines: dict[str, Any] = {}
    if "trim" in layouts:
        if trim_available():
            baselines["trim"] = TrimBaseline(conv_budget, counter.count)
        else:
            notes.append("trim baseline skipped: langchain-core is not installed (extra 'bench')")
    if "summarize" in layouts:
        baselines["summarize"] = SummarizeBaseline(
            blueprint.window_tokens,
            counter.count,
            summarizer=summarizer,
            instructions=instructions,
        )
    strategies = [x for x in layouts if x in LAYOUTS]
    states: dict[str, Any] = dict.fromkeys(strategies)
    requests: dict[str, list[CacheRequest]] = {x: [] for x in strategies}
    requests.update({x: [] for x in baselines})
    history: list[tuple[Message, int]] = []
    writes = refused = 0
    started = False
    model = blueprint.model.name
    ttl = blueprint.cache.ttl
    for item in capture_stream(trace, chosen, counter.count):
        if isinstance(item, RegionOp):
            if item.region not in {r.name for r in window.regions}:
                notes.append(f"{item.rule}: region {item.region!r} is not in the blueprint")
                continue
            ok = _apply(window, item)
            writes += started
            refused += not ok
            _flush(window, summarizer, instructions)
        elif isinstance(item, AddMessage):
            n = _message_tokens(counter, item.message)
            history.append((item.message, n))
            window.add_message(item.message, tokens=n)
            if item.message.role != "assistant":
                _flush(window, summarizer, instructions)
        elif isinstance(item, Call):
            started = True
            rid = f"{item.index:05d}"
            out = _message_tokens(counter, item.reply)
            for s in strategies:
                req = assemble(
                    window,
                    s,
                    state=states[s],
                    model=model,
                    ttl=ttl,
                    chunk_tokens=blueprint.layout.chunk_tokens,
                    settle_share=blueprint.layout.settle_share,
                )
                states[s] = req.state
                requests[s].append(
                    to_cache_request(
                        req,
                        t_start=item.t,
                        t_end=item.t_end,
                        id=rid,
                        model=model,
                        scope=trace.id,
                        output_tokens=out,
                    )
                )
            system = _system_text(window)
            for name, base in baselines.items():
                requests[name].append(
                    plain_request(
                        system,
                        base.view(system, history),
                        id=rid,
                        t_start=item.t,
                        t_end=item.t_end,
                        output_tokens=out,
                        scope=trace.id,
                        model=model,
                        ttl=ttl,
                    )
                )
    return ReplayOutput(
        trace=trace.id,
        requests=requests,
        raw_sizes=raw_request_sizes(trace, counter),
        region_writes=writes,
        refused_writes=refused,
        notes=tuple(dict.fromkeys(notes)),
    )
