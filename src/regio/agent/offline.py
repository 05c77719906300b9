"""Offline providers for ``regio run``: ``--provider scripted`` and ``--provider replay``.

* ``scripted`` answers from ``--script FILE`` (YAML: a list whose items are a final answer
  string or ``{text: ..., tool_calls: [{name: ..., input: {...}}]}``), or, without one, with a
  single answer that restates the task;
* ``replay`` answers with the assistant turns of a recorded run, ``--trace FILE`` in any format
  ``regio traces import`` reads (regio JSONL, SWE-agent, mini-SWE-agent, tau-bench, OpenAI
  messages), default the first bundled trace (``examples/traces`` of a source checkout).

Neither opens a connection, so a newcomer can try the loop, the layout and the cache table
without an API key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from regio.providers.registry import find_provider

from .errors import AgentConfigError
from .providers import ReplayProvider, ScriptedProvider, reply

__all__ = ["OFFLINE_PROVIDERS", "offline_provider", "provider_for_blueprint"]

OFFLINE_PROVIDERS = ("scripted", "replay")


def provider_for_blueprint(name: str) -> str | None:
    """The ``--provider`` choice for a blueprint's ``model.provider``: the registered
    provider's ``agent_client`` (``anthropic``, ``openai`` or ``openai-compatible``;
    :func:`regio.providers.find_provider`), ``None`` for a provider no registration knows or
    that no client talks to."""
    found = find_provider(name)
    return found.agent_client if found is not None else None


def _script_items(path: str) -> list[Any]:
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise AgentConfigError(f"--script {path}: cannot read it ({exc})") from exc
    if not isinstance(data, list) or not data:
        raise AgentConfigError(f"--script {path}: expected a non-empty YAML list of replies")
    items: list[Any] = []
    for index, item in enumerate(data):
        if isinstance(item, str):
            items.append(reply(item))
            continue
        if not isinstance(item, dict):
            raise AgentConfigError(
                f"--script {path}: item {index} is a {type(item).__name__}; use a string or "
                "{text: ..., tool_calls: [{name: ..., input: {...}}]}"
            )
        calls = [
            (f"call_{index}_{n}", str(c.get("name")), dict(c.get("input") or {}))
            for n, c in enumerate(item.get("tool_calls") or [])
        ]
        items.append(reply(str(item.get("text", "")), calls))
    return items


def _trace(path: str | None) -> Any:
    from regio.traces.bundled import bundled_trace_paths
    from regio.traces.detect import import_file
    from regio.traces.errors import TraceFormatError

    if path is None:
        try:
            paths = bundled_trace_paths()
        except FileNotFoundError as exc:
            raise AgentConfigError(f"--provider replay needs --trace FILE ({exc})") from exc
        path = str(next(p for p in paths if "function_calling" in p.name or p == paths[-1]))
    try:
        return import_file(path).traces[0]
    except (TraceFormatError, OSError, IndexError) as exc:
        raise AgentConfigError(f"--trace {path}: cannot replay it ({exc})") from exc


def offline_provider(
    name: str,
    task: str,
    *,
    model: str,
    api: str = "openai",
    script: str | None = None,
    trace: str | None = None,
) -> tuple[Any, str]:
    """``(provider, task)`` for ``--provider scripted|replay`` (module doc), rendering payloads
    for ``api`` (``openai`` or ``anthropic``) and reporting ``model``; a replay without an
    explicit task uses the trace's first user message. Raises :class:`AgentConfigError` naming
    the file for a script or trace that cannot be read."""
    if name == "scripted":
        task = task or "Say hello"
        items = _script_items(script) if script else [reply(f"(scripted) I would now: {task}")]
        return ScriptedProvider.of(items, api=api, model=model), task
    recorded = _trace(trace)
    if not task:
        from regio.traces.format import UserMessage

        first = next((e for e in recorded.events if isinstance(e, UserMessage)), None)
        task = "".join(getattr(b, "text", "") for b in first.blocks) if first else "replay"
    return ReplayProvider.from_trace(recorded, api=api, model=model), task
