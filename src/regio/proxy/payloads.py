"""The upstream request: the client's own parameters around the window the engine laid out.

What goes upstream is the client's body with three things replaced by the engine's payload:

* the **history** (``messages`` / ``input``) by the laid-out window (regions, summaries, the
  conversation, the tail), with regio's cache breakpoints (Anthropic ``cache_control``);
* the **system prompt**: the engine's system text, after the client's own system prompt when
  no blueprint region captures it (sent beside the window, counted by
  ``Engine.budget.send_beside``): a block of its own before regio's (Anthropic), the start of
  the one system message joined by a blank line (Chat Completions, with the client's role,
  ``system`` or ``developer``), the start of ``instructions`` (Responses);
* the **tools**: the engine's tool list, in its order (regio's own tools, such as
  ``context_restore``, first), where each of the client's function tools is the client's own
  definition as sent (``strict``, descriptions, extra fields kept) with regio's breakpoint
  marker when the plan put one on it; tools that are not functions (Anthropic server tools,
  Responses built-in tools) follow unchanged, their markers removed (the plan holds at most
  four).

Every other parameter (``model``, the output limit, ``temperature``, ``stream``,
``tool_choice``, ``thinking``, ``metadata``, ...) is the client's, as sent; the engine's own
output limit is dropped. The engine's OpenAI ``prompt_cache_key`` is kept only when the
blueprint's provider is OpenAI and the client sent none (another server may refuse an unknown
key); Anthropic ``context_management`` comes only from the client.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .dialects import ClientRequest

__all__ = ["function_tool_name", "split_tools", "tool_name", "upstream_body"]

_OPENAI_PROVIDERS = ("openai", "openai_responses")


def tool_name(api: str, tool: object) -> str | None:
    """The ``name`` of any tool definition of ``api`` (``None`` when it has none)."""
    if not isinstance(tool, Mapping):
        return None
    fn = tool.get("function") if api == "openai_chat" and tool.get("type") == "function" else tool
    name = fn.get("name") if isinstance(fn, Mapping) else None
    return name if isinstance(name, str) else None


def function_tool_name(api: str, tool: object) -> str | None:
    """The name of ``tool`` when it is a function tool of ``api`` (one regio can count and
    lay out), else ``None``."""
    if not isinstance(tool, Mapping):
        return None
    if api == "anthropic":
        if "input_schema" in tool and tool.get("type") in (None, "custom"):
            name = tool.get("name")
            return name if isinstance(name, str) and name else None
        return None
    if tool.get("type") != "function":
        return None
    fn = tool.get("function") if api == "openai_chat" else tool
    name = fn.get("name") if isinstance(fn, Mapping) else None
    return name if isinstance(name, str) and name else None


def split_tools(api: str, tools: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """``(function tools, other tools)`` of a client's ``tools`` list, each in order."""
    functions: list[Any] = []
    others: list[Any] = []
    for tool in tools:
        (functions if function_tool_name(api, tool) else others).append(tool)
    return functions, others


def _unmarked(tool: object) -> Any:
    if isinstance(tool, Mapping) and "cache_control" in tool:
        return {k: v for k, v in tool.items() if k != "cache_control"}
    return tool


def _tools(api: str, rendered: Sequence[Any], client: Sequence[Any]) -> list[Any]:
    own = {function_tool_name(api, t): t for t in client if function_tool_name(api, t)}
    out: list[Any] = []
    for tool in rendered:
        theirs = own.get(function_tool_name(api, tool))
        if theirs is None:
            out.append(tool)
            continue
        mine = dict(_unmarked(theirs))
        if isinstance(tool, Mapping) and "cache_control" in tool:
            mine["cache_control"] = tool["cache_control"]
        out.append(mine)
    out.extend(_unmarked(t) for t in client if not function_tool_name(api, t))
    return out


def _system(client: ClientRequest, payload: dict[str, Any], beside: str) -> dict[str, Any]:
    """The system part of the upstream body: ``{"system": ...}``, ``{"instructions": ...}``
    or ``{"system_message": ...}`` (Chat: prepended to the messages by the caller)."""
    if client.api == "anthropic":
        blocks = list(payload.get("system") or [])
        if beside:
            blocks.insert(0, {"type": "text", "text": beside})
        return {"system": blocks} if blocks else {}
    if client.api == "openai_responses":
        text = "\n\n".join(t for t in (beside, payload.get("instructions") or "") if t)
        return {"instructions": text} if text else {}
    messages = payload.get("messages") or []
    regio_text = ""
    if messages and messages[0].get("role") == "system":
        regio_text = str(messages[0].get("content") or "")
    text = "\n\n".join(t for t in (beside, regio_text) if t)
    return {"system_message": text} if text else {}


def _system_role(client: ClientRequest) -> str:
    """The role the client gave its system prompt (``developer`` or ``system``)."""
    for raw in client.system_raw:
        if b'"developer"' in bytes(raw)[:64]:
            return "developer"
    return "system"


def upstream_body(
    client: ClientRequest,
    payload: dict[str, Any],
    *,
    beside: str,
    provider: str,
) -> dict[str, Any]:
    """The body sent upstream for ``client`` (module doc): ``payload`` is the engine's rendered
    payload for the client's API, ``beside`` the client's system text sent beside the window
    (``""``: a region holds it), ``provider`` the blueprint's provider."""
    body = dict(client.params)
    system = _system(client, payload, beside)
    if client.api == "anthropic":
        body.update(system)
        body["messages"] = payload["messages"]
    elif client.api == "openai_chat":
        rendered = payload["messages"]  # its system message, if any, is the first (the only)
        messages = rendered[1 if rendered and rendered[0].get("role") == "system" else 0 :]
        if "system_message" in system:
            messages.insert(0, {"role": _system_role(client), "content": system["system_message"]})
        body["messages"] = messages
    else:
        body.update(system)
        body["input"] = payload["input"]
    tools = _tools(client.api, payload.get("tools") or [], client.tools)
    if tools or client.tools_raw is not None:
        body["tools"] = tools
    key = payload.get("prompt_cache_key")
    if key and provider in _OPENAI_PROVIDERS and "prompt_cache_key" not in body:
        body["prompt_cache_key"] = key
    return body
