"""What the layout reads from regions and the window (the names fixed in docs/architecture.md).

The layout depends only on these attributes, so any object with them (the real
:class:`regio.regions.Region` / ``Window``, or a test double) can be laid out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Container, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from regio.content import Block, Entry

if TYPE_CHECKING:
    from .model import LayoutBlock
    from .repair import PMessage, RepairFront

__all__ = ["RegionLike", "RenderLogSurface", "WindowLike", "count_text"]


@runtime_checkable
class RegionLike(Protocol):
    """A region as the layout sees it."""

    name: str
    volatility: str
    description: str
    version: int

    @property
    def kind(self) -> str:
        """The kind's name (a class attribute of each :class:`regio.regions.Region` kind)."""
        ...

    @property
    def entries(self) -> Sequence[Entry]: ...

    @property
    def used_tokens(self) -> int: ...

    @property
    def is_conversation(self) -> bool: ...

    def content_hash(self) -> str: ...

    def render_text(self) -> str: ...


@runtime_checkable
class WindowLike(Protocol):
    """A window as the layout sees it: regions in declaration order and the budget (tokens)."""

    @property
    def regions(self) -> Sequence[RegionLike]: ...

    @property
    def max_tokens(self) -> int: ...


def count_text(window: object, text: str) -> int:
    """Tokens of ``text`` with the window's counter (``window.counter.count``) when it has one,
    else the 4-characters-per-token estimate (rounded up)."""
    counter = getattr(window, "counter", None)
    count = getattr(counter, "count", None)
    if callable(count):
        return int(count(text))
    return math.ceil(len(text) / 4)


class RenderLogSurface(Protocol):
    """What this module reads and edits of the session's :class:`regio.layout.RenderLog`
    (declared here: the render log imports this module): the consumed entries and their
    index, the extras by entry id, the repair front, the laid-out message blocks with their
    running token sums and prefix hashes, the count of final messages, the rendered forms by
    API and message, the entries rewritten without reports, and how it lays messages out."""

    root: str | None
    entries: list[Entry]
    entry_index: dict[str, int]
    front: RepairFront
    blocks: list[LayoutBlock]
    cum: list[int]
    hashes: set[str]
    messages: int
    rendered: dict[str, dict[int, tuple[LayoutBlock, Any, Callable[[Any], Any]]]]
    slimmed: list[tuple[Entry, Entry]]

    @property
    def extras(self) -> Container[str | None]: ...

    def _layout_blocks(
        self,
        messages: Sequence[PMessage],
        first_index: int,
        h: str,
        count_block: Callable[[Block], int],
    ) -> list[LayoutBlock]: ...
