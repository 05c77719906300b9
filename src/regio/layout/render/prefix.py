"""The rendered messages of the final conversation prefix, kept from one request to the next.

A session's render log keeps the rendered form of each final message (one unit per message,
:func:`regio.layout.render.common.rendered_units`), so a request renders only what is new; but
walking the window's messages one by one (regrouping its blocks, looking each unit up, copying
it, merging or placing its parts) still cost every request in proportion to the whole window.
A :class:`MessagePrefix` (one per renderer API, held by the session's
:class:`regio.layout.renderlog.RenderLog`) keeps the payload parts of the longest run of such
units at the start of the conversation, already merged into messages (Anthropic) or placed in
payload order (the OpenAI APIs, whose items are not merged: a Chat Completions message, a
Responses input item), with the conversation blocks they were rendered from. A request whose
conversation blocks start with those very block objects (compared by identity, a C-level
scan; blocks are immutable, and any change to one, its token share or its message number
included, is a new object) gets a fresh copy of those parts and renders only the blocks after
them; the units it finds final after them extend the prefix for the next request. Same
payload bytes as the walk: the same units, merged or placed by the same rule. The prefix also
carries how far the payload check got through its messages
(:class:`regio.layout.wellformed.CheckProgress`), so the check too reads only what follows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from regio.content import ToolUse

from ..model import LayoutBlock
from ..renderlog import RenderLog, same_prefix
from ..wellformed import CheckProgress
from .common import RenderedMessage, fresh_copy

__all__ = ["MessagePrefix", "Place", "message_prefix"]

_P = TypeVar("_P", bound=CheckProgress)

#: How a flat renderer places a unit's items after the items before them
#: (``place(unit, placed, held)``: append to ``placed``, or hold in ``held`` for later).
Place = Callable[[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]], None]


def _key(b: LayoutBlock) -> object:
    """What :func:`regio.layout.render.common.group_runs` groups blocks by."""
    return ("tail",) if b.level == "tail" else b.message


def _copier(value: dict[str, Any] | list[Any]) -> Callable[[Any], Any]:
    """The function that gives a copy of ``value`` (a container in a rendered block) fresh
    containers at every depth: ``dict.copy`` / ``list.copy`` when it holds no container
    (a tool call's arguments, mostly), else :func:`regio.layout.render.common.fresh_copy`."""
    items = value.values() if isinstance(value, dict) else value
    if any(isinstance(v, (dict, list)) for v in items):
        return fresh_copy
    return dict.copy if isinstance(value, dict) else list.copy


def _parts_of(unit: object) -> list[dict[str, Any]] | None:
    """``unit`` when it is a list of dicts (the only units kept), else ``None``."""
    if isinstance(unit, list) and all(type(d) is dict for d in unit):
        return unit
    return None


class MessagePrefix(Generic[_P]):
    """The rendered parts of a prefix of final conversation units (module doc) for one API:
    ``blocks`` (the conversation blocks they cover, the log's own objects, in order),
    ``parts`` (the rendered parts of the kept messages in payload order, the log's own objects:
    an Anthropic content block, a Chat Completions message, a Responses input item),
    ``bounds`` (Anthropic: per payload message its role and its parts' range; empty for the
    flat APIs, whose parts are the payload's items), ``held`` (items the renderer's placement
    rule holds back to place after later ones: Chat Completions tool media), ``deep`` (where
    a part holds a container: the part's index, its key and the function that copies it),
    ``calls`` (the kept blocks' calls that came as Responses items other than function calls,
    by id: a result regio made takes its call's output type); ``progress``: how far the
    payload check got through the kept messages (a
    :class:`regio.layout.wellformed.CheckProgress` made by ``new_progress``)."""

    __slots__ = ("blocks", "bounds", "calls", "deep", "held", "new_progress", "parts", "progress")

    def __init__(self, new_progress: Callable[[], _P]) -> None:
        self.new_progress = new_progress
        self.clear()

    def clear(self) -> None:
        """Keep nothing (the prefix is built again from the start)."""
        self.blocks: list[LayoutBlock] = []
        self.progress: _P = self.new_progress()
        self.parts: list[dict[str, Any]] = []
        self.bounds: list[tuple[str, int, int]] = []
        self.held: list[dict[str, Any]] = []
        self.deep: list[tuple[int, str, Callable[[Any], Any]]] = []
        self.calls: dict[str, ToolUse] = {}

    def covered(self, conv: Sequence[LayoutBlock]) -> int:
        """How many leading blocks of the conversation blocks ``conv`` the kept messages
        stand for: all the kept blocks when ``conv`` starts with those very objects and its
        next block starts a new message, else ``0`` (and the prefix is emptied, to be built
        again from the start)."""
        n = len(self.blocks)
        if not n:
            return 0
        same = same_prefix(conv, self.blocks)
        if same == n and (len(conv) == n or _key(conv[n]) != _key(conv[n - 1])):
            return n
        self.clear()
        return 0

    @property
    def whole(self) -> int:
        """How many leading payload messages of an Anthropic payload rendered with this prefix
        are kept messages as kept (all but the last: it may take the next run); no cache marker
        is on them (a unit with one is never kept)."""
        return max(0, len(self.bounds) - 1)

    @property
    def settled(self) -> int:
        """How many leading payload messages every payload rendered with this prefix shares,
        with the message after them (Anthropic: all but the last two kept messages); for the
        flat APIs every kept item (nothing merges into one, held items come after them, and
        their checks read no message after the one they check)."""
        if not self.bounds:  # a flat prefix (an Anthropic one without bounds keeps nothing)
            return len(self.parts)
        return max(0, len(self.bounds) - 2)

    def _copied_parts(self) -> list[dict[str, Any]]:
        """The kept parts with containers of their own (one ``dict.copy`` each, then the
        containers they hold): the payload shares none with the log."""
        parts = list(map(dict.copy, self.parts))
        for i, key, copy in self.deep:
            part = parts[i]
            part[key] = copy(part[key])
        return parts

    def copy(self) -> list[dict[str, Any]]:
        """The kept messages as Anthropic payload messages (``role``, ``content``) with
        containers of their own."""
        parts = self._copied_parts()
        return [{"role": role, "content": parts[a:b]} for role, a, b in self.bounds]

    def items(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The kept items of a flat API, placed and held (:attr:`held`), with containers of
        their own."""
        return self._copied_parts(), [fresh_copy(h) for h in self.held]

    def _keep(self, start: int) -> None:
        """Note the containers of the parts from ``start`` on."""
        for i in range(start, len(self.parts)):
            for key, value in self.parts[i].items():
                if isinstance(value, (dict, list)):
                    self.deep.append((i, key, _copier(value)))

    def add(self, message: RenderedMessage, role: str, unit: object) -> bool:
        """Keep ``message`` (the next run of blocks after the prefix), rendered as ``unit``
        (the log's own list of parts) in an Anthropic payload message of ``role``: merged into
        the last kept message when that has the same role and ``message`` is not ``separate``
        (the renderer's merge rule). Returns ``False``, keeping nothing, when ``unit`` is not
        a list of dicts (nothing else is kept)."""
        parts = _parts_of(unit)
        if parts is None:
            return False
        start = len(self.parts)
        self.parts.extend(parts)
        self._keep(start)
        self.blocks.extend(message.blocks)
        bounds = self.bounds
        if bounds and bounds[-1][0] == role and not message.separate:
            bounds[-1] = (role, bounds[-1][1], len(self.parts))
        else:
            bounds.append((role, start, len(self.parts)))
        return True

    def add_items(self, message: RenderedMessage, unit: object, place: Place | None = None) -> bool:
        """Keep ``message`` (the next run of blocks after the prefix) of a flat API, rendered
        as ``unit`` (the log's own list of items), placed by ``place`` (the renderer's rule;
        ``None``: appended). Returns ``False``, keeping nothing, when ``unit`` is not a list
        of dicts."""
        items = _parts_of(unit)
        if items is None:
            return False
        start = len(self.parts)
        if place is None:
            self.parts.extend(items)
        else:
            place(items, self.parts, self.held)
        self._keep(start)
        self.blocks.extend(message.blocks)
        return True


def message_prefix(log: RenderLog, api: str, new_progress: Callable[[], _P]) -> MessagePrefix[_P]:
    """The :class:`MessagePrefix` ``log`` keeps for ``api`` (created empty the first time, its
    check's progress made by ``new_progress``; the log forgets it when it resets)."""
    found = log.prefixes.get(api)
    if not isinstance(found, MessagePrefix):
        found = log.prefixes[api] = MessagePrefix(new_progress)
    return found
