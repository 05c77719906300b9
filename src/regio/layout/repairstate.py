"""What the repair of the conversation projection carries (:mod:`regio.layout.repair` holds
the rules): the projected message (:class:`PMessage`), the repaired front of a conversation
(:class:`RepairFront`, with the calls whose progress reports it tracks, :class:`ProgressCall`),
one run after it (:class:`RepairRun`), and the bookkeeping that moves the front over a run
(:func:`advance`) and collects a whole repair's events (:func:`run_events`).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import msgspec

from regio.callids import CallIdBook
from regio.content import Block, Role, ToolResult

from .events import LayoutEvent, Repaired
from .model import Origin

__all__ = [
    "FROZEN",
    "BlockInfo",
    "PMessage",
    "ProgressCall",
    "RepairFront",
    "RepairRun",
    "StaleFront",
    "advance",
    "is_frozen",
    "run_events",
]

#: What the caller knows of a block: its tokens and the region it came from.
BlockInfo = tuple[int, str | None]


class PMessage(msgspec.Struct, frozen=True):
    """A projected message: ``role``, ``blocks``, ``source`` (entry id, ``note:<id>`` or
    ``synthetic:<reason>``: a label), ``separate`` (never merged into the previous message)
    and ``origin`` (where it comes from, :data:`regio.layout.model.Origin`)."""

    role: Role
    blocks: tuple[Block, ...]
    source: str = ""
    separate: bool = False
    origin: Origin = "entry"
    #: per block, ``(tokens, region)`` when the caller knows them (``None``: unknown; an empty
    #: tuple: unknown for every block). The repair carries them with their blocks.
    info: tuple[BlockInfo | None, ...] = ()

    def pairs(self) -> list[tuple[Block, BlockInfo | None]]:
        """``(block, info)`` for every block."""
        if len(self.info) == len(self.blocks):
            return list(zip(self.blocks, self.info, strict=True))
        return [(b, None) for b in self.blocks]

    def rebuilt(
        self, pairs: Sequence[tuple[Block, BlockInfo | None]], role: Role | None = None
    ) -> PMessage:
        """This message with other ``(block, info)`` pairs (and ``role``)."""
        infos = tuple(i for _, i in pairs)
        return PMessage(
            role or self.role,
            tuple(b for b, _ in pairs),
            self.source,
            self.separate,
            self.origin,
            infos if any(i is not None for i in infos) else (),
        )


#: Source prefix of frozen tail copies (:mod:`regio.layout.tail`): never merged with a
#: neighbour, and not a user turn (they do not close the open current-turn group).
FROZEN = "frozen:"


def is_frozen(m: PMessage) -> bool:
    """Whether ``m`` is a frozen tail copy (origin ``frozen``)."""
    return m.origin == "frozen"


@attrs.define(eq=False)
class ProgressCall:
    """A call of the front whose result may still be replaced (its latest result was a
    progress report, ``ToolResult(final=False)``, when it was committed): a later result
    changes only the call's ``tool`` message (its *shell*) and one place event, so the render
    log patches them instead of starting over.

    ``call_i``: cleaned index of the calling message; ``order``: the call's position among
    its calls; ``first``: the first call id of that message (the shell's source is
    ``pending:<first>`` or ``results:<first>``); ``ev_at``: index in the front's place events of
    its ``moved_results`` event (``has_ev``), or where it goes; ``committed``: the latest result
    in the front's inputs as ``(result, info, cleaned index, source)`` (``None`` after the
    render log removed it); ``shown``: the final result the front's shell holds (``None``: the
    shell holds :data:`RUNNING_RESULT`)."""

    call_i: int
    order: int
    first: str
    ev_at: int
    has_ev: bool
    committed: tuple[ToolResult, BlockInfo | None, int, str] | None = None
    shown: tuple[ToolResult, BlockInfo | None, int] | None = None


class StaleFront(Exception):
    """A result arrived for a call the repaired front took as missing: the front must be
    repaired again from the start (the caller resets its :class:`RepairFront`)."""


@attrs.define(eq=False)
class RepairFront:
    """What the repaired front of a conversation leaves for the messages after it.

    A front ends at a *watermark*: a point where every call made before it is answered before
    it or is decided missing (a user text follows it), so nothing after the point can change
    how the front is repaired — except a late result for a decided-missing call, which raises
    :class:`StaleFront`. Counters are message counts (inputs, cleaned messages, final merged
    messages); ``carry`` is the last merged message, which may still absorb the next one;
    the five event lists are the front's events per repair pass.
    """

    inputs: int = 0
    cleaned: int = 0
    merged: int = 0
    first_role: str | None = None
    calls: set[str] = attrs.field(factory=set)
    answered: set[str] = attrs.field(factory=set)
    missing: set[str] = attrs.field(factory=set)
    carry: PMessage | None = None
    ev_names: list[LayoutEvent] = attrs.field(factory=list)
    ev_dedup: list[LayoutEvent] = attrs.field(factory=list)
    ev_results: list[LayoutEvent] = attrs.field(factory=list)
    ev_place: list[LayoutEvent] = attrs.field(factory=list)
    ev_merge: list[LayoutEvent] = attrs.field(factory=list)
    progress: dict[str, ProgressCall] = attrs.field(factory=dict)
    #: the call ids of the front's inputs as :mod:`regio.callids` named them
    ids: CallIdBook = attrs.field(factory=CallIdBook)


@attrs.frozen
class RepairRun:
    """One :func:`repair_after` run: ``messages`` (the front's ``carry`` first, when there is
    one; without the conversation-start message), the events of this run per pass, and the
    bookkeeping :meth:`RepairFront` needs to advance over the run's inputs."""

    messages: list[PMessage]
    ev_names: list[LayoutEvent]
    ev_dedup: list[LayoutEvent]
    ev_results: list[LayoutEvent]
    ev_place: list[LayoutEvent]
    ev_merge: list[LayoutEvent]
    cleaned: int
    calls: list[str]
    answered: list[str]
    unanswered: list[str]
    #: the latest result in this run of each call of the front's ``progress`` (``(result,
    #: info, cleaned index, source)``), and the calls of this run whose latest result is a
    #: progress report (their :class:`ProgressCall`, place-event index within this run)
    late: dict[str, tuple[ToolResult, BlockInfo | None, int, str]] = attrs.field(factory=dict)
    progress: dict[str, ProgressCall] = attrs.field(factory=dict)
    #: the call ids this run named (a child of the front's book)
    ids: CallIdBook = attrs.field(factory=CallIdBook)


