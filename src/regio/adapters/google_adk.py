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
:meth:`regio.session._budget.EngineBudget.send_beside`). :meth:`RegioCallbacks.after_model`
records the model's reply. ADK's session keeps every event; only the model sees the window.
Gemini caches prefixes implicitly, so no marks are sent.

Which contents the engine holds is an :class:`regio.session._state.AdapterCursor` in the
engine's session (:mod:`regio.adapters.cursor`): new callbacks over a loaded engine admit only
what is new, and a run that stopped between a call and its response (ADK then leaves the call
out of the contents it builds) goes on from the content before the call (the cursor's second
anchor). Images and documents (``inline_data`` and ``file_data`` parts of the user's contents,
and of function responses) travel both ways; a part regio has no block for (audio, video,
executable code) raises :class:`regio.sdk._objects.SDKInputError` naming the content and the
part (:mod:`regio.adapters.genai`). A tool response too large for the conversation reaches the
model cut, with a note saying so (:mod:`regio.adapters.admit`).

**Function calls without ids.** Gemini sends function calls without ids; ADK gives them ids of
its own and strips them from every ``LlmRequest``, so the model pairs responses with calls by
order and name. The callbacks do the same: each call without an id gets one in the engine
(``adk-regio-<n>``), each response without one the id of the call it answers, and those ids are
never sent to the model (:mod:`regio.adapters.genai`).

**A broken history is repaired before it is laid out.** ADK drops a function call without a
response (and a response without its call) from the contents it builds, but the engine may hold
one: ``after_model`` recorded a call whose tool never returned (a run that stopped between the
two, then went on in the same session). When the layout finds the history broken,
``before_model`` repairs the engine's conversation before the window goes out
(:mod:`regio.adapters.repaired`; :meth:`regio.engine.Engine.repair`, the rules of
:func:`regio.engine.repair_history`): an orphaned call is closed with a response saying it was
interrupted, an orphaned response leaves the window, a reused id is renamed; each change is a
``HistoryRepaired`` event. The model never gets an invalid request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from google.genai import types

from .admit import admit
from .cursor import canonical_digest, cursor, first_new, mark
from .genai import to_contents, to_regio
from .repaired import repaired_request

if TYPE_CHECKING:
    from google.adk.agents.callback_context import CallbackContext
    from google.adk.models.llm_request import LlmRequest
    from google.adk.models.llm_response import LlmResponse

    from regio.engine import Engine

__all__ = ["RegioCallbacks"]

#: The key of the callbacks' cursor in the engine's session (``engine.state.adapters``).
CURSOR = "google-adk"


def _part_form(part: types.Part) -> list[Any]:
    if part.function_call is not None:
        call = part.function_call
        return ["call", call.id, call.name, call.args]
    if part.function_response is not None:
        answer = part.function_response
        return ["response", answer.id, answer.name, answer.response]
    if part.inline_data is not None:
        blob = part.inline_data
        return ["data", blob.mime_type, canonical_digest(repr(blob.data))]
    if part.file_data is not None:
        return ["file", part.file_data.mime_type, part.file_data.file_uri]
    return ["text", part.text or "", bool(part.thought)]


def _digest(content: types.Content) -> str:
    """The canonical digest of one content (role and parts, no metadata)."""
    return canonical_digest([content.role, [_part_form(p) for p in content.parts or []]])


def _instruction_text(instruction: types.ContentUnion | None) -> str:
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

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def before_model(self, callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        """Append the new contents; the request becomes the engine's window (module doc).
        Returns ``None``, so ADK calls the model with the laid-out request."""
        contents = list(llm_request.contents or [])
        start = first_new(self.engine, CURSOR, contents, _digest)
        at = cursor(self.engine, CURSOR)
        for n in range(start, len(contents)):
            for message in to_regio(contents[n], f"contents[{n}]", at):
                admit(self.engine, message)
            mark(self.engine, CURSOR, n + 1, _digest(contents[n]))
        if contents and start == len(contents) != at.position:  # contents rewritten shorter
            mark(self.engine, CURSOR, len(contents), _digest(contents[-1]))
        agent = _instruction_text(llm_request.config.system_instruction)
        self.engine.budget.send_beside(agent, "\n\n")
        regio, window = to_contents(repaired_request(self.engine, "openai")[1]["messages"])
        llm_request.contents = window
        system = "\n\n".join(t for t in (agent, regio) if t)
        llm_request.config.system_instruction = system or None

    def after_model(self, callback_context: CallbackContext, llm_response: LlmResponse) -> None:
        """Record the model's reply (a streamed response once, when complete); ADK appends it
        to the session's events next. Returns ``None``: the reply goes on unchanged."""
        content = llm_response.content
        if content is None or llm_response.partial:
            return
        at = cursor(self.engine, CURSOR)
        for message in to_regio(content, "response.content", at):
            self.engine.add_message(message)
        mark(self.engine, CURSOR, at.position + 1, _digest(content))
