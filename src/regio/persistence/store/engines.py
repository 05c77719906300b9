"""What a session store reads of an engine and of its class.

:class:`regio.engine.Engine` is the one class that has these parts (its
:class:`regio.engine._saving.SavedEngine` base declares them); the store names them as
Protocols because the engine package imports the store, so importing the engine here would
close an import cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from regio.persistence._engineparts import EngineParts

if TYPE_CHECKING:
    from regio.session._session import CompactionResult

    from .base import SessionStore, StoreMark
    from .lease import SessionLease

__all__ = ["CompactingEngine", "EngineLoader", "StoredEngine", "StoredT"]


class StoredEngine(EngineParts, Protocol):
    """An engine a store saves and loads: its parts (:class:`EngineParts`) and its place in a
    store (``store_mark``, ``None`` before its first save or load)."""

    store_mark: StoreMark | None


#: An engine class's instances: what ``cls(window=..., ...)`` builds in a store load.
StoredT = TypeVar("StoredT", bound=StoredEngine)


class CompactingEngine(Protocol):
    """An engine :func:`regio.persistence.store.compact_session` compacts and saves back
    (``Engine.compact``, ``Engine.save_to``)."""

    def compact(
        self,
        instructions: str | None = None,
        *,
        keep_tokens: int | None = None,
        keep_messages: int | None = None,
        keep_fraction: float | None = None,
    ) -> CompactionResult | None: ...

    def save_to(self, store: SessionStore, session_id: str, *, lease: SessionLease) -> int: ...


class EngineLoader(Protocol):
    """An engine class as :func:`regio.persistence.store.compact_session` uses it: its
    ``load_from(store, session_id, **keywords)`` (``Engine.load_from``)."""

    def load_from(
        self, store: SessionStore, session_id: str, **kwargs: Any
    ) -> CompactingEngine: ...
