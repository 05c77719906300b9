"""Per-turn overhead of the engine at turn 100 and turn 1,000 of a long synthetic session.

A turn is what :mod:`regio.bench.replay` does per model call, through
:class:`regio.engine.Engine` (``regio`` layout): ``add_user``, one captured region write
(``Engine.write``), ``Engine.request`` (turn-boundary flush, layout with the carried state,
budget check, rendering for the provider: Anthropic or OpenAI Chat, parametrized) and
``add_assistant``. The median-based time ratio
(turn 1,000 / turn 100) is printed; the assertion is on work counts only: the token counter
is called for the new content of the turn, never for the whole window, so the number of
counter calls per turn is the same at turn 100 and turn 1,000 (DESIGN.md section 6, engine
overhead).

Run with ``pytest benchmarks/test_bench_engine.py --benchmark-enable -s``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import attrs
import pytest

from regio.engine import Engine
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter

BLUEPRINT = """
version: 1
name: long-session
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 1000000,
        max_output_tokens: 8000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 4000, seed: "You are a helper."}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 500}
  - {name: conversation, kind: sliding_window, budget: "90%"}
"""


@attrs.define
class CountingCounter:
    """Wraps a token counter and counts its calls (``count`` and ``count_entry``)."""

    inner: Any
    calls: int = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return int(self.inner.count(text))

    def count_entry(self, entry: Any) -> int:
        self.calls += 1
        return int(self.inner.count_entry(entry))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Session:
    """A synthetic session: one user message, one state write, one request and one assistant
    reply a turn, through the engine."""

    def __init__(self, provider: str = "anthropic") -> None:
        self.provider = provider
        self.model = "claude-sonnet-4-6" if provider == "anthropic" else "gpt-4o"
        self.counter = CountingCounter(get_counter("heuristic"))
        self.engine = Engine.from_blueprint(
            BLUEPRINT,
            token_counter=self.counter,
            summarizer=ExtractiveSummarizer(counter=self.counter),
            clock=lambda: 0.0,
        )
        self.turns = 0

    def turn(self) -> int:
        """Play one turn; returns the counter calls it made."""
        before = self.counter.calls
        i = self.turns
        self.engine.add_user(f"turn {i}: please check item {i} and report")
        self.engine.write("env_state", f"cwd=/repo step={i}", key="env")
        self.engine.request(self.provider, self.model)
        self.engine.add_assistant(f"item {i} checked: status ok, next {i + 1}")
        self.turns += 1
        return self.counter.calls - before

    def advance_to(self, n: int) -> None:
        while self.turns < n:
            self.turn()


PROVIDERS = ["anthropic", "openai"]


@pytest.fixture(scope="module", params=PROVIDERS)
def sessions(request: Any) -> dict[int, Session]:
    out = {}
    for n in (100, 1000):
        s = Session(request.param)
        s.advance_to(n - 1)
        out[n] = s
    return out


def _timed_turns(session: Session, k: int = 20) -> tuple[float, list[int]]:
    """Median seconds per turn over ``k`` turns, and the counter calls of each turn."""
    calls = []
    times = []
    for _ in range(k):
        start = time.perf_counter()
        calls.append(session.turn())
        times.append(time.perf_counter() - start)
    return statistics.median(times), calls


def test_counter_work_per_turn_is_flat_from_turn_100_to_turn_1000(
    sessions: dict[int, Session],
) -> None:
    t100, calls100 = _timed_turns(sessions[100])
    t1000, calls1000 = _timed_turns(sessions[1000])
    print(
        f"\n{sessions[100].provider}: median per-turn time: turn 100 {t100 * 1e3:.2f} ms, "
        f"turn 1,000 {t1000 * 1e3:.2f} ms,"
        f" median ratio {t1000 / t100:.2f}; counter calls per turn {calls100[0]} vs "
        f"{calls1000[0]}"
    )
    assert max(calls1000) == max(calls100)
    assert min(calls1000) == min(calls100)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("at", [100, 1000])
def test_turn_overhead(benchmark: Any, at: int, provider: str) -> None:
    session = Session(provider)
    session.advance_to(at - 1)
    calls = benchmark.pedantic(session.turn, rounds=10, iterations=1)
    assert calls > 0
