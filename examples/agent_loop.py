"""An agent loop through a regio engine, offline by default.

Offline (no network, scripted answers)::

    python examples/agent_loop.py

Against a real OpenAI-compatible server (a local llama.cpp server started with
``scripts/live-server.sh start``, vLLM, or OpenAI itself)::

    python examples/agent_loop.py --base-url http://127.0.0.1:18080/v1 --model gemma-3-270m

With a real server the model writes the answers; a model too small to call tools will simply
answer in one step. ``regio run BLUEPRINT --base-url ...`` does the same from the command line
and prints the cache per step.
"""

from __future__ import annotations

import argparse

from regio.agent import AgentLoop, OpenAICompatibleProvider, ScriptedProvider, Tool, reply
from regio.engine._engine import Engine

BLUEPRINT = """
version: 1
name: example-agent
model: {provider: openai, name: gpt-4o-mini, context_window: 8192, max_output_tokens: 256}
tokenizer: o200k_base
layout: {strategy: regio}
regions:
  - name: system
    kind: pinned
    volatility: stable
    budget: 500
    seed: You answer arithmetic questions with the add tool and keep notes in 'notes'.
  - {name: notes, kind: keyed, volatility: rewritten, budget: 200}
  - {name: conversation, kind: sliding_window, budget: 4000}
"""

ADD = Tool(
    name="add",
    description="Add two numbers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    fn=lambda a, b: a + b,
)


def scripted() -> ScriptedProvider:
    """Three recorded turns: a tool call plus a context write, then the answer."""
    return ScriptedProvider(
        [
            reply(
                "Adding, and noting the question.",
                [
                    ("call_1", "add", {"a": 19, "b": 23}),
                    (
                        "call_2",
                        "context_write",
                        {"region": "notes", "key": "question", "text": "19 + 23"},
                    ),
                ],
                prompt_tokens=420,
                output_tokens=40,
            ),
            reply("19 + 23 = 42.", prompt_tokens=520, cached_tokens=420, output_tokens=8),
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="OpenAI-compatible base URL (default: offline script)")
    parser.add_argument("--model", default="gpt-4o-mini")
    parser.add_argument("--task", default="What is 19 + 23?")
    args = parser.parse_args()

    engine = Engine.from_blueprint(BLUEPRINT)
    if args.base_url:
        provider = OpenAICompatibleProvider(
            model=args.model, base_url=args.base_url, max_tokens=64, temperature=0.0
        )
    else:
        provider = scripted()
    result = AgentLoop(engine, provider, [ADD], max_steps=5).run(args.task)
    for step in result.steps:
        print(
            f"step {step.step}: prompt {step.prompt_tokens}, cached {step.cached_tokens}, "
            f"tools {', '.join(step.tool_calls) or '-'}"
        )
    print(f"stop: {result.stop_reason}; answer: {result.final_text}")
    print("notes region:", [e.text for e in engine.window.region("notes").entries])


if __name__ == "__main__":
    main()
