"""OpenAI renderers: Chat Completions messages and Responses input items.

Chat Completions (``POST /v1/chat/completions``): one ``system`` message (system blocks joined
by a blank line); ``user`` messages (a string, or text parts when a message has several
blocks); ``assistant`` messages with ``content`` (text, or ``null``) and ``tool_calls`` whose
``arguments`` are canonical JSON strings (sorted keys, no spaces); one ``role: tool`` message
per result; the tail as the last user message. The result is checked against W-O and L.

Responses (``POST /v1/responses``): ``instructions`` = the system text; ``input`` items:
messages, ``function_call`` (``call_id``, ``name``, ``arguments``) and
``function_call_output`` (``call_id``, ``output``); the tail as the last user item. A call or
result read from a ``custom_tool_call`` / ``local_shell_call`` item or one of their outputs
(:mod:`regio.responses_items`) is rendered back as that item, its fields as sent and in their order,
with the block's current id and payload (a cleared result's placeholder is its ``output``); a
result regio made for a custom tool call (a repair's synthesized result) is a
``custom_tool_call_output``. In the other APIs such a call is a function call whose arguments
are its ``input`` (``{"input": text}``, or the shell ``action``). The result is checked by
:func:`check_openai_responses`.

A Responses item kept as received (:class:`regio.content.ProviderBlock` of
``openai_responses``: a built-in tool call such as ``web_search_call``, and the ``reasoning``
item before it) is rendered as it came, in its place among its message's texts (the texts
between two such items make one assistant message); every other provider block is left out
of both payloads.
Thinking blocks are left out of both payloads, wherever they stand (an assistant message or,
by mistake, a user or tool message): Chat Completions has no thinking input, and Responses
``reasoning`` input items are the server's own (encrypted) items, which regio does not hold.
The rest of the message is rendered as without them.

Tools, in both: ``{"type": "function", name, description, parameters}`` (the schema's keys
sorted), nested under ``function`` for Chat Completions, with ``strict: false`` for Responses
(:func:`function_tools`).

Both carry the request's ``prompt_cache_key`` (see :func:`regio.layout.prompt_cache_key`).

Responses takes a ``compaction`` option
(:class:`regio.layout.provider_compaction.ProviderCompaction`): server-side compaction asked
for, and the opaque compaction items it returned placed first in ``input``, in place of
regio's readable summaries.

With the session's render log, final message groups are rendered once and copied afterwards
(:func:`regio.layout.render.common.rendered_units`): a payload shares no container with the log
or another payload. The items of the longest run of such groups at the start of the
conversation are kept in the log's :class:`regio.layout.render.prefix.MessagePrefix` for the
API, so a request whose conversation starts with the same blocks copies them and renders,
places and checks only the groups after them (not with Responses compaction items).
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from msgspec import UNSET

from regio.content import Document, Image, ProviderBlock, Text, ToolResult, ToolUse, canonical_json
from regio.responses_items import call_item, output_item

from ..model import LayoutBlock, Request, ToolSpec
from ..provider_compaction import ProviderCompaction, add_responses_entry, item_of
from ..repair import LayoutError, check_openai_chat
from ..wellformed import (
    CallsProgress,
    ChatProgress,
    openai_chat_problems,
    openai_responses_problems,
)
from .common import (
    RenderedMessage,
    conversation_start,
    fresh_copy,
    group_runs,
    rendered_runs,
)
from .media import (
    MEDIA_FOLLOWS,
    chat_media_part,
    chat_tool_media,
    hold_tool_media,
    responses_media_part,
)
from .prefix import MessagePrefix, message_prefix
from .registry import FunctionRenderer, register_renderer

if TYPE_CHECKING:
    from ..renderlog import RenderLog

__all__ = [
    "OPENAI_CHAT",
    "OPENAI_RESPONSES",
    "chat_function_tool",
    "check_openai_responses",
    "function_tools",
    "render_openai_chat",
    "render_openai_responses",
    "responses_function_tool",
    "system_text",
]


def _head(request: Request) -> tuple[LayoutBlock, ...]:
    """The tools and system blocks of ``request`` (they come first)."""
    return request.blocks[: conversation_start(request)]


def _system_text_of(head: Sequence[LayoutBlock]) -> str:
    return "\n\n".join(
        b.block.text for b in head if b.level == "system" and isinstance(b.block, Text)
    )


def system_text(request: Request) -> str:
    """All system blocks joined by a blank line (reads only the tools and system blocks)."""
    return _system_text_of(_head(request))


def _texts(blocks: Iterable[LayoutBlock]) -> list[str]:
    return [b.block.text for b in blocks if isinstance(b.block, Text)]


def _arguments(call: ToolUse) -> str:
    return canonical_json(call.input).decode()


# ------------------------------------------------------------------------------- Chat


def _chat_unit(m: RenderedMessage) -> list[dict[str, Any]]:
    """The Chat Completions messages of one message group (possibly none)."""
    if m.role == "assistant":
        texts = _texts(m.blocks)
        msg: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        calls = [b.block for b in m.blocks if isinstance(b.block, ToolUse)]
        if calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _arguments(c)},
                }
                for c in calls
            ]
        if msg["content"] is None and not calls:
            return []  # thinking only: nothing to send
        return [msg]
    if m.role == "tool":
        return _chat_tool_messages(m)
    if m.tail:
        return [{"role": "user", "content": "\n\n".join(_texts(m.blocks))}]
    texts = [t for t in _texts(m.blocks) if t]
    if any(isinstance(b.block, Image | Document) for b in m.blocks):
        return [{"role": "user", "content": _media_parts(m, "text", chat_media_part)}]
    if not texts:
        return []
    content: Any = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
    return [{"role": "user", "content": content}]


def _media_parts(
    m: RenderedMessage, text_type: str, media_part: Callable[[Image | Document], dict[str, Any]]
) -> list[dict[str, Any]]:
    """The content parts of a user message holding images or documents, in block order: text
    blocks as ``{"type": text_type, "text": ...}``, media as ``media_part`` makes them (Chat
    Completions ``text`` parts, Responses ``input_text`` parts)."""
    parts: list[dict[str, Any]] = []
    for b in m.blocks:
        if isinstance(b.block, Text) and b.block.text:
            parts.append({"type": text_type, "text": b.block.text})
        elif isinstance(b.block, Image | Document):
            parts.append(media_part(b.block))
    return parts


def _chat_tool_messages(m: RenderedMessage) -> list[dict[str, Any]]:
    """One ``tool`` message per result; a result's media follow as a ``user`` message
    (moved after the turn's tool messages by :func:`hold_tool_media`)."""
    out: list[dict[str, Any]] = []
    for b in m.blocks:
        if not isinstance(b.block, ToolResult):
            continue
        r = b.block
        text = f"{r.content}\n{MEDIA_FOLLOWS}" if r.media else r.content
        out.append({"role": "tool", "tool_call_id": r.tool_use_id, "content": text})
        if r.media:
            out.append(chat_tool_media(r.tool_use_id, r.media))
    return out


def _chat_messages(
    conv: tuple[LayoutBlock, ...],
    system: str,
    log: RenderLog | None,
    prefix: MessagePrefix[ChatProgress] | None = None,
) -> list[dict[str, Any]]:
    """The Chat messages of ``system`` and the conversation blocks ``conv``, tool media placed
    by :func:`hold_tool_media`. With ``prefix`` (the session's) the messages it keeps are
    copied and the groups found final after them extend it."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    start = 0
    held: list[dict[str, Any]] = []
    if prefix is not None:
        start = prefix.covered(conv)
        if prefix.progress.lead != len(messages):  # checked after another system message
            prefix.progress = ChatProgress(len(messages))
        if start:
            kept, held = prefix.items()
            messages.extend(kept)
    growing = prefix is not None
    for m, unit, found in rendered_runs("openai_chat", group_runs(conv, start), _chat_unit, log):
        hold_tool_media(unit, messages, held)
        if growing and prefix is not None:
            growing = found is not None and prefix.add_items(m, found[0], hold_tool_media)
    messages.extend(held)
    return messages


def chat_function_tool(tool: ToolSpec) -> dict[str, Any]:
    """The Chat Completions ``tools`` entry of ``tool``: ``{"type": "function", "function":
    {name, description, parameters}}`` (schema keys sorted)."""
    fn = {"name": tool.name, "description": tool.description, "parameters": tool.canonical_schema()}
    return {"type": "function", "function": fn}


def responses_function_tool(tool: ToolSpec) -> dict[str, Any]:
    """The Responses ``tools`` entry of ``tool``: ``{"type": "function", name, description,
    parameters, "strict": false}`` (schema keys sorted)."""
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.canonical_schema(),
        "strict": False,
    }


def function_tools(head: Sequence[LayoutBlock], api: str) -> list[dict[str, Any]]:
    """The function tools of the tools blocks in ``head``, in their order, for ``api``
    (``openai_chat``: :func:`chat_function_tool`; ``openai_responses``:
    :func:`responses_function_tool`; https://platform.openai.com/docs/guides/function-calling)."""
    shape = chat_function_tool if api == "openai_chat" else responses_function_tool
    return [shape(b.tool) for b in head if b.level == "tools" and b.tool is not None]


def render_openai_chat(
    request: Request,
    *,
    model: str,
    max_tokens: int | None = None,
    log: RenderLog | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``chat.completions.create`` payload (``model``, ``messages``, ``tools`` when any,
    ``max_completion_tokens`` (tokens) when given, ``prompt_cache_key``; ``extra`` added as
    given).

    ``log``: the session's render log (see the module docstring).

    Raises :class:`LayoutError` when the result breaks W-O or L.
    """
    lo = conversation_start(request)
    head = request.blocks[:lo]
    prefix = message_prefix(log, "openai_chat", ChatProgress) if log is not None else None
    messages = _chat_messages(request.blocks[lo:], _system_text_of(head), log, prefix)
    payload: dict[str, Any] = {"model": model, "messages": messages}
    _add_common(payload, request, head, "openai_chat", ("max_completion_tokens", max_tokens), extra)
    if prefix is not None and payload.get("messages") is messages:
        # the kept messages were checked when they were rendered first: only the rest now
        settled = prefix.progress.lead + prefix.settled
        _raise_if_malformed("chat", openai_chat_problems(messages, prefix.progress, settled))
    else:
        _raise_if_malformed("chat", check_openai_chat(payload))
    return payload


def _add_common(
    payload: dict[str, Any],
    request: Request,
    head: Sequence[LayoutBlock],
    dialect: str,
    limit: tuple[str, int | None],
    extra: dict[str, Any],
) -> None:
    """Append to ``payload``, in this order, what both OpenAI APIs take alike: ``tools`` when
    any, the output limit ``limit`` (key, tokens) when given, ``prompt_cache_key`` when the
    request has one, then ``extra`` (a fresh copy)."""
    tools = function_tools(head, dialect)
    if tools:
        payload["tools"] = tools
    key, max_tokens = limit
    if max_tokens is not None:
        payload[key] = max_tokens
    if request.prompt_cache_key:
        payload["prompt_cache_key"] = request.prompt_cache_key
    payload.update(fresh_copy(extra))


def _raise_if_malformed(api: str, problems: list[str]) -> None:
    """Raise :class:`LayoutError` naming ``api`` when ``problems`` is not empty."""
    if problems:
        raise LayoutError(f"rendered OpenAI {api} request is malformed: " + "; ".join(problems))


# ------------------------------------------------------------------------------- Responses


def _responses_call(call: ToolUse) -> dict[str, Any]:
    """A call's input item: the custom tool or local shell call it came as
    (:func:`regio.responses_items.call_item`), else a ``function_call``."""
    item = call_item(call)
    if item is not None:
        return item
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        "arguments": _arguments(call),
    }


def _responses_result(r: ToolResult, calls: Mapping[str, ToolUse]) -> dict[str, Any]:
    """A result's input item: the output item it came as, or the one its call takes
    (:func:`regio.responses_items.output_item`), else a ``function_call_output``."""
    output = _responses_output(r)
    item = output_item(r, calls.get(r.tool_use_id), output)
    if item is not None:
        return item
    return {"type": "function_call_output", "call_id": r.tool_use_id, "output": output}


def _responses_unit(m: RenderedMessage, calls: Mapping[str, ToolUse]) -> list[dict[str, Any]]:
    """The Responses input items of one message group (possibly none; thinking is left
    out, see the module docstring); ``calls``: the conversation's custom tool and local shell
    calls by id, whose results regio made take their call's output type."""
    items: list[dict[str, Any]] = []
    if m.role == "assistant":
        run: list[str] = []  # the texts since the last item kept as received
        for b in m.blocks:
            if isinstance(b.block, ProviderBlock) and b.block.api == "openai_responses":
                if run:
                    items.append({"role": "assistant", "content": "\n\n".join(run)})
                    run = []
                items.append(fresh_copy(b.block.block))
            elif isinstance(b.block, Text) and b.block.text:
                run.append(b.block.text)
        if run:
            items.append({"role": "assistant", "content": "\n\n".join(run)})
        items.extend(_responses_call(b.block) for b in m.blocks if isinstance(b.block, ToolUse))
        return items
    texts = [t for t in _texts(m.blocks) if t]
    if m.role == "tool":
        items.extend(
            _responses_result(b.block, calls) for b in m.blocks if isinstance(b.block, ToolResult)
        )
    elif any(isinstance(b.block, Image | Document) for b in m.blocks):
        items.append(
            {"role": "user", "content": _media_parts(m, "input_text", responses_media_part)}
        )
    elif texts:
        items.append({"role": "user", "content": "\n\n".join(texts)})
    return items


def _responses_output(r: ToolResult) -> Any:
    """A ``function_call_output`` output: the text, or text and media parts."""
    if not r.media:
        return r.content
    head = [{"type": "input_text", "text": r.content}] if r.content else []
    return head + [responses_media_part(x) for x in r.media]


def _item_calls(blocks: Sequence[LayoutBlock], start: int = 0) -> dict[str, ToolUse]:
    """The calls among ``blocks[start:]`` that came as Responses items other than function
    calls (custom tool and local shell calls), by id (a later one wins)."""
    out: dict[str, ToolUse] = {}
    for k in range(start, len(blocks)):
        blk = blocks[k].block
        if isinstance(blk, ToolUse) and blk.item is not UNSET:
            out[blk.id] = blk
    return out


def _responses_items(
    conv: tuple[LayoutBlock, ...],
    log: RenderLog | None,
    compaction: ProviderCompaction | None = None,
    prefix: MessagePrefix[CallsProgress] | None = None,
) -> list[dict[str, Any]]:
    """The input items of the conversation blocks ``conv``; a message holding the summary of
    an entry with a compaction item becomes that item, first in ``input`` (the items before
    it are dropped), and that entry's notes are left out
    (:func:`regio.layout.provider_compaction.item_of`). With ``prefix`` (the session's;
    never with compaction items) the items it keeps are copied and the groups found final
    after them extend it."""
    start = prefix.covered(conv) if prefix is not None else 0
    items = prefix.items()[0] if prefix is not None and start else []
    found = _item_calls(conv, start)
    calls: Mapping[str, ToolUse] = found if prefix is None else ChainMap(found, prefix.calls)
    growing = prefix is not None
    runs = group_runs(conv, start)
    for m, unit, kept in rendered_runs(
        "openai_responses", runs, lambda m: _responses_unit(m, calls), log
    ):
        item, skip = item_of(m.blocks, compaction)
        if item is not None:
            items = [fresh_copy(item)]
        elif not skip:
            items.extend(unit)
        if growing and prefix is not None:
            growing = kept is not None and prefix.add_items(m, kept[0])
            if growing:  # a later result regio makes may answer one of its calls
                prefix.calls.update(_item_calls(m.blocks))
    return items


def render_openai_responses(
    request: Request,
    *,
    model: str,
    max_tokens: int | None = None,
    log: RenderLog | None = None,
    compaction: ProviderCompaction | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """The ``responses.create`` payload (``model``, ``instructions`` when any, ``input`` items,
    ``tools`` when any, ``max_output_tokens`` (tokens) when given, ``prompt_cache_key``;
    ``extra`` added as given).

    ``log``: the session's render log (see the module docstring); ``compaction``: server-side
    compaction and its items (module docstring).

    Raises :class:`LayoutError` when the result breaks :func:`check_openai_responses`.
    """
    lo = conversation_start(request)
    head = request.blocks[:lo]
    prefix = None
    if log is not None and (compaction is None or not compaction.items):
        prefix = message_prefix(log, "openai_responses", CallsProgress)  # no item stands in
    items = _responses_items(request.blocks[lo:], log, compaction, prefix)
    payload: dict[str, Any] = {"model": model}
    sys = _system_text_of(head)
    if sys:
        payload["instructions"] = sys
    payload["input"] = items
    limit = ("max_output_tokens", max_tokens)
    _add_common(payload, request, head, "openai_responses", limit, extra)
    if compaction is not None and compaction.trigger is not None:
        add_responses_entry(payload, compaction.trigger)
    if prefix is not None and payload.get("input") is items:
        # the kept items were checked when they were rendered first: only the rest now
        problems = openai_responses_problems(items, prefix.progress, prefix.settled)
    else:
        problems = check_openai_responses(payload)
    _raise_if_malformed("Responses", problems)
    return payload


def check_openai_responses(payload: dict[str, Any]) -> list[str]:
    """Problems of a Responses payload's ``input`` (empty: well formed); see
    :func:`regio.layout.wellformed.openai_responses_problems`."""
    return openai_responses_problems(payload.get("input", []))


OPENAI_CHAT = register_renderer(
    FunctionRenderer("openai_chat", render_openai_chat, check_openai_chat)
)
OPENAI_RESPONSES = register_renderer(
    FunctionRenderer("openai_responses", render_openai_responses, check_openai_responses)
)
