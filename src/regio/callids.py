"""Tool call ids every provider accepts, and the one rule for an id used twice.

Every place regio takes a tool call id in applies this module: the engine where a message is
admitted (:mod:`regio.session._callnames`), the render-time repair of every request
(:mod:`regio.layout.repair`), the repair of a stored history
(:func:`regio.engine._history.repair_history`, ``Engine.repair``, ``regio repair``) and the
trace importers (:mod:`regio.traces.builder`). The rule, block by block in history order:

1. **Syntax.** An id must match ``^[a-zA-Z0-9_-]{1,40}$``: Anthropic refuses a ``tool_use`` id
   or ``tool_use_id`` outside ``^[a-zA-Z0-9_-]+$`` (HTTP 400 "String should match pattern"),
   OpenAI Chat Completions one longer than 40 characters (HTTP 400
   ``string_above_max_length``). Any other id (``functions.Bash:0``, ``c.1:x``, a 53-character
   Responses item id) is mapped by :func:`provider_id`: the characters outside the set become
   ``_``, the text is cut to 31 characters and ``-`` plus 8 hex digits of the sha256 of the
   original id are appended. The map is a pure function, so a call and its results map to the
   same id wherever they are read, and two different ids never meet (``c.1`` and ``c:1``
   differ in their digests).
2. **Reuse.** A call whose (mapped) id is already the id of a call of the history (a backend
   that numbers its calls ``call_0`` at every step; two calls of one message with the same id;
   a tau-bench replay) is renamed ``<id>-<n>`` (:func:`renamed_id`, the smallest ``n`` whose
   id is free), so neither call loses its result to the other.
3. **Results follow.** A result answers the oldest call made with its id (the call whose id it
   is, then the calls renamed from that id, in order) that has no final result yet; when every
   such call has one, the newest (a later result of the same call); when there is none, the
   result keeps its (mapped) id (an orphan, which the repairs drop).

:func:`name_blocks` applies the rule to one message's blocks against a :class:`CallLedger`:
the history before the message. :class:`CallIdBook` is the ledger of a history read in order
(the repairs, the importers); the engine's ledger reads its window. Each change is an
:class:`IdChange`: ``id_mapped`` (rule 1), ``call_renamed`` (rule 2), ``result_renamed``
(rule 3), with the id as sent and the id given.

This module imports only :mod:`regio.content`, so every layer can use it without an import
cycle.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Protocol

import attrs
import msgspec

from regio.content import Block, Role, ToolResult, ToolUse

__all__ = [
    "ID_ACTIONS",
    "ID_PATTERN",
    "MAX_ID_CHARS",
    "CallIdBook",
    "CallLedger",
    "IdChange",
    "id_problem",
    "name_blocks",
    "provider_id",
    "renamed_id",
    "same_call",
]

#: Longest id OpenAI Chat Completions accepts (``tool_calls[].id``, ``tool_call_id``).
MAX_ID_CHARS = 40

#: What every provider accepts as a tool call id: Anthropic's ``^[a-zA-Z0-9_-]+$``, at most
#: :data:`MAX_ID_CHARS` characters (OpenAI).
ID_PATTERN = re.compile(rf"[a-zA-Z0-9_-]{{1,{MAX_ID_CHARS}}}")

#: The actions of an :class:`IdChange`.
ID_ACTIONS = frozenset({"id_mapped", "call_renamed", "result_renamed"})

_OUTSIDE = re.compile(r"[^a-zA-Z0-9_-]")
_DIGEST_CHARS = 8


def id_problem(value: object, max_chars: int | None = MAX_ID_CHARS) -> str | None:
    """Why ``value`` is not a tool call id every provider accepts (``None``: it is one):
    not text, empty, longer than ``max_chars`` (``None``: no limit, Anthropic's rule alone) or
    with a character outside ``[a-zA-Z0-9_-]``."""
    if not isinstance(value, str):
        return f"a call id is text, got {type(value).__name__}"
    if not value:
        return "the call id is empty"
    if max_chars is not None and len(value) > max_chars:
        return f"the call id has {len(value)} characters, over OpenAI's {max_chars}"
    if _OUTSIDE.search(value) is not None:
        return f"the call id {value!r} has characters outside Anthropic's ^[a-zA-Z0-9_-]+$"
    return None


def provider_id(raw: str) -> str:
    """``raw`` when every provider accepts it (:data:`ID_PATTERN`), else its deterministic
    map (module doc, rule 1): at most :data:`MAX_ID_CHARS` characters of ``[a-zA-Z0-9_-]``."""
    if ID_PATTERN.fullmatch(raw) is not None:
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]
    stem = _OUTSIDE.sub("_", raw)[: MAX_ID_CHARS - _DIGEST_CHARS - 1] or "id"
    return f"{stem}-{digest}"


def renamed_id(base: str, n: int) -> str:
    """The ``n``-th new name of call id ``base`` (a valid id): ``<base>-<n>``, ``base`` cut so
    the whole stays within :data:`MAX_ID_CHARS` characters."""
    suffix = f"-{n}"
    return base[: MAX_ID_CHARS - len(suffix)] + suffix


def same_call(admitted: str, sent: str) -> bool:
    """Whether the call id ``admitted`` (as a history holds it after this module's rule) may be
    the one a client sent as ``sent``: rule 1 maps it (:func:`provider_id`), rule 2 renames a
    reused one to ``<id>-<n>`` (:func:`renamed_id`). A renamed id also matches the original
    call's, so a caller that must not lose what a call holds reads a match as a doubt that
    keeps it."""
    base = provider_id(sent)
    if admitted == base:
        return True
    stem, _, n = admitted.rpartition("-")
    return bool(stem) and n.isdigit() and base.startswith(stem)


@attrs.frozen
class IdChange:
    """One change :func:`name_blocks` made: ``action`` (``id_mapped``, ``call_renamed``,
    ``result_renamed``), ``block`` (its index in the message), ``sent`` (the id as given) and
    ``given`` (the id it has now)."""

    action: str
    block: int
    sent: str
    given: str


class CallLedger(Protocol):
    """The history before a message, as the rule reads it (module doc)."""

    def in_use(self, call_id: str) -> bool:
        """Whether a call of the history has id ``call_id``."""
        ...

    def made_with(self, sent: str) -> Sequence[str]:
        """The ids of the calls made with id ``sent``, oldest first: the call whose id is
        ``sent`` (when it was renamed from another id), then those renamed from ``sent``."""
        ...

    def answered(self, call_id: str) -> bool:
        """Whether call ``call_id`` has a final result."""
        ...

    def add_call(self, sent: str, call_id: str) -> None:
        """Record a call made with id ``sent`` that got id ``call_id``."""
        ...

    def add_result(self, call_id: str, final: bool) -> None:
        """Record a result of call ``call_id`` (``final``: not a progress report)."""
        ...


def _fresh(ledger: CallLedger, base: str) -> str:
    n = 1
    while ledger.in_use(renamed_id(base, n)):
        n += 1
    return renamed_id(base, n)


def name_blocks(
    ledger: CallLedger, role: Role | str, blocks: Sequence[Block]
) -> tuple[tuple[Block, ...], list[IdChange]]:
    """``blocks`` of a message of ``role`` with the rule applied (module doc), recorded in
    ``ledger``, and the changes made. The blocks are returned as given (the same tuple) when
    nothing changed. A call in a message that is not the assistant's is left as it is (no
    provider takes it; the repairs drop it)."""
    out: list[Block] | None = None
    changes: list[IdChange] = []
    for i, b in enumerate(blocks):
        new: Block = b
        if isinstance(b, ToolUse) and role == "assistant":
            base = provider_id(b.id)
            given = _fresh(ledger, base) if ledger.in_use(base) else base
            ledger.add_call(base, given)
            if given != b.id:
                action = "id_mapped" if given == base else "call_renamed"
                changes.append(IdChange(action, i, b.id, given))
                new = msgspec.structs.replace(b, id=given)
        elif isinstance(b, ToolResult):
            base = provider_id(b.tool_use_id)
            made = ledger.made_with(base)
            if len(made) < 2:  # the common case: no reading of answers
                target = made[0] if made else base
            else:
                target = next((c for c in made if not ledger.answered(c)), made[-1])
            ledger.add_result(target, b.is_final)
            if target != b.tool_use_id:
                action = "id_mapped" if target == base else "result_renamed"
                changes.append(IdChange(action, i, b.tool_use_id, target))
                new = msgspec.structs.replace(b, tool_use_id=target)
        if new is not b:
            out = list(blocks) if out is None else out
            out[i] = new
    return (tuple(blocks) if out is None else tuple(out)), changes


@attrs.define(eq=False)
class CallIdBook:
    """The :class:`CallLedger` of a history read in order, message by message: ``sent_as``,
    call id -> the id it was made with; ``by_sent``, id made with -> the call ids, oldest
    first; ``done``, the calls with a final result. A book made with ``parent`` reads the
    parent's history first and records only its own (a run over the messages after a
    repaired front; :meth:`absorb` moves them into the parent)."""

    parent: CallIdBook | None = None
    sent_as: dict[str, str] = attrs.field(factory=dict)
    by_sent: dict[str, list[str]] = attrs.field(factory=dict)
    done: set[str] = attrs.field(factory=set)

    def child(self) -> CallIdBook:
        """A book over this one (its changes stay its own until :meth:`absorb`)."""
        return CallIdBook(self)

    def _sent(self, call_id: str) -> str | None:
        book: CallIdBook | None = self
        while book is not None:
            found = book.sent_as.get(call_id)
            if found is not None:
                return found
            book = book.parent
        return None

    def in_use(self, call_id: str) -> bool:
        return self._sent(call_id) is not None

    def made_with(self, sent: str) -> list[str]:
        chain: list[CallIdBook] = []
        book: CallIdBook | None = self
        while book is not None:
            chain.append(book)
            book = book.parent
        made = [c for b in reversed(chain) for c in b.by_sent.get(sent, ())]
        origin = self._sent(sent)
        if origin is not None and origin != sent:
            made.insert(0, sent)
        return made

    def answered(self, call_id: str) -> bool:
        book: CallIdBook | None = self
        while book is not None:
            if call_id in book.done:
                return True
            book = book.parent
        return False

    def add_call(self, sent: str, call_id: str) -> None:
        self.sent_as[call_id] = sent
        self.by_sent.setdefault(sent, []).append(call_id)

    def add_result(self, call_id: str, final: bool) -> None:
        if final and self.in_use(call_id):
            self.done.add(call_id)

    def absorb(self, child: CallIdBook) -> None:
        """Take ``child``'s records (a book made with :meth:`child` of this one)."""
        self.sent_as.update(child.sent_as)
        for sent, calls in child.by_sent.items():
            self.by_sent.setdefault(sent, []).extend(calls)
        self.done |= child.done
