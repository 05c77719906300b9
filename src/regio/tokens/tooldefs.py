"""Tokens of the tool definitions sent with a request, counted in the shape they are sent.

A request with tools carries each definition (name, description, JSON Schema) in the API's own
shape, plus hidden framing that the definitions do not show: Anthropic adds a tool-use system
prompt once per request that has tools, OpenAI wraps every function in its own namespace
syntax. A :class:`ToolFraming` says both: the ``definition`` function gives a tool's JSON value
exactly as the renderer puts it in the payload, and ``per_request`` / ``per_tool`` the hidden
tokens, with their source. Each provider holds its framing (``regio.providers``: the
framing of ``anthropic`` is there, next to its renderer); :func:`tool_definition_tokens` counts
with the one it is given. The figures are estimates (``exact`` false): the calibration from
reported usage (:class:`regio.tokens.Calibration`) corrects the residual.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import attrs
import msgspec

__all__ = [
    "NEUTRAL_FRAMING",
    "UNSENT_FRAMING",
    "ToolDefinition",
    "ToolFraming",
    "tool_definition_tokens",
]


@attrs.frozen
class ToolFraming:
    """How one API receives tool definitions, and the hidden tokens it adds.

    * ``name``: a label (``anthropic``, ``openai_chat``, ...);
    * ``definition``: a tool (an object with ``name``, ``description`` and
      ``canonical_schema()``, i.e. :class:`regio.layout.ToolSpec`) -> the JSON value the API
      receives for it, as the renderer writes it (cache markers aside); ``None``: the API
      sends no tool definitions (a plain completion prompt), so they cost nothing;
    * ``per_request``: added once to a request that carries at least one tool, tokens;
    * ``per_tool``: added for every tool definition, tokens;
    * ``exact``: ``True`` when the provider publishes the figures for every model;
    * ``source``: where the figures come from.
    """

    name: str
    definition: Callable[[Any], Any] | None
    per_request: int = 0
    per_tool: int = 0
    exact: bool = False
    source: str = ""


class ToolDefinition(Protocol):
    """A tool definition as it is counted: a name, a description and the JSON Schema of its
    input with sorted keys (:class:`regio.layout.ToolSpec`)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def canonical_schema(self) -> dict[str, Any]: ...


def _neutral(tool: ToolDefinition) -> list[object]:
    return [tool.name, tool.description, tool.canonical_schema()]


#: The framing of a provider no registration describes: each definition as
#: ``[name, description, schema]``, nothing hidden.
NEUTRAL_FRAMING = ToolFraming(
    "none",
    _neutral,
    exact=True,
    source="no provider framing (a provider regio does not know: the definitions only)",
)

#: The framing of an API that sends no tool definitions (the plain-text completion prompt).
UNSENT_FRAMING = ToolFraming(
    "unsent", None, exact=True, source="the API carries no tool definitions: nothing is sent"
)


def tool_definition_tokens(
    tools: Iterable[ToolDefinition], framing: ToolFraming, count: Callable[[str], int]
) -> int:
    """Tokens of ``tools`` (objects with ``name``, ``description`` and ``canonical_schema()``,
    i.e. :class:`regio.layout.ToolSpec`) as an API with ``framing`` receives them: each
    ``framing.definition`` encoded as JSON and counted with ``count`` (a text -> tokens
    function), plus :attr:`ToolFraming.per_tool` each and :attr:`ToolFraming.per_request` once
    when there is at least one tool. Zero without tools, and for a framing that sends none."""
    shape = framing.definition
    if shape is None:
        return 0
    total = 0
    n = 0
    for t in tools:
        total += int(count(msgspec.json.encode(shape(t)).decode())) + framing.per_tool
        n += 1
    return total + framing.per_request if n else 0
