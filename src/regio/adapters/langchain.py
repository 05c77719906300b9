"""A LangChain v1 agent middleware that lets regio build every model request (extra
``regio[langchain]``).

``create_agent(model, tools, middleware=[RegioMiddleware(engine)])``: before each model call
(``wrap_model_call``, https://docs.langchain.com/oss/python/langchain/middleware) the messages
the agent state gained since the last call (the user's input, tool results) are appended to the
engine, the engine lays out its window (pinned instructions, compacted history, the recent
turns) and that window replaces the request's messages and system message; the model's reply
is recorded in the engine. The agent's state keeps its full history; the model sees regio's.
The model's declared window (its profile's ``max_input_tokens``) is read into the engine on the
first call (:mod:`regio.adapters.window`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import (
    AIMessage,
    SystemMessage,
    convert_to_messages,
    convert_to_openai_messages,
)

from .chat import chat_messages
from .window import adopt_framework_window, langchain_window

__all__ = ["RegioMiddleware"]


class RegioMiddleware(AgentMiddleware):
    """Middleware over ``engine`` (module doc); one per conversation thread. ``provider``
    is the payload format regio renders before converting to LangChain messages (``openai``
    Chat Completions)."""

    def __init__(self, engine: Any) -> None:
        super().__init__()
        self.engine = engine
        self.seen = 0
        self.window_read = False

    def _sync(self, messages: list[Any]) -> None:
        new = messages[self.seen :]
        for message in chat_messages(convert_to_openai_messages(new)):
            if message.role == "assistant":
                continue  # recorded from the reply already
            self.engine.add_message(message)
        self.seen = len(messages)

    def _window(self, request: Any) -> Any:
        if not self.window_read:  # the model's declared window, once
            self.window_read = True
            model = getattr(request, "model", None)
            adopt_framework_window(self.engine, langchain_window(model), "LangChain model profile")
        self._sync(list(request.messages))
        tools = [t for t in request.tools if isinstance(t, dict)]
        body = self.engine.request("openai", tools=tools)[1]
        window = convert_to_messages(body["messages"])
        system = [m for m in window if isinstance(m, SystemMessage)]
        rest = [m for m in window if not isinstance(m, SystemMessage)]
        return request.override(messages=rest, system_message=system[0] if system else None)

    def _record(self, response: Any) -> Any:
        replies = [m for m in response.result if isinstance(m, AIMessage)]
        for message in chat_messages(convert_to_openai_messages(replies)):
            self.engine.add_message(message)
        self.seen += len(replies)
        return response

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Replace the request's messages with regio's window; record the reply."""
        return self._record(handler(self._window(request)))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """:meth:`wrap_model_call` for async agents."""
        return self._record(await handler(self._window(request)))
