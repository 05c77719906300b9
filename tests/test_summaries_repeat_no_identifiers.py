"""Summaries appended to one compact_history never repeat an identifier line another summary
of the history already shows: the extractive summarizer reads every earlier summary of its
source as context (``reads_all_summaries``), not only the last one.

Before the fix (only the last summary was context) the fourth summary of a 40-step tool loop
repeated the second one's ``Facts:`` line verbatim: the conformance harness's "no text sent
twice" check failed on 9 of 11 framework loops."""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.blueprint import load_blueprint
from regio.content import ToolUse
from regio.engine import Engine
from regio.summarizers import ExtractiveSummarizer

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "10"))

BLUEPRINT = """
version: 1
name: repeats
model:
  {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000, max_output_tokens: 1000}
tokenizer: heuristic
tools: {context: none}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000, heading: false}
  - {name: history, kind: compact_history, source: conversation, budget: 20000}
  - name: conversation
    kind: sliding_window
    budget: 3000
    elastic: false  # held at its budget, so a 30-step loop compacts many times
    max_items: 5000
    eviction: {strategy: compact}
"""


def _file(module: int, names: list[str]) -> str:
    lines = [f"src/mod{module}.py:{i}: {n} = accumulate(values[{i}])" for i, n in enumerate(names)]
    return "\n".join(lines)


def _summary_lines(engine: Engine) -> list[str]:
    history = engine.window.region("history")
    return [
        line.strip()
        for entry in history.entries
        if entry.meta.get("summary")
        for line in entry.text.splitlines()
        if line.startswith("Facts:")
    ]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shared=st.integers(min_value=20, max_value=60),
    steps=st.integers(min_value=30, max_value=45),
)
def test_no_two_summaries_of_a_history_show_the_same_identifier_line(
    shared: int, steps: int
) -> None:
    engine = Engine.from_blueprint(load_blueprint(BLUEPRINT), summarizer=ExtractiveSummarizer())
    names = [f"total_{i}" for i in range(shared)]
    engine.add_user("read every module and report the totals")
    for step in range(steps):
        call = ToolUse(id=f"call_{step}", name="read_file", input={"path": f"src/mod{step}.py"})
        engine.add_assistant("", [call])
        engine.add_tool_result(f"call_{step}", _file(step, names[step % 7 :] + names[: step % 7]))
        engine.flush()
    lines = _summary_lines(engine)
    summaries = [e for e in engine.window.region("history").entries if e.meta.get("summary")]
    assert len(summaries) >= 2, "the loop must compact at least twice"
    repeated = [line for line, n in Counter(lines).items() if n > 1]
    assert not repeated, f"an identifier line shown twice: {repeated[0][:100]!r}"
