"""Tokens of the tool definitions sent with a request, per provider, as data.

A request with tools carries each definition (name, description, JSON Schema) in the provider's
own shape, plus hidden framing that the definitions do not show: Anthropic adds a tool-use
system prompt once per request that has tools, OpenAI wraps every function in its own
namespace syntax. :data:`TOOL_FORMATS` holds the framing per provider with the source of each
figure; :func:`tool_definition_tokens` counts the definitions rendered as the provider
receives them plus that framing. The figures are estimates (``exact`` false): the
calibration from reported usage (:class:`regio.tokens.Calibration`) corrects the residual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import msgspec

__all__ = ["TOOL_FORMATS", "ToolFormatOverhead", "tool_definition_tokens", "tool_format_for"]


class ToolFormatOverhead(msgspec.Struct, frozen=True):
    """Hidden tokens of one provider's tool definitions.

    * ``per_request``: added once to a request that carries at least one tool, tokens;
    * ``per_tool``: added for every tool definition, tokens;
    * ``shape``: how a definition is rendered (``anthropic``: ``{name, description,
      input_schema}``; ``openai``: ``{type: function, function: {name, description,
      parameters}}``; ``neutral``: ``[name, description, schema]``);
    * ``exact``: ``True`` when the provider publishes the figures for every model;
    * ``source``: where the figures come from.
    """

    name: str
    per_request: int
    per_tool: int
    shape: str
    exact: bool
    source: str


TOOL_FORMATS: dict[str, ToolFormatOverhead] = {
    "anthropic": ToolFormatOverhead(
        name="anthropic",
        per_request=346,
        per_tool=0,
        shape="anthropic",
        exact=False,
        source=(
            "Anthropic, 'Tool use with Claude', pricing: a request with tools carries a "
            "tool-use system prompt of 346 tokens for Claude Opus 4 / Sonnet 4 / Sonnet 3.7 "
            "(tool_choice auto or none; 313 for any / tool; older models list fewer), "
            "https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/overview#pricing"
        ),
    ),
    "openai": ToolFormatOverhead(
        name="openai",
        per_request=12,
        per_tool=7,
        shape="openai",
        exact=False,
        source=(
            "OpenAI Cookbook, 'How to count tokens with tiktoken', num_tokens_for_tools: "
            "7 tokens open each function (func_init) and 12 close the list (func_end) for "
            "gpt-4o / gpt-4o-mini; the definitions themselves are counted as their JSON"
        ),
    ),
    "none": ToolFormatOverhead(
        name="none",
        per_request=0,
        per_tool=0,
        shape="neutral",
        exact=True,
        source="no provider framing (plain text and unknown providers: the definitions only)",
    ),
}

#: Providers whose tool definitions take the OpenAI function shape.
_OPENAI_SHAPED = ("openai", "openai_responses", "openai_compatible", "llamacpp", "deepseek")


def tool_format_for(provider: str | None) -> ToolFormatOverhead:
    """The :data:`TOOL_FORMATS` row of ``provider`` (``anthropic``; the OpenAI-shaped APIs
    ``openai``, ``openai_responses``, ``openai_compatible``, ``llamacpp``, ``deepseek``;
    anything else: ``none``)."""
    if provider is None:
        return TOOL_FORMATS["none"]
    if provider == "anthropic":
        return TOOL_FORMATS["anthropic"]
    if provider in _OPENAI_SHAPED:
        return TOOL_FORMATS["openai"]
    return TOOL_FORMATS["none"]


def _rendered(shape: str, name: str, description: str, schema: Any) -> bytes:
    if shape == "anthropic":
        value: Any = {"name": name, "description": description, "input_schema": schema}
    elif shape == "openai":
        value = {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": schema},
        }
    else:
        value = [name, description, schema]
    return msgspec.json.encode(value)


def tool_definition_tokens(
    tools: Iterable[Any], provider: str | None, count: Callable[[str], int]
) -> int:
    """Tokens of ``tools`` (objects with ``name``, ``description`` and ``canonical_schema()``,
    i.e. :class:`regio.layout.ToolSpec`) as ``provider`` receives them: each definition in the
    provider's shape counted with ``count`` (a text -> tokens function), plus
    :attr:`ToolFormatOverhead.per_tool` each and :attr:`ToolFormatOverhead.per_request` once
    when there is at least one tool. Zero without tools."""
    fmt = tool_format_for(provider)
    total = 0
    n = 0
    for t in tools:
        text = _rendered(fmt.shape, t.name, t.description, t.canonical_schema()).decode()
        total += int(count(text)) + fmt.per_tool
        n += 1
    return total + fmt.per_request if n else 0
