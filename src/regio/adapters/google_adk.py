"""Google ADK callbacks that hand the model regio's window on every call (extra
``regio[google-adk]``).

``LlmAgent(..., before_model_callback=callbacks.before_model, after_model_callback=
callbacks.after_model)`` with ``callbacks = RegioCallbacks(engine)``
(https://google.github.io/adk-docs/callbacks/types-of-callbacks/): before each model call ADK
builds an ``LlmRequest`` from the session's events; :meth:`RegioCallbacks.before_model` appends
the contents new since the last call (the user's message, function responses) to the engine and
lays the request out again: its ``contents`` become the engine's window as ``google.genai``
contents (the compacted history and the recent turns; function calls and their responses
paired by id, relief placeholders in place of cleared responses) and its
``config.system_instruction`` the agent's instruction followed by regio's pinned regions (the
agent's first: it opens the stable prefix; counted beside the window,
:meth:`regio.runtime.budget.EngineBudget.send_beside`). :meth:`RegioCallbacks.after_model`
records the model's reply. ADK's session keeps every event; only the model sees the window.
Gemini caches prefixes implicitly, so no marks are sent.

Which contents the engine holds is an :class:`regio.runtime.state.AdapterCursor` in the
engine's session (:mod:`regio.adapters.cursor`): new callbacks over a loaded engine admit only
what is new. A part regio has no block for (inline data, files, executable code) raises
:class:`regio.runtime.sdk.SDKInputError` naming the content and the part.

**A broken history is repaired before it is laid out.** ADK drops a function call without a
response (and a response without its call) from the contents it builds, but the engine may hold
one: ``after_model`` recorded a call whose tool never returned (a run that stopped between the
two, then went on in the same session). When the layout finds the history broken,
``before_model`` repairs the engine's conversation before the window goes out
(:mod:`regio.adapters.repaired`; :meth:`regio.runtime.Engine.repair`, the rules of
:func:`regio.runtime.repair_history`): an orphaned call is closed with a response saying it was
interrupted, an orphaned response leaves the window, a reused id is renamed; each change is a
``HistoryRepaired`` event. The model never gets an invalid request.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from regio.content import Block, Message, Text, ToolResult, ToolUse
from regio.runtime.sdk import SDKInputError

from .chat import chat_messages, content_text
from .cursor import canonical_digest, cursor, first_new, mark
from .repaired import repaired_request

__all__ = ["RegioCallbacks"]

#: The key of the callbacks' cursor in the engine's session (``engine.state.adapters``).
CURSOR = "google-adk"


def _response_text(response: Any) -> str:
    """The text of a ``FunctionResponse.response``: its ``result`` (or ``output``) when that is
    the one string in it, else the whole value as JSON."""
    if isinstance(response, dict) and len(response) == 1:
        (value,) = response.values()
        if isinstance(value, str):
            return value
    return json.dumps(response, sort_keys=True, default=str)


def _to_regio(content: types.Content, where: str) -> list[Message]:
    """The regio messages of one ``google.genai`` content (module doc)."""
    blocks: list[Block] = []
    results: list[ToolResult] = []
    for n, part in enumerate(content.parts or []):
        if part.thought:
            continue
        if part.text is not None:
            if part.text:
                blocks.append(Text(part.text))
        elif part.function_call is not None:
            call = part.function_call
            blocks.append(ToolUse(str(call.id or ""), str(call.name), dict(call.args or {})))
        elif part.function_response is not None:
            answer = part.function_response
            results.append(ToolResult(str(answer.id or ""), _response_text(answer.response)))
        else:
            raise SDKInputError(
                f"{where}.parts[{n}]: cannot read this part; regio reads text, function calls "
                "and function responses"
            )
    if content.role == "model":
        return [Message("assistant", tuple(blocks))] if blocks else []
    out = [Message.tool((r,)) for r in results]
    if blocks:
        out.append(Message("user", tuple(blocks)))
    return out


def _part_form(part: types.Part) -> list[Any]:
    if part.function_call is not None:
        call = part.function_call
        return ["call", call.id, call.name, call.args]
    if part.function_response is not None:
        answer = part.function_response
        return ["response", answer.id, answer.name, answer.response]
    return ["text", part.text or "", bool(part.thought)]


def _digest(content: types.Content) -> str:
    """The canonical digest of one content (role and parts, no metadata)."""
    return canonical_digest([content.role, [_part_form(p) for p in content.parts or []]])


def _contents(messages: list[dict[str, Any]]) -> tuple[str, list[types.Content]]:
    """(regio's system text, the window as ``google.genai`` contents) of regio's Chat
    Completions payload: tool results answering one assistant turn join one user content, with
    the user text that follows them (the layout's tail)."""
    system = "\n\n".join(
        content_text(m.get("content")) for m in messages if m.get("role") == "system"
    )
    names: dict[str, str] = {}
    out: list[types.Content] = []
    for message in chat_messages(messages):
        parts: list[types.Part] = []
        if message.role == "assistant":
            parts = [types.Part(text=b.text) for b in message.blocks if isinstance(b, Text)]
            for call in message.tool_calls:
                names[call.id] = call.name
                fc = types.FunctionCall(id=call.id, name=call.name, args=dict(call.input))
                parts.append(types.Part(function_call=fc))
            out.append(types.Content(role="model", parts=parts))
            continue
        for r in message.tool_results:
            answer = types.FunctionResponse(
                id=r.tool_use_id,
                name=names.get(r.tool_use_id, "tool"),
                response={"result": r.content},
            )
            parts.append(types.Part(function_response=answer))
        parts.extend(types.Part(text=b.text) for b in message.blocks if isinstance(b, Text))
        if out and out[-1].role == "user":  # one user turn: the results, then the tail
            out[-1].parts = [*(out[-1].parts or []), *parts]
        else:
            out.append(types.Content(role="user", parts=parts))
    return system, out


def _instruction_text(instruction: Any) -> str:
    """The text of a ``GenerateContentConfig.system_instruction`` (a string or a content)."""
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    parts = getattr(instruction, "parts", None)
    if parts is not None:
        return "\n\n".join(p.text for p in parts if getattr(p, "text", None))
    return str(instruction)


class RegioCallbacks:
    """ADK model callbacks over ``engine`` (module doc); one engine per ADK session."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def before_model(self, callback_context: Any, llm_request: Any) -> None:
        """Append the new contents; the request becomes the engine's window (module doc).
        Returns ``None``, so ADK calls the model with the laid-out request."""
        contents = list(llm_request.contents or [])
        start = first_new(self.engine, CURSOR, contents, _digest)
        for n, content in enumerate(contents[start:], start):
            for message in _to_regio(content, f"contents[{n}]"):
                self.engine.add_message(message)
        if contents:
            mark(self.engine, CURSOR, len(contents), _digest(contents[-1]))
        agent = _instruction_text(llm_request.config.system_instruction)
        self.engine.budget.send_beside(agent, "\n\n")
        regio, window = _contents(repaired_request(self.engine, "openai")[1]["messages"])
        llm_request.contents = window
        system = "\n\n".join(t for t in (agent, regio) if t)
        llm_request.config.system_instruction = system or None

    def after_model(self, callback_context: Any, llm_response: Any) -> None:
        """Record the model's reply (a streamed response once, when complete); ADK appends it
        to the session's events next. Returns ``None``: the reply goes on unchanged."""
        content = llm_response.content
        if content is None or llm_response.partial:
            return
        for message in _to_regio(content, "response.content"):
            self.engine.add_message(message)
        at = cursor(self.engine, CURSOR)
        mark(self.engine, CURSOR, at.position + 1, _digest(content))
