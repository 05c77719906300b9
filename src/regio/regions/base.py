"""The :class:`Region` base, write results and refusals.

Public constructor surface (keyword-only, shared by every kind)::

    Region(name: str, budget: int | str | Budget | dict, volatility="rewritten",
           admission="evict", description="", max_entry_tokens: int | None = None,
           min_tokens: int | None = None, max_tokens: int | None = None,
           elastic: bool | None = None, cap: int | str | None = None, replacing_writer="")

``min_tokens`` / ``max_tokens`` clamp the budget (the floor wins). **Budgets bend**: the
declared budget is the floor a region is guaranteed; an elastic region (``elastic=True``, the
``sliding_window`` kind's default) may hold what the window has free, up to ``cap`` (tokens or
a share of the window), so :attr:`Region.budget` moves with the window's real fill
(:mod:`regio.regions.elastic`). ``replacing_writer``: see :mod:`regio.blueprint.writers` (the
layout puts such a region in the tail). Writes go through
``plan_write(entry) -> WritePlan | Refusal`` (pure: nothing changes) and ``commit(plan) ->
WriteResult``; :meth:`Region.write` does both. The window inserts a window-level check between
the two, so a refused write never changes anything.
"""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar, Protocol

import attrs
import msgspec

from regio.content import Entry
from regio.errors import (
    RegionConfigError,
    SystemRoleError,
)
from regio.events import EventBus, transactional
from regio.policies import (
    ADMISSIONS,
    VOLATILITIES,
    Budget,
    HistoryCounts,
    ReclaimPhase,
    UnitAnalysis,
)
from regio.regions import entrylist, rolloff
from regio.regions import events as ev
from regio.regions.elastic import Elastic, check_elastic
from regio.regions.entrylist import EntryList, EntryMark, as_entry_list, entry_mark
from regio.regions.pending import CompactionQueue, PendingCompaction
from regio.regions.removal import Removing
from regio.regions.results import Refusal, Refusing, Releasable, WritePlan, WriteResult
from regio.regions.unitmemo import UnitMemo, units_of

__all__ = [
    "ReclaimPhase",
    "Refusal",
    "Region",
    "Releasable",
    "WritePlan",
    "WriteResult",
    "declared_kinds",
]

#: Kind name -> class, filled as kind classes are defined (``Region.__init_subclass__``).
_DECLARED: dict[str, type[Region]] = {}


#: Options :meth:`Region.options` leaves out while unset (``None``): a state is then the one
#: saved before they existed.
_UNSET_OMITTED = frozenset({"elastic", "cap", "keep_at_least"})


def declared_kinds() -> dict[str, type[Region]]:
    """Every region kind defined so far: kind name -> class (a copy)."""
    return dict(_DECLARED)


class BoundWindow(Protocol):
    """What a region reads of the :class:`regio.regions.Window` it is bound to
    (:meth:`Region.bind`): the room an elastic region may hold (``room_for``, tokens), the
    high-water mark (a share of ``max_tokens``), the tokens reserved outside the regions and
    held by all of them, and the other regions by name."""

    @property
    def high_water(self) -> float: ...

    @property
    def reserved_tokens(self) -> int: ...

    @property
    def used_tokens(self) -> int: ...

    def region(self, name: str | Region) -> Region: ...

    def room_for(self, region: Region) -> int: ...


def _coerce_budget(value: int | str | Budget | dict[str, Any]) -> Budget:
    return Budget.coerce(value)


