"""Replay the bundled traces and hash every payload the engine returns.

For every trace under ``examples/traces`` x every layout strategy (``naive``, ``kind``,
``volatility``, ``regio``) x every renderer API (``anthropic``, ``openai_chat``,
``openai_responses``, ``text``), the trace is driven through an engine exactly as the bench's
replay drives it (:func:`regio.bench.replay.replay`: the same engine construction, the same
captured stream, the same flushes) and at every model call ``Engine.request(provider, model,
tools=..., api=...)`` is made. Each payload is hashed as the bytes ``json.dumps(payload)``
produces (key order as built, no sorting): that is what a client sends. The synthetic sessions
of :mod:`.synthetic` (compaction, eviction, settling, repair) are hashed the same way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from regio.bench.capture import AddMessage, Call, RegionOp, capture_stream, rules_for
from regio.bench.cli import DEMO_GROUPS
from regio.bench.replay import LAYOUTS, _Clock, _message_tokens, trace_tools
from regio.blueprint import load_blueprint
from regio.capture.filing import apply_op, file_moves
from regio.engine import Engine
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.tokens import chat_format_for_model, get_counter
from regio.traces.detect import expand_sources, import_file
from regio.traces.format import Trace

from .synthetic import SYNTHETIC, synthetic_hashes

__all__ = ["APIS", "GOLDEN_FILE", "collect", "differences", "payload_bytes", "replay_hashes"]

#: Renderer APIs hashed.
APIS: tuple[str, ...] = ("anthropic", "openai_chat", "openai_responses", "text")
#: Where the hashes are kept.
GOLDEN_FILE = Path(__file__).with_name("payload-hashes.json")
ROOT = Path(__file__).resolve().parents[2]
#: Per-request hashes are kept to this many hex digits (enough to find the first change).
SHORT = 8


def payload_bytes(payload: dict[str, Any]) -> bytes:
    """The bytes a client sends for ``payload``: ``json.dumps`` with key order as built."""
    return json.dumps(payload, sort_keys=False).encode()


def bundled_jobs() -> Iterator[tuple[Trace, Any]]:
    """(trace, blueprint) for every bundled trace, with the blueprint ``regio demo`` uses."""
    examples = ROOT / "examples"
    for folder, blueprint_file in sorted(DEMO_GROUPS.items()):
        blueprint = load_blueprint(examples / "blueprints" / blueprint_file)
        for path in expand_sources([examples / "traces" / folder]):
            for trace in import_file(path).traces:
                yield trace, blueprint


def _engine(blueprint: Any, strategy: str, counter: Any, clock: _Clock) -> Engine:
    summarizer = ExtractiveSummarizer(
        context_window=blueprint.summarizer.context_window or blueprint.model.context_window,
        max_summary_tokens=blueprint.summarizer.max_summary_tokens,
        counter=counter,
    )
    return Engine.from_blueprint(
        blueprint, summarizer=summarizer, token_counter=counter, clock=clock, strategy=strategy
    )


def replay_hashes(trace: Trace, blueprint: Any, strategy: str, api: str) -> list[str]:
    """The sha256 of every payload ``strategy`` rendered for ``api`` sends on ``trace``."""
    counter = get_counter(
        blueprint.tokenizer, chat_format=chat_format_for_model(blueprint.model.name)
    )
    clock = _Clock()
    engine = _engine(blueprint, strategy, counter, clock)
    names = {r.name for r in engine.window.regions}
    tools = trace_tools(trace)
    provider, model = blueprint.model.provider, blueprint.model.name
    out: list[str] = []
    for item in capture_stream(trace, rules_for(blueprint), counter.count):
        if isinstance(item, RegionOp):
            if item.region in names:
                apply_op(engine, item)
        elif isinstance(item, AddMessage):
            filed = file_moves({strategy: engine}, None, item, names, [])
            message = item.message if filed.by_engine[strategy] else item.fallback or item.message
            engine.add_message(
                message, tokens=_message_tokens(counter, message), observation=item.observation
            )
            if message.role != "assistant" and engine.pending():
                engine.flush()
        elif isinstance(item, Call):
            clock.now = item.t
            _req, payload = engine.request(provider, model, tools=tools, api=api)
            out.append(hashlib.sha256(payload_bytes(payload)).hexdigest())
            clock.now = item.t_end
    return out


def combined(hashes: list[str]) -> str:
    """One hash over a sequence of per-request hashes."""
    return hashlib.sha256("\n".join(hashes).encode()).hexdigest()


def _entry(hashes: list[str]) -> dict[str, Any]:
    return {
        "requests": len(hashes),
        "sha256": combined(hashes),
        "each": " ".join(h[:SHORT] for h in hashes),
    }


def collect() -> dict[str, Any]:
    """``{trace id: {strategy: {api: {"requests": n, "sha256": combined, "each": short}}}}``
    (``each``: the first :data:`SHORT` hex digits of every request's hash, space-separated)."""
    result: dict[str, Any] = {}
    for trace, blueprint in bundled_jobs():
        per_trace: dict[str, Any] = {}
        for strategy in LAYOUTS:
            per_api: dict[str, Any] = {}
            for api in APIS:
                per_api[api] = _entry(replay_hashes(trace, blueprint, strategy, api))
            per_trace[strategy] = per_api
        result[trace.id] = per_trace
    for name in SYNTHETIC:
        result[name] = {
            s: {api: _entry(synthetic_hashes(name, s, api)) for api in APIS} for s in LAYOUTS
        }
    return result


def differences(expected: dict[str, Any], actual: dict[str, Any]) -> list[str]:
    """Where ``actual`` differs from ``expected``: one line per trace/strategy/api, naming the
    first request whose payload bytes changed."""
    out: list[str] = []
    for trace in sorted(expected.keys() | actual.keys()):
        exp_t, act_t = expected.get(trace, {}), actual.get(trace, {})
        for strategy in sorted(exp_t.keys() | act_t.keys()):
            exp_s, act_s = exp_t.get(strategy, {}), act_t.get(strategy, {})
            for api in sorted(exp_s.keys() | act_s.keys()):
                exp, act = exp_s.get(api), act_s.get(api)
                if exp == act:
                    continue
                if exp is None or act is None:
                    out.append(f"{trace} {strategy} {api}: missing on one side")
                    continue
                old, new = exp["each"].split(), act["each"].split()
                first = next(
                    (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
                    min(len(old), len(new)),
                )
                out.append(
                    f"{trace} {strategy} {api}: request {first} of {len(new)} differs "
                    f"(golden has {len(old)})"
                )
    return out
