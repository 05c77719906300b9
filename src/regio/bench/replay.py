"""Replay: a trace under a blueprint -> one request sequence per layout and baseline.

For every model call of the trace (each assistant step), replay builds the request each
layout produces at that point and converts it to the cache model input
(:class:`regio.cache.types.CacheRequest`) with deterministic timestamps from the trace clock
(``t_start`` = when the call was sent, ``t_end`` = when the reply completed, seconds).

The requests are what :class:`regio.runtime.Engine` produces: one engine per layout strategy
(``Engine.from_blueprint(bp, strategy=..., summarizer=ExtractiveSummarizer(...),
token_counter=...)``, the trace clock as its clock) is driven through the captured stream
(:mod:`regio.bench.capture`, rules from the blueprint's ``capture`` lists): messages through
``Engine.add_message``, captured state through ``Engine.write`` / ``release`` / ``clear``,
pending compactions flushed at turn boundaries (after a user message or tool results, and by
``Engine.request`` itself), and at each model call ``Engine.request(provider, model,
tools=...)`` with the blueprint's provider and model and the trace's recorded tools. Each
request therefore carries the engine's context tools (``context_write``, ...) too. The
baselines (:mod:`regio.bench.baselines`) see the same captured stream, the same system
content and the same tool schemas.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

import attrs
import msgspec

from regio.bench.baselines import (
    BASELINES,
    SummarizeBaseline,
    TrimBaseline,
    plain_request,
    trim_available,
)
from regio.bench.capture import AddMessage, Call, CaptureRule, RegionOp, capture_stream, rules_for
from regio.cache.types import CacheRequest
from regio.content import Entry, Message, block_text, canonical_json
from regio.layout import ToolSpec, assemble, to_cache_request
from regio.regions import Refusal
from regio.runtime import Engine
from regio.runtime.extractive import ExtractiveSummarizer
from regio.tokens import chat_format_for_model, get_counter
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


def raw_request_sizes(
    trace: Trace, counter: Any, memo: dict[bytes, int] | None = None
) -> list[int]:
    """Prompt tokens of each model call's raw request: system prompt + every message
    recorded before the call, counted with ``counter`` (``count`` / ``count_entry``);
    ``memo``: counts of this counter by message bytes (one per replay)."""
    memo = {} if memo is None else memo
    sizes: list[int] = []
    for step in trace.steps():
        n = int(counter.count(step.system)) if step.system else 0
        for m in step.messages:
            n += _message_tokens(counter, m, memo)
        sizes.append(n)
    return sizes


def _message_tokens(counter: Any, message: Message, memo: dict[bytes, int] | None = None) -> int:
    """Tokens of ``message`` with ``counter``; ``memo`` (message bytes -> tokens) belongs to
    one counter (one replay)."""
    key = canonical_json([message.role, list(message.blocks)])
    found = memo.get(key) if memo is not None else None
    if found is None:
        found = int(counter.count_entry(Entry(id="", blocks=message.blocks, role=message.role)))
        if memo is not None:
            memo[key] = found
    return found


def trace_tools(trace: Trace) -> tuple[ToolSpec, ...]:
    """The tool schemas recorded in the trace header as :class:`ToolSpec` s (Anthropic
    ``{name, description, input_schema}``, OpenAI ``{type: function, function: {name,
    description, parameters}}`` or ``{name, parameters}``); unusable entries are skipped."""
    out: list[ToolSpec] = []
    for tool in trace.header.tools:
        spec = tool.get("function", tool) if isinstance(tool, dict) else {}
        name = spec.get("name")
        schema = spec.get("input_schema", spec.get("parameters"))
        if not isinstance(name, str) or not name:
            continue
        if not isinstance(schema, dict) or schema.get("type") != "object":
            schema = {"type": "object", "properties": {}}
        out.append(ToolSpec(name, str(spec.get("description", "")), schema))
    return tuple(out)


def _system_and_tools(engine: Engine, tools: Sequence[ToolSpec]) -> tuple[tuple[str, int], ...]:
    """The baselines' (system text, tokens) and (tools text, tokens): exactly what the ``naive``
    layout sends before the conversation (regions in declaration order, tool schemas in the
    given order), with the same token accounting, so a baseline differs from the layouts only
    in what it does to the conversation."""
    req = assemble(engine.window, "naive", tools=engine.tool_specs(tools))
    system = [b for b in req.blocks if b.level == "system"]
    tool_blocks = [b for b in req.blocks if b.level == "tools"]
    system_text = "\n\n".join(block_text(b.block) for b in system if b.block is not None)
    tools_text = canonical_json([msgspec.to_builtins(b.tool) for b in tool_blocks]).decode()
    return (
        (system_text, sum(b.tokens for b in system)),
        (tools_text if tool_blocks else "", sum(b.tokens for b in tool_blocks)),
    )


def _apply(engine: Engine, op: RegionOp) -> bool:
    """Apply one region operation through the engine; False when the region refused it."""
    if op.action == "release":
        if op.key is not None:
            with contextlib.suppress(KeyError):
                engine.release(op.region, key=op.key)
        else:
            engine.clear(op.region)
        return True
    if op.action == "replace":
        engine.clear(op.region)
    elif op.action == "trim" and op.keep is not None:
        extra = len(engine.window.region(op.region).entries) - (op.keep - 1)
        if extra > 0:
            engine.release(op.region, oldest=extra)
    result = engine.write(op.region, op.text, key=op.key)
    return not isinstance(result, Refusal)


@attrs.define
class _Clock:
    """The trace clock (seconds) the engines read."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


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
    :func:`regio.bench.capture.rules_for` the blueprint); ``counter``: token counter
    (default: the blueprint's tokenizer). The ``trim`` baseline is skipped with a note when
    langchain-core is not installed. Raises ``ValueError`` for an unknown layout name, the
    layout's :class:`regio.layout.LayoutError` for a request it cannot build and the engine's
    :class:`regio.runtime.errors.ContextOverflowError` for one that cannot fit the window.
    """
    unknown = [x for x in layouts if x not in ALL_LAYOUTS]
    if unknown:
        raise ValueError(f"unknown layouts {unknown}; use names from {', '.join(ALL_LAYOUTS)}")
    clock = _Clock()
    strategies = [x for x in layouts if x in LAYOUTS]

    if counter is None:
        counter = get_counter(
            blueprint.tokenizer, chat_format=chat_format_for_model(blueprint.model.name)
        )

    def make(strategy: str) -> Engine:
        summarizer = ExtractiveSummarizer(
            context_window=blueprint.summarizer.context_window or blueprint.model.context_window,
            max_summary_tokens=blueprint.summarizer.max_summary_tokens,
            counter=counter,
        )
        return Engine.from_blueprint(
            blueprint,
            summarizer=summarizer,
            token_counter=counter,
            clock=clock,
            strategy=strategy,
        )

    first = make(strategies[0] if strategies else "regio")
    engines = {s: first if i == 0 else make(s) for i, s in enumerate(strategies)}
    driven = list(engines.values()) or [first]
    notes: list[str] = []
    chosen = rules if rules is not None else rules_for(blueprint)
    conv = first.window.conversation
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
            summarizer=first.summarizer,
            instructions=first.options.standing_instructions,
        )
    requests: dict[str, list[CacheRequest]] = {x: [] for x in strategies}
    requests.update({x: [] for x in baselines})
    tools = trace_tools(trace)
    tools_text = _system_and_tools(first, tools)[1] if baselines else ("", 0)
    history: list[tuple[Message, int]] = []
    memo: dict[bytes, int] = {}
    names = {r.name for r in first.window.regions}
    writes = refused = 0
    started = False
    provider, model = blueprint.model.provider, blueprint.model.name
    ttl = blueprint.cache.ttl
    for item in capture_stream(trace, chosen, counter.count):
        if isinstance(item, RegionOp):
            if item.region not in names:
                notes.append(f"{item.rule}: region {item.region!r} is not in the blueprint")
                continue
            ok = all([_apply(engine, item) for engine in driven])
            writes += started
            refused += not ok
        elif isinstance(item, AddMessage):
            n = _message_tokens(counter, item.message, memo)
            history.append((item.message, n))
            for engine in driven:
                engine.add_message(item.message, tokens=n)
                if item.message.role != "assistant" and engine.pending():
                    engine.flush()
        elif isinstance(item, Call):
            started = True
            clock.now = item.t
            rid = f"{item.index:05d}"
            out = _message_tokens(counter, item.reply, memo)
            for s, engine in engines.items():
                req, _payload = engine.request(provider, model, tools=tools)
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
            if baselines:
                system = _system_and_tools(first, tools)[0]
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
                        tools=tools_text,
                    )
                )
            clock.now = item.t_end
    if "trim" in baselines and baselines["trim"].trimmed_turns == 0:
        notes.append(
            "trim baseline: trim_messages never cut (every conversation fit the blueprint's "
            "conversation budget); its rows show the untrimmed system + messages request"
        )
    if "summarize" in baselines and baselines["summarize"].compactions == 0:
        notes.append(
            "summarize baseline: never reached its threshold (80% of the window); its rows "
            "show the uncompacted system + messages request"
        )
    return ReplayOutput(
        trace=trace.id,
        requests=requests,
        raw_sizes=raw_request_sizes(trace, counter, memo),
        region_writes=writes,
        refused_writes=refused,
        notes=tuple(dict.fromkeys(notes)),
    )
