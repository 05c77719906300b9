"""Which of a framework's messages the engine already holds, kept in the engine's session.

A framework adapter sees the framework's own message history on every model call (LangChain's
agent state, pydantic-ai's run messages) and appends to the engine only what is new. Where it
stopped is an :class:`regio.runtime.state.AdapterCursor` in ``engine.state.adapters`` (saved and
loaded with the engine, in a file or a session store), never in the adapter object: an agent
server that loads the engine per request and builds a new adapter each time continues where
the last request stopped, and the model never gets the history twice.

The rule (:func:`first_new`): the message at ``position - 1`` must have the cursor's
``digest``; if it has not (a history rewritten by another middleware, or a run that does not
carry the earlier turns) the newest message with that digest marks the end of what was
admitted; when none has it, every message is new (a run without a checkpointer or
``message_history``: its messages are all the engine has not seen).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from regio.runtime.state import AdapterCursor

__all__ = ["canonical_digest", "cursor", "first_new", "mark"]


def canonical_digest(value: Any) -> str:
    """sha256 (hex) of ``value`` as canonical JSON (sorted keys, no whitespace; values JSON
    cannot hold are written by ``str``)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cursor(engine: Any, key: str) -> AdapterCursor:
    """The cursor of adapter ``key`` in ``engine``'s session (created at 0 when missing)."""
    found = engine.state.adapters.get(key)
    if not isinstance(found, AdapterCursor):
        found = engine.state.adapters[key] = AdapterCursor()
    return found


def first_new(engine: Any, key: str, messages: Sequence[Any], digest: Callable[[Any], str]) -> int:
    """Index of the first message of ``messages`` the engine does not hold yet (module doc).
    ``digest`` is the adapter's canonical digest of one framework message."""
    at = cursor(engine, key)
    if at.position <= 0 or not at.digest:
        return 0
    end = at.position
    if end <= len(messages) and digest(messages[end - 1]) == at.digest:
        return end
    for index in range(min(end, len(messages)) - 1, -1, -1):
        if digest(messages[index]) == at.digest:
            return index + 1
    return 0


def mark(engine: Any, key: str, position: int, last: str) -> None:
    """Record that the first ``position`` framework messages are in the engine, the last of
    them with digest ``last``."""
    at = cursor(engine, key)
    at.position = position
    at.digest = last
