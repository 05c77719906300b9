"""Drive a regio engine by hand: a compaction and an overflow recovery, fully offline.

Run from the repository root::

    .venv/bin/python examples/drive_engine.py

Uses ``examples/blueprints/coding-agent.yaml`` when present (else a small inline blueprint),
the model-free :class:`ExtractiveSummarizer`, and a fake provider error for the overflow.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from regio.content import ToolUse
from regio.engine import Engine
from regio.summarizers import ExtractiveSummarizer

BLUEPRINT = Path(__file__).parent / "blueprints" / "coding-agent.yaml"
INLINE = """
version: 1
name: inline-demo
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 8000}
tokenizer: o200k_base
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 2000,
     seed: "You are a careful software engineer."}
  - {name: conversation_history, kind: compact_history, source: conversation, budget: 6000}
  - {name: conversation, kind: sliding_window, budget: 60000}
"""


def main() -> None:
    source = BLUEPRINT if BLUEPRINT.exists() else INLINE
    engine = Engine.from_blueprint(
        source, summarizer=ExtractiveSummarizer(max_summary_tokens=400), clock=lambda: 0.0
    )
    engine.subscribe(
        lambda e: (
            print(f"  event {e.kind}") if e.kind.startswith(("compaction_", "overflow")) else None
        )
    )
    print(f"blueprint: {source if isinstance(source, Path) else 'inline'}")
    print(f"limit {engine.limit:,} tokens, ceiling {engine.ceiling():,} after tool schemas")

    # a few turns of a coding session with tool calls
    engine.add_user("The test tests/test_api.py::test_login fails with KeyError 'token'.")
    for i in range(12):
        call = ToolUse(f"c{i}", "read_file", {"path": f"src/app/module_{i}.py"})
        engine.add_assistant(f"Reading module {i}.", [call])
        body = "\n".join(
            f"def handler_{i}_{n}(request): return request['token']  # line {n}" for n in range(60)
        )
        engine.add_tool_result(f"c{i}", body)
    engine.add_user("Now fix it and run the tests.")
    request, payload = engine.request()
    print(f"request 1: {request.tokens:,} tokens, {len(payload['messages'])} messages")

    # 1. a compaction on demand (instructions are added to the standing requirements)
    result = engine.compact("Keep every file path that was read.", keep_tokens=2_000)
    assert result is not None
    print(
        f"compaction: {len(result.replaced_ids)} items replaced, "
        f"{result.tokens_before:,} -> {result.tokens_after:,} tokens, "
        f"{result.summarizer_calls} summarizer call(s)"
    )
    print("summary starts:", result.summary_preview.splitlines()[0])

    # 2. an overflow recovery: the provider refuses the next request for length (here a
    #    fake refusal; the engine rescales its estimate to the reported size and compacts)
    engine.add_assistant("Running the tests now.", [ToolUse("t1", "bash", {"cmd": "pytest"})])
    engine.add_tool_result("t1", "\n".join(f"FAILED test_{n}" for n in range(300)))
    engine.add_user("What failed?")
    engine.request()
    error = {
        "status": 400,
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 210345 tokens > 200000 maximum",
        },
    }
    token = engine.recover_overflow(error)
    assert token is not None
    print(
        f"overflow: provider reported {token.info.reported:,} > {token.info.maximum:,}; "
        f"compacted to {token.tokens_after:,} calibrated tokens (ceiling {token.ceiling:,}); "
        "retry once"
    )
    request, _ = engine.request()
    engine.observe({"input_tokens": request.tokens, "output_tokens": 50})
    print(
        f"retry: {request.tokens:,} tokens by regio's own count; transcript keeps "
        f"{len(engine.transcript_log.messages())} messages, the view "
        f"{len(engine.window.conversation.entries) if engine.window.conversation else 0}"
    )

    with tempfile.TemporaryDirectory() as tmp:
        path = engine.save(Path(tmp) / "engine.json")
        again = Engine.load(path)
        print(
            f"saved and loaded: {len(again.transcript())} transcript records, "
            f"{again.window.used_tokens:,} tokens in the window"
        )


if __name__ == "__main__":
    main()
