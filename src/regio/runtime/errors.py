"""Error types of the runtime (:mod:`regio.runtime`).

All derive from :class:`regio.errors.RegioError` (an :class:`Exception`), so ``except
RegioError`` catches every error the engine raises on purpose and nothing ends the process.
"""

from __future__ import annotations

from typing import Any

from regio.errors import RegioError

__all__ = [
    "BlockValueError",
    "CompactionNoProgressError",
    "ContextOverflowError",
    "ContextWindowError",
    "RuntimeStateError",
    "SDKInputError",
    "SizeError",
    "SummarizerError",
    "SummaryRejected",
    "UsageError",
]


class SummarizerError(RegioError):
    """The summarizer failed (it raised, or returned something that is not text).

    ``cause`` is the original exception, when there was one.
    """

    def __init__(self, message: str, *, cause: BaseException | None = None) -> None:
        super().__init__(message)
        self.cause = cause


class SummaryRejected(RegioError):
    """A summary was refused before it was committed.

    ``reason`` is one of ``empty`` (empty or whitespace only), ``error`` (the text of a failed
    call: an exception, an HTTP error, a stack trace), ``refusal`` (a refusal or apology: "I
    can't help with that", "I'm sorry, but ..."), ``request`` (asks for more input),
    ``over_cap`` (longer than ``max_summary_tokens``), ``oversized`` (not smaller than what it
    replaces); ``summary_tokens`` and ``replaced_tokens`` are in tokens.
    """

    def __init__(
        self, message: str, *, reason: str, summary_tokens: int = 0, replaced_tokens: int = 0
    ) -> None:
        super().__init__(message)
        self.reason = reason
        self.summary_tokens = summary_tokens
        self.replaced_tokens = replaced_tokens


class CompactionNoProgressError(RegioError):
    """``attempts`` compaction passes in a row freed nothing.

    Raised instead of looping. ``region`` names the compacted region (or ``None`` for the whole
    window), ``size`` is its compactable size in tokens and ``trigger`` the threshold it is over.
    The strike counter resets only after a compaction brings the size below the trigger.
    """

    def __init__(
        self, message: str, *, region: str | None, attempts: int, size: int, trigger: int
    ) -> None:
        super().__init__(message)
        self.region = region
        self.attempts = attempts
        self.size = size
        self.trigger = trigger


class ContextOverflowError(RegioError):
    """The provider refused a request for length and recovery cannot help.

    ``reported`` is the prompt size the provider reported (tokens, ``None`` when it did not
    say), ``maximum`` its limit, ``estimated`` the engine's own estimate of the request and
    ``ceiling`` the engine's budget ceiling; ``provider_error`` is the original error object.
    """

    def __init__(
        self,
        message: str,
        *,
        reported: int | None = None,
        maximum: int | None = None,
        estimated: int | None = None,
        ceiling: int | None = None,
        provider_error: Any = None,
    ) -> None:
        super().__init__(message)
        self.reported = reported
        self.maximum = maximum
        self.estimated = estimated
        self.ceiling = ceiling
        self.provider_error = provider_error


class RuntimeStateError(RegioError):
    """A saved engine state cannot be loaded (wrong format, version or blueprint mismatch)."""


class ContextWindowError(RegioError, ValueError):
    """A context window that is not a positive integer of tokens; the message names where it
    was given (blueprint ``model.context_window``, ``EngineOptions.context_window``, a provider
    adapter's ``context_window``) and what was given."""


class SDKInputError(RegioError, TypeError):
    """An SDK object or dict regio cannot read; the message names the type, the place and the
    accepted shapes."""


class BlockValueError(RegioError, ValueError):
    """A block that holds a value no provider takes: an empty tool call id, an empty tool name
    or a tool result naming no call; the message names the call, the block and the fix."""


class SizeError(RegioError, ValueError):
    """A size, count or limit given to the engine that is not one: not an integer (a bool, a
    float, text), negative, or larger than any window (``tokens=-5`` on an add); the message
    names the argument and the call. Also a :class:`ValueError`, which it was before."""


class UsageError(RegioError, ValueError):
    """A usage report regio cannot read: a token count that is not a number or is negative, or
    a shape of no known API; the message names the field. Also a :class:`ValueError`, which it
    was before."""
