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

**The provider's format.** The window is rendered in the format of the wrapped chat model
(:func:`chat_model_provider`):

* ``anthropic`` (langchain-anthropic's ``ChatAnthropic``, also from ``init_chat_model
  ("anthropic:...")``, and any chat model whose ``_llm_type`` names Anthropic): regio's
  Anthropic Messages payload, passed as Anthropic content blocks, which langchain-anthropic
  sends as they are (``cache_control`` kept on ``text``, ``image``, ``document`` and
  ``tool_result`` blocks and on system blocks; the tools as Anthropic tool dicts, their
  ``cache_control`` kept). So every planned breakpoint reaches the API
  (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching). One exception:
  langchain-anthropic rebuilds ``tool_use`` blocks without ``cache_control``, so a breakpoint
  planned on a ``tool_use`` block is moved to the first block of the next message (the result
  that answers the call): the cached prefix then ends one block later, and Anthropic's lookback
  still finds it on the next request.
* ``openai`` (langchain-openai's ``ChatOpenAI`` / ``AzureChatOpenAI``, and the fallback for
  every other chat model): regio's Chat Completions payload, as LangChain messages (LangChain's
  standard message form, which every chat model accepts; OpenAI caches prefixes without
  markers, https://platform.openai.com/docs/guides/prompt-caching).

Pass ``provider="anthropic"`` or ``"openai"`` to choose instead of detecting.

**A broken history is repaired before it is laid out.** The agent state can hold a tool call
that never got its result (a run that stopped between the two, resumed from a checkpointer), a
result whose call is gone or a call id used twice (messages edited or spliced by hand). The
middleware admits what it receives as it is (the session's transcript keeps it) and, when the
layout finds the history broken, repairs the engine's conversation before the window goes out
(:mod:`regio.adapters.repaired`; :meth:`regio.engine.Engine.repair`, the rules of
:func:`regio.engine.repair_history`): an orphaned call is closed with a result saying it was
interrupted, an orphaned result leaves the window, a reused id is renamed; each change is a
``HistoryRepaired`` event. The model never gets an invalid request.

**regio's context tools** (``context_tools``: ``context_write``, ``todo_add``, ``compact``, ...)
are sent with the caller's tools in both formats, in regio's order (the tools the budget
counts), and the middleware runs the model's calls to them itself (``wrap_tool_call``:
:meth:`regio.engine.Engine.handle_tool_call`, its text returned as the tool result), so the
agent needs no tool of its own for them. A tool the caller registered under a context tool's
name is the caller's: its calls go to the agent's tool as before. An agent without tools of
its own runs them too (``create_agent`` builds its tool node for a middleware that wraps tool
calls).

**The caller's system message** (``create_agent(system_prompt=...)``, or a middleware's) is
kept, never replaced, and counted (everything that is sent is counted): with ``system_region``
it is written to that pinned region of the engine (replacing its content whenever it changes)
and laid out with the blueprint's stable content; without, it is sent as the first system
block, before regio's pinned regions (stable-first: it is set when the agent is built and does
not change per call), inside the first cached prefix, and the engine counts it beside the
window (:meth:`regio.session._budget.EngineBudget.send_beside`) in the request's size, the
ceiling, the whole-context compaction trigger and its fixed floor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    convert_to_openai_messages,
)
from langchain_core.utils.function_calling import convert_to_openai_tool

from regio.content import Message, Thinking
from regio.session._options import TOOL_NAMES

from .admit import admit_steps
from .chat import chat_messages, content_text
from .cursor import canonical_digest, cursor, first_new, mark
from .drive import EngineCall, Steps, arun, run
from .repaired import repaired_steps
from .window import adopt_framework_window, langchain_window

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse, ToolCallRequest
    from langchain_core.messages import AnyMessage
    from langchain_core.runnables import Runnable
    from langgraph.types import Command

    from regio.engine import Engine

__all__ = ["PROVIDERS", "RegioMiddleware", "chat_model_provider"]

#: The key of the middleware's cursor in the engine's session (``engine.state.adapters``).
CURSOR = "langchain"

#: The formats the middleware renders: Anthropic Messages, OpenAI Chat Completions.
PROVIDERS = ("anthropic", "openai")


def _unwrap(model: Runnable[Any, Any]) -> Runnable[Any, Any]:
    """The chat model inside ``bind_tools`` / ``with_config`` wrappers (``RunnableBinding``)."""
    for _ in range(8):
        inner = getattr(model, "bound", None)
        if inner is None:
            return model
        model = inner
    return model


