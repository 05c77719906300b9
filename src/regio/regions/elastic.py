"""Budgets that bend (``docs/regions.md``, "Budgets"): a region's declared budget is the floor
it is guaranteed; an **elastic** region (the ``sliding_window`` kind's default) may hold
whatever its window has free beside the other regions and the tokens every request spends
outside them (:attr:`regio.regions.Window.reserved_tokens`), up to its ``cap``. So pressure is
the window's real fill: an elastic conversation compacts when the window nears full, not when
it passes a fixed share while the window has room.

:class:`Elastic` is the part of :class:`regio.regions.Region` that reads it:
:attr:`Elastic.budget` (what the region may hold now), :attr:`Elastic.floor_tokens`,
:attr:`Elastic.is_elastic`, :attr:`Elastic.cap_tokens`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from regio.errors import RegionConfigError
from regio.policies import Budget

__all__ = ["Elastic", "check_elastic"]


class Elastic:
    """What a region may hold (mixed into :class:`regio.regions.Region`, whose attrs fields
    these are)."""

    elastic_kind: ClassVar[bool] = False
    """The kind's default of ``elastic`` (the conversation's is ``True``)."""

    name: str
    budget_spec: Budget
    elastic: bool | None
    cap: int | str | None
    _window_tokens: int | None
    _window: Any

    @property
    def budget(self) -> int:
        """Tokens the region may hold now: its declared budget (:attr:`floor_tokens`); for an
        elastic region in a window, what that window has free for it
        (:meth:`regio.regions.Window.room_for`), never below the declared budget nor above
        :attr:`cap_tokens`."""
        floor = self.budget_spec.resolve(self._window_tokens)
        if self._window is None or not self.is_elastic:
            return floor
        room = int(self._window.room_for(self))
        cap = self.cap_tokens
        if cap is not None:
            room = min(room, cap)
        return max(floor, room)

    @property
    def floor_tokens(self) -> int:
        """The declared budget, resolved (tokens): the room the region is guaranteed."""
        return self.budget_spec.resolve(self._window_tokens)

    @property
    def is_elastic(self) -> bool:
        """True when the region may grow into what the window has free (``elastic``, else
        the kind's default)."""
        return self.elastic_kind if self.elastic is None else self.elastic

    @property
    def cap_tokens(self) -> int | None:
        """``cap`` in tokens (a share resolves against the window), ``None`` without a cap or
        a window to resolve a share against."""
        if self.cap is None:
            return None
        spec = Budget.of(self.cap)
        if spec.percent is not None and self._window_tokens is None:
            return None
        return spec.resolve(self._window_tokens)


def check_elastic(region: Elastic) -> None:
    """Raise :class:`RegionConfigError` for an ``elastic`` that is not a bool or a ``cap``
    that is neither tokens nor a share of the window."""
    if region.elastic is not None and not isinstance(region.elastic, bool):
        raise RegionConfigError(
            f"region {region.name!r}: elastic is true or false, got {region.elastic!r}"
        )
    if region.cap is not None:
        try:
            Budget.of(region.cap)
        except RegionConfigError as exc:
            raise RegionConfigError(
                f"region {region.name!r}: cap: {exc} (the most an elastic region may hold)"
            ) from None
