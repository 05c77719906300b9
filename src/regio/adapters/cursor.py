"""Which of a framework's messages the engine already holds, kept in the engine's session.

A framework adapter sees the framework's own message history on every model call (LangChain's
agent state, pydantic-ai's run messages) and appends to the engine only what is new. Where it
stopped is an :class:`regio.session._state.AdapterCursor` in ``engine.state.adapters`` (saved and
loaded with the engine, in a file or a session store), never in the adapter object: an agent
server that loads the engine per request and builds a new adapter each time continues where
the last request stopped, and the model never gets the history twice.

The rule (:func:`first_new`), first match:

1. the message at ``position - 1`` has the cursor's ``digest``: what follows it is new;
2. the newest message with that digest marks the end of what was admitted (a history rewritten
   by another middleware);
3. a second anchor (``earlier``: where the cursor stood before, newest first) is at its
   place, with at least one message after it: what follows it is new. The history left out
   the message the cursor stopped at: ADK leaves a model call that never got its response out
   of the contents it builds (a run that stopped between the two), and a run resumed from the
   ``message_history`` saved before a stopped run ends before the stopped run's messages. An
   anchor with nothing after it is not taken: every model call follows something new, so that
   history is another run that happens to start the same way;
4. every message is new (a run without a checkpointer or ``message_history``: its messages are
   all the engine has not seen).

Adapters mark the cursor after each message they admit (:func:`mark`), so a message the
engine refused leaves the cursor on the last one it took, and nothing is admitted twice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from regio.session._state import ANCHOR_CHARS, EARLIER_ANCHORS, AdapterCursor

if TYPE_CHECKING:
    from regio.engine import Engine

__all__ = ["canonical_digest", "cursor", "first_new", "mark"]

#: One framework message (a LangChain ``BaseMessage``, a pydantic-ai ``ModelMessage``, ...).
M = TypeVar("M")


def canonical_digest(value: object) -> str:
    """sha256 (hex) of ``value`` as canonical JSON (sorted keys, no whitespace; values JSON
    cannot hold are written by ``str``)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cursor(engine: Engine, key: str) -> AdapterCursor:
    """The cursor of adapter ``key`` in ``engine``'s session (created at 0 when missing)."""
    found = engine.state.adapters.get(key)
    if not isinstance(found, AdapterCursor):
        found = engine.state.adapters[key] = AdapterCursor()
    return found


def first_new(engine: Engine, key: str, messages: Sequence[M], digest: Callable[[M], str]) -> int:
    """Index of the first message of ``messages`` the engine does not hold yet (module doc).
    ``digest`` is the adapter's canonical digest of one framework message."""
    at = cursor(engine, key)
    if at.position <= 0 or not at.digest:
        return 0
    seen: dict[int, str] = {}

    def digest_at(index: int) -> str:
        if index not in seen:
            seen[index] = digest(messages[index])
        return seen[index]

    end = at.position
    if end <= len(messages) and digest_at(end - 1) == at.digest:
        return end
    for index in range(min(end, len(messages)) - 1, -1, -1):
        if digest_at(index) == at.digest:
            return index + 1
    for position, short in at.earlier:
        if 0 < position < len(messages) and digest_at(position - 1)[:ANCHOR_CHARS] == short:
            return position
    return 0


def mark(engine: Engine, key: str, position: int, last: str, *, rebase: bool = False) -> None:
    """Record that the first ``position`` framework messages are in the engine, the last of
    them with digest ``last``; the mark before becomes a second anchor (module doc), and
    anchors at or past ``position`` go. ``rebase``: the history was replaced from here on (a
    history processor's window is the run's history now), so every earlier anchor stays,
    wherever it is: a run resumed from a history saved before the replacement ends at one."""
    at = cursor(engine, key)
    if (position, last) != (at.position, at.digest):
        before = [(at.position, at.digest[:ANCHOR_CHARS]), *at.earlier] if at.digest else at.earlier
        kept = [(p, d) for p, d in before if p > 0 and (rebase or p < position)]
        at.earlier = kept[:EARLIER_ANCHORS]
    at.position = position
    at.digest = last
