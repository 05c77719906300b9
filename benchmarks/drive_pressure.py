"""Drive ``examples/blueprints/coding-agent.yaml`` for N turns with large tool outputs and
report evictions, compactions and the cost under the Anthropic cache model.

    python benchmarks/drive_pressure.py --turns 300 --tool-tokens 3000

Deterministic (seeded); the ratios within one run are what it measures.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from regio.content import ToolUse
from regio.engine import Engine
from regio.layout.cachebridge import to_cache_request
from regio.providers import cache_model_for

ROOT = Path(__file__).resolve().parents[1]
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "error",
    "path",
    "src",
    "test",
    "value",
    "func",
    "class",
    "line",
]


def _tool_output(rng: random.Random, tokens: int, i: int) -> str:
    words = [f"{rng.choice(WORDS)}{rng.randrange(1000)}" for _ in range(int(tokens * 0.75))]
    return f"output of call {i}: src/mod_{i}.py line {i * 7}\n" + " ".join(words)


def drive(turns: int, tool_tokens: int, seed: int = 7, **options: object) -> dict[str, float]:
    """Run the drive; returns counts and cache figures."""
    engine = Engine.from_blueprint(ROOT / "examples/blueprints/coding-agent.yaml", **options)
    rng = random.Random(seed)
    kinds: dict[str, int] = {}
    engine.subscribe(lambda e: kinds.__setitem__(e.kind, kinds.get(e.kind, 0) + 1))
    model = cache_model_for("anthropic:claude-sonnet-4-6")
    engine.write("task", "Fix the failing test in tests/test_api.py; never edit migrations.")
    engine.add_user("Please fix the issue. You must not touch the public API.")
    t = 0.0
    outcomes = []
    for i in range(turns):
        request, _ = engine.request()
        outcomes.append(model.process(to_cache_request(request, t_start=t, output_tokens=200)))
        t += 10.0
        call = ToolUse(f"call_{i}", "bash", {"cmd": f"cat src/mod_{i}.py"})
        engine.add_assistant(f"Step {i}: reading src/mod_{i}.py", [call])
        size = max(50, int(rng.gauss(tool_tokens, tool_tokens * 0.2)))
        engine.add_tool_result(call.id, _tool_output(rng, size, i))
    prompt = sum(o.prompt_tokens for o in outcomes)
    read = sum(o.read for o in outcomes)
    cost = sum(o.cost_usd or 0.0 for o in outcomes)
    return {
        "evicted": kinds.get("evicted", 0),
        "compactions": kinds.get("compaction_completed", 0),
        "fallbacks": kinds.get("compaction_fallback", 0),
        "hit_rate": read / prompt if prompt else 0.0,
        "cost_usd": cost,
        "history_entries": len(engine.window.region("conversation_history").entries),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--tool-tokens", type=int, default=3000)
    args = parser.parse_args()
    for key, value in drive(args.turns, args.tool_tokens).items():
        print(f"{key}: {value:.4f}" if isinstance(value, float) else f"{key}: {value}")


if __name__ == "__main__":
    main()
