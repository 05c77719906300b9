"""Shared builders of the persistence tests: a blueprint with every region kind (a custom
region with or without a hook) and an engine driven through writes, tool calls and a request."""

from __future__ import annotations

from pathlib import Path

from regio.content import ToolUse
from regio.engine import Engine
from regio.persistence.store import SQLiteStore

HOOK = "builtins:repr"


def blueprint_text(*, hook: str | None = HOOK, name: str = "persist") -> str:
    render = f"    render: {hook!r}\n" if hook else ""
    return (
        "version: 1\n"
        f"name: {name}\n"
        "model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 200000, "
        "max_output_tokens: 1000}\n"
        "tokenizer: heuristic\n"
        "regions:\n"
        "  - {name: system, kind: pinned, volatility: stable, budget: 1000, "
        'seed: "You are careful."}\n'
        "  - {name: facts, kind: keyed, budget: 1000}\n"
        "  - {name: todo, kind: checklist, budget: 1000}\n"
        "  - name: odd\n"
        "    kind: custom\n"
        "    budget: 500\n"
        f"{render}"
        "  - {name: conversation, kind: sliding_window, budget: 150000}\n"
    )


def driven_engine(*, hook: str | None = HOOK, payload_words: int = 20) -> Engine:
    """An engine from :func:`blueprint_text` with a little of everything in its state."""
    engine = Engine.from_blueprint(blueprint_text(hook=hook), allow_custom_hooks=hook is not None)
    engine.add_user("Fix the failing test " + "word " * payload_words)
    engine.write("facts", "the repo uses pytest", key="runner")
    engine.write("odd", "an odd note")
    engine.handle_tool_call("todo_add", {"region": "todo", "text": "reproduce the failure"})
    engine.add_assistant(
        "Looking.", tool_calls=[ToolUse("call_1", "shell", {"cmd": ["pytest", "-x"], "n": 1})]
    )
    engine.add_tool_result("call_1", {"status": "failed", "lines": ["E assert 1 == 2"]})
    engine.request()
    engine.observe({"input_tokens": engine.state.last_estimate + 3, "output_tokens": 5})
    return engine


def reload_engine(engine: Engine, folder: Path, how: str) -> Engine:
    """``engine`` saved and loaded again: ``how`` is a file suffix (``"json"``, ``"msgpack"``)
    or ``"store"`` (a SQLite session store in ``folder``)."""
    if how == "store":
        store = SQLiteStore(folder / "s.db")
        try:
            engine.save_to(store, "s")
            return Engine.load_from(store, "s")
        finally:
            store.close()
    return Engine.load(engine.save(folder / f"s.{how}"))
