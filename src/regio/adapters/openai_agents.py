"""An OpenAI Agents SDK ``Session`` backed by a regio engine, and the per-call window (extra
``regio[openai-agents]``).

``Runner.run(agent, "...", session=session, run_config=session.run_config())`` with
``session = RegioSession(engine)``:

* the SDK hands every new item to :meth:`RegioSession.add_items` (user input, the model's
  messages and function calls, the tool outputs), which appends them to the engine (protocol:
  https://openai.github.io/openai-agents-python/sessions/);
* the SDK reads the session once, when a run starts (:meth:`RegioSession.get_items`), and then
  grows the model's input itself for the rest of the run. So the window is laid out again on
  every model call by :meth:`RegioSession.call_model_input_filter`, the run's
  ``call_model_input_filter`` (``RunConfig``, https://openai.github.io/openai-agents-python/
  running_agents/#call-model-input-filter): the model's input becomes the engine's window as
  Responses input items, and its instructions the agent's ``instructions`` followed by regio's
  pinned regions (the agent's first: they open the stable prefix; counted beside the window,
  :meth:`regio.session._budget.EngineBudget.send_beside`). The SDK adds each turn's items to the
  session before the next model call, so the engine holds them when the filter runs (the
  filter reads the engine, not the SDK's input).

Without the filter the model sees the window as it was when the run started plus everything
the run added since, unbounded.

**Reasoning stays with its turn.** A reasoning model's ``reasoning`` items (the summary, and the
``encrypted_content`` when the run asks for it) are kept in the engine with the assistant turn
they belong to, as a thinking block holding the item (:func:`regio.adapters.chat.
reasoning_block`), and go back to the model right before that turn's first function call on
every call of the window (regio's own Responses payload leaves thinking out): inside a tool loop
the model continues its reasoning, as OpenAI asks of a stateless caller
(https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context). A turn
the window compacted or cleared takes its reasoning with it.

The session's methods and the filter are async and await the engine's async entries
(``aadd_message``, ``arequest``): an async summarizer is awaited when they compact.

A tool output too large for the conversation is admitted cut, with a note the agent reads
(:mod:`regio.adapters.admit`).

**A broken session is repaired before it is laid out.** The session can hold a function call
whose output never came (a run that stopped between the two), an output whose call is gone or
a call id used twice. The items are admitted as they come (the session's transcript keeps
them); when the layout finds the history broken (:meth:`RegioSession.get_items` and the filter
lay it out), the engine's conversation is repaired before the window goes out
(:mod:`regio.adapters.repaired`; :meth:`regio.engine.Engine.repair`, the rules of
:func:`regio.engine.repair_history`): an orphaned call is closed with an output saying it was
interrupted, an orphaned output leaves the window, a reused id is renamed; each change is a
``HistoryRepaired`` event. The model never gets an invalid request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from regio.content import Thinking, ToolUse

from .admit import aadmit
from .chat import reasoning_item, response_items
from .repaired import arepaired_request

if TYPE_CHECKING:
    from agents import RunConfig
    from agents.memory.session_settings import SessionSettings
    from agents.run_config import CallModelData, ModelInputData

    from regio.engine import Engine

#: Separator between the agent's instructions and regio's pinned regions.
_JOIN = "\n\n"

__all__ = ["RegioSession"]


class RegioSession:
    """The Agents SDK ``Session`` protocol over ``engine`` (module doc). ``session_id``
    defaults to the engine's ``session_id`` option. Items the engine cannot read raise
    :class:`regio.sdk._objects.SDKInputError` naming the index."""

    session_settings: SessionSettings | None = None

    def __init__(self, engine: Engine, session_id: str | None = None) -> None:
        self.engine = engine
        self.session_id = session_id or engine.options.session_id or "regio"

    async def _payload(self) -> dict[str, Any]:
        """The engine's window as a Responses payload, a broken history repaired first
        (module doc); an async summarizer's flush is awaited (``engine.arequest``)."""
        payload: dict[str, Any] = (await arepaired_request(self.engine, "openai_responses"))[1]
        return payload

    async def _items(self) -> list[dict[str, Any]]:
        return list((await self._payload()).get("input") or [])

    def _with_reasoning(self, items: list[Any]) -> list[Any]:
        """``items`` with each assistant turn's reasoning items back before its first function
        call (module doc)."""
        conv = self.engine.window.conversation
        by_call: dict[str, list[dict[str, Any]]] = {}
        for entry in conv.entries if conv is not None else ():
            blocks = entry.blocks or ()
            kept = [
                found
                for b in blocks
                if isinstance(b, Thinking) and (found := reasoning_item(b)) is not None
            ]
            calls = [b.id for b in blocks if isinstance(b, ToolUse)]
            if kept and calls:
                by_call[calls[0]] = kept
        if not by_call:
            return items
        out: list[Any] = []
        for item in items:
            if isinstance(item, dict) and item.get("type") == "function_call":
                out.extend(by_call.pop(str(item.get("call_id")), ()))
            out.append(item)
        return out

    async def call_model_input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig.call_model_input_filter`` (module doc): the model input of every call
        becomes the engine's window; the instructions the agent's, then regio's."""
        from agents.run_config import ModelInputData

        model_data = data.model_data
        agent = str(model_data.instructions or "")
        self.engine.budget.send_beside(agent, _JOIN)
        payload = await self._payload()
        regio = str(payload.get("instructions") or "")
        instructions = _JOIN.join(t for t in (agent, regio) if t) or None
        items = self._with_reasoning(list(payload.get("input") or []))
        return ModelInputData(input=items, instructions=instructions)

    def run_config(self, **kwargs: Any) -> RunConfig:
        """An Agents SDK ``RunConfig`` whose ``call_model_input_filter`` is this session's
        (``kwargs`` are its other fields)."""
        from agents import RunConfig

        return RunConfig(call_model_input_filter=self.call_model_input_filter, **kwargs)

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The window as Responses input items, oldest first (the last ``limit`` when given)."""
        items = self._with_reasoning(await self._items())
        return items[-limit:] if limit else items

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` (Responses input items) to the engine's conversation."""
        for message in response_items(items, reasoning=True):
            await aadmit(self.engine, message)

    async def pop_item(self) -> Any:
        """Remove and return the most recent item's unit (an entry and what belongs to it;
        the transcript keeps it), or ``None`` when the conversation is empty."""
        conv = self.engine.window.conversation
        if conv is None or not conv.entries:
            return None
        last = (await self._items())[-1]
        self.engine.release(conv.name, index=len(conv.entries) - 1)
        return last

    async def clear_session(self) -> None:
        """Clear the conversation region: past turns go, the current turn stays (it is
        protected while it is open); the transcript keeps everything."""
        conv = self.engine.window.conversation
        if conv is not None:
            self.engine.clear(conv.name)
