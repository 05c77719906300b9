"""Calls to regio's own tools, answered by the proxy itself.

The client does not have regio's tools (``context_restore`` brings back a tool result the relief
chain cleared, trimmed or routed; docs/relief.md), so when the model calls one the proxy answers
it and asks the model again, before the client sees anything of that call
(:mod:`regio.proxy.streams` holds the rest of the response back). The exchange goes into the
session's conversation like any turn: the assistant message with its calls, then one result per
call. A call to regio's tool is run by :meth:`regio.Engine.handle_tool_call` (a mistake, such
as an unknown call id, comes back to the model as text). A call to one of the client's tools in
the same response cannot be run by the proxy: it gets an error result saying it was not run
and to call it again now that the restored result is there, so every call is answered.

The tools are offered when the engine offers them (``Engine.tools()``: ``relief.restore_tool``
in the blueprint); with ``restore_tool: false`` none is sent and the relief placeholders say the
result is kept in the session transcript. At most ``max_rounds`` rounds per client request are
answered this way; the last round is sent without regio's tools, so the model has to answer
the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from regio.content import Message, ToolResult, ToolUse

from .replies import Reply

if TYPE_CHECKING:
    from regio.engine import Engine

__all__ = ["NOT_RUN", "answer_internal", "regio_tool_names"]

#: The result of a client tool called beside regio's own in one response.
NOT_RUN = (
    "[not run: this call came with a call to {tools}, which was answered first; call {name} "
    "again if you still need it]"
)


def regio_tool_names(engine: Engine) -> frozenset[str]:
    """Names of the tools the engine offers the model (``Engine.tools()``)."""
    return frozenset(spec.name for spec in engine.tools())


def answer_internal(engine: Engine, reply: Reply) -> list[Message]:
    """Record ``reply``'s message and answer each of its calls (module doc); returns the two
    messages added (the assistant's, then the results)."""
    assistant = reply.message
    engine.add_message(assistant)
    own = ", ".join(sorted({c.name for c in reply.internal}))
    results = []
    for block in assistant.blocks:
        if not isinstance(block, ToolUse):
            continue
        if any(block.id == c.id for c in reply.internal):
            outcome = engine.handle_tool_call(block.name, block.input)
            results.append(ToolResult(block.id, outcome.text, is_error=not outcome.ok))
        else:
            text = NOT_RUN.format(tools=own, name=block.name)
            results.append(ToolResult(block.id, text, is_error=True))
    tool = Message.tool(tuple(results))
    engine.add_message(tool)
    return [assistant, tool]
