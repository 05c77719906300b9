"""The :class:`Summarizer` protocol and the checks every summary passes before it is committed.

A summarizer is any callable, sync or async::

    summarizer(entries, standing_instructions, extra_instructions) -> str   # or Awaitable[str]

* ``entries``: the entries to summarize, in order (:class:`regio.content.Entry`). When a
  region already has a running summary, the first entry is that summary (``meta["summary"]``
  is true) and it must be carried forward;
* ``standing_instructions``: the blueprint's standing summary requirements (always present);
* ``extra_instructions``: instructions added for this compaction (``compact(instructions)``),
  or ``None``.

It also carries its own window (the summarizer has its own model
and window): ``context_window`` (tokens its model accepts), ``reserve_tokens`` (kept free
for its output) and ``max_summary_tokens`` (the longest summary it should produce). A plain
function gets them through :class:`FunctionSummarizer`. Attributes missing on a custom object
fall back to :data:`DEFAULT_CONTEXT_WINDOW` and :data:`DEFAULT_MAX_SUMMARY_TOKENS`.

:func:`check_summary` is the commit gate: a summary that is empty or whitespace, the error text
of a failed call, a refusal or apology, a request for more input (classes of
:mod:`regio.summarizers._validity`), longer than ``max_summary_tokens`` or not smaller than what it
replaces raises :class:`SummaryRejected` and changes nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol, runtime_checkable

import attrs

from regio.content import Entry
from regio.errors import SummaryRejected
from regio.summarizers.carryforward import SCHEMA_INSTRUCTIONS

from ._validity import summary_defect

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_SUMMARY_TOKENS",
    "DEFAULT_STANDING_INSTRUCTIONS",
    "FunctionSummarizer",
    "Summarizer",
    "SummaryFn",
    "check_summary",
    "is_refusal",
    "summarizer_limits",
]

#: Window assumed for a summarizer that declares none (tokens).
DEFAULT_CONTEXT_WINDOW = 128_000
#: Longest summary asked for when the summarizer declares nothing (tokens).
DEFAULT_MAX_SUMMARY_TOKENS = 2_000

#: What every summary must keep: the carry-forward schema, durable items by type with their
#: keys, verbatim, then prose (:data:`regio.summarizers.carryforward.SCHEMA_INSTRUCTIONS`;
#: the published result it follows is cited there).
DEFAULT_STANDING_INSTRUCTIONS = (
    f"{SCHEMA_INSTRUCTIONS}\nIn the prose, copy paths, ids, names and numbers verbatim. "
    "Never invent facts."
)

SummaryFn = Callable[[Sequence[Entry], str, "str | None"], "str | Awaitable[str]"]


@runtime_checkable
class Summarizer(Protocol):
    """A summarizer with its own window (all sizes in tokens)."""

    context_window: int
    max_summary_tokens: int

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str | Awaitable[str]:
        """Summarize ``entries``; returns the summary text (or an awaitable of it)."""
        ...


@attrs.define(eq=False)
class FunctionSummarizer:
    """Wraps a plain function ``fn(entries, standing, extra) -> str | Awaitable[str]``.

    ``context_window`` / ``reserve_tokens`` / ``max_summary_tokens`` are tokens; the request the
    engine sends is at most ``context_window - reserve_tokens``. ``reserve_tokens`` defaults to
    ``max_summary_tokens``.
    """

    fn: SummaryFn
    context_window: int = DEFAULT_CONTEXT_WINDOW
    max_summary_tokens: int = DEFAULT_MAX_SUMMARY_TOKENS
    reserve_tokens: int | None = None

    def __call__(
        self, entries: Sequence[Entry], standing_instructions: str, extra_instructions: str | None
    ) -> str | Awaitable[str]:
        return self.fn(entries, standing_instructions, extra_instructions)


def summarizer_limits(summarizer: object) -> tuple[int, int, int]:
    """``(context_window, reserve_tokens, max_summary_tokens)`` of ``summarizer`` (tokens).

    Missing attributes get the defaults; ``reserve_tokens`` defaults to ``max_summary_tokens``.
    Raises ``ValueError`` when the window minus the reserve leaves no room for input.
    """
    window = int(getattr(summarizer, "context_window", None) or DEFAULT_CONTEXT_WINDOW)
    max_summary = int(getattr(summarizer, "max_summary_tokens", None) or DEFAULT_MAX_SUMMARY_TOKENS)
    reserve_attr = getattr(summarizer, "reserve_tokens", None)
    reserve = int(reserve_attr) if reserve_attr is not None else max_summary
    if window - reserve <= 0:
        raise ValueError(
            f"summarizer context_window {window} minus reserve_tokens {reserve} leaves no room "
            "for input; raise context_window or lower reserve_tokens / max_summary_tokens"
        )
    return window, reserve, max_summary


def is_refusal(text: str) -> bool:
    """True when ``text`` opens like a model refusal or apology ("I can't help with that",
    "I'm sorry, but ...", "As an AI ..."). Only the opening is checked, so a summary that
    quotes a refusal later on is accepted."""
    return summary_defect(text) == "refusal"


_MESSAGES = {
    "empty": "the summarizer returned an empty or whitespace-only summary",
    "error": "the summarizer returned the text of a failed call (an exception, an HTTP error or "
    "a stack trace), not a summary",
    "refusal": "the summarizer refused or apologised",
    "request": "the summarizer asked for more input instead of summarizing",
}


def check_summary(
    text: object,
    *,
    summary_tokens: int,
    replaced_tokens: int,
    max_summary_tokens: int | None = None,
    refusal_phrases: Sequence[str] = (),
) -> str:
    """Return ``text`` when it may replace ``replaced_tokens`` tokens, else raise.

    Raises :class:`SummaryRejected` whose ``reason`` is the class of the defect:
    ``empty`` / ``error`` / ``refusal`` / ``request``
    (:func:`regio.summarizers._validity.summary_defect`; ``refusal_phrases`` are openings that
    also make a refusal), ``over_cap`` (more than ``max_summary_tokens``, when given) or
    ``oversized`` (``summary_tokens >= replaced_tokens``: a summary must be smaller than what
    it replaces).
    """
    defect = summary_defect(text, refusal_phrases)
    if defect is not None:
        start = text.strip()[:60] if isinstance(text, str) else type(text).__name__
        raise SummaryRejected(
            f"{_MESSAGES[defect]} ({start!r}); nothing was changed",
            reason=defect,
            summary_tokens=summary_tokens if defect != "empty" else 0,
            replaced_tokens=replaced_tokens,
        )
    assert isinstance(text, str)  # anything else is an "empty" defect (summary_defect)
    if max_summary_tokens is not None and summary_tokens > max_summary_tokens:
        raise SummaryRejected(
            f"the summary ({summary_tokens} tokens) is longer than the summarizer's "
            f"max_summary_tokens ({max_summary_tokens}); nothing was changed",
            reason="over_cap",
            summary_tokens=summary_tokens,
            replaced_tokens=replaced_tokens,
        )
    if summary_tokens >= replaced_tokens:
        raise SummaryRejected(
            f"the summary ({summary_tokens} tokens) is not smaller than what it replaces "
            f"({replaced_tokens} tokens); nothing was changed",
            reason="oversized",
            summary_tokens=summary_tokens,
            replaced_tokens=replaced_tokens,
        )
    return text
