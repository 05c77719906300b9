"""What every pass of one replay shares (:class:`ReplaySetup`): the trace, the blueprint at the
run's window, the token counts, the trace's tools and task messages, the probes, and how a
regio engine and the offline summarizer are built for it. Used by
:mod:`regio.bench.enginepass` and :mod:`regio.bench.rawpass`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from regio.bench.baselines import MessageCounts
from regio.bench.billing import BilledExtractive
from regio.bench.peers.view import message_text
from regio.bench.retention import Probe, RetentionMeter
from regio.bench.tracking import Tracker
from regio.content import Entry, Message
from regio.engine import Engine
from regio.layout import ToolSpec
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.traces.format import Trace, UserMessage

if TYPE_CHECKING:
    from regio.blueprint import Blueprint
    from regio.tokens import TokenCounter

__all__ = [
    "RETENTION_SAMPLES",
    "Clock",
    "ReplaySetup",
    "forks",
    "message_text",
    "message_tokens",
    "prompt_limit",
    "task_texts",
    "trace_tools",
]

#: Requests measured for retention per strategy and trace (evenly spaced).
RETENTION_SAMPLES = 64


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


@attrs.define
class Clock:
    """The trace clock (seconds) the engines read."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


def message_tokens(counter: TokenCounter, message: Message) -> int:
    """Tokens of ``message`` counted by ``counter.count_entry`` (no cache: a replay keeps its
    counts in its own :class:`regio.bench.baselines.MessageCounts`)."""
    return int(counter.count_entry(Entry(id="", blocks=message.blocks, role=message.role)))


def task_texts(trace: Trace) -> frozenset[str]:
    """Texts of the trace's task messages: user messages that are not environment
    observations (the human, simulated user or task instance), whole and per block (the
    engines' requests carry blocks)."""
    out: set[str] = set()
    for e in trace.events:
        if isinstance(e, UserMessage) and not e.observation:
            out.add(message_text(Message("user", e.blocks)))
            out.update(b.text for b in e.blocks if b.text.strip())
    return frozenset(out)


def prompt_limit(blueprint: Blueprint) -> int:
    """The most prompt tokens a request may hold under ``blueprint``: its window (the model's,
    or ``window.max_tokens`` when smaller) less ``max_output_tokens``
    (:attr:`regio.blueprint.Blueprint.window_tokens`); the API refuses a request whose prompt
    and output reserve do not fit the context window."""
    return int(blueprint.window_tokens)


def forks(blueprint: Blueprint) -> bool:
    """The blueprint's summarizer runs on the agent's own model (``summarizer.model`` unset
    or the agent's): its LLM summarizer then forks the agent's last request
    (:class:`regio.compaction.ForkSummarizer`), which the bench bills as such. The bench bills
    every summarizer as an LLM on the model the blueprint names, whatever its ``provider``
    (the default ``extractive`` sends no request: billing it keeps regio comparable with the
    peers' LLM summaries)."""
    return blueprint.summary_model is None


@attrs.frozen
class ReplaySetup:
    """What every pass of one replay shares."""

    trace: Trace
    blueprint: Blueprint
    counter: TokenCounter
    counts: MessageCounts
    tools: tuple[ToolSpec, ...]
    tasks: frozenset[str]
    probes: tuple[Probe, ...]
    call_events: tuple[int, ...]

    @property
    def summarizer_model(self) -> str:
        """The model every summarizer's transcript prompts go to: the blueprint's
        ``summarizer.model`` when it names another than the agent's, else the agent's."""
        named = self.blueprint.summary_model
        return named[1] if named is not None else self.blueprint.model.name

    @property
    def limit(self) -> int:
        """:func:`prompt_limit` of the run's blueprint (tokens)."""
        return prompt_limit(self.blueprint)

    def tracker(self, scored: bool = True) -> Tracker:
        """A tracker; ``scored=False``: its requests are not measured for retention."""
        every = max(1, len(self.call_events) // RETENTION_SAMPLES)
        return Tracker(RetentionMeter(self.probes if scored else (), self.call_events, every))

    def engine(
        self, clock: Clock, options: dict[str, Any], blueprint: Blueprint | None = None
    ) -> Engine:
        """A regio engine for one layout (``blueprint``: another than the run's, e.g. the
        delegating strategy's), its summarizer's calls billed (:mod:`.billing`): as forks of
        the agent's last request when the blueprint's summarizer runs on the agent's own model
        (:func:`forks`), else as transcript prompts to the summarizer's model, which the
        summarizer names (so the engine's cost controller prices its summaries as billed)."""
        bp = blueprint if blueprint is not None else self.blueprint
        summarizer = self.summarizer(BilledExtractive)
        if bp.summary_model is not None:  # the model its summaries are billed on
            summarizer.api, summarizer.model = bp.summary_model
        summarizer.forks = forks(bp)
        engine = Engine.from_blueprint(
            bp, summarizer=summarizer, token_counter=self.counter, clock=clock, **options
        )
        if forks(bp):
            summarizer.session = engine.state
            summarizer.terms = engine.session.fork_terms
        return engine

    def summarizer(self, cls: type[ExtractiveSummarizer] = ExtractiveSummarizer) -> Any:
        """The offline extractive summarizer every summarizing strategy uses, sized by the
        blueprint's ``summarizer`` section (``cls``: a subclass that records its calls)."""
        bp = self.blueprint
        return cls(
            context_window=bp.summarizer.context_window or bp.model.context_window,
            max_summary_tokens=bp.summarizer.max_summary_tokens,
            counter=self.counter,
        )
