"""Hierarchical summarization: input that does not fit the summarizer's own window is chunked.

Sizing: a summarizer request may hold at most ``context_window -
reserve_tokens`` of the *summarizer's* window (never the agent's cap), minus the instructions
and :data:`PROMPT_OVERHEAD`. Entries are measured by their stored ``tokens`` (counted
once); instructions and summaries with the engine's counter.

1. When everything fits, one call.
2. Otherwise entries are packed in order into chunks that fit (an entry larger than a whole
   chunk is split by lines, then by characters, into parts ``<id>#<n>``); each chunk is
   summarized; the chunk summaries become the input of the next level, until one request
   holds everything and a single summary remains.
3. A level that does not shrink its input raises :class:`SummarizerError` (no endless loop);
   so does a summarizer that refuses for length three times in a row (the budget is halved
   after each refusal).

The driver is a generator shared by the sync and async entry points: it yields each request's
entries and receives the summary text.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from regio.content import Entry, Text
from regio.drive import adrive, drive
from regio.errors import SummarizerError, SummaryRejected
from regio.providers.overflow import classify_overflow
from regio.summarizers.observations import OBSERVATION_META, is_observation
from regio.tokens import TokenCounter

from ._protocol import summarizer_limits
from ._validity import summary_defect

if TYPE_CHECKING:
    from regio.summarizers._protocol import SummaryFn

__all__ = [
    "MAX_LEVELS",
    "PROMPT_OVERHEAD",
    "SummaryCall",
    "SummaryOutcome",
    "asummarize_entries",
    "chunk_entries",
    "summarize_entries",
]

#: Tokens kept free in every summarizer request for the prompt's own framing.
PROMPT_OVERHEAD = 64
#: Most levels of hierarchical summarization before giving up.
MAX_LEVELS = 8
_MAX_OVERFLOW_RETRIES = 3


class SummaryCall(msgspec.Struct, frozen=True):
    """One summarizer request: ``level`` (0 = the original entries), the ``entry_ids`` it held,
    its ``input_tokens`` (entries plus instructions) and the ``output_tokens`` of its reply."""

    level: int
    entry_ids: tuple[str, ...]
    input_tokens: int
    output_tokens: int


class SummaryOutcome(msgspec.Struct, frozen=True):
    """The final summary ``text``, its size in ``tokens`` and every request made (``calls``)."""

    text: str
    tokens: int
    calls: tuple[SummaryCall, ...]


def _entry_tokens(entry: Entry, counter: TokenCounter) -> int:
    return entry.tokens if entry.tokens > 0 else counter.count_entry(entry)


def _cut_line(line: str, cost: int, budget: int, counter: TokenCounter) -> list[str]:
    """Cut one over-budget line into consecutive parts of at most ``budget`` tokens, at a
    whitespace when there is one; the parts concatenate back to ``line``."""
    parts: list[str] = []
    rest = line
    step = max(1, len(line) * budget // max(cost, 1))
    while rest:
        size = min(len(rest), step)
        part = rest[:size]
        while size > 1 and counter.count(part) > budget:
            size = max(1, size * 3 // 4)
            part = rest[:size]
        if size < len(rest):
            space = part.rfind(" ")
            if space > 0:
                part = rest[: space + 1]
        parts.append(part)
        rest = rest[len(part) :]
    return parts


def _kept_meta(entry: Entry) -> dict[str, Any]:
    """The meta every part of a split ``entry`` keeps: its observation mark (an observation's
    parts are read as tool output, never as the user's words)."""
    return {OBSERVATION_META: True} if is_observation(entry) else {}


def _split_entry(entry: Entry, budget: int, counter: TokenCounter) -> list[Entry]:
    """Parts of ``entry``'s text, each at most ``budget`` tokens (the observation mark kept)."""
    pieces: list[str] = []
    current: list[str] = []
    current_tokens = 0
    for line in entry.text.splitlines(keepends=True):
        cost = counter.count(line)
        if cost > budget:
            if current:
                pieces.append("".join(current))
                current, current_tokens = [], 0
            pieces.extend(_cut_line(line, cost, budget, counter))
            continue
        if current_tokens + cost > budget and current:
            pieces.append("".join(current))
            current, current_tokens = [], 0
        current.append(line)
        current_tokens += cost
    if current:
        pieces.append("".join(current))
    return [
        Entry(
            id=f"{entry.id}#{i}",
            blocks=(Text(piece),),
            role=entry.role,
            tokens=counter.count(piece),
            turn=entry.turn,
            meta={"part_of": entry.id, **_kept_meta(entry)},
        )
        for i, piece in enumerate(pieces)
        if piece
    ]


def chunk_entries(
    entries: Sequence[Entry], budget: int, counter: TokenCounter
) -> list[list[Entry]]:
    """Pack ``entries`` in order into chunks of at most ``budget`` tokens (oversized entries
    are split). Raises ``ValueError`` for a budget below 1."""
    if budget < 1:
        raise ValueError(f"chunk budget must be at least 1 token, got {budget}")
    chunks: list[list[Entry]] = []
    current: list[Entry] = []
    used = 0
    for entry in entries:
        size = _entry_tokens(entry, counter)
        parts = _split_entry(entry, budget, counter) if size > budget else [entry]
        for part in parts:
            part_size = _entry_tokens(part, counter)
            if current and used + part_size > budget:
                chunks.append(current)
                current, used = [], 0
            current.append(part)
            used += part_size
    if current:
        chunks.append(current)
    return chunks


def _drive(
    summarizer: SummaryFn,
    entries: Sequence[Entry],
    standing: str,
    extra: str | None,
    counter: TokenCounter,
) -> Generator[tuple[Sequence[Entry], int], str, SummaryOutcome]:
    window, reserve, _max_summary = summarizer_limits(summarizer)
    instructions = counter.count(standing) + (counter.count(extra) if extra else 0)
    budget = window - reserve - instructions - PROMPT_OVERHEAD
    if budget < 1:
        raise SummarizerError(
            f"the summary instructions ({instructions} tokens) leave no room in the summarizer's "
            f"window ({window} - reserve {reserve}); shorten the instructions or use a larger "
            "summarizer window"
        )
    calls: list[SummaryCall] = []
    current: list[Entry] = list(entries)
    level = 0
    overflow_retries = 0
    while True:
        total = sum(_entry_tokens(e, counter) for e in current)
        chunks = [current] if total <= budget else chunk_entries(current, budget, counter)
        summaries: list[Entry] = []
        try:
            for index, chunk in enumerate(chunks):
                size = sum(_entry_tokens(e, counter) for e in chunk) + instructions
                text = yield chunk, size
                defect = summary_defect(text)
                if defect is not None:
                    raise SummaryRejected(
                        f"the summarizer returned an unusable summary ({defect}) at level "
                        f"{level} (chunk {index + 1} of {len(chunks)}); nothing was changed",
                        reason=defect,
                    )
                tokens = counter.count(text)
                calls.append(SummaryCall(level, tuple(e.id for e in chunk), size, tokens))
                summaries.append(
                    Entry(
                        id=f"summary:{level}:{index}",
                        blocks=(Text(text),),
                        tokens=tokens,
                        meta={"summary": True},
                    )
                )
        except SummaryRejected:
            raise
        except Exception as exc:
            if classify_overflow(exc) is None or overflow_retries >= _MAX_OVERFLOW_RETRIES:
                raise
            overflow_retries += 1
            budget //= 2
            if budget < 1:
                raise
            continue
        if len(summaries) == 1 and len(chunks) == 1:
            only = summaries[0]
            return SummaryOutcome(only.text, only.tokens, tuple(calls))
        new_total = sum(e.tokens for e in summaries)
        if new_total >= total:
            raise SummarizerError(
                f"hierarchical summarization made no progress at level {level}: {len(chunks)} "
                f"chunk summaries hold {new_total} tokens, the input held {total}; lower the "
                "summarizer's max_summary_tokens"
            )
        level += 1
        if level > MAX_LEVELS:
            raise SummarizerError(
                f"hierarchical summarization did not converge in {MAX_LEVELS} levels"
            )
        current = summaries


def summarize_entries(
    summarizer: SummaryFn,
    entries: Sequence[Entry],
    standing_instructions: str,
    extra_instructions: str | None,
    counter: TokenCounter,
) -> SummaryOutcome:
    """Summarize ``entries`` with a sync summarizer, hierarchically when needed (module doc).

    Raises :class:`SummarizerError` when the summarizer is async (use
    :func:`asummarize_entries`) or does not converge, :class:`SummaryRejected` for an empty or
    refusal-like partial summary; the summarizer's own errors propagate.
    """

    def reply(job: tuple[Sequence[Entry], int]) -> str:
        answer = summarizer(job[0], standing_instructions, extra_instructions)
        if inspect.isawaitable(answer):
            close = getattr(answer, "close", None)
            if close is not None:
                close()
            raise SummarizerError(
                "the summarizer is async; call the engine's async entry (aadd_message, "
                "aadd_tool_result, awrite, arequest, aflush, acompact, ...) instead of the "
                "sync one"
            )
        return answer

    driver = _drive(summarizer, entries, standing_instructions, extra_instructions, counter)
    return drive(driver, reply)


async def asummarize_entries(
    summarizer: SummaryFn,
    entries: Sequence[Entry],
    standing_instructions: str,
    extra_instructions: str | None,
    counter: TokenCounter,
) -> SummaryOutcome:
    """:func:`summarize_entries` for sync or async summarizers (awaits awaitable replies)."""

    async def reply(job: tuple[Sequence[Entry], int]) -> str:
        answer = summarizer(job[0], standing_instructions, extra_instructions)
        if inspect.isawaitable(answer):
            answer = await answer
        return answer

    driver = _drive(summarizer, entries, standing_instructions, extra_instructions, counter)
    return await adrive(driver, reply)