@attrs.define(eq=False, kw_only=True)
class Region(Elastic, Refusing, Removing):
    """Base of all region kinds (attrs, mutable). See docs/architecture.md ``regio.regions``.

    ``budget`` reads the resolved budget in tokens (a percent budget resolves once the region
    is in a :class:`regio.regions.Window`); ``budget_spec`` is the declared :class:`Budget`.
    """

    kind: ClassVar[str] = "region"
    """The kind's name in blueprints, states and events."""
    never_shrinks_kind: ClassVar[bool] = False
    """Kinds whose content the window can never reclaim (their floor counts at load time)."""
    reclaim_phase: ClassVar[ReclaimPhase | None] = None
    """The reclaim phase that takes tokens from this kind; ``None``: never reclaimed."""
    agent_writable: ClassVar[bool] = False
    """The agent may write it with ``context_write`` / ``context_append``."""
    agent_releasable: ClassVar[bool] = True
    """The agent may release from it with ``context_delete``."""
    holds_system: ClassVar[bool] = False
    """It may hold ``system``-role entries (only ``pinned``)."""
    kind_rank: ClassVar[int] = 1
    """Order in the ``kind`` comparison layout's system prompt (lower first; ties keep the
    blueprint's order)."""
    renders_itself: ClassVar[bool] = False
    """Its text comes from its own render hook: the layout places it as one section and never
    settles or chunks its entries."""
    holds_summaries: ClassVar[bool] = False
    """It holds compaction summaries (the layout may open the conversation with them)."""
    compaction_order: ClassVar[int | None] = None
    """Order in which compaction shrinks this kind when it is paired with a
    ``compact_history`` (lower first: working notes before the conversation); ``None``: it
    never is a compaction source."""
    summarizes_before_rolloff: ClassVar[bool] = False
    """A write that does not fit first summarizes the oldest units (paired, ``evict``), so
    nothing rolls off unsummarized."""
    elastic_kind: ClassVar[bool] = False
    """The kind's default of ``elastic`` (the conversation's is ``True``)."""

    name: str = attrs.field()
    budget_spec: Budget = attrs.field(alias="budget", converter=_coerce_budget)
    volatility: str = attrs.field(default="rewritten", validator=attrs.validators.in_(VOLATILITIES))
    admission: str = attrs.field(default="evict", validator=attrs.validators.in_(ADMISSIONS))
    description: str = ""
    #: ``render_text`` opens with ``## <description or name>``; ``False``: the entries' bytes
    #: only (a region that holds the agent's own system prompt sends it as the agent wrote it)
    heading: bool = True
    max_entry_tokens: int | None = None
    min_tokens: int | None = None
    max_tokens: int | None = None
    #: may grow into what the window has free, up to ``cap`` (``None``: the kind's default,
    #: :attr:`elastic_kind`); the budget stays the floor it is guaranteed
    elastic: bool | None = None
    #: the most an elastic region may hold: tokens, or a share of the window (``"80%"``);
    #: ``None``: the whole window (ignored when the region is not elastic)
    cap: int | str | None = None
    replacing_writer: str = ""  # ``""``: none known (module doc)

    #: an :class:`EntryList` (assigning any list converts it): its ``rewrite_epoch`` tells the
    #: layout caches whether the entries were only appended to since they last looked
    entries: list[Entry] = attrs.field(factory=EntryList, init=False, converter=as_entry_list)
    version: int = attrs.field(default=0, init=False)
    events: EventBus = attrs.field(factory=EventBus, init=False, repr=False)
    queue: CompactionQueue = attrs.field(factory=CompactionQueue, init=False, repr=False)
    compact_target: str | None = attrs.field(default=None, init=False)
    """Name of the paired ``compact_history`` (set by the window)."""
    _window_tokens: int | None = attrs.field(default=None, init=False, repr=False)
    #: the window it belongs to (an elastic region's room is what that window has free)
    _window: BoundWindow | None = attrs.field(default=None, init=False, repr=False, eq=False)
    _used: int = attrs.field(default=0, init=False, repr=False)
    _hash: str | None = attrs.field(default=None, init=False, repr=False)
    _counts: tuple[EntryMark | None, HistoryCounts] | None = attrs.field(
        default=None, init=False, repr=False
    )
    settle_memo: tuple[Any, ...] | None = attrs.field(default=None, init=False, repr=False)
    #: the unit structure of the entries as last read (:mod:`regio.regions.unitmemo`; never
    #: saved)
    _units: UnitMemo | None = attrs.field(default=None, init=False, repr=False)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Declare the subclass's kind (a class that sets ``kind``); the attrs class that
        replaces it under the same name is the one kept."""
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:
            _DECLARED[cls.kind] = cls

    def __attrs_post_init__(self) -> None:
        if self.min_tokens is not None or self.max_tokens is not None:
            self.budget_spec = Budget.of(
                self.budget_spec,
                min_tokens=self.min_tokens
                if self.min_tokens is not None
                else self.budget_spec.min_tokens,
                max_tokens=self.max_tokens
                if self.max_tokens is not None
                else self.budget_spec.max_tokens,
            )
        if not self.name or not isinstance(self.name, str):
            raise RegionConfigError(f"region name must be a non-empty string, got {self.name!r}")
        if self.max_entry_tokens is not None and self.max_entry_tokens < 1:
            raise RegionConfigError(
                f"region {self.name!r}: max_entry_tokens must be >= 1, got {self.max_entry_tokens}"
            )
        check_elastic(self)

    # ----- read-only surface used by other layers -------------------------------------------
    @property
    def used_tokens(self) -> int:
        """Sum of entry tokens (kept incrementally)."""
        return self._used

    @property
    def is_conversation(self) -> bool:
        """True for ``sliding_window`` (entries are messages with roles)."""
        return False

    @property
    def trigger_tokens(self) -> int | None:
        """Token count at which the region queues its own compaction (``None``: it never
        does)."""
        return None

    @property
    def needs_history(self) -> bool:
        """True when the region queues compactions, so it needs a paired ``compact_history``."""
        return False

    def fallback_point(self) -> int | None:
        """Item count past which a failed compaction falls back to bulk eviction (``None``: no
        such fallback is declared)."""
        return None

    def overflow_ids(self, tokens_to_free: int) -> list[str]:
        """Entry ids the kind gives up in the reclaim phase ``HOOK`` (default: none)."""
        del tokens_to_free
        return []

    def request_compaction(self, *, reason: str = "manual") -> PendingCompaction | None:
        """Queue the region's compactable content (``None`` when nothing is compactable or one
        is already pending). Raises :class:`RegionConfigError` for a kind that cannot be
        compacted."""
        raise RegionConfigError(f"region {self.name!r} ({self.kind}) cannot be compacted")

    @property
    def never_shrinks(self) -> bool:
        """True when window reclaim can never take tokens from this region."""
        return self.never_shrinks_kind or self.admission == "reject"

    def content_hash(self) -> str:
        """sha256 (hex) over the entry digests, in order."""
        if self._hash is None:
            h = hashlib.sha256()
            for e in self.entries:
                h.update(e.digest.encode())
            self._hash = h.hexdigest()
        return self._hash

    def render_entry(self, entry: Entry) -> str:
        """Text of one entry inside :meth:`render_text`."""
        return entry.text

    def render_text(self) -> str:
        """The region as placed in a system prompt: ``## <description or name>`` (unless
        ``heading`` is false) + entries, one per line."""
        lines = [f"## {self.description or self.name}"] if self.heading else []
        lines.extend(self.render_entry(e) for e in self.entries)
        return "\n".join(lines)

    def pending(self) -> list[PendingCompaction]:
        """Pending compactions of this region (read from the queue, the single source)."""
        return self.queue.for_region(self.name)

    def bind(
        self,
        window_tokens: int | None,
        events: EventBus,
        queue: CompactionQueue,
        window: BoundWindow | None = None,
    ) -> None:
        """Attach to a window: resolve percent budgets, share its event bus and queue;
        ``window`` (a :class:`regio.regions.Window`) sizes an elastic region's room."""
        self._window_tokens = window_tokens
        self.events = events
        self.queue = queue
        self._window = window

    # ----- writes ----------------------------------------------------------------------------
    def write(self, entry: Entry, *, strict: bool = False) -> WriteResult | Refusal:
        """Admit ``entry`` (plan + commit). With ``strict`` a refusal raises
        :class:`RegionFullError` instead of being returned. Raises :class:`SystemRoleError`
        for a ``system`` entry outside ``pinned``."""
        plan = self.plan_write(entry)
        if isinstance(plan, Refusal):
            self.emit_refusal(plan)
            if strict:
                raise plan.error()
            return plan
        return self.commit(plan)

    def plan_write(self, entry: Entry) -> WritePlan | Refusal:
        """Decide what writing ``entry`` would do, changing nothing."""
        if entry.role == "system" and not self.holds_system:
            raise SystemRoleError(
                f"region {self.name!r} ({self.kind}) cannot hold a system-role entry; system "
                "instructions belong in a pinned region"
            )
        if self.max_entry_tokens is not None and entry.tokens > self.max_entry_tokens:
            return self.refusal(entry, "entry_limit")
        if entry.tokens > self.budget:
            return self.refusal(entry, "too_large")
        return self._plan(entry)

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        """Kind-specific planning (default: roll off oldest units under ``evict``)."""
        return self.plan_rolloff(entry)

    def plan_rolloff(self, entry: Entry, **options: Any) -> WritePlan | Refusal:
        """Plan appending ``entry``, removing the fewest units of the removal order
        (:mod:`regio.policies.units`) so the region fits its token budget -- or, with
        ``token_goal`` (tokens, token hysteresis), so it keeps at most ``token_goal`` tokens
        (the entry included), in one step -- and at least the units outside the history window
        ``history`` (soft: the current turn and open groups always stay, event
        ``region_over_budget``). The entry being written (and the unit it joins) is never
        removed. Refuses under ``reject`` when anything would have to go, or when only
        protected units could make room. ``options``: ``history`` (:class:`HistoryCaps`),
        ``fallback``, ``item_reason``, ``token_goal`` (see
        :func:`regio.regions.rolloff.plan_rolloff`)."""
        return rolloff.plan_rolloff(self, entry, **options)

    def history_counts(self) -> HistoryCounts:
        """:class:`HistoryCounts` of the current entries, kept incrementally: appends since the
        last call are counted in O(appended); any other change recounts (O(entries))."""
        ents = self.entries
        cached = self._counts
        start = entrylist.appended_since(ents, cached[0]) if cached is not None else None
        if cached is None or start is None:
            counts, start = HistoryCounts(), 0
        elif start == len(ents):
            return cached[1]  # unchanged since the last call: the mark still holds
        else:
            counts = cached[1]
        for e in ents[start:]:
            counts = counts.extend(e)
        self._counts = (entry_mark(ents), counts)
        return counts

    @transactional
    def commit(self, plan: WritePlan) -> WriteResult:
        """Apply a plan from :meth:`plan_write` and emit its events."""
        entry = plan.entry
        if plan.unchanged:
            existing = self.entries[plan.replace_index] if plan.replace_index is not None else entry
            self.events.emit(ev.Unchanged(self.name, entry.key or "", existing.id))
            return WriteResult(self.name, existing.id, self.version, unchanged=True)
        if plan.evict_ids:
            self.evict(plan.evict_ids, plan.evict_reason)
            self._drop_pending(
                plan.evict_ids, fallback=True, reason=f"entries evicted ({plan.evict_reason})"
            )
        replaced: str | None = None
        if plan.replace_index is not None:
            old = self.entries[plan.replace_index]
            replaced = old.id
            self.entries[plan.replace_index] = entry
            self._used += entry.tokens - old.tokens
            self.events.emit(
                ev.Replaced(
                    self.name,
                    entry.key or "",
                    entry.id,
                    old.text,
                    entry.text,
                    old.tokens,
                    entry.tokens,
                )
            )
        else:
            self.entries.append(entry)
            self._used += entry.tokens
        self._changed()
        self.events.emit(
            ev.Written(self.name, entry.id, entry.tokens, self._used, self.budget, self.version)
        )
        if plan.over_budget_reason:
            self.events.emit(
                ev.RegionOverBudget(
                    self.name, len(self.entries), self.budget, plan.over_budget_reason
                )
            )
        self._after_write()
        return WriteResult(
            self.name, entry.id, self.version, evicted=plan.evict_ids, replaced=replaced
        )

    def queue_compaction(self, marked: list[Entry], reason: str) -> PendingCompaction:
        """Queue ``marked`` (whole units of this region) for compaction into the paired
        ``compact_history`` and emit ``compaction_queued``; returns the queued item."""
        p = self.queue.add(
            region=self.name,
            entry_ids=[e.id for e in marked],
            target=self.compact_target,
            reason=reason,
            tokens=sum(e.tokens for e in marked),
        )
        self.events.emit(
            ev.CompactionQueued(
                p.id, self.name, p.target, p.entry_ids, p.tokens, reason, p.operation
            )
        )
        return p

    def _after_write(self) -> None:
        """Kind hook run after every committed write (e.g. queue a compaction)."""

    # ----- removal ---------------------------------------------------------------------------
    def _changed(self) -> None:
        self.version += 1
        self._hash = None

    @transactional
    def insert(self, index: int, entry: Entry) -> None:
        """Insert ``entry`` at ``index`` (used by merge compactions); emits ``written``."""
        self.entries.insert(index, entry)
        self._used += entry.tokens
        self._changed()
        self.events.emit(
            ev.Written(self.name, entry.id, entry.tokens, self._used, self.budget, self.version)
        )

    def analysis(self) -> UnitAnalysis:
        """Unit analysis of the current entries (:func:`regio.policies.analyze`), reused while
        they are unchanged (:func:`regio.regions.entrylist.unchanged`; O(entries) after a
        change, O(1) again until the next one); after appends only the appended entries are
        grouped again (:func:`regio.policies.units.appended_grouping`)."""
        return self.units().unit_analysis(self.entries)

    def units(self) -> UnitMemo:
        """The unit structure of the current entries (:class:`regio.regions.unitmemo.UnitMemo`:
        grouping, newest turn start, relieved tokens), read again only where they changed."""
        memo = self._units = units_of(self.entries, self._units)
        return memo

    # ----- state -----------------------------------------------------------------------------
    def options(self) -> dict[str, Any]:
        """Constructor keywords that rebuild this region (JSON-able); the options of
        :data:`_UNSET_OMITTED` only when set (a state saved without them loads with the
        defaults)."""
        out: dict[str, Any] = {}
        for f in attrs.fields(type(self)):
            value = getattr(self, f.name)
            if f.init and not (f.name in _UNSET_OMITTED and value is None):
                out[f.alias or f.name] = msgspec.to_builtins(value)
        return out

    def state_extra(self) -> dict[str, Any]:
        """Kind-specific counters to persist (JSON-able)."""
        return {}

    def load_state(self, entries: list[Entry], version: int, extra: dict[str, Any]) -> None:
        """Restore entries, version and kind-specific counters."""
        self.entries = list(entries)
        self._used = sum(e.tokens for e in entries)
        self.version = version
        self._hash = None
