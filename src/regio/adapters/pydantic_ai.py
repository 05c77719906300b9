"""pydantic-ai adapters that hand the model regio's window on every request (extra
``regio[pydantic-ai]``).

* ``Agent(model, capabilities=[RegioCapability(engine)])`` (recommended): a pydantic-ai
  capability (https://ai.pydantic.dev/capabilities/). Before each model request
  (``before_model_request``) the run's messages new since the last request go to the engine
  (user prompts, tool returns) and the request's messages become the engine's laid-out window;
  after it (``after_model_request``) the model's reply is recorded, so the last reply of a run
  is in the engine when the run ends. The run's own history (``result.all_messages()``) keeps
  every message; only the model sees the window.
* ``Agent(model, capabilities=[ProcessHistory(RegioHistory(engine))])``: the same as a history
  processor (https://ai.pydantic.dev/message-history/). pydantic-ai replaces the run's history
  with the returned window, and a reply reaches the engine at the next request (a processor
  sees requests only), so the last reply of a run arrives with the next run.

The window as pydantic-ai messages: the agent's ``system_prompt`` (its ``SystemPromptPart`` s)
first, then regio's pinned regions, as one ``SystemPromptPart``; the compacted history and the
recent turns; tool results as ``ToolReturnPart`` s answering their ``ToolCallPart`` s (relief
placeholders in place of cleared results). The agent's ``system_prompt`` and ``instructions``
are counted beside the window (:meth:`regio.session._budget.EngineBudget.send_beside`);
``instructions`` travel as pydantic-ai sends them. :class:`RegioCapability` counts the tool
definitions pydantic-ai sends with the request too (``Engine.request(tools=...)``), so the
window leaves room for them; a history processor does not see them, so with
:class:`RegioHistory` leave room for them in ``output_reserve`` (or count them with
``extra_tools``). Which messages the engine holds is an
:class:`regio.session._state.AdapterCursor` in the engine's session (:mod:`regio.adapters.
cursor`): a new adapter over a loaded engine (an agent server passing ``message_history``)
admits only what is new.

**The provider's format.** For a model pydantic-ai sends to Anthropic (``AnthropicModel``,
detected; ``RegioCapability(engine, provider="anthropic")`` to choose) the capability lays the
window out as regio's Anthropic payload and carries every cache mark the layout planned as
pydantic-ai's own (``CachePoint`` s in the messages, ``anthropic_cache_instructions`` for the
system prompt; pydantic-ai's other cache settings are turned off for the request):
:mod:`regio.adapters.pydantic_ai_marks`. Every other model gets regio's Chat Completions
payload, without marks; so does :class:`RegioHistory` (a history processor cannot set model
settings).

**Broken histories are repaired before they are laid out.** A ``message_history`` with a tool
call that never got its result (a run that crashed between the two), a result whose call is
gone, or a call id used twice (a history edited by hand), and an engine session holding a call
the capability recorded before the run stopped, are repaired before the window is laid out
(:mod:`regio.adapters.repaired`): what the run hands over is admitted as it is (the session's
transcript keeps it), then the engine's conversation is repaired
(:meth:`regio.engine.Engine.repair`, the rules of :func:`regio.engine.repair_history`): an
orphaned call is closed with a result saying it was interrupted, an orphaned result leaves the
window, a reused id is renamed; each change is a ``HistoryRepaired`` event. The model never
gets an invalid request. (pydantic-ai itself closes a call left open in ``message_history`` and
drops a result without its call before the first request.)

Images and documents travel both ways: a ``UserPromptPart``'s ``ImageUrl``, ``DocumentUrl`` and
``BinaryContent`` (an image, a PDF or plain text) become regio image / document blocks, and the
window's media come back as ``BinaryContent`` (inline bytes) or ``ImageUrl`` / ``DocumentUrl``
(https://ai.pydantic.dev/input/). Audio and video have no regio block and raise
:class:`regio.sdk._objects.SDKInputError` naming the part.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from regio.callargs import function_arguments
from regio.content import Block, Document, Image, Message, Text, ToolResult, ToolUse
from regio.media import URLSource
from regio.sdk._objects import SDKInputError

from .admit import admit_steps
from .chat import chat_messages, content_text
from .cursor import canonical_digest, cursor, first_new, mark
from .drive import Steps, arun
from .pydantic_ai_marks import (
    REGIO_SYSTEM,
    anthropic_bound,
    cache_settings,
    marked_window,
    user_item,
)
from .repaired import repaired_steps

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelRequestPart, ModelResponsePart, UserContent
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import RunContext

    from regio.engine import Engine
    from regio.layout.model import Ttl

__all__ = ["PROVIDERS", "RegioCapability", "RegioHistory"]

#: The key of the adapters' cursor in the engine's session (``engine.state.adapters``).
CURSOR = "pydantic-ai"


def _binary_block(item: BinaryContent, where: str) -> Block:
    if item.is_image:
        return Image.from_bytes(item.data, item.media_type)
    if item.media_type == "application/pdf":
        return Document.pdf(item.data, title=item.identifier)
    if item.media_type.startswith("text/"):
        return Document.text(item.data.decode("utf-8", "replace"), title=item.identifier)
    raise SDKInputError(
        f"{where}: cannot read BinaryContent of type {item.media_type!r}; regio reads images, "
        "PDFs and plain text"
    )


def _user_blocks(content: str | Sequence[UserContent], where: str) -> tuple[Block, ...]:
    """The blocks of a ``UserPromptPart.content`` (a string or a list of user content; a
    ``CachePoint`` is a mark, not content: none when it holds only marks)."""
    if isinstance(content, str):
        return (Text(content),)
    blocks: list[Block] = []
    for n, item in enumerate(content):
        at = f"{where}[{n}]"
        if isinstance(item, CachePoint):
            continue
        if isinstance(item, str):
            blocks.append(Text(item))
        elif isinstance(item, ImageUrl):
            blocks.append(Image(URLSource(item.url, item.media_type or "")))
        elif isinstance(item, DocumentUrl):
            blocks.append(Document(URLSource(item.url, item.media_type or "")))
        elif isinstance(item, BinaryContent):
            blocks.append(_binary_block(item, at))
        else:
            raise SDKInputError(
                f"{at}: cannot read a {type(item).__name__}; regio reads text, ImageUrl, "
                "DocumentUrl and BinaryContent (images, PDFs, plain text)"
            )
    if not blocks and content and all(isinstance(item, CachePoint) for item in content):
        return ()
    return tuple(blocks) or (Text(""),)


def _user_content(message: Message) -> Any:
    """A ``UserPromptPart.content`` of a regio user message: its text, or text and media."""
    if not any(isinstance(b, Image | Document) for b in message.blocks):
        return message.text
    items = (user_item(b) for b in message.blocks)
    return [item for item in items if item is not None]


def _to_regio(message: ModelMessage) -> list[Message]:
    out: list[Message] = []
    if isinstance(message, ModelResponse):
        blocks: list[Block] = []
        for reply in message.parts:
            if isinstance(reply, TextPart) and reply.content:
                blocks.append(Text(reply.content))
            elif isinstance(reply, ToolCallPart):
                args = function_arguments(reply.args)  # unreadable: the shared invalid form
                blocks.append(ToolUse(reply.tool_call_id, reply.tool_name, args))
        return [Message("assistant", tuple(blocks))] if blocks else []
    for n, part in enumerate(message.parts):
        if isinstance(part, UserPromptPart):
            content = _user_blocks(part.content, f"parts[{n}].content")
            if content:  # a part holding only cache points is no message
                out.append(Message("user", content))
        elif isinstance(part, ToolReturnPart):
            result = ToolResult(part.tool_call_id, part.model_response_str())
            out.append(Message.tool((result,)))
        elif isinstance(part, RetryPromptPart) and part.tool_name is not None:
            text = part.model_response()  # a tool's retry: the answer to its call
            out.append(Message.tool((ToolResult(part.tool_call_id, text, is_error=True),)))
        elif isinstance(part, RetryPromptPart):
            out.append(Message("user", (Text(part.model_response()),)))
    return out


def _part_form(part: ModelRequestPart | ModelResponsePart) -> list[Any]:
    """The canonical form of one part (what the model reads of it, no timestamps)."""
    if isinstance(part, SystemPromptPart | TextPart):
        return [type(part).__name__, part.content]
    if isinstance(part, UserPromptPart):
        content = part.content
        return ["user", content if isinstance(content, str) else [repr(c) for c in content]]
    if isinstance(part, ToolCallPart):
        return ["call", part.tool_call_id, part.tool_name, function_arguments(part.args)]
    if isinstance(part, ToolReturnPart):
        return ["return", part.tool_call_id, part.model_response_str()]
    if isinstance(part, RetryPromptPart):
        return ["retry", part.tool_call_id, part.model_response()]
    return [type(part).__name__]


def _digest(message: ModelMessage) -> str:
    """The canonical digest of one pydantic-ai message (:func:`_part_form` of its parts)."""
    kind = "response" if isinstance(message, ModelResponse) else "request"
    return canonical_digest([kind, [_part_form(p) for p in message.parts]])


def _caller_system(engine: Engine, messages: list[ModelMessage]) -> str:
    """The agent's ``system_prompt`` text: its ``SystemPromptPart`` s, joined by a blank line.
    A history that starts with a window the adapters built carries it inside that window's
    system part; it is then the text the session's cursor remembers."""
    texts: list[str] = []
    carried = False
    for m in messages:
        if not isinstance(m, ModelRequest):
            continue
        for p in m.parts:
            if isinstance(p, SystemPromptPart) and p.metadata == REGIO_SYSTEM:
                carried = True
            elif isinstance(p, SystemPromptPart) and p.content:
                texts.append(p.content)
    at = cursor(engine, CURSOR)
    if texts or not carried:
        at.system = "\n\n".join(texts)
    return at.system or ""


