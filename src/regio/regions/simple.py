"""Simple kinds: ``pinned``, ``temporary``, ``clearable``.

Constructors (keyword-only; every kind also takes the :class:`Region` options)::

    Pinned(name=, budget=, volatility="rewritten", description="")
    Temporary(name=, budget=, admission="evict", ...)
    Clearable(name=, budget=, admission="evict", ...)
"""

from __future__ import annotations

import re
from typing import ClassVar

import attrs

from regio.callids import same_call
from regio.content import Entry
from regio.regions.base import ReclaimPhase, Refusal, Region, WritePlan

__all__ = [
    "PARKED_ADMITTED",
    "PARKED_CALL",
    "PARKED_STUB",
    "Clearable",
    "Pinned",
    "Temporary",
    "is_parked_stub",
    "parked_for",
    "parked_pointer",
]

#: ``Entry.meta`` key of an entry a ``park`` capture wrote (:class:`regio.capture.rules.ParkRule`):
#: the stub the conversation keeps in the output's place. The entry leaves its region when a
#: compaction summarizes the message holding its result, or relief clears that result
#: (:mod:`regio.compaction._parked`).
PARKED_STUB = "parked_stub"
#: ``Entry.meta`` key of a parked tool result's call id as the client sent it (absent for a
#: parked observation): the message that holds the output's result is the one holding that
#: call's result (its id as admitted, :func:`regio.callids.same_call`), whatever
#: relief made of its text.
PARKED_CALL = "parked_call"
#: ``Entry.meta`` key of a parked tool result's call id as the engine admitted it, when the
#: capture knew it (a live capture names each result as admission does): the output is that
#: call's, exactly. Without it (the bench's replay feeds several engines one stream) the
#: call is matched as sent (:func:`parked_for`).
PARKED_ADMITTED = "parked_admitted"

_POINTER = re.compile(r"\[\d+ tokens of output parked in region '[^\n]*'\]")


def parked_for(entry: Entry, call_id: str) -> bool:
    """Whether the parked ``entry`` is the output of the call the engine holds as
    ``call_id``: exactly its admitted id when it was recorded (:data:`PARKED_ADMITTED`), else
    a call its id as sent may have become on admission (:func:`regio.callids.same_call`: a
    doubt matches)."""
    admitted = entry.meta.get(PARKED_ADMITTED)
    if isinstance(admitted, str) and admitted:
        return call_id == admitted
    sent = entry.meta.get(PARKED_CALL)
    return isinstance(sent, str) and bool(sent) and same_call(call_id, sent)


def parked_pointer(tokens: int, region: str) -> str:
    """The last line of a park stub: where the output of ``tokens`` tokens went."""
    return f"[{tokens} tokens of output parked in region '{region}']"


def is_parked_stub(text: str) -> bool:
    """Whether ``text`` ends as a park stub does (:func:`parked_pointer`): a cheap test before
    a lookup of the output it stood for."""
    # the pointer is the whole last line (one match attempt, however long the output)
    return text.endswith("']") and _POINTER.fullmatch(text, text.rfind("\n") + 1) is not None


@attrs.define(eq=False, kw_only=True)
class Pinned(Region):
    """Task, identity, instructions. Never rolls off and is never reclaimed: a write that does
    not fit is refused (reason ``region_full``) with a message naming region, used and budget.
    The only region that may hold ``system``-role entries."""

    kind: ClassVar[str] = "pinned"
    never_shrinks_kind: ClassVar[bool] = True
    agent_releasable: ClassVar[bool] = False
    holds_system: ClassVar[bool] = True
    kind_rank: ClassVar[int] = 0

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        if self.used_tokens + entry.tokens > self.budget:
            return self.refusal(entry, "region_full")
        return WritePlan(entry)


@attrs.define(eq=False, kw_only=True)
class Temporary(Region):
    """Raw tool output, lookups (the default kind). Rolls off oldest units first; window
    reclaim phase 2 takes its oldest units, round-robin across temporary regions."""

    kind: ClassVar[str] = "temporary"
    reclaim_phase: ClassVar[ReclaimPhase | None] = ReclaimPhase.OLDEST
    agent_writable: ClassVar[bool] = True
    kind_rank: ClassVar[int] = 2


@attrs.define(eq=False, kw_only=True)
class Clearable(Region):
    """Scratch. Rolls off oldest units; ``clear()`` wipes it; window reclaim phase 1 wipes it
    whole."""

    kind: ClassVar[str] = "clearable"
    reclaim_phase: ClassVar[ReclaimPhase | None] = ReclaimPhase.WIPE
    agent_writable: ClassVar[bool] = True
    kind_rank: ClassVar[int] = 2
