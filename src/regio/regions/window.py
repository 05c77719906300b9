"""The :class:`Window`: all regions of one agent, the total budget and the reclaim cascade.

Constructor (keyword-only)::

    Window(regions: list[Region], max_tokens: int, counter: TokenCounter | None = None,
           high_water: float = 0.9)

``reserved_tokens`` (not a constructor argument, never saved): tokens of ``max_tokens`` every
request spends outside the regions (tool schemas, chat framing, the calibration margin); an
engine sets it, and an elastic region's room (:meth:`Window.room_for`) leaves it free.

``counter`` is anything with ``count_entry(entry) -> int`` (see :mod:`regio.tokens`); without
one, :meth:`Window.make_entry` needs ``tokens=``. Load-time check: the floors of the
regions that never shrink (``pinned``, ``keyed``, ``checklist``, ``compact_history`` and every
``reject`` region) must fit the window, else :class:`WindowConfigError` with the numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import msgspec

from regio.content import Entry, Message, ToolUse
from regio.errors import (
    NoSuchRegionError,
    RegionConfigError,
    SystemRoleError,
    WindowConfigError,
    WindowStateError,
)
from regio.events import EventBus, transactional
from regio.policies import is_user_turn_start
from regio.regions import batch, flush, removal, todo
from regio.regions.base import Refusal, Region, WritePlan, WriteResult
from regio.regions.indexes.calls import CallIndex, CallRecord
from regio.regions.indexes.results import ResultIndex
from regio.regions.pending import CompactionQueue, PendingCompaction
from regio.regions.protocols import Content, EntryCounter, content_blocks
from regio.regions.registry import make_region
from regio.regions.state import FinishGate, RegionState, WindowState
from regio.regions.superseded import ProgressIndex, admit_superseding, drop_superseded_progress
from regio.regions.windowchecks import check_floors, pair_histories

__all__ = ["Window"]


@attrs.define(eq=False, kw_only=True)
class Window:
    """All regions of one agent (attrs). Every decision is an event on ``events``."""

    regions: list[Region]
    max_tokens: int
    counter: Any = None
    high_water: float = 0.9
    events: EventBus = attrs.field(factory=EventBus)
    queue: CompactionQueue = attrs.field(factory=CompactionQueue, repr=False)
    turn: int = 0
    next_entry: int = 1
    #: tokens of ``max_tokens`` spent outside the regions by every request (module doc)
    reserved_tokens: int = attrs.field(default=0, init=False)
    #: call id -> group and ``tool_use`` block of every call still in the window (saved as
    #: the call -> group map; the blocks are found again in the entries on load)
    calls: CallIndex = attrs.field(factory=CallIndex, init=False, repr=False)
    _by_name: dict[str, Region] = attrs.field(factory=dict, init=False, repr=False)
    #: per conversation region, the calls with progress reports (never saved; rebuilt on load)
    _progress: dict[str, ProgressIndex] = attrs.field(factory=dict, init=False, repr=False)
    #: per conversation region, the entries mentioning each call (never saved; rebuilt on use)
    _results: dict[str, ResultIndex] = attrs.field(factory=dict, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if self.max_tokens < 1:
            raise WindowConfigError(f"window max_tokens must be >= 1, got {self.max_tokens}")
        if not 0 < self.high_water <= 1:
            raise WindowConfigError(f"window high_water must be in (0, 1], got {self.high_water}")
        for r in self.regions:
            if r.name in self._by_name:
                raise WindowConfigError(f"two regions are named {r.name!r}; names must be unique")
            self._by_name[r.name] = r
            r.bind(self.max_tokens, self.events, self.queue, self)
        pair_histories(self.regions, self._by_name)
        check_floors(self.regions, self.max_tokens)

    # ----- lookup -------------------------------------------------------------------------
    def region(self, name: str | Region) -> Region:
        """The region called ``name``; :class:`NoSuchRegionError` (a ``KeyError``) naming the
        known regions."""
        if isinstance(name, Region):
            return name
        try:
            return self._by_name[name]
        except KeyError:
            raise NoSuchRegionError(
                f"no region {name!r}; regions: {', '.join(self._by_name)}"
            ) from None

    @property
    def conversation(self) -> Region | None:
        """The first ``sliding_window`` region, or None."""
        return next((r for r in self.regions if r.is_conversation), None)

    @property
    def used_tokens(self) -> int:
        """Sum of the regions' used tokens."""
        return sum(r.used_tokens for r in self.regions)

    def room_for(self, region: Region) -> int:
        """Tokens ``region`` may hold beside what the other regions hold now and
        :attr:`reserved_tokens` (an elastic region's room, :attr:`Region.budget`)."""
        others = sum(r.used_tokens for r in self.regions if r.name != region.name)
        return self.max_tokens - self.reserved_tokens - others

    @property
    def high_water_tokens(self) -> int:
        """``high_water * max_tokens`` (tokens); reclaim runs above it."""
        return int(self.high_water * self.max_tokens)

    # ----- tool calls ---------------------------------------------------------------------
    @property
    def call_groups(self) -> Mapping[str, str]:
        """Call id -> group (``g:<id>``) of the calls recorded (a read-only view of
        :attr:`calls`; it may hold calls whose entries just left: see :meth:`call_group`)."""
        return self.calls.groups

    def call_group(self, call_id: str) -> str | None:
        """The group (``g:<id>``) of the assistant message that made tool call ``call_id``
        while an entry of that group is still in the window; None for a call never made or
        whose entries have left (evicted, compacted, released, cleared)."""
        record = self._call_record(call_id)
        return record.group if record is not None else None

    def tool_call(self, call_id: str) -> ToolUse | None:
        """The ``tool_use`` block of call ``call_id`` while its group is in the window (see
        :meth:`call_group`), else None. A lookup, not a scan of the entries."""
        record = self._call_record(call_id)
        return record.tool_use if record is not None else None

    def _call_record(self, call_id: str) -> CallRecord | None:
        if call_id not in self.calls.records:
            return None
        self.calls.prune(self.regions)
        return self.calls.records.get(call_id)

    def progress_index(self, region: str | Region) -> ProgressIndex:
        """The :class:`ProgressIndex` of ``region`` (which entries hold progress reports of
        which calls), brought up to date with its entries."""
        r = self.region(region)
        index = self._progress.get(r.name)
        if index is None:
            index = self._progress[r.name] = ProgressIndex()
        index.sync(r)
        return index

    def result_index(self, region: str | Region) -> ResultIndex:
        """The :class:`ResultIndex` of ``region``: which entries hold each call's results,
        brought up to date when asked (:meth:`ResultIndex.newest_result`)."""
        r = self.region(region)
        index = self._results.get(r.name)
        if index is None:
            index = self._results[r.name] = ResultIndex()
        return index

    # ----- entries ------------------------------------------------------------------------
    def make_entry(
        self,
        content: Content,
        *,
        role: str | None = None,
        key: str | None = None,
        tokens: int | None = None,
        meta: dict[str, Any] | None = None,
        group: str | None = None,
    ) -> Entry:
        """Build an entry with a fresh id (``e<n>``) and the current turn; counts it once with
        ``counter.count_entry`` unless ``tokens`` is given. Raises :class:`RegionConfigError`
        without either."""
        entry = Entry(
            id=f"e{self.next_entry}",
            blocks=content_blocks(content),
            role=role,  # type: ignore[arg-type]
            key=key,
            tokens=0,
            turn=self.turn,
            group=group,
            meta=dict(meta or {}),
        )
        if tokens is None:
            if self.counter is None:
                raise RegionConfigError(
                    "Window has no token counter: pass counter= to Window or tokens= to make_entry"
                )
            tokens = int(self.counter.count_entry(entry))
        self.next_entry += 1
        return msgspec.structs.replace(entry, tokens=tokens)

    @transactional
    def write(
        self,
        region: str | Region,
        content: Entry | Content,
        *,
        key: str | None = None,
        role: str | None = None,
        tokens: int | None = None,
        strict: bool = False,
    ) -> WriteResult | Refusal:
        """Admit an entry (or content made into one) into ``region``.

        Returns :class:`WriteResult` or a :class:`Refusal` (nothing changed); with ``strict`` a
        refusal raises :class:`regio.errors.RegionFullError`. After the write, reclaim runs when
        the window passes its high-water mark. A write the window cannot make room for (even
        after reclaiming every ``clearable`` and ``temporary`` token) is refused with reason
        ``window_full``.
        """
        r = self.region(region)
        entry = (
            content
            if isinstance(content, Entry)
            else self.make_entry(content, role=role, key=key, tokens=tokens)
        )
        return self.write_plan(r, entry, self.plan_write(r, entry), strict=strict)

    @transactional
    def write_plan(
        self,
        region: str | Region,
        entry: Entry,
        plan: WritePlan | Refusal,
        *,
        strict: bool = False,
    ) -> WriteResult | Refusal:
        """Carry out ``plan``, what :meth:`plan_write` of ``entry`` into ``region`` returned on
        the window as it is now: commit a :class:`WritePlan` and run reclaim (never taking
        ``entry``), or emit a :class:`Refusal` and return it (raise
        :class:`regio.errors.RegionFullError` with ``strict``)."""
        r = self.region(region)
        if isinstance(plan, Refusal):
            r.emit_refusal(plan)
            if strict:
                raise plan.error()
            return plan
        result = r.commit(plan)
        self.reclaim(keep=entry.id)
        return result

    def plan_write(
        self, region: str | Region, entry: Entry, *, as_if: Region | None = None
    ) -> WritePlan | Refusal:
        """What :meth:`write` of ``entry`` into ``region`` would do (a dry run: no state
        changes, no event): the region's plan, or a :class:`Refusal` (reason ``window_full``
        too). ``as_if``: a planning copy of ``region`` holding edited entries
        (:meth:`regio.regions.SlidingWindow.planning_copy`): the plan ``region`` would make
        holding those (a window-level refusal counts the window's tokens as if, and lists what
        ``region`` can release). Raises :class:`SystemRoleError` for a system entry outside
        ``pinned``."""
        r = self.region(region)
        if entry.role == "system" and not r.holds_system:
            raise SystemRoleError(
                f"region {r.name!r} ({r.kind}) cannot hold a system-role entry; system "
                "instructions belong in a pinned region"
            )
        target = r if as_if is None else as_if
        plan = target.plan_write(entry)
        if isinstance(plan, WritePlan):
            delta = plan.delta_tokens(target)
            used = self.used_tokens - r.used_tokens + target.used_tokens
            over = used + delta - self.max_tokens
            if delta > 0 and over > 0 and over > removal.reclaimable(self, exclude=r):
                return r.refusal(entry, "window_full", window=(used, self.max_tokens))
        return plan

    append = write
    """Alias of :meth:`write` (the name used for ``grows`` regions)."""

    @transactional
    def write_many(
        self, region: str, items: Sequence[Any], *, strict: bool = False
    ) -> list[WriteResult] | Refusal:
        """Write ``(key, content)`` pairs into ``region`` all or nothing: one
        :class:`WriteResult` per item, or the first :class:`Refusal` with nothing changed and no
        event emitted (:func:`regio.regions.batch.write_many`)."""
        return batch.write_many(self, region, items, strict=strict)

    @transactional
    def add_message(
        self,
        message: Message,
        *,
        region: str | Region | None = None,
        tokens: int | None = None,
        strict: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> WriteResult | Refusal:
        """Append a message to the conversation region (or ``region``); ``meta``: the entry's
        annotations (``{"observation": True}``: an environment observation, ``Engine.add_user``).

        Group ids: an assistant message with calls opens ``g:<first call id>``; a message with
        results for known calls joins that group; any other message is
        ``m:<entry id>``. A user message that is not only tool results starts a new turn.
        Raises :class:`SystemRoleError` for a system message.
        """
        target = self.region(region) if region is not None else self.conversation
        if target is None:
            raise RegionConfigError("add_message needs a sliding_window region (or region=)")
        if message.role == "system":
            raise SystemRoleError(
                f"region {target.name!r} cannot hold a system message; put system instructions "
                "in a pinned region"
            )
        known = [g for g in (self.call_group(b.tool_use_id) for b in message.tool_results) if g]
        probe = Entry(id="", blocks=message.blocks, role=message.role)
        turn_start = is_user_turn_start(probe)
        if turn_start:
            self.turn += 1
        entry = self.make_entry(message.blocks, role=message.role, tokens=tokens, meta=meta)
        calls = message.tool_calls
        group = known[0] if known else (f"g:{calls[0].id}" if calls else f"m:{entry.id}")
        entry = msgspec.structs.replace(entry, group=group)
        result = admit_superseding(self, target, entry, strict=strict)
        if isinstance(result, WriteResult):
            drop_superseded_progress(target, entry, self.counter, self.progress_index(target))
            if calls and self.calls.outgrown():
                self.calls.prune(self.regions)  # calls whose results never came
            for c in calls:
                self.calls.add(c, group)
        elif turn_start:
            self.turn -= 1
        return result

    @transactional
    def release(
        self,
        region: str | Region,
        *,
        key: str | None = None,
        index: int | None = None,
        oldest: int | None = None,
    ) -> list[Entry]:
        """Release entries explicitly (see :meth:`Region.release`)."""
        return self.region(region).release(key=key, index=index, oldest=oldest)

    @transactional
    def clear(self, region: str | Region) -> list[Entry]:
        """Clear a region (protected units stay; see :meth:`Region.clear`)."""
        return self.region(region).clear()

    # ----- reclaim ------------------------------------------------------------------------
    @transactional
    def reclaim(self, *, keep: str | None = None) -> int:
        """Run the reclaim cascade (:func:`regio.regions.removal.reclaim`) if the window is
        above its high-water mark; returns tokens freed. ``keep``: an entry id never reclaimed
        (the one just written)."""
        return removal.reclaim(self, keep=keep)

    # ----- compaction queue ---------------------------------------------------------------
    def pending_compactions(self) -> list[PendingCompaction]:
        """The pending-compaction queue, oldest first (the single source of truth)."""
        return self.queue.all()

    @transactional
    def request_compaction(
        self,
        region: str | Region,
        *,
        reason: str = "manual",
    ) -> PendingCompaction | None:
        """Queue the compactable content of a region now (``Region.request_compaction``; None
        when nothing is compactable or one is already pending). Raises
        :class:`RegionConfigError` for a kind that cannot be compacted."""
        return self.region(region).request_compaction(reason=reason)

    @transactional
    def complete_compaction(
        self,
        pending_id: str,
        summary: Entry | str,
        *,
        tokens: int | None = None,
        supersedes: Sequence[str] = (),
    ) -> Entry:
        """Commit a summary for a pending compaction; ``supersedes`` names summaries of the
        target history it carries forward and replaces (see
        :func:`regio.regions.flush.complete_compaction`)."""
        return flush.complete_compaction(
            self, pending_id, summary, tokens=tokens, supersedes=supersedes
        )

    @transactional
    def refresh_compaction(self, pending_id: str) -> PendingCompaction | None:
        """Re-mark a queued compaction with its region's whole current compactable content,
        keeping its id and queue position; ``None`` when nothing is compactable (see
        :func:`regio.regions.flush.refresh_compaction`)."""
        return flush.refresh_compaction(self, pending_id)

    @transactional
    def narrow_compaction(self, pending_id: str, entry_ids: Sequence[str]) -> PendingCompaction:
        """Cut a queued compaction down to ``entry_ids`` (whole units), keeping its id and
        queue position (see :func:`regio.regions.flush.narrow_compaction`)."""
        return flush.narrow_compaction(self, pending_id, entry_ids)

    @transactional
    def fail_compaction(self, pending_id: str, reason: str, *, drop: bool = True) -> None:
        """Record a failed compaction (see :func:`regio.regions.flush.fail_compaction`)."""
        flush.fail_compaction(self, pending_id, reason, drop=drop)

    # ----- checklist ----------------------------------------------------------------------
    @transactional
    def todo_add(self, region: str | Region, text: str) -> WriteResult | Refusal:
        """Add an open item; the same text as an open item is a no-op (``unchanged``)."""
        return todo.todo_add(self, region, text)

    @transactional
    def todo_done(self, region: str | Region, item_id: str) -> WriteResult | Refusal:
        """Mark an item done (a no-op when it already is)."""
        return todo.todo_done(self, region, item_id)

    @transactional
    def todo_note(self, region: str | Region, item_id: str, note: str) -> WriteResult | Refusal:
        """Add a note to an item."""
        return todo.todo_note(self, region, item_id, note)

    def finish_gate(self) -> FinishGate:
        """Whether a gated checklist blocks finishing (the agent loop asks before stopping)."""
        return todo.finish_gate(self)

    # ----- state --------------------------------------------------------------------------
    def snapshot_state(self) -> WindowState:
        """Lossless state (msgspec; encode with ``msgspec.json.encode``); ``call_groups``
        holds the calls whose entries are still in the window."""
        self.calls.prune(self.regions)
        return WindowState(
            max_tokens=self.max_tokens,
            high_water=self.high_water,
            regions=[
                RegionState(
                    r.kind, r.name, r.options(), list(r.entries), r.version, r.state_extra()
                )
                for r in self.regions
            ],
            pending=self.queue.all(),
            next_entry=self.next_entry,
            next_pending=self.queue.next_seq,
            turn=self.turn,
            call_groups=dict(self.call_groups.items()),
        )

    @classmethod
    def from_state(
        cls,
        state: WindowState,
        *,
        counter: EntryCounter | None = None,
        allow_custom_hooks: bool = False,
    ) -> Window:
        """Rebuild a window from :meth:`snapshot_state` output (regions from their options)."""
        regions = [
            make_region(rs.kind, allow_custom_hooks=allow_custom_hooks, **rs.options)
            for rs in state.regions
        ]
        window = cls(
            regions=regions,
            max_tokens=state.max_tokens,
            counter=counter,
            high_water=state.high_water,
        )
        window.restore_state(state)
        return window

    def restore_state(self, state: WindowState) -> None:
        """Load ``state`` into this window (same region names and kinds, in order); raises
        :class:`WindowStateError` on a mismatch."""
        names = [(r.name, r.kind) for r in self.regions]
        saved = [(rs.name, rs.kind) for rs in state.regions]
        if names != saved:
            raise WindowStateError(f"saved regions {saved} do not match this window's {names}")
        for r, rs in zip(self.regions, state.regions, strict=True):
            r.load_state(list(rs.entries), rs.version, dict(rs.extra))
        self.queue.items = {p.id: p for p in state.pending}
        self.queue.next_seq = state.next_pending
        self.next_entry, self.turn = state.next_entry, state.turn
        self.calls.restore(state.call_groups, self.regions)
        self._progress, self._results = {}, {}  # rebuilt from the loaded entries
        for r in self.regions:
            if r.is_conversation:
                self.progress_index(r)
