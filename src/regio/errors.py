"""Error types of regio.

Every error regio raises on purpose derives from :class:`RegioError` (itself an
:class:`Exception`), so ``except RegioError`` (or ``except Exception``) catches them all and
nothing ever ends the process. Layers add their own subclasses here.
"""

from __future__ import annotations

__all__ = [
    "CompactionError",
    "CustomHooksNotAllowedError",
    "EntryIndexError",
    "NoSuchRegionError",
    "ProtectedEntryError",
    "RegioError",
    "RegionConfigError",
    "RegionError",
    "RegionFullError",
    "SubscriberError",
    "SystemRoleError",
    "UnknownKeyError",
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
