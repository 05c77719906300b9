"""Support of the history repair tests: messages rendered to the two providers' wire forms
without any repair (so the W-A / W-O checks judge the messages themselves), and engines whose
conversation is broken in each way the repair handles."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from regio.content import Message, Text, ToolResult, ToolUse
from regio.layout.wellformed import anthropic_problems, openai_chat_problems
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import make_engine


def anthropic_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Anthropic Messages ``messages`` of ``messages`` as they are (``tool`` -> ``user``)."""
    out = []
    for m in messages:
        if m.role == "system":
            continue
        blocks: list[dict[str, Any]] = []
        for b in m.blocks:
            if isinstance(b, Text):
                blocks.append({"type": "text", "text": b.text})
            elif isinstance(b, ToolUse):
                blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
            elif isinstance(b, ToolResult):
                blocks.append({"type": "tool_result", "tool_use_id": b.tool_use_id})
        out.append({"role": "user" if m.role == "tool" else m.role, "content": blocks})
    return out


def openai_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI Chat Completions messages of ``messages`` as they are: each tool result its own
    ``tool`` message, the rest of a message one message of its role."""
    out: list[dict[str, Any]] = []
    for m in messages:
        results = [b for b in m.blocks if isinstance(b, ToolResult)]
        for r in results:
            out.append({"role": "tool", "tool_call_id": r.tool_use_id, "content": r.content})
        text = "\n".join(b.text for b in m.blocks if isinstance(b, Text))
        calls = [b for b in m.blocks if isinstance(b, ToolUse)]
        if m.role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": text}
            if calls:
                msg["tool_calls"] = [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.input)},
                    }
                    for c in calls
                ]
            out.append(msg)
        elif text or not results:
            out.append({"role": "user" if m.role == "tool" else m.role, "content": text})
    return out


def problems(messages: Sequence[Message]) -> list[str]:
    """W-A and W-O (and L) problems of ``messages`` rendered without repair."""
    return anthropic_problems(anthropic_wire(messages)) + openai_chat_problems(
        openai_wire(messages)
    )


def user(text: str) -> Message:
    return Message("user", (Text(text),))


def call(text: str, *ids: str) -> Message:
    return Message.assistant(text, [ToolUse(i, "read", {"path": f"{i}.py"}) for i in ids])


def results(*ids: str) -> Message:
    return Message.tool(
        [ToolResult(i, f"contents of {i}.py: def f(): return {len(i)}") for i in ids]
    )


def history_engine(counter: Any = None) -> Any:
    """An engine with a conversation, a summary history and ``context_restore`` offered
    (``counter``: its token counter, default the stub's)."""
    from regio.policies.relief import ReliefPolicy

    return make_engine(
        [
            Pinned(name="system", budget=500),
            CompactHistory(name="history", budget=2_000, source="conversation"),
            SlidingWindow(name="conversation", budget=50_000),
        ],
        max_tokens=60_000,
        relief=ReliefPolicy(),
        context_tools="all",
        session_id="s",
        counter=counter,
    )


def take_out(engine: Any, *entry_ids: str) -> None:
    """What an old compaction that split groups left: ``entry_ids`` out of the conversation
    (the transcript keeps them) and a summary of them in the history region."""
    conv = engine.window.region("conversation")
    gone = conv.remove_ids(entry_ids)
    text = "Summary: " + " ".join(e.text[:40] for e in gone)
    entry = engine.window.make_entry(
        text, meta={"covers": list(entry_ids), "source": "conversation"}
    )
    engine.window.region("history").write(entry)
    engine.transcript_log.add(
        "compaction", "conversation", turn=engine.window.turn, entry=entry, ids=entry_ids
    )