def chat_model_provider(model: Runnable[Any, Any]) -> str:
    """``anthropic`` or ``openai``: the payload format for a LangChain chat model.

    The rule, first match: a class from ``langchain_anthropic`` -> ``anthropic``; a class from
    ``langchain_openai`` -> ``openai``; an ``init_chat_model`` configurable model whose
    default ``model_provider`` is ``anthropic`` (or whose model is ``anthropic:...`` /
    ``claude...``) -> ``anthropic``; a ``_llm_type`` containing ``anthropic`` (wrappers built
    on langchain-anthropic's message format) -> ``anthropic``; anything else -> ``openai``
    (Chat Completions messages, LangChain's standard form)."""
    model = _unwrap(model)
    modules = [c.__module__ for c in type(model).__mro__]
    if any(m.startswith("langchain_anthropic") for m in modules):
        return "anthropic"
    if any(m.startswith("langchain_openai") for m in modules):
        return "openai"
    config = getattr(model, "_default_config", None)
    if isinstance(config, Mapping):
        name = str(config.get("model") or "")
        if config.get("model_provider") == "anthropic" or name.startswith(("anthropic:", "claude")):
            return "anthropic"
    try:
        llm_type = str(getattr(model, "_llm_type", "") or "")
    except Exception:  # a model whose _llm_type property needs configuration
        llm_type = ""
    return "anthropic" if "anthropic" in llm_type.lower() else "openai"


def _digest(message: BaseMessage) -> str:
    """The canonical digest of one state message (its Chat Completions form: role, content,
    tool calls and call id; LangChain's message ids left out)."""
    return canonical_digest(convert_to_openai_messages([message]))


def _split_tools(tools: list[Any]) -> tuple[list[Any], list[Any]]:
    """(function tools for the engine: ``BaseTool`` s and functions as Chat Completions dicts,
    function tool dicts as given; provider built-in tool dicts, without a schema, passed on
    unchanged: ``{"type": "web_search_20250305", "name": "web_search"}``)."""
    functions: list[Any] = []
    builtin: list[Any] = []
    for tool in tools:
        if isinstance(tool, Mapping):
            if tool.get("type") == "function" or "input_schema" in tool or "parameters" in tool:
                functions.append(dict(tool))
            else:
                builtin.append(tool)
        else:
            functions.append(convert_to_openai_tool(tool))
    return functions, builtin


def _move_tool_use_markers(messages: list[dict[str, Any]]) -> None:
    """Move each ``cache_control`` of a ``tool_use`` block to the first block of the next
    message (module doc), in place; a marker already there is kept and the moved one
    dropped."""
    for n, message in enumerate(messages[:-1]):
        for block in message["content"]:
            if block.get("type") != "tool_use" or "cache_control" not in block:
                continue
            marker = block.pop("cache_control")
            first = messages[n + 1]["content"][0]
            first.setdefault("cache_control", marker)


def _anthropic_window(body: dict[str, Any]) -> list[AnyMessage]:
    """LangChain messages carrying the Anthropic payload's messages as content blocks."""
    messages = [
        {"role": m["role"], "content": [dict(b) for b in m["content"]]} for m in body["messages"]
    ]
    _move_tool_use_markers(messages)
    return [
        HumanMessage(m["content"]) if m["role"] == "user" else AIMessage(m["content"])
        for m in messages
    ]


def _reply(message: AIMessage) -> Message | None:
    """The regio message of a model reply: its text and tool calls, and its thinking blocks
    (Anthropic's, with their signatures: they go back with the turn)."""
    converted = chat_messages(convert_to_openai_messages([message]))
    if not converted:
        return None
    content = message.content if isinstance(message.content, list) else []
    thinking = [
        Thinking(str(b.get("thinking", "")), str(b.get("signature", "")))
        for b in content
        if isinstance(b, dict) and b.get("type") == "thinking"
    ]
    return Message("assistant", (*thinking, *converted[0].blocks))


