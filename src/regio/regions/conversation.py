"""``sliding_window``: the conversation as typed messages.

Constructor (keyword-only)::

    SlidingWindow(name=, budget=, max_items: int | None = None,
                  eviction: "per_item" | {"bulk": {"overflow": N}} |
                            {"compact": {"compact_count": N}} = "per_item",
                  count_units: bool = False, max_turns: int | None = None,
                  max_tool_calls: int | None = None, keep_at_least: int | None = None,
                  admission="evict",
                  volatility="rewritten", description="")

``max_items`` counts entries (messages); with ``count_units=True`` it counts units (a whole
turn group is one item, extended back to the start of the group).
``max_turns`` (N >= 0) keeps the last N turns of earlier history (a turn starts at a user
message; the window starts on one); ``max_tool_calls`` (K >= 0) keeps at most K tool calls of
earlier history (each with its results; oldest go first). Both are history windows:
they select from earlier turns only, the current turn is always kept in full, and they are
enforced on every write whatever the eviction strategy (they move only when a new turn
starts). ``max_items`` under ``bulk`` / ``compact`` follows the strategy. History windows are
soft when only protected units (current turn, open groups) are left (event
``region_over_budget``). The token budget is a hard cap under every strategy and may also
evict completed groups of the current turn (the newest user message and open groups stay).

``keep_at_least`` (tokens): no compaction or hysteresis target keeps less of the conversation.

Token hysteresis (:mod:`regio.policies.hysteresis`): under ``bulk`` a write that would pass
the token trigger (default: the budget) evicts down to the token target in one step; under
``compact`` a write that reaches the trigger (default 90% of the budget) queues a compaction
(reason ``token_trigger``) that the runtime flushes down to the target; only a write that
would pass the budget itself before that flush evicts down to the target, as the declared
compaction fallback (events ``evicted`` with reason ``compaction_fallback`` and
``compaction_fallback``). ``per_item`` drops the fewest oldest units that make a write fit.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import msgspec

from regio.content import Entry
from regio.errors import RegionConfigError
from regio.policies import (
    Bulk,
    Compact,
    EvictionStrategy,
    HistoryCaps,
    PerItem,
    UnitAnalysis,
    analyze,
    costcontrol,
    parse_eviction,
    rewriteodds,
)
from regio.policies import hysteresis as hy
from regio.regions import events as ev
from regio.regions.base import Refusal, Region, Releasable, WritePlan, WriteResult
from regio.regions.entrylist import EntryList
from regio.regions.pending import PendingCompaction
from regio.regions.settle import settle_marks

__all__ = ["SlidingWindow"]


@attrs.define(eq=False, kw_only=True)
class SlidingWindow(Region):
    """The conversation. Never reclaimed by the window; rolls off whole turn groups by its
    eviction strategy; ``compact`` marks oldest items in the window's pending queue."""

    kind: ClassVar[str] = "sliding_window"
    agent_releasable: ClassVar[bool] = False
    compaction_order: ClassVar[int | None] = 1
    elastic_kind: ClassVar[bool] = True

    max_items: int | None = None
    eviction: EvictionStrategy = attrs.field(factory=PerItem, converter=parse_eviction)
    count_units: bool = False
    max_turns: int | None = None
    max_tool_calls: int | None = None
    #: "keep at least N tokens of recent turns": no compaction or hysteresis target cuts the
    #: conversation below this many tokens (``None``: no floor)
    keep_at_least: int | None = None
    cache_multipliers: tuple[float, float] = attrs.field(default=hy.DEFAULT_MULTIPLIERS, init=False)
    """``(write, read)`` cache multipliers the default token target is priced with (an engine
    sets its provider's)."""
    cost_terms: costcontrol.CostTerms | None = attrs.field(default=None, init=False)
    """The prices the cost controller weighs (an engine sets its provider's and its
    summarizer's size); ``None``: compact at the window-fill trigger."""
    kept_tokens: int | None = attrs.field(default=None, init=False)
    """Tokens the conversation held right after its last compaction: after a summary (and
    the ``clear_after_summary`` pass riding it), or after a relief pass that alone brought it
    to its flush target (the runtime measures it; saved with the region): what the cost
    controller takes a compaction to keep."""
    replies: int = attrs.field(default=0, init=False)
    """Assistant messages admitted since the session began, one per model call: the
    session's age in requests, which the cost controller takes as its expected remaining
    length (:func:`regio.policies.costcontrol.pays_back`; saved with the region)."""
    summary_reads_request: bool = attrs.field(default=False, init=False)
    """Whether a compaction's summary request forks the last request and reads its prefix
    from the cache (an engine sets it: a summarizer that forks, on the agent's own model):
    then a compaction's rewrite does not leave the newest marker unread, and
    :meth:`rewrite_odds` gives none."""
    steps: rewriteodds.StepLog = attrs.field(factory=rewriteodds.StepLog, init=False)
    """What the last steps admitted (:class:`regio.policies.rewriteodds.StepLog`; saved with the
    region): the sizes :meth:`rewrite_odds` takes the next step's from."""
    #: a planning copy (:meth:`planning_copy`): its refusals are never shown, so they list
    #: nothing releasable (no unit analysis of the copy)
    _planning: bool = attrs.field(default=False, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.max_items is not None and self.max_items < 1:
            raise RegionConfigError(
                f"region {self.name!r}: max_items must be >= 1, got {self.max_items}"
            )
        for option in ("max_turns", "max_tool_calls", "keep_at_least"):
            value = getattr(self, option)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise RegionConfigError(
                    f"region {self.name!r}: {option} must be an integer >= 0, got {value!r}"
                )

    @property
    def is_conversation(self) -> bool:
        """Always true: entries are messages with roles."""
        return True

    def item_count(self, entries: list[Entry] | None = None) -> int:
        """Items as ``max_items`` counts them (entries, or units with ``count_units``)."""
        entries = self.entries if entries is None else entries
        if not self.count_units:
            return len(entries)
        return analyze(entries).units_from[0] if entries else 0

    def history_caps(self, keep_items: int | None = None) -> HistoryCaps:
        """The history window of this region with ``keep_items`` as the item cap."""
        return HistoryCaps(
            max_entries=None if self.count_units else keep_items,
            max_units=keep_items if self.count_units else None,
            max_turns=self.max_turns,
            max_tool_calls=self.max_tool_calls,
        )

    # ----- token hysteresis ----------------------------------------------------------------
    @property
    def trigger_tokens(self) -> int | None:
        """The token trigger under ``compact`` eviction (the region queues its own compaction
        there), else ``None``."""
        return self.token_trigger if isinstance(self.eviction, Compact) else None

    @property
    def token_trigger(self) -> int | None:
        """High-water mark in tokens under ``bulk`` / ``compact`` eviction (``None`` under
        ``per_item``): the declared one, else the window-fill mark (``docs/runtime.md``,
        "Token hysteresis"), brought earlier by the cost controller when the engine gave the
        region its prices (:attr:`cost_terms`; :mod:`regio.policies.costcontrol`)."""
        marks = self.hysteresis()
        return None if marks is None else marks[0]

    @property
    def token_target(self) -> int | None:
        """Low-water target in tokens (below :attr:`token_trigger`): the declared one, else
        :func:`regio.policies.hysteresis.cost_target` of the trigger, with the mean tokens of
        a unit of the current content, as admitted (before relief edits), as the growth per
        request; never below ``keep_at_least``. ``None`` under ``per_item``."""
        marks = self.hysteresis()
        return None if marks is None else marks[1]

    def growth(self) -> float:
        """Tokens a request adds, measured: the mean admitted tokens of a unit (a turn group)
        of the current content (a relief edit, ``meta["admitted_tokens"]``, shrinks the
        content, not what the next turns add); ``0.0`` when empty."""
        if not self.entries:
            return 0.0
        memo = self.units()  # the appended entries read, not the whole list
        units = len(memo.grouping.groups)
        return (self.used_tokens + memo.relieved) / units if units else 0.0

    def hysteresis(
        self, growth: float | None = None, *, steady: bool = False
    ) -> tuple[int, int] | None:
        """``(trigger, target)`` in tokens of the region (see :attr:`token_trigger` and
        :attr:`token_target`) for requests adding ``growth`` tokens each (``None``: the
        measured :meth:`growth`); ``None`` under ``per_item``. The cost controller's early
        trigger waits until an early compaction pays back within the session's expected
        remaining requests (:attr:`replies`; :func:`regio.policies.costcontrol.pays_back`);
        ``steady``: the trigger of a session long past that (``regio validate``'s figures)."""
        ev_ = self.eviction
        if not isinstance(ev_, Bulk | Compact):
            return None
        budget = self.budget
        default = hy.DEFAULT_BULK_TRIGGER if isinstance(ev_, Bulk) else hy.DEFAULT_COMPACT_TRIGGER
        window = self._window
        if isinstance(ev_, Compact) and self.is_elastic and window is not None:
            default = f"{100 * window.high_water:g}%"  # the window's own high-water mark
        declared = ev_.trigger is not None
        mark = hy.resolve_mark(ev_.trigger if ev_.trigger is not None else default, budget)
        trigger = max(1, min(mark, budget))
        growth = self.growth() if growth is None else growth
        kept = self._target(trigger, growth)
        terms = self.measured_terms()
        if isinstance(ev_, Compact) and not declared and terms is not None:
            outside = self.outside_tokens()
            # what a compaction keeps: as measured after the last one (relief may clear what
            # the cut kept), else the target; the cut still goes to the target, so the
            # trigger leaves it room for a summary worth its size (twice the summary)
            keeps = kept if self.kept_tokens is None else min(kept, self.kept_tokens)
            limit = outside + trigger
            whole = costcontrol.controlled_trigger(
                limit, growth, outside + keeps, terms, elapsed=None if steady else self.replies
            )
            trigger = max(min(trigger, kept + 1 + int(2 * terms.summary)), whole - outside)
        return trigger, kept

    def _target(self, trigger: int, growth: float) -> int:
        """The low-water target for ``trigger`` (the declared ``target``, else
        :func:`regio.policies.hysteresis.cost_target`), never below ``keep_at_least`` nor at
        or above ``trigger``."""
        declared = self.eviction.target  # type: ignore[union-attr]
        if declared is not None:
            low = hy.resolve_mark(declared, self.budget)
        else:
            low = hy.cost_target(trigger, growth, multipliers=self.cache_multipliers)
        return max(0, min(max(low, self.keep_at_least or 0), trigger - 1))

    def rewrite_odds(self) -> float | None:
        """The odds that the step before the next request rewrites this conversation
        (:func:`regio.policies.rewriteodds.rewrite_odds`): the share of the last
        :attr:`steps` (and the one in progress) after which it would hold at least its
        :attr:`token_trigger` as that step moves it (the trigger follows the measured tokens
        per step, :meth:`growth`) under ``compact`` / ``bulk`` eviction, or pass its
        :attr:`budget` as the step's growth of the other regions leaves it (an elastic
        conversation's room is what they leave); ``None`` with too few steps, or when a
        compaction's summary request reads the last request (:attr:`summary_reads_request`)."""
        steps = self.steps.samples(self._others())
        if len(steps) < rewriteodds.MIN_STEPS or self.summary_reads_request:
            return None
        if not self.is_elastic:  # its room is its own budget, whatever the others hold
            steps = tuple((tokens, 0) for tokens, _others in steps)
        used, budget = self.used_tokens, self.budget
        memo = self.units()
        units = len(memo.grouping.groups)

        def reaches_trigger(size: int) -> bool:
            marks = self.hysteresis((used + memo.relieved + size) / (units + 1))
            return marks is not None and used + size >= marks[0]

        return rewriteodds.rewrite_odds(steps, reaches_trigger, budget - used)

    def rewrite_horizon(self) -> float | None:
        """Requests until this conversation is expected to be rewritten anyway
        (:func:`regio.policies.rewriteodds.rewrite_horizon`: its trigger at the mean tokens
        of the last complete :attr:`steps`, at most a third of :attr:`replies`); the trigger is
        the lower of :attr:`token_trigger` and the one the cost controller moves to once an
        early compaction pays back (``hysteresis(steady=True)``), which it may do at the next
        request. ``None`` under ``per_item`` eviction or with too few steps."""
        if len(self.steps.done) < rewriteodds.MIN_STEPS:
            return None  # no horizon: the triggers are not worked out
        now, steady = self.hysteresis(), self.hysteresis(steady=True)
        if now is None or steady is None:
            return None
        trigger = min(now[0], steady[0])
        steps = [tokens for tokens, _others in self.steps.done]
        return rewriteodds.rewrite_horizon(steps, trigger, self.used_tokens, self.replies)

    def _others(self) -> int:
        """Tokens the window's other regions hold (0 outside a window)."""
        window = self._window
        return 0 if window is None else int(window.used_tokens) - self.used_tokens

    def state_extra(self) -> dict[str, Any]:
        """The measured :attr:`kept_tokens` (when measured), :attr:`replies` and
        :attr:`steps`."""
        extra: dict[str, Any] = {"replies": self.replies}
        steps = self.steps.to_extra()
        if steps is not None:
            extra["steps"] = steps
        if self.kept_tokens is not None:
            extra["kept_tokens"] = self.kept_tokens
        return extra

    def load_state(self, entries: list[Entry], version: int, extra: dict[str, Any]) -> None:
        """See :meth:`regio.regions.Region.load_state` (and :attr:`kept_tokens`,
        :attr:`replies`: a state saved before the count existed counts the assistant messages
        it still holds, fewer than the session made once it has compacted, so such a session
        waits again, at most as many requests as it had made, before compacting early; the
        window-fill trigger holds meanwhile)."""
        super().load_state(entries, version, extra)
        kept = extra.get("kept_tokens")
        self.kept_tokens = int(kept) if isinstance(kept, int) else None
        self.steps = rewriteodds.StepLog.from_extra(extra.get("steps"))
        replies = extra.get("replies")
        self.replies = (
            replies
            if isinstance(replies, int) and not isinstance(replies, bool) and replies >= 0
            else sum(1 for e in entries if e.role == "assistant")
        )

    def commit(self, plan: WritePlan) -> WriteResult:
        """See :meth:`regio.regions.Region.commit`; an appended assistant message counts one
        more of :attr:`replies` and opens a step (:attr:`steps`); any appended message adds
        its tokens to the step in progress."""
        appended = not plan.unchanged and plan.replace_index is None
        counted = appended and plan.entry.role == "assistant"
        if counted:  # before the write's own trigger check, which weighs the session's age
            self.replies += 1
        try:
            result = super().commit(plan)
        except BaseException:
            if counted:
                self.replies -= 1
            raise
        if appended:
            self.steps = self.steps.appended(
                plan.entry.tokens, reply=counted, others=self._others()
            )
        return result

    def batch_tokens(self) -> int:
        """Tokens an item-count batch (``compact_count``) frees at least when the cost
        controller runs: the cost-optimal growth ``x*`` between two compactions
        (:func:`regio.policies.costcontrol.interval`) for what the conversation keeps, so a
        batch does not rewrite the cached conversation every ``compact_count`` items; ``0``
        without the controller or a measured growth."""
        terms = self.measured_terms()
        if terms is None or not isinstance(self.eviction, Compact):
            return 0
        growth = self.growth()
        keeps = self.used_tokens if self.kept_tokens is None else self.kept_tokens
        return int(costcontrol.interval(growth, self.outside_tokens() + keeps, terms))

    def measured_terms(self) -> costcontrol.CostTerms | None:
        """:attr:`cost_terms` with the summary size measured: the mean tokens of this
        region's summaries in its ``compact_history`` once there are any."""
        terms, window = self.cost_terms, self._window
        if terms is None or window is None or self.compact_target is None:
            return terms
        history = window.region(self.compact_target)
        sizes = [e.tokens for e in history.entries if e.meta.get("source", self.name) == self.name]
        if not sizes:
            return terms
        return msgspec.structs.replace(terms, summary=sum(sizes) / len(sizes))

    def outside_tokens(self) -> int:
        """Tokens every request carries beside this region: the other regions' and what the
        window reserves (tool schemas, framing); ``0`` outside a window."""
        window = self._window
        if window is None:
            return 0
        return int(window.reserved_tokens + window.used_tokens - self.used_tokens)

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        count = (
            self.item_count([*self.entries, entry]) if self.count_units else len(self.entries) + 1
        )
        decision = self.eviction.decide(count, self.max_items, bool(self.pending()))
        turn_caps = self.max_turns is not None or self.max_tool_calls is not None
        fallback = decision.fallback
        goal = None
        trigger = self.token_trigger
        mark = trigger if isinstance(self.eviction, Bulk) else self.budget
        if trigger is not None and self.used_tokens + entry.tokens > (mark or 0):
            goal = self.token_target
            fallback = fallback or isinstance(self.eviction, Compact)
        return self.plan_rolloff(
            entry,
            history=self.history_caps(decision.keep_items),
            fallback=fallback,
            item_reason="history_window" if turn_caps else "max_items",
            token_goal=goal,
        )

    def _after_write(self) -> None:
        settle_marks(self)
        decision = self.eviction.decide(self.item_count(), self.max_items, bool(self.pending()))
        if decision.mark_items:
            items = decision.mark_items
            batch = self.batch_tokens()
            if batch > 0 and not self.count_units:  # at least the cost-optimal growth
                info = self.analysis()
                j = info.fewest_removals(max_tokens=max(0, self.used_tokens - batch))
                j = info.removable_count if j is None else j
                items = max(items, info.removed_entries[j])
            self.mark_oldest(items, reason="compact_count")
        self.check_token_trigger()

    def check_token_trigger(self) -> None:
        """Under ``compact`` eviction, queue a compaction down to :attr:`token_target`
        (reason ``token_trigger``) when the region is at or over :attr:`token_trigger` and
        nothing of it is queued yet."""
        trigger = self.token_trigger
        if not isinstance(self.eviction, Compact) or trigger is None:
            return
        if self.compact_target is None or self.pending() or self.used_tokens < trigger:
            return
        target = self.token_target or 0
        info = self.analysis()
        j = info.fewest_removals(max_tokens=target)
        j = info.removable_count if j is None else j
        self.mark_oldest(
            info.removed_entries[j] if not self.count_units else j, reason="token_trigger"
        )

    def rewrite_entry(self, index: int, entry: Entry) -> None:
        """Replace the entry at ``index`` in place by ``entry`` (the relief chain's edits of a
        block's content: same id, role and group, so the turn group stays whole). Bumps the
        version and the entries' ``rewrite_epoch`` (the cached prefix changes from here on).
        Raises :class:`RegionConfigError` for an entry with another id, role or group."""
        old = self.entries[index]
        if (entry.id, entry.role, entry.group) != (old.id, old.role, old.group):
            raise RegionConfigError(
                f"region {self.name!r}: rewrite_entry keeps the entry's id, role and group "
                f"({old.id}, {old.role}, {old.group}); got ({entry.id}, {entry.role}, "
                f"{entry.group})"
            )
        self.entries[index] = entry
        self._used += entry.tokens - old.tokens
        self._changed()

    def planning_copy(self, entries: Sequence[Entry], used_tokens: int) -> SlidingWindow:
        """A copy of this region holding ``entries`` (``used_tokens``: their tokens) instead,
        for a dry run: :meth:`regio.regions.Window.plan_write` with ``as_if=`` plans on it and
        nothing of this region changes. It shares the event bus and the compaction queue,
        which planning only reads; never write to it. O(entries) pointer copies."""
        trial = copy.copy(self)
        trial.entries = EntryList(entries)
        trial._used = used_tokens
        trial._hash = None
        trial._planning = True
        return trial

    def releasable(
        self, info: UnitAnalysis | None = None, limit: int = 5
    ) -> tuple[Releasable, ...]:
        """See :meth:`regio.regions.Region.releasable` (nothing on a planning copy)."""
        return () if self._planning else super().releasable(info, limit)

    @property
    def needs_history(self) -> bool:
        """True with ``compact`` eviction (its marked items are summarized)."""
        return isinstance(self.eviction, Compact)

    def fallback_point(self) -> int | None:
        """``max_items + 2*compact_count`` (items) with ``compact`` eviction and ``max_items``,
        else the token trigger (tokens) with ``compact`` eviction: past it a failed compaction
        falls back to bulk eviction; ``None`` otherwise."""
        if not isinstance(self.eviction, Compact):
            return None
        if self.max_items is None:
            return self.token_trigger
        return self.max_items + 2 * self.eviction.compact_count

    def request_compaction(self, *, reason: str = "manual") -> PendingCompaction | None:
        """Queue every compactable item now (``None`` when unpaired, nothing is compactable or
        a compaction is already pending)."""
        if self.pending() or self.compact_target is None:
            return None
        before = len(self.queue.items)
        self.mark_oldest(self.item_count(), reason=reason)
        return self.pending()[-1] if len(self.queue.items) > before else None

    def mark_oldest(self, items: int, *, reason: str) -> None:
        """Queue the oldest ``items`` items of the removal order (extended to a unit boundary,
        never the newest user message nor an open group; completed groups of the current turn
        may be taken) as one :class:`PendingCompaction` targeting the paired
        ``compact_history``."""
        info = self.analysis()
        if self.count_units:
            j = min(items, info.removable_count)
        else:
            j = next(
                (x for x, done in enumerate(info.removed_entries) if done >= items),
                info.removable_count,
            )
        if j == 0:
            self.events.emit(
                ev.RegionOverBudget(
                    self.name,
                    len(self.entries),
                    self.max_items or 0,
                    "nothing compactable (protected)",
                )
            )
            return
        marked = [self.entries[i] for i in info.removal(j)]
        self.queue_compaction(marked, reason)
