"""Typed events and the bus that delivers them.

Every decision the window, layout and runtime take is an :class:`Event`: a frozen msgspec Struct
with a ``kind`` tag (``"written"``, ``"refused"``, ``"evicted"``, ...). Subsystems define their
own event classes by subclassing :class:`Event` with a ``tag``; subscribers receive them in order.

Changes are transactions (:meth:`EventBus.transaction`): events emitted inside one are recorded
at once (``history``) but delivered to subscribers only when the outermost transaction ends, so
a subscriber always sees a committed state and can never interrupt a change half-way. A
subscriber that raises does not stop delivery to the others; after every event was delivered
the errors are raised together as :class:`regio.errors.SubscriberError` (the change stands).
When the transaction itself raised, its events are still delivered and its own exception
propagates (subscriber errors are added to it as a note).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import attrs
import msgspec

from regio.errors import SubscriberError

__all__ = ["Event", "EventBus", "Subscriber", "atransactional", "transactional"]


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
    Inside :meth:`transaction` delivery waits for the commit (module doc). Raises
    :class:`regio.errors.SubscriberError` after delivery when subscribers raised.
    """

    keep: int = 1000
    _subscribers: list[Subscriber] = attrs.field(factory=list)
    history: list[Event] = attrs.field(factory=list)
    _depth: int = attrs.field(default=0, init=False, repr=False)
    _deferred: list[Event] = attrs.field(factory=list, init=False, repr=False)

    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Register ``callback``; returns a function that unsubscribes it."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def emit(self, event: Event) -> None:
        """Record ``event`` and deliver it to every subscriber (at the end of the open
        transaction, if any)."""
        self.history.append(event)
        if len(self.history) > self.keep:
            del self.history[: len(self.history) - self.keep]
        if self._depth:
            self._deferred.append(event)
        else:
            self._deliver([event])

    @property
    def in_transaction(self) -> bool:
        """True while a transaction is open (delivery is deferred)."""
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Defer delivery of the events emitted inside until the outermost transaction ends
        (module doc). Nested transactions join the outer one."""
        self._depth += 1
        try:
            yield
        except BaseException as exc:
            self._depth -= 1
            if not self._depth:
                try:
                    self._deliver(self._take())
                except SubscriberError as sub:
                    exc.add_note(f"while delivering its events: {sub}")
            raise
        self._depth -= 1
        if not self._depth:
            self._deliver(self._take())

    def _take(self) -> list[Event]:
        events, self._deferred = self._deferred, []
        return events

    def _deliver(self, events: list[Event]) -> None:
        errors: list[tuple[Event, BaseException]] = []
        for event in events:
            for callback in list(self._subscribers):
                try:
                    callback(event)
                except Exception as exc:  # deliver to the others first
                    errors.append((event, exc))
        if errors:
            raise SubscriberError(tuple(errors)) from errors[0][1]

    def of_kind(self, kind: str) -> list[Event]:
        """Recorded events whose kind is ``kind``."""
        return [e for e in self.history if e.kind == kind]


class _HasBus(Protocol):
    @property
    def events(self) -> EventBus: ...


P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound=_HasBus)


def transactional(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """Run the method ``fn`` inside one :meth:`EventBus.transaction` of ``self.events``."""

    @functools.wraps(fn)
    def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.events.transaction():
            return fn(self, *args, **kwargs)

    return wrapper


def atransactional(
    fn: Callable[Concatenate[S, P], Awaitable[R]],
) -> Callable[Concatenate[S, P], Awaitable[R]]:
    """:func:`transactional` for an async method."""

    @functools.wraps(fn)
    async def wrapper(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.events.transaction():
            return await fn(self, *args, **kwargs)

    return wrapper