def advance(front: RepairFront, run: RepairRun, inputs: int) -> list[PMessage]:
    """Move ``front`` over the ``inputs`` messages ``run`` repaired (they must end at a
    watermark); returns the messages that became final (all of ``run.messages`` but the last,
    which is the new ``carry``)."""
    front.inputs += inputs
    front.cleaned += run.cleaned
    front.calls.update(run.calls)
    front.ids.absorb(run.ids)
    front.answered.update(run.answered)
    front.missing.update(run.unanswered)
    for cid, late in run.late.items():
        if late[0].is_final:
            del front.progress[cid]  # answered: a later result starts over (StaleFront)
        else:
            front.progress[cid].committed = late
    for cid, pc in run.progress.items():
        pc.ev_at += len(front.ev_place)
        front.progress[cid] = pc
    front.ev_names.extend(run.ev_names)
    front.ev_dedup.extend(run.ev_dedup)
    front.ev_results.extend(run.ev_results)
    front.ev_place.extend(run.ev_place)
    front.ev_merge.extend(run.ev_merge)
    if not run.messages:
        return []
    if front.first_role is None:
        front.first_role = run.messages[0].role
    final = run.messages[:-1]
    front.merged += len(final)
    front.carry = run.messages[-1]
    return final


def run_events(front: RepairFront, run: RepairRun) -> list[LayoutEvent]:
    """The events of a whole repair: the front's and the run's, pass by pass, then the
    conversation-start insertion when the conversation starts with the assistant."""
    events: list[LayoutEvent] = [
        *front.ev_names,
        *run.ev_names,
        *front.ev_dedup,
        *run.ev_dedup,
        *front.ev_results,
        *run.ev_results,
        *front.ev_place,
        *run.ev_place,
        *front.ev_merge,
        *run.ev_merge,
    ]
    first = front.first_role or (run.messages[0].role if run.messages else None)
    if first == "assistant":
        events.append(Repaired("conversation_start", "", 0))
    return events
