"""Saving and loading an engine: the calls :class:`regio.engine.Engine` inherits from
:class:`SavedEngine`, each forwarded to :mod:`regio.persistence`.

* :meth:`SavedEngine.save` / :meth:`SavedEngine.load` -- a whole engine in one state file
  (:mod:`regio.persistence._statefile`, :mod:`regio.persistence._load`);
* :meth:`SavedEngine.save_to` / :meth:`SavedEngine.load_from` -- incrementally, by session id,
  into a session store (:mod:`regio.persistence.store`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from regio.session._usage import PriceLookup, rule_prices
from regio.tokens import TokenCounter

if TYPE_CHECKING:
    from regio.blueprint import Blueprint
    from regio.persistence.store.base import SessionStore

    # the parts a save writes and a load sets, as persistence names them (a protocol: the
    # engine's own classes stay out of persistence); a base for the type checker only
    from regio.persistence.store.engines import StoredEngine as _EngineParts
    from regio.persistence.store.lease import SessionLease
    from regio.summarizers._protocol import SummaryFn
else:
    _EngineParts = object

__all__ = ["SavedEngine"]

E = TypeVar("E", bound="SavedEngine")


class SavedEngine(_EngineParts):
    """The engine's save and load calls (module doc)."""

    def save(self, path: str | Path) -> Path:
        """Save the whole engine state atomically (JSON, or msgpack for ``.msgpack`` /
        ``.mpk``); returns the path."""
        from regio.persistence._statefile import save_engine

        return save_engine(self, path)

    def save_to(
        self,
        store: SessionStore,
        session_id: str | None = None,
        *,
        lease: SessionLease | None = None,
        create: bool = False,
    ) -> int:
        """Save incrementally into a :class:`regio.persistence.store.SessionStore` as ``session_id``
        (default the ``session_id`` option): the records since the last load or save, plus the
        window. ``lease``: this writer's :class:`regio.persistence.store.SessionLease`; ``create``:
        write the whole engine as a new session (a :class:`regio.persistence.store.SessionLostError`
        asks for it). Returns the stored version. Raises
        :class:`regio.persistence.store.SessionStoreError` (nothing written; its subclasses say why)
        and :class:`ValueError` without a session id."""
        from regio.persistence.store import save_session

        sid = session_id or self.options.session_id
        if not sid:
            raise ValueError("save_to needs a session_id (or the session_id engine option)")
        return save_session(self, store, sid, lease=lease, create=create).version

    @classmethod
    def load_from(cls: type[E], store: SessionStore, session_id: str, **kwargs: Any) -> E:
        """Restore ``session_id`` from a :class:`regio.persistence.store.SessionStore` (keywords as
        :meth:`load`). Raises :class:`regio.persistence.store.SessionNotFoundError`."""
        from regio.persistence.store import load_session

        kwargs.setdefault("prices", rule_prices)
        engine: E = load_session(cls, store, session_id, **kwargs)
        return engine

    @classmethod
    def load(
        cls: type[E],
        path: str | Path,
        *,
        summarizer: SummaryFn | None = None,
        token_counter: TokenCounter | None = None,
        allow_custom_hooks: bool = False,
        clock: Callable[[], float] | None = None,
        prices: PriceLookup | None = None,
        blueprint: str | Path | Blueprint | None = None,
    ) -> E:
        """Restore an engine saved with :meth:`save` (pending compactions, layout state,
        calibration, transcript and ledger included). Custom hooks come only from
        ``blueprint``, the blueprint the engine was created with (its hash is checked). Raises
        :class:`regio.errors.RuntimeStateError` for a file that is not an engine
        state."""
        from regio.persistence._load import load_engine

        engine: E = load_engine(
            cls,
            path,
            summarizer=summarizer,
            token_counter=token_counter,
            allow_custom_hooks=allow_custom_hooks,
            clock=clock,
            prices=prices or rule_prices,
            blueprint=blueprint,
        )
        return engine