def _from_chat(messages: list[dict[str, Any]], caller: str = "") -> list[ModelMessage]:
    """pydantic-ai messages of regio's Chat Completions payload (module doc): the caller's
    system text and regio's in one system part, tool results as ``ToolReturnPart`` s."""
    out: list[ModelMessage] = []
    regio_system = [content_text(m.get("content")) for m in messages if m.get("role") == "system"]
    system = "\n\n".join(t for t in (caller, *regio_system) if t)
    names: dict[str, str] = {}
    request: list[Any] = [SystemPromptPart(system, metadata=dict(REGIO_SYSTEM))] if system else []
    for message in chat_messages(messages):
        if message.role == "assistant":
            if request:
                out.append(ModelRequest(parts=request))
                request = []
            parts: list[Any] = [TextPart(b.text) for b in message.blocks if isinstance(b, Text)]
            for call in message.tool_calls:
                names[call.id] = call.name
                parts.append(ToolCallPart(call.name, json.dumps(call.input), tool_call_id=call.id))
            out.append(ModelResponse(parts=parts))
        elif message.tool_results:
            for r in message.tool_results:
                name = names.get(r.tool_use_id, "tool")
                request.append(ToolReturnPart(name, r.content, tool_call_id=r.tool_use_id))
        else:
            request.append(UserPromptPart(_user_content(message)))
    if request:
        out.append(ModelRequest(parts=request))
    return out


