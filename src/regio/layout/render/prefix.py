"""The rendered messages of the final conversation prefix, kept from one request to the next.

A session's render log keeps the rendered form of each final message (one unit per message,
:func:`regio.layout.render.common.rendered_units`), so a request renders only what is new; but
walking the window's messages one by one (regrouping its blocks, looking each unit up, copying
it, merging messages of one role) still cost every request in proportion to the whole window.
A :class:`MessagePrefix` (one per renderer API, held by the session's
:class:`regio.layout.renderlog.RenderLog`) keeps the payload messages of the longest run of
such units at the start of the conversation, already merged, with the conversation blocks they
were rendered from. A request whose conversation blocks start with those very block objects
(compared by identity, a C-level scan; blocks are immutable, and any change to one, its token
share or its message number included, is a new object) gets a fresh copy of those messages
and renders only the blocks after them; the units it finds final after them extend the prefix
for the next request. Same payload bytes as the walk: the same units, merged by the same rule.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..model import LayoutBlock
from ..renderlog import RenderLog, same_prefix
from ..wellformed import AnthropicProgress
from .common import RenderedMessage, fresh_copy

__all__ = ["MessagePrefix", "message_prefix"]


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


class MessagePrefix:
    """The rendered messages of a prefix of final conversation units (module doc) for one
    API: ``blocks`` (the conversation blocks they cover, the log's own objects, in order),
    ``parts`` (the rendered parts of the kept messages in order, the log's own objects: an
    Anthropic content block, a Chat Completions message, ...), ``bounds`` (per payload message
    its role and its parts' range) and ``deep`` (where a part holds a container: the part's
    index, its key and the function that copies it); ``progress``: how far the payload check
    got through the kept messages (:class:`regio.layout.wellformed.AnthropicProgress`; all
    but the last kept message are settled: the next run may merge into it)."""

    __slots__ = ("blocks", "bounds", "deep", "parts", "progress")

    def __init__(self) -> None:
        self.blocks: list[LayoutBlock] = []
        self.progress = AnthropicProgress()
        self.parts: list[dict[str, Any]] = []
        self.bounds: list[tuple[str, int, int]] = []
        self.deep: list[tuple[int, str, Callable[[Any], Any]]] = []

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
        self.__init__()  # type: ignore[misc]
        return 0

    @property
    def whole(self) -> int:
        """How many leading payload messages of a payload rendered with this prefix are kept
        messages as kept (all but the last: it may take the next run); no cache marker is on
        them (a unit with one is never kept)."""
        return max(0, len(self.bounds) - 1)

    @property
    def settled(self) -> int:
        """How many leading payload messages every payload rendered with this prefix shares,
        with the message after them."""
        return max(0, len(self.bounds) - 2)

    def copy(self) -> list[dict[str, Any]]:
        """The kept messages as payload messages (``role``, ``content``) with containers of
        their own (the payload shares none with the log): the parts are copied with one
        ``dict.copy`` each, then the containers they hold."""
        parts = list(map(dict.copy, self.parts))
        for i, key, copy in self.deep:
            part = parts[i]
            part[key] = copy(part[key])
        return [{"role": role, "content": parts[a:b]} for role, a, b in self.bounds]

    def add(self, message: RenderedMessage, role: str, unit: list[dict[str, Any]]) -> bool:
        """Keep ``message`` (the next run of blocks after the prefix), rendered as ``unit``
        (the log's own list of parts) in a payload message of ``role``: merged into the last
        kept message when that has the same role and ``message`` is not ``separate`` (the
        renderer's merge rule). Returns ``False``, keeping nothing, when ``unit`` is not a
        list of dicts (nothing else is kept)."""
        if not (isinstance(unit, list) and all(type(d) is dict for d in unit)):
            return False
        start = len(self.parts)
        for part in unit:
            for key, value in part.items():
                if isinstance(value, (dict, list)):
                    self.deep.append((len(self.parts), key, _copier(value)))
            self.parts.append(part)
        self.blocks.extend(message.blocks)
        bounds = self.bounds
        if bounds and bounds[-1][0] == role and not message.separate:
            bounds[-1] = (role, bounds[-1][1], len(self.parts))
        else:
            bounds.append((role, start, len(self.parts)))
        return True


def message_prefix(log: RenderLog, api: str) -> MessagePrefix:
    """The :class:`MessagePrefix` ``log`` keeps for ``api`` (created empty the first time; the
    log forgets it when it resets)."""
    found = log.prefixes.get(api)
    if not isinstance(found, MessagePrefix):
        found = log.prefixes[api] = MessagePrefix()
    return found
