"""A deterministic synthetic session that rewrites its conversation often.

The bundled traces are short: their windows never fill, so they never compact, evict, settle
notes or collect the tail. This session does all of that within a few hundred turns (a small
window, a ``compact`` conversation, a ``compacting`` scratch region, ``grows`` notes that
settle, a ``rewritten`` state region, tool calls with a missing and an orphan result, a
``stable`` region edited once), so the golden hashes cover the rewrite paths too. ``notes``
releases its oldest entry every 11 turns: from turn 5 on the ``regio`` layout places it in the
tail (observed volatility, :mod:`regio.layout.observe`), so the hashes cover that move too;
``scratch`` stays ``grows`` through its compactions (their removal comes with a new summary,
which rewrites the conversation anyway).
"""

from __future__ import annotations

import hashlib

from regio.content import ToolUse
from regio.engine import Engine
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter

__all__ = ["SYNTHETIC", "synthetic_hashes"]

BLUEPRINT = """
version: 1
name: golden-synthetic
model: {provider: PROVIDER, name: MODEL, context_window: 24000, max_output_tokens: 2000}
layout: {strategy: regio, chunk_tokens: 256, settle_share: 0.05}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 3000,
     seed: "You are a careful engineer. Keep answers short and cite file paths."}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 200, max_entries: 1}
  - {name: notes, kind: temporary, volatility: grows, budget: 2500, admission: evict}
  - {name: scratch, kind: compacting, volatility: grows, budget: 1200, compact_at: 0.8,
     target: 0.25}
  - {name: notes_history, kind: compact_history, source: scratch, volatility: grows,
     budget: 800}
  - {name: conversation_history, kind: compact_history, source: conversation,
     volatility: grows, budget: 1500}
  - name: conversation
    kind: sliding_window
    budget: 9000
    max_items: 60
    eviction: {strategy: compact, compact_count: 12}
"""

#: Synthetic sessions: name -> (provider, model, turns).
SYNTHETIC: dict[str, tuple[str, str, int]] = {
    "synthetic/anthropic-long": ("anthropic", "claude-sonnet-4-5", 200),
    "synthetic/openai-long": ("openai", "gpt-4o", 80),
}


def _turn(engine: Engine, i: int) -> None:
    """Turn ``i``'s messages and region writes (before the request)."""
    engine.add_user(f"turn {i}: look at module m{i % 17}.py and report " + "detail " * (i % 9))
    engine.write("env_state", f"cwd=/repo/pkg{i % 5} step={i}", key="env")
    if i % 3 == 0:
        engine.write("notes", f"note {i}: m{i % 17}.py defines f{i} " + "fact " * (i % 23))
    if i % 4 == 0:
        engine.write("scratch", f"scratch {i}: tried option {i % 6} " + "idea " * 20)
    if i % 11 == 5:
        engine.release("notes", oldest=1)
    if i == 70:
        engine.clear("system")
        engine.write("system", "You are a careful engineer. Prefer small diffs.")
    if i % 2 == 0:
        call = ToolUse(f"c{i}", "read_file", {"path": f"m{i % 17}.py", "line": i})
        engine.add_assistant(f"reading m{i % 17}.py", (call,))
        if i % 10 != 8:  # every tenth call is never answered
            engine.add_tool_result(call.id, f"def f{i}():\n    return {i}\n" * (1 + i % 7))
    if i % 29 == 7:
        engine.add_tool_result(f"ghost{i}", "a result no call asked for")


def synthetic_hashes(name: str, strategy: str, api: str) -> list[str]:
    """The sha256 of every payload the synthetic session ``name`` sends for ``strategy``
    rendered for ``api`` (one request a turn, then the assistant's reply)."""
    from .payloads import payload_bytes

    provider, model, turns = SYNTHETIC[name]
    counter = get_counter("heuristic")
    text = BLUEPRINT.replace("PROVIDER", provider).replace("MODEL", model)
    clock = _Clock()
    engine = Engine.from_blueprint(
        text,
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=300),
        clock=clock,
        strategy=strategy,
    )
    out: list[str] = []
    for i in range(turns):
        clock.now = 10.0 * i
        _turn(engine, i)
        _req, payload = engine.request(provider, model, api=api)
        out.append(hashlib.sha256(payload_bytes(payload)).hexdigest())
        engine.add_assistant(f"m{i % 17}.py: f{i} returns {i}; " + "ok " * (i % 13))
    return out


class _Clock:
    now: float = 0.0

    def __call__(self) -> float:
        return self.now
