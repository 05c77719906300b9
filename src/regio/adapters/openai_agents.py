"""An OpenAI Agents SDK ``Session`` backed by a regio engine (extra ``regio[openai-agents]``).

``Runner.run(agent, "...", session=RegioSession(engine))``: the SDK hands every new item to
:meth:`RegioSession.add_items` (user input, the model's messages and function calls, the tool
outputs), which appends them to the engine; before each model call it asks
:meth:`RegioSession.get_items`, which returns the engine's window rendered as Responses input
items: the laid-out, compacted history instead of the whole transcript. Protocol:
https://openai.github.io/openai-agents-python/sessions/.
"""

from __future__ import annotations

from typing import Any

from .chat import response_items

__all__ = ["RegioSession"]


class RegioSession:
    """The Agents SDK ``Session`` protocol over ``engine`` (module doc). ``session_id``
    defaults to the engine's ``session_id`` option. Items the engine cannot read raise
    :class:`regio.runtime.sdk.SDKInputError` naming the index."""

    session_settings: Any = None

    def __init__(self, engine: Any, session_id: str | None = None) -> None:
        self.engine = engine
        self.session_id = session_id or engine.options.session_id or "regio"

    def _items(self) -> list[dict[str, Any]]:
        payload = self.engine.request("openai_responses")[1]
        items: list[dict[str, Any]] = list(payload.get("input") or [])
        return items

    async def get_items(self, limit: int | None = None) -> list[Any]:
        """The window as Responses input items, oldest first (the last ``limit`` when given)."""
        items = self._items()
        return items[-limit:] if limit else items

    async def add_items(self, items: list[Any]) -> None:
        """Append ``items`` (Responses input items) to the engine's conversation."""
        for message in response_items(items):
            self.engine.add_message(message)

    async def pop_item(self) -> Any:
        """Remove and return the most recent item's unit (an entry and what belongs to it;
        the transcript keeps it), or ``None`` when the conversation is empty."""
        conv = self.engine.window.conversation
        if conv is None or not conv.entries:
            return None
        last = self._items()[-1]
        self.engine.release(conv.name, index=len(conv.entries) - 1)
        return last

    async def clear_session(self) -> None:
        """Clear the conversation region: past turns go, the current turn stays (it is
        protected while it is open); the transcript keeps everything."""
        conv = self.engine.window.conversation
        if conv is not None:
            self.engine.clear(conv.name)