def _admit(engine: Engine, messages: list[ModelMessage]) -> Steps[None]:
    """Append the messages the engine does not hold yet (:func:`regio.adapters.cursor.
    first_new`) as they are, moving the cursor past each (a broken history is repaired when
    the window is laid out, :func:`_window`; a tool return too large for the conversation is
    admitted cut, with a note the agent reads: :func:`regio.adapters.admit.admit`)."""
    start = first_new(engine, CURSOR, messages, _digest)
    for index in range(start, len(messages)):
        for converted in _to_regio(messages[index]):
            yield from admit_steps(engine, converted)
        mark(engine, CURSOR, index + 1, _digest(messages[index]))
    if messages and start == len(messages) != cursor(engine, CURSOR).position:
        mark(engine, CURSOR, len(messages), _digest(messages[-1]))  # a history rewritten shorter


def _window(
    engine: Engine,
    caller: str,
    instructions: str = "",
    provider: str = "openai",
    tools: list[dict[str, Any]] | None = None,
) -> Steps[tuple[list[ModelMessage], Ttl | None]]:
    """(The engine's window as pydantic-ai messages, the caller's system text first; the TTL
    of the system prompt's cache mark or ``None``). ``provider`` ``anthropic``: regio's
    Anthropic payload with its marks (:func:`regio.adapters.pydantic_ai_marks.marked_window`);
    ``openai``: its Chat Completions payload, no marks. The caller's system text and
    ``instructions`` are counted beside the window, the request's ``tools`` (Chat Completions
    tool dicts: :func:`_tools`) with it, as pydantic-ai sends them; a broken history is
    repaired first (:func:`regio.adapters.repaired.repaired_request`)."""
    beside = "\n\n".join(t for t in (caller, instructions) if t)
    engine.budget.send_beside(beside, "\n\n")
    if provider == "anthropic":
        body = (yield from repaired_steps(engine, "anthropic", tools=tools or ()))[1]
        return marked_window(body, caller)
    body = (yield from repaired_steps(engine, "openai", tools=tools or ()))[1]
    return _from_chat(body["messages"], caller), None


