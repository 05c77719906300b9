"""Typed events and the bus that delivers them.

Every decision the window, layout and runtime take is an :class:`Event`: a frozen msgspec Struct
with a ``kind`` tag (``"written"``, ``"refused"``, ``"evicted"``, ...). Subsystems define their
own event classes by subclassing :class:`Event` with a ``tag``; subscribers receive them in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs
import msgspec

__all__ = ["Event", "EventBus", "Subscriber"]


class Event(msgspec.Struct, frozen=True, tag_field="kind"):
    """Base of all events. Subclasses set ``tag="<kind>"`` and add their fields."""

    def to_dict(self) -> dict[str, Any]:
        """The event as a JSON-able dict including its ``kind``."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out

    @property
    def kind(self) -> str:
        """The event's tag, e.g. ``"evicted"``."""
        cfg = self.__struct_config__
        return str(cfg.tag)


Subscriber = Callable[[Event], None]


@attrs.define
class EventBus:
    """Delivers events to subscribers in emission order and keeps the most recent ones.

    ``history`` keeps the last ``keep`` events (default 1,000) for inspection and tests.
    A subscriber that raises does not stop delivery to the others; its exception is re-raised
    after all subscribers ran.
    """

    keep: int = 1000
    _subscribers: list[Subscriber] = attrs.field(factory=list)
    history: list[Event] = attrs.field(factory=list)

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Register ``callback``; returns a function that unsubscribes it."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Deliver ``event`` to every subscriber and record it."""
        self.history.append(event)
        if len(self.history) > self.keep:
            del self.history[: len(self.history) - self.keep]
        error: BaseException | None = None
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception as exc:  # deliver to the others first
                error = error or exc
        if error is not None:
            raise error

    def of_kind(self, kind: str) -> list[Event]:
        """Recorded events whose kind is ``kind``."""
        return [e for e in self.history if e.kind == kind]
