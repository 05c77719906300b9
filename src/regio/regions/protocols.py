"""What the window's helper modules read of a :class:`regio.regions.Window`.

:class:`regio.regions.Window` forwards its compaction answers to :mod:`regio.regions.flush`,
its checklist calls to :mod:`regio.regions.todo` and its batches to :mod:`regio.regions.batch`.
Those modules work on the window through :class:`WindowSurface`, declared here below all three,
so none of them imports the window module back (the window imports them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from regio.content import (
    Block,
    Document,
    Entry,
    Image,
    ProviderBlock,
    Text,
    Thinking,
    ToolResult,
    ToolUse,
)
from regio.events import EventBus
from regio.regions.base import Refusal, Region, WriteResult
from regio.regions.pending import CompactionQueue
from regio.regions.state import WindowState

__all__ = ["Content", "EntryCounter", "WindowSurface", "content_blocks"]

_BLOCK_TYPES = (Text, ToolUse, ToolResult, Thinking, ProviderBlock, Image, Document)

#: What a write or a new entry is made from: text, one block or a sequence of blocks.
Content = str | Block | Sequence[Block]


def content_blocks(content: Content) -> tuple[Block, ...]:
    """The blocks of ``content``: text as one :class:`Text` block, one block as itself."""
    if isinstance(content, str):
        return (Text(content),)
    if isinstance(content, _BLOCK_TYPES):
        return (content,)
    return tuple(content)


class EntryCounter(Protocol):
    """What a window counts new entries with: ``count_entry(entry) -> int`` (tokens), which
    every :class:`regio.tokens.TokenCounter` has."""

    def count_entry(self, entry: Entry) -> int:
        """Tokens of ``entry``."""
        ...


class WindowSurface(Protocol):
    """The surface of :class:`regio.regions.Window` its helper modules use: the regions, the
    token counter (``count_entry``; ``None`` when entries carry their tokens), the event bus,
    the compaction queue, lookups, entries, writes and the lossless state."""

    counter: Any
    events: EventBus
    queue: CompactionQueue

    @property
    def regions(self) -> Sequence[Region]: ...

    def region(self, name: str | Region) -> Region:
        """The region called ``name`` (raises ``NoSuchRegionError``)."""
        ...

    def make_entry(
        self,
        content: Content,
        *,
        key: str | None = None,
        tokens: int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Entry:
        """An entry with a fresh id and the current turn."""
        ...

    def write(
        self, region: str | Region, content: Entry | Content, *, key: str | None = None
    ) -> WriteResult | Refusal:
        """Admit an entry into ``region``."""
        ...

    def snapshot_state(self) -> WindowState:
        """The window's lossless state."""
        ...

    def restore_state(self, state: WindowState) -> None:
        """Load ``state`` into this window."""
        ...

    @classmethod
    def from_state(
        cls,
        state: WindowState,
        *,
        counter: EntryCounter | None = None,
        allow_custom_hooks: bool = False,
    ) -> WindowSurface:
        """A new window rebuilt from ``state``."""
        ...