def _tools(request_context: ModelRequestContext) -> list[dict[str, Any]]:
    """The tool definitions pydantic-ai sends with the request (its function tools the model
    sees, and its output tools) as Chat Completions tool dicts, for the engine to count."""
    params = getattr(request_context, "model_request_parameters", None)
    found = getattr(params, "declared_tool_defs", None)
    if found is None:
        found = getattr(params, "tool_defs", None) or {}
    return [
        {
            "type": "function",
            "function": {
                "name": d.name,
                "description": d.description or "",
                "parameters": d.parameters_json_schema,
            },
        }
        for d in found.values()
    ]


def _instructions(request_context: ModelRequestContext) -> str:
    params = getattr(request_context, "model_request_parameters", None)
    parts = getattr(params, "instruction_parts", None) or []
    return "\n\n".join(str(getattr(p, "content", "")) for p in parts if getattr(p, "content", ""))


#: The formats the adapters lay the window out in: Anthropic Messages (with its cache marks),
#: OpenAI Chat Completions.
PROVIDERS = ("anthropic", "openai")


def _check_provider(provider: str | None, where: str) -> None:
    if provider is not None and provider not in PROVIDERS:
        raise ValueError(
            f"{where}(provider={provider!r}): use one of {', '.join(PROVIDERS)}, or None to "
            "detect it from the model"
        )


@dataclass
class RegioCapability(AbstractCapability[Any]):
    """A pydantic-ai capability over ``engine`` (module doc): the model gets regio's window on
    every request and its replies are recorded. ``provider``: ``anthropic`` (regio's Anthropic
    payload, its cache marks as pydantic-ai's, :mod:`regio.adapters.pydantic_ai_marks`) or
    ``openai`` (its Chat Completions payload); ``None`` detects it from the request's model
    (:func:`regio.adapters.pydantic_ai_marks.anthropic_bound`). Raises ``ValueError`` for
    another provider and :class:`regio.sdk._objects.SDKInputError` for a message part regio
    cannot read."""

    engine: Engine
    provider: str | None = None

    def __post_init__(self) -> None:
        _check_provider(self.provider, "RegioCapability")

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Append the run's new messages; the request's messages become the window (for an
        Anthropic-bound model with regio's cache marks, pydantic-ai's own turned off)."""
        messages = list(ctx.messages)
        await arun(self.engine, _admit(self.engine, messages))
        caller = _caller_system(self.engine, messages)
        provider = self.provider or (
            "anthropic" if anthropic_bound(request_context.model) else "openai"
        )
        instructions = _instructions(request_context)
        tools = _tools(request_context)
        steps = _window(self.engine, caller, instructions, provider, tools)
        window, system_ttl = await arun(self.engine, steps)
        request_context.messages = window
        if provider == "anthropic":
            request_context.model_settings = cache_settings(
                request_context.model_settings, system_ttl
            )
        return request_context

    async def after_model_request(
        self,
        ctx: RunContext[Any],
        *,
        request_context: ModelRequestContext,
        response: ModelResponse,
    ) -> ModelResponse:
        """Record the reply; pydantic-ai appends it to the run's messages next."""
        for converted in _to_regio(response):
            await self.engine.aadd_message(converted)
        mark(self.engine, CURSOR, len(ctx.messages) + 1, _digest(response))
        return response

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds an engine: not spec-serializable


class RegioHistory:
    """History processor over ``engine`` (module doc): ``ProcessHistory(RegioHistory(engine))``.
    The window is regio's Chat Completions payload: a processor cannot set the model settings
    a system prompt's cache mark needs, so use :class:`RegioCapability` for Anthropic's marks."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Append the messages new since the last call; return regio's window, which
        pydantic-ai keeps as the run's history (the cursor then points past it). Async, as
        pydantic-ai awaits a processor on its event loop: an async summarizer is awaited
        (the engine's async entries, :mod:`regio.adapters.drive`)."""
        await arun(self.engine, _admit(self.engine, messages))
        caller = _caller_system(self.engine, messages)
        window, _ = await arun(self.engine, _window(self.engine, caller))
        if window:
            mark(self.engine, CURSOR, len(window), _digest(window[-1]), rebase=True)
        return window
