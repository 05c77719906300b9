"""Error types of regio.

Every error regio raises on purpose derives from :class:`RegioError` (itself an
:class:`Exception`), so ``except RegioError`` (or ``except Exception``) catches them all and
nothing ever ends the process. Layers add their own subclasses here.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BlockValueError",
    "CompactionError",
    "CompactionNoProgressError",
    "ContextOverflowError",
    "ContextWindowError",
    "CustomHooksNotAllowedError",
    "EntryIndexError",
    "NoSuchRegionError",
    "ProtectedEntryError",
    "ProviderNotInstalledError",
    "ProviderResponseError",
    "RegioError",
    "RegionConfigError",
    "RegionError",
    "RegionFullError",
    "RuntimeStateError",
    "SDKInputError",
    "SessionStoreError",
    "SizeError",
    "SubscriberError",
    "SummarizerError",
    "SummaryRejected",
    "SystemRoleError",
    "UnknownKeyError",
    "UsageError",
    "WindowConfigError",
    "WindowStateError",
]


class RegioError(Exception):
    """Base of every error regio raises on purpose."""


class RegionError(RegioError):
    """Base of the errors of the regions layer (:mod:`regio.regions`)."""


class RegionConfigError(RegionError, ValueError):
    """A region was declared with an invalid option (the message names the option and the fix)."""


class _LookupMessage(LookupError):
    """``str()`` is the message itself (a builtin ``KeyError`` would quote it)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class NoSuchRegionError(RegionError, _LookupMessage, KeyError):
    """A region name that the window does not have (the message lists the regions). Also a
    :class:`KeyError`, which it was before it was a :class:`RegioError`."""


class UnknownKeyError(RegionError, _LookupMessage, KeyError):
    """A key (or checklist item id) that the region does not hold (the message lists the keys).
    Also a :class:`KeyError`."""


class EntryIndexError(RegionError, _LookupMessage, IndexError):
    """An entry index outside the region (the message gives the entry count). Also an
    :class:`IndexError`."""


class RegionFullError(RegionError):
    """A write did not fit its region and admission refused it.

    ``region`` is the region name, ``requested`` the tokens of the refused entry and
    ``available`` the tokens the region (or window) had free; ``refusal`` is the structured
    :class:`regio.regions.Refusal` with what can be released.
    """

    def __init__(
        self, message: str, *, region: str, requested: int, available: int, refusal: object = None
    ) -> None:
        super().__init__(message)
        self.region = region
        self.requested = requested
        self.available = available
        self.refusal = refusal


class SystemRoleError(RegionError):
    """A ``system``-role entry was written into a region that is not ``pinned``."""


class ProtectedEntryError(RegionError):
    """An explicit release/clear named an entry that is protected (open group or current turn)."""


class CustomHooksNotAllowedError(RegionError):
    """A ``custom`` region names Python hooks but custom hooks were not allowed."""


class WindowConfigError(RegionError):
    """The window's regions cannot work together (e.g. the floors exceed the window)."""


class WindowStateError(RegionError):
    """A saved window state does not match the window it is loaded into."""


class CompactionError(RegionError):
    """A pending compaction cannot be completed as asked (unknown id, bad summary, ...)."""


class SubscriberError(RegioError):
    """One or more event subscribers raised while events were delivered.

    Events are delivered after the change they describe has committed, so the change stands:
    the window is exactly as it would be with no subscriber. ``errors`` lists
    ``(event, exception)`` pairs in delivery order; every subscriber still received every
    event. The first exception is also the ``__cause__``.
    """

    def __init__(self, errors: tuple[tuple[object, BaseException], ...]) -> None:
        first = errors[0][1]
        kinds = ", ".join(sorted({str(getattr(e, "kind", type(e).__name__)) for e, _ in errors}))
        super().__init__(
            f"{len(errors)} event subscriber call(s) raised (events: {kinds}); the change "
            f"they were told about is committed. First: {first!r}"
        )
        self.errors = errors


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
        provider_error: object = None,
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


class ProviderNotInstalledError(RegioError, ImportError):
    """A provider's SDK is not installed; the message names ``pip install regio[providers]``."""


class ProviderResponseError(RegioError):
    """A provider answered with something the adapter cannot read (no choices, a tool call
    whose arguments are not a JSON object, ...). ``raw`` is the offending response."""

    def __init__(self, message: str, *, raw: object = None) -> None:
        super().__init__(message)
        self.raw = raw


class SessionStoreError(RegioError):
    """A session store could not do what was asked (the message names the store and session,
    the cause and the fix). ``session_id`` and ``key`` (the stored record or server key
    concerned) are set when known."""

    def __init__(
        self, message: str, *, session_id: str | None = None, key: str | None = None
    ) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.key = key

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle with the fields of every subclass (their keyword-only arguments would stop
        the default, which calls ``cls(*args)``): a store's writer process passes its errors
        back so (:mod:`regio.persistence.store.sqlite_writer`)."""
        return (_rebuilt, (type(self), self.args, dict(self.__dict__)))


def _rebuilt(cls: type[BaseException], args: tuple[Any, ...], state: dict[str, Any]) -> Any:
    """The exception :meth:`SessionStoreError.__reduce__` pickled."""
    error = cls.__new__(cls, *args)
    BaseException.__init__(error, *args)
    error.__dict__.update(state)
    return error


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
