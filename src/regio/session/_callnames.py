"""Call ids where the engine admits a message: the one rule of :mod:`regio.callids`, read
against the window.

``Engine.add_message`` (and everything built on it: ``add_tool_result``, ``add_response``,
streamed turns, the adapters) names a message's call ids before anything else reads them: an
id a provider refuses is mapped, a call whose id a call still in the window has (a backend
that numbers its calls ``call_0`` at every step, two calls of one message with one id) is
renamed ``<id>-<n>``, and a result follows: it answers the oldest call of the window made
with its id that has no final result yet (:func:`regio.callids.name_blocks`). Each change is
a :class:`regio.engine._history.HistoryRepaired` event (``id_mapped``, ``call_renamed``,
``result_renamed``; ``tool_use_id`` the id as sent, ``detail`` the id given, ``entry`` the
admitted entry), so the window never holds a call id twice and the request path never has to
choose between two calls.

The history the rule reads is the window's conversation: a call is in use while its group has
an entry in the window (``Window.call_group``), its answers are read from the window's result
index. Which id a renamed call was made with is kept in its entry's ``meta["call_ids"]``
(call id -> the id it was made with), so a loaded engine names exactly as the saved one would
have; :class:`CallNames` is the engine's index of those (session state, never saved, rebuilt
from the entries on first use after a load or a repair).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import attrs

from regio.callids import IdChange, name_blocks, provider_id
from regio.content import Entry, Message, ToolResult, ToolUse
from regio.regions import Region, Window
from regio.textrepair import UnencodableValueError, repair_value

__all__ = [
    "META_KEY",
    "CallNames",
    "WindowLedger",
    "answered_calls",
    "name_admitted",
    "name_message",
    "renamed_meta",
]

#: The entry meta key of the ids an assistant message's renamed calls were made with.
META_KEY = "call_ids"


@attrs.define(eq=False)
class CallNames:
    """The renamed calls of one engine's window: ``sent_as``, call id -> the id it was made
    with (renamed calls only); ``by_sent``, an id that was renamed -> every call made with
    it, in admission order (the one that kept the id too). Calls that left the window are
    pruned when their id is read (:meth:`prune`, from :class:`WindowLedger`)."""

    sent_as: dict[str, str] = attrs.field(factory=dict)
    by_sent: dict[str, list[str]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, entries: Sequence[Entry]) -> CallNames:
        """The index of ``entries`` (a conversation, oldest first), from their meta."""
        names = cls()
        for e in entries:
            for call_id, sent in (e.meta.get(META_KEY) or {}).items():
                if isinstance(call_id, str) and isinstance(sent, str):
                    names.sent_as[call_id] = sent
        renamed = set(names.sent_as.values())
        for e in entries:
            if e.role == "assistant":
                for b in e.blocks:
                    if isinstance(b, ToolUse):
                        sent = names.sent_as.get(b.id, b.id)
                        if sent in renamed:
                            names.by_sent.setdefault(sent, []).append(b.id)
        return names

    def prune(self, sent: str, in_use: Callable[[str], bool]) -> None:
        """Forget the calls made with ``sent`` that are no longer ``in_use`` (their groups left
        the window): a loaded engine's index never had them (:meth:`of` reads the window), and
        a backend that numbers every call ``call_0`` would otherwise make each admission scan
        the whole session's calls."""
        listed = self.by_sent.get(sent)
        if listed is None:
            return
        kept = [c for c in listed if in_use(c)]
        if len(kept) == len(listed):
            return
        for c in listed:
            if c not in kept and c != sent:
                self.sent_as.pop(c, None)
        if kept:
            self.by_sent[sent] = kept
        else:
            del self.by_sent[sent]

    def add(self, sent: str, call_id: str) -> None:
        """Record a call made with id ``sent`` that got ``call_id``."""
        if call_id != sent:
            self.sent_as[call_id] = sent
            self.by_sent.setdefault(sent, [sent]).append(call_id)
        elif sent in self.by_sent:
            self.by_sent[sent].append(call_id)


