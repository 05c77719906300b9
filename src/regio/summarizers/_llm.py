"""Summarizers that need a model (:class:`LLMSummarizer`) and the transcript text they read.

:class:`LLMSummarizer` calls any provider adapter: a callable that takes a list of chat
messages (``[{"role": "system" | "user", "content": str}]``) and returns the reply text, sync
or async. The agent loop plugs real providers in; tests plug a scripted function.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from regio.content import (
    Document,
    Entry,
    Image,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
    block_text,
    canonical_json,
)
from regio.errors import SummarizerError
from regio.summarizers.observations import is_observation

from ._protocol import DEFAULT_CONTEXT_WINDOW, DEFAULT_MAX_SUMMARY_TOKENS

__all__ = ["ChatComplete", "LLMSummarizer", "entries_as_transcript", "summary_prompt"]

#: A provider adapter: chat messages -> reply text (or an awaitable of it).
ChatComplete = Callable[[list[dict[str, str]]], "str | Awaitable[str]"]


def _entry_label(entry: Entry) -> str:
    if entry.meta.get("summary"):
        return "previous summary"
    if is_observation(entry):  # the environment's output, not the user's words
        return "observation"
    if entry.role:
        return entry.role
    return f"note {entry.key}" if entry.key else "note"


def entries_as_transcript(entries: Sequence[Entry]) -> str:
    """The entries as plain text, one ``[label id]`` section each, blocks in order.

    Tool calls show as ``call name(id) {json}``, results as ``result(id): text``; an
    environment observation sent as user text is labelled ``observation``
    (:mod:`regio.summarizers.observations`); thinking blocks are left out (they are opaque and not
    part of what happened).
    """
    parts: list[str] = []
    for entry in entries:
        lines = [f"[{_entry_label(entry)} {entry.id}]"]
        for block in entry.blocks:
            if isinstance(block, Text):
                lines.append(block.text)
            elif isinstance(block, ToolUse):
                lines.append(
                    f"call {block.name}({block.id}) {canonical_json(block.input).decode()}"
                )
            elif isinstance(block, ToolResult):
                flag = " error" if block.is_error else ""
                lines.append(f"result({block.tool_use_id}){flag}: {block_text(block)}")
            elif isinstance(block, Image | Document):  # its description, never its bytes
                lines.append(block_text(block))
            elif isinstance(block, Thinking):
                continue
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def summary_prompt(
    entries: Sequence[Entry],
    standing_instructions: str,
    extra_instructions: str | None,
    *,
    max_summary_tokens: int,
) -> list[dict[str, str]]:
    """The chat messages an :class:`LLMSummarizer` sends: a system message with the standing
    requirements (plus the extra ones, added, never replacing) and a user message holding the
    transcript."""
    system = (
        "You compact an AI agent's working context. Summarize the transcript below so the agent "
        "can continue its task from the summary alone.\n\n"
        f"{standing_instructions.strip()}\n\n"
        f"Keep the summary under {max_summary_tokens} tokens. Reply with the summary only."
    )
    if extra_instructions and extra_instructions.strip():
        system += f"\n\nAdditional requirements for this summary:\n{extra_instructions.strip()}"
    user = "Transcript to summarize:\n\n" + entries_as_transcript(entries)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _reply_text(reply: object) -> str:
    if isinstance(reply, str):
        return reply
    raise SummarizerError(
        f"the summarizer's provider adapter returned {type(reply).__name__}, expected str; "
        "make the adapter return the reply text"
    )


@attrs.define(eq=False)
class LLMSummarizer:
    """A summarizer backed by a chat model.

    ``complete`` is the provider adapter (messages -> text, sync or async); ``context_window``
    the summarizer model's window, ``reserve_tokens`` the room kept for its reply (default
    ``max_summary_tokens``), ``max_summary_tokens`` the longest summary asked for (tokens);
    ``model`` is informational. Errors of the adapter are wrapped in
    :class:`SummarizerError` (the cause attached), except a context-length refusal, which is
    re-raised as is so the engine can chunk and retry.
    """

    complete: ChatComplete
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    reserve_tokens: int | None = None
    model: str = ""

    def messages(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> list[dict[str, str]]:
        """The chat messages this summarizer sends for ``entries``."""
        return summary_prompt(
            entries,
            standing_instructions,
            extra_instructions,
            max_summary_tokens=self.max_summary_tokens,
        )

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str | Awaitable[str]:
        messages = self.messages(entries, standing_instructions, extra_instructions)
        reply = self.complete(messages)
        if inspect.isawaitable(reply):
            return self._await(reply)
        return _reply_text(reply)

    async def _await(self, reply: Awaitable[Any]) -> str:
        return _reply_text(await reply)