class RegioMiddleware(AgentMiddleware):
    """Middleware over ``engine`` (module doc); one per conversation thread.

    ``provider``: ``anthropic`` or ``openai``, the format regio renders (``None``: detected
    from the request's model, :func:`chat_model_provider`). ``system_region``: the pinned
    region the caller's system message is written to (``None``: sent as the first system
    block and counted beside the window). Raises ``ValueError`` for another provider and
    :class:`regio.sdk._objects.SDKInputError` for a message part regio cannot read."""

    def __init__(
        self, engine: Engine, *, provider: str | None = None, system_region: str | None = None
    ) -> None:
        super().__init__()
        if provider is not None and provider not in PROVIDERS:
            raise ValueError(
                f"RegioMiddleware(provider={provider!r}): use one of {', '.join(PROVIDERS)}, "
                "or None to detect it from the chat model"
            )
        self.engine = engine
        self.provider = provider
        self.system_region = system_region

    @property
    def seen(self) -> int:
        """Messages of the agent state already in the engine (the engine session's
        :class:`regio.session._state.AdapterCursor`, :mod:`regio.adapters.cursor`)."""
        return cursor(self.engine, CURSOR).position

    def _sync(self, messages: Sequence[BaseMessage]) -> Steps[None]:
        """Add the state's messages not yet in the engine (:func:`regio.adapters.cursor.
        first_new`: where the engine session's cursor stopped, so a new middleware over a
        loaded engine re-admits nothing; a run that does not carry the earlier turns, such as
        an agent without a checkpointer invoked again, is new from its first message). The
        model's replies are recorded as they come (:meth:`_record`)."""
        start = first_new(self.engine, CURSOR, messages, _digest)
        for index in range(start, len(messages)):
            for message in chat_messages(convert_to_openai_messages([messages[index]])):
                yield from admit_steps(self.engine, message)
            mark(self.engine, CURSOR, index + 1, _digest(messages[index]))
        if messages and start == len(messages) != self.seen:  # a history rewritten shorter
            mark(self.engine, CURSOR, len(messages), _digest(messages[-1]))

    def _caller_system(self, request: ModelRequest[Any]) -> Steps[str]:
        """The caller's system text to send as the first system block ("" when there is none
        or it lives in ``system_region``)."""
        system = getattr(request, "system_message", None)
        text = content_text(system.content) if system is not None else ""
        if self.system_region is None:
            return text  # sent beside the window: counted there (_window)
        at = cursor(self.engine, CURSOR)
        if text != (at.system or ""):
            self.engine.clear(self.system_region)
            if text:
                yield EngineCall("write", (self.system_region, text), {"strict": True})
            at.system = text
        return ""

    def _window(self, request: ModelRequest[Any]) -> Steps[ModelRequest[Any]]:
        model = request.model
        at = cursor(self.engine, CURSOR)
        if not at.window_read:  # the model's declared window, once per session
            at.window_read = True
            adopt_framework_window(self.engine, langchain_window(model), "LangChain model profile")
        yield from self._sync(list(request.messages))
        caller = yield from self._caller_system(request)
        functions, builtin = _split_tools(list(request.tools))
        anthropic = (self.provider or chat_model_provider(model)) == "anthropic"
        if self.system_region is None:  # a block of its own (Anthropic) or joined by "\n\n"
            self.engine.budget.send_beside(caller, "" if anthropic else "\n\n")
        if anthropic:
            return (yield from self._anthropic(request, caller, functions, builtin))
        body = (yield from repaired_steps(self.engine, "openai", tools=functions))[1]
        # convert_to_messages is typed list[BaseMessage]; from Chat Completions dicts it builds
        # only the classes of AnyMessage (System, Human, AI, Tool), which the request holds
        window = cast("list[AnyMessage]", convert_to_messages(body["messages"]))
        regio_system = [content_text(m.content) for m in window if isinstance(m, SystemMessage)]
        rest: list[AnyMessage] = [m for m in window if not isinstance(m, SystemMessage)]
        text = "\n\n".join(t for t in (caller, *regio_system) if t)
        tools = [dict(t) for t in body.get("tools") or []]  # the caller's and regio's
        return request.override(
            messages=rest,
            system_message=SystemMessage(text) if text else None,
            tools=[*tools, *builtin] if tools else list(request.tools),
        )

    def _anthropic(
        self, request: ModelRequest[Any], caller: str, functions: list[Any], builtin: list[Any]
    ) -> Steps[ModelRequest[Any]]:
        body = (yield from repaired_steps(self.engine, "anthropic", tools=functions))[1]
        system: list[str | dict[Any, Any]] = [dict(b) for b in body.get("system") or []]
        if caller:
            system.insert(0, {"type": "text", "text": caller})
        tools = [dict(t) for t in body.get("tools") or []]  # the caller's and regio's
        return request.override(
            messages=_anthropic_window(body),
            system_message=SystemMessage(system) if system else None,
            tools=[*tools, *builtin] if tools else list(request.tools),
        )

    def _record(self, response: ModelResponse[Any]) -> Steps[ModelResponse[Any]]:
        """Append the model's replies to the engine; the cursor moves past them (they join
        the agent state after the messages of the request)."""
        replies = [m for m in response.result if isinstance(m, AIMessage)]
        for reply in replies:
            message = _reply(reply)
            if message is not None:
                yield EngineCall("add_message", (message,))
        if replies:
            mark(self.engine, CURSOR, self.seen + len(replies), _digest(replies[-1]))
        return response

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        """Replace the request's messages with regio's window; record the reply."""
        response = handler(run(self.engine, self._window(request)))
        return run(self.engine, self._record(response))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """:meth:`wrap_model_call` for async agents, awaiting the engine's async entries (an
        async summarizer, :mod:`regio.adapters.drive`)."""
        response = await handler(await arun(self.engine, self._window(request)))
        return await arun(self.engine, self._record(response))

    def _context_tool_result(self, request: ToolCallRequest) -> Steps[ToolMessage | None]:
        """The result of a call to one of regio's context tools (module doc), ``None`` for
        any other call (a tool the agent registered, under any name)."""
        call = request.tool_call
        if request.tool is not None or call.get("name") not in TOOL_NAMES:
            return None
        outcome = yield EngineCall("handle_tool_call", (call["name"], call.get("args") or {}))
        return ToolMessage(
            outcome.text,
            tool_call_id=call["id"],
            name=call["name"],
            status="success" if outcome.ok else "error",
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run a call to a regio context tool in the engine; pass every other call on."""
        result = run(self.engine, self._context_tool_result(request))
        return handler(request) if result is None else result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """:meth:`wrap_tool_call` for async agents."""
        result = await arun(self.engine, self._context_tool_result(request))
        return await handler(request) if result is None else result