@attrs.define(eq=False)
class WindowLedger:
    """The :class:`regio.callids.CallLedger` of one admission: the calls of ``window``'s
    conversation ``conv`` (``names``: its renamed calls) and those of the message being
    admitted."""

    window: Window
    conv: Region
    names: CallNames
    _made: dict[str, str] = attrs.field(factory=dict)  # this message's calls -> made with
    _done: set[str] = attrs.field(factory=set)  # calls this message answers

    def in_use(self, call_id: str) -> bool:
        return call_id in self._made or self.window.call_group(call_id) is not None

    def made_with(self, sent: str) -> list[str]:
        """The calls made with ``sent`` still in use, oldest first (module doc of
        :mod:`regio.callids`), after the call whose id is ``sent`` when that one was renamed."""
        origin = self._made.get(sent) or self.names.sent_as.get(sent, sent)
        self.names.prune(sent, self.in_use)
        listed = [*self.names.by_sent.get(sent, (sent,))]
        listed += [c for c, s in self._made.items() if s == sent and c not in listed]
        made = [c for c in dict.fromkeys(reversed(listed)) if self.in_use(c)][::-1]
        if origin != sent and self.in_use(sent):
            made = [sent, *(c for c in made if c != sent)]
        return made

    def answered(self, call_id: str) -> bool:
        if call_id in self._done:
            return True
        if call_id in self._made:
            return False
        holder = self.window.result_index(self.conv).newest_result(self.conv.entries, call_id)
        if holder is None:
            return False
        last = [b for b in holder.blocks if isinstance(b, ToolResult) and b.tool_use_id == call_id]
        return bool(last) and last[-1].is_final

    def add_call(self, sent: str, call_id: str) -> None:
        self._made[call_id] = sent

    def add_result(self, call_id: str, final: bool) -> None:
        if final:
            self._done.add(call_id)

    def commit(self) -> None:
        """Record this message's calls in the engine's :class:`CallNames`."""
        for call_id, sent in self._made.items():
            self.names.add(sent, call_id)


def name_message(
    window: Window, conv: Region, names: CallNames, message: Message
) -> tuple[Message, list[IdChange], WindowLedger]:
    """``message`` with its call ids named against ``conv`` (module doc), the changes, and
    the ledger to :meth:`WindowLedger.commit` once the message is admitted."""
    ledger = WindowLedger(window, conv, names)
    blocks, changes = name_blocks(ledger, message.role, message.blocks)
    if not changes:
        return message, changes, ledger
    return Message(message.role, blocks), changes, ledger


class HoldsNames(Protocol):
    """What keeps an engine's :class:`CallNames` (its ``SessionState``)."""

    call_names: CallNames | None


def answered_calls(window: Window, state: HoldsNames, message: Message) -> list[ToolUse | None]:
    """The call of ``window``'s conversation each tool result of ``message`` answers, in
    order, as admission names it: the ids repaired as admission repairs them
    (:func:`regio.textrepair.repair_value`), then :func:`name_message` run dry (nothing is
    recorded in the window or the names); ``None`` for a result whose call is not in the
    window. ``state``: the engine's ``SessionState``, whose ``call_names`` index is built
    here when it has none (as admission builds it)."""
    conv = window.conversation
    results = sum(isinstance(b, ToolResult) for b in message.blocks)
    if conv is None:
        return [None] * results
    try:
        blocks, _ = repair_value(message.blocks, "blocks")
    except UnencodableValueError:  # admission refuses the message
        return [None] * results
    named, _, _ = name_admitted(window, conv, state, Message(message.role, blocks))
    return [window.tool_call(b.tool_use_id) for b in named.blocks if isinstance(b, ToolResult)]


def name_admitted(
    window: Window, conv: Region, state: HoldsNames, message: Message
) -> tuple[Message, list[IdChange], WindowLedger]:
    """:func:`name_message` against the engine's index of renamed calls (``state.call_names``,
    built from ``conv``'s entries on first use: after a load or a repair): what admission
    runs, and what :func:`answered_calls` runs dry (nothing recorded until the ledger's
    :meth:`WindowLedger.commit`)."""
    if state.call_names is None:
        state.call_names = CallNames.of(conv.entries)
    return name_message(window, conv, state.call_names, message)


def renamed_meta(meta: dict[str, Any] | None, changes: Sequence[IdChange]) -> dict[str, Any]:
    """``meta`` with :data:`META_KEY` naming the id each renamed call was made with (the
    mapped id of a call whose id was also mapped)."""
    made = {c.given: provider_id(c.sent) for c in changes if c.action == "call_renamed"}
    if not made:
        return dict(meta or {})
    return {**(meta or {}), META_KEY: made}
