"""The broken-request rule credits regio's summaries without tracing what its summarizer read
(:func:`regio.bench.enginepass._engine_has_task`): that holds because regio's requests keep
the task message itself. Pinned here on a tool-heavy session at a tight window, where the
peers lose it."""

from __future__ import annotations

from pathlib import Path

import pytest

import regio.bench.enginepass as enginepass
from regio.bench.replay import replay
from regio.blueprint import load_blueprint
from regio.traces.synth import synthesize

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "blueprints"


@pytest.mark.parametrize("shape", ["bigtool", "parallel"])
def test_regios_requests_hold_the_task_message_itself_after_every_compaction(
    shape: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[bool, bool]] = []
    judge = enginepass._engine_has_task

    def recorded(*args: object) -> tuple[bool, bool]:
        result = judge(*args)  # type: ignore[arg-type]
        seen.append(result)
        return result

    monkeypatch.setattr(enginepass, "_engine_has_task", recorded)
    out = replay(
        synthesize(80, 11, shape=shape),
        load_blueprint(EXAMPLES / "coding-agent.yaml"),
        layouts=("regio",),
        window_tokens=32768,
    )
    run = out.runs["regio"]
    assert run.compaction_calls > 0  # the window was cut, more than once
    assert len(seen) == len(run.requests) and all(has_task for has_task, _ in seen)
    assert run.lost_task_requests == 0
