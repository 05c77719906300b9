"""Live check against a real llama.cpp server: the slot model's prediction equals the server's
reported ``cached_tokens`` on every request, and the ``regio`` layout reuses more prompt tokens
than ``naive``.

Run (see docs/live.md)::

    ../shared/tools/local-llm.sh start
    export REGIO_LIVE_BASE_URL=http://127.0.0.1:18080/v1
    .venv/bin/pytest -m live tests/test_live_llamacpp.py -s

The agent is the real model for its text; the tool calls are scripted by the environment
between turns (Gemma 3 270M does not call tools reliably), so both layouts see the same
turns. Each turn rewrites the ``status`` region (``rewritten``) and, on most turns, appends to
the ``journal`` region (``grows``) through the engine's context tools.
"""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import attrs

from live_support import BASE_URL, LIVE
from regio.agent import AgentLoop, Completion, LlamaCppServer, LlamaCppSlotPredictor, Tool
from regio.agent.providers import OpenAICompatibleProvider
from regio.content import Message, Text, ToolUse
from regio.engine._engine import Engine
from regio.providers import cache_model_for

pytestmark = LIVE

BLUEPRINT = """
version: 1
name: live-check
model: {provider: llamacpp, name: gemma-3-270m, context_window: 8192, max_output_tokens: 24}
tokenizer: heuristic
layout: {strategy: regio, chunk_tokens: 256}
regions:
  - name: system
    kind: pinned
    volatility: stable
    budget: 600
    seed: |
      Session NONCE. You are a build assistant working on the project "kestrel". Read the
      status and the journal, look at the build log when asked, and say in one short
      sentence what to do next.
  - {name: status, kind: keyed, volatility: rewritten, budget: 300, description: Current status}
  - {name: journal, kind: temporary, volatility: grows, budget: 2000, description: Build journal}
  - {name: conversation, kind: sliding_window, budget: 4000}
"""

PHASES = ("configure", "compile core", "compile plugins", "link", "unit tests", "package")
STEPS = len(PHASES) + 1  # one tool turn per phase, then the final answer


def build_log(phase: str) -> str:
    lines = [f"[{phase}] target {i}: ok ({3 * i + len(phase)} files)" for i in range(4)]
    return "\n".join(lines)


@attrs.define
class ScriptedEnvironment:
    """Wraps the real provider: the model writes the text, the environment adds the tool calls
    of turn ``i`` (rewrite ``status``; append to ``journal`` except every third turn; read the
    build log). The last turn has no tool calls, which ends the run."""

    inner: OpenAICompatibleProvider
    turn: int = 0

    @property
    def api(self) -> str:
        return self.inner.api

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def max_tokens(self) -> int | None:
        return self.inner.max_tokens

    def _calls(self) -> list[ToolUse]:
        i = self.turn
        if i >= len(PHASES):
            return []
        phase = PHASES[i]
        calls = [
            ToolUse(
                f"s{i}",
                "context_write",
                {"region": "status", "key": "phase", "text": f"step {i + 1}: {phase}"},
            ),
            ToolUse(f"l{i}", "read_log", {"phase": phase}),
        ]
        if i % 3 != 2:
            calls.insert(
                1,
                ToolUse(
                    f"j{i}", "context_append", {"region": "journal", "text": f"finished {phase}"}
                ),
            )
        return calls

    def complete(self, payload: dict[str, Any]) -> Completion:
        real = self.inner.complete(payload)
        text = "".join(b.text for b in real.message.blocks if isinstance(b, Text))
        message = Message.assistant(text or "(no text)", self._calls())
        self.turn += 1
        return Completion(
            message=message,
            usage=real.usage,
            stop_reason=real.stop_reason,
            model=real.model,
            raw=real.raw,
        )

    async def acomplete(self, payload: dict[str, Any]) -> Completion:
        return self.complete(payload)


def run_layout(layout: str) -> dict[str, Any]:
    assert BASE_URL is not None
    server = LlamaCppServer(BASE_URL, timeout=300.0)
    real = OpenAICompatibleProvider(
        model="gemma-3-270m",
        base_url=BASE_URL,
        max_tokens=24,
        temperature=0.0,
        extra_body={"logprobs": True, "cache_prompt": True},
        timeout=300.0,
        max_retries=0,
    )
    predictor = LlamaCppSlotPredictor(server, cache_model_for("llamacpp"))
    # Isolation: the server keeps displaced prompts in a RAM cache (--cache-ram) that the slot
    # model does not simulate, so every run opens with its own nonce; no earlier prompt shares
    # more than the chat header with it. Priming: the slot's content before the run is unknown
    # to the simulator; one request through the same path, opening exactly like the run's
    # requests, makes it known (its own figure is not compared).
    engine = Engine.from_blueprint(
        BLUEPRINT.replace("NONCE", uuid.uuid4().hex[:12]), strategy=layout
    )
    system = engine.window.region("system").render_text()
    prime_payload = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": "Ready?"}]
    }
    predictor.predict(None, prime_payload, real.complete(prime_payload))

    read_log = Tool(
        "read_log",
        "Show the build log of a phase.",
        {"type": "object", "properties": {"phase": {"type": "string"}}, "required": ["phase"]},
        build_log,
    )
    environment = ScriptedEnvironment(real)
    loop = AgentLoop(engine, environment, [read_log], max_steps=STEPS, predictor=predictor)
    result = loop.run("Build kestrel and tell me when it is ready.")
    return {
        "layout": layout,
        "stop_reason": result.stop_reason,
        "prompt": [s.prompt_tokens for s in result.steps],
        "cached": [s.cached_tokens for s in result.steps],
        "predicted": [s.predicted_cached_tokens for s in result.steps],
        "prompt_ms": [s.prompt_ms for s in result.steps],
        "output": [s.output_tokens for s in result.steps],
    }


def test_the_slot_model_predicts_every_cached_count_and_regio_reuses_more_than_naive():
    runs = {layout: run_layout(layout) for layout in ("naive", "regio")}
    report = os.environ.get("REGIO_LIVE_REPORT")
    if report:
        with open(report, "w", encoding="utf-8") as fh:
            json.dump(runs, fh, indent=1)
    for layout, run in runs.items():
        print(f"\n{layout}: {json.dumps(run)}")
        assert run["stop_reason"] == "final_answer", run
        assert len(run["prompt"]) == STEPS
        assert all(o <= 24 for o in run["output"]), "max_tokens was not honoured"
        assert run["cached"] == run["predicted"], (
            f"{layout}: server cached_tokens {run['cached']} != slot-model prediction "
            f"{run['predicted']}. A sliding-window-attention model (Gemma 3) served without "
            "--swa-full re-processes the whole prompt when it diverges far from the slot's end "
            "(docs/live.md)."
        )
    naive, regio = runs["naive"], runs["regio"]
    assert sum(regio["cached"]) > sum(naive["cached"]), (naive["cached"], regio["cached"])
