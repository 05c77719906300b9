"""``keyed`` (alias ``hashmap``) and ``checklist`` regions.

Constructors (keyword-only)::

    Keyed(name=, budget=, max_entries: int | None = None, admission="evict",
          max_entry_tokens: int | None = None, ...)
    Checklist(name=, budget=, gate: bool = False, ...)

``keyed``: a write with an existing key replaces that entry in place (one ``replaced`` event
with old and new value); the same value again is a no-op (hash, version unchanged, one
``unchanged`` event). Over budget or ``max_entries`` it drops the least
recently *updated* keys (LRU) under ``evict``, or refuses under ``reject``.

``checklist``: todo items with ids (``"1"``, ``"2"``, ...), status ``open``/``done`` and notes,
stored as entries keyed by item id (``meta``: ``status``, ``text``, ``notes``). Never rolls off.
``all_done`` is the "no open items" gate; :meth:`Checklist.blocks_finish` tells the agent loop
whether the gate blocks finishing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import attrs

from regio.content import Entry
from regio.errors import RegionConfigError
from regio.events import transactional
from regio.policies import UnitAnalysis
from regio.regions.base import Region
from regio.regions.results import Refusal, Releasable, WritePlan, WriteResult
from regio.regions.results import preview as _preview

__all__ = ["Checklist", "Keyed"]


@attrs.define(eq=False, kw_only=True)
class Keyed(Region):
    """Facts by key, upserted in place, own LRU by last update."""

    kind: ClassVar[str] = "keyed"
    never_shrinks_kind: ClassVar[bool] = True
    agent_writable: ClassVar[bool] = True

    max_entries: int | None = None
    _touched: dict[str, int] = attrs.field(factory=dict, init=False, repr=False)
    _seq: int = attrs.field(default=0, init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        super().__attrs_post_init__()
        if self.max_entries is not None and self.max_entries < 1:
            raise RegionConfigError(
                f"region {self.name!r}: max_entries must be >= 1, got {self.max_entries}"
            )

    def index_of(self, key: str) -> int | None:
        """Position of ``key`` or None."""
        for i, e in enumerate(self.entries):
            if e.key == key:
                return i
        return None

    def get(self, key: str) -> Entry | None:
        """The entry of ``key`` or None."""
        i = self.index_of(key)
        return None if i is None else self.entries[i]

    def keys(self) -> list[str]:
        """Keys in position order."""
        return [e.key for e in self.entries if e.key is not None]

    def lru_keys(self) -> list[str]:
        """Keys, least recently updated first."""
        return sorted(self.keys(), key=lambda k: self._touched.get(k, 0))

    def render_entry(self, entry: Entry) -> str:
        """``key: value``."""
        return f"{entry.key}: {entry.text}"

    def _plan(self, entry: Entry) -> WritePlan | Refusal:
        if entry.key is None:
            raise RegionConfigError(
                f"region {self.name!r} ({self.kind}) needs a key on every entry: "
                "make the entry with key='...'"
            )
        i = self.index_of(entry.key)
        if i is not None and self.entries[i].digest == entry.digest:
            return WritePlan(entry, replace_index=i, unchanged=True)
        old_tokens = self.entries[i].tokens if i is not None else 0
        used = self.used_tokens - old_tokens + entry.tokens
        count = len(self.entries) + (0 if i is not None else 1)
        over_count = self.max_entries is not None and count > self.max_entries
        if used <= self.budget and not over_count:
            return WritePlan(entry, replace_index=i)
        if self.admission == "reject" or not self.evicts_lru:
            return self.refusal(entry, "max_items" if used <= self.budget else "region_full")
        evict: list[str] = []
        for key in self.lru_keys():
            if used <= self.budget and not over_count:
                break
            if key == entry.key:
                continue
            victim = self.entries[self.index_of(key)]  # type: ignore[index]
            evict.append(victim.id)
            used -= victim.tokens
            count -= 1
            over_count = self.max_entries is not None and count > self.max_entries
        # positions shift after eviction: commit re-finds the replaced key
        return WritePlan(entry, evict_ids=tuple(evict), evict_reason="lru", replace_index=i)

    evicts_lru: ClassVar[bool] = True

    @transactional
    def commit(self, plan: WritePlan) -> WriteResult:
        """Commit, keeping the replaced key's position and updating its LRU stamp."""
        if plan.replace_index is not None and plan.evict_ids and not plan.unchanged:
            key = plan.entry.key
            gone = set(plan.evict_ids)
            plan.replace_index = [e.key for e in self.entries if e.id not in gone].index(key)
            self.evict(plan.evict_ids, plan.evict_reason)
            plan.evict_ids = ()
        result = super().commit(plan)
        if not plan.unchanged and plan.entry.key is not None:
            self._seq += 1
            self._touched[plan.entry.key] = self._seq
        return result

    def remove_ids(self, ids: Iterable[str]) -> list[Entry]:
        """Remove entries and forget their LRU stamps."""
        removed = super().remove_ids(ids)
        for e in removed:
            if e.key is not None and self.index_of(e.key) is None:
                self._touched.pop(e.key, None)
        return removed

    def releasable(
        self, info: UnitAnalysis | None = None, limit: int = 5
    ) -> tuple[Releasable, ...]:
        """Keys in LRU order with their sizes."""
        out = []
        for key in self.lru_keys()[:limit]:
            e = self.get(key)
            assert e is not None
            out.append(Releasable(e.id, e.tokens, key, _preview(e)))
        return tuple(out)

    def state_extra(self) -> dict[str, Any]:
        """LRU stamps and sequence."""
        return {"touched": dict(self._touched), "seq": self._seq}

    def load_state(self, entries: list[Entry], version: int, extra: dict[str, Any]) -> None:
        """Restore entries and LRU stamps."""
        super().load_state(entries, version, extra)
        self._touched = dict(extra.get("touched", {}))
        self._seq = int(extra.get("seq", 0))


@attrs.define(eq=False, kw_only=True)
class Checklist(Keyed):
    """Todo items (open/done, notes). Never rolls off; a write that does not fit is refused."""

    kind: ClassVar[str] = "checklist"
    evicts_lru: ClassVar[bool] = False
    agent_writable: ClassVar[bool] = False

    gate: bool = False
    _next_item: int = attrs.field(default=1, init=False, repr=False)

    @staticmethod
    def item_line(item_id: str, text: str, status: str, notes: tuple[str, ...] = ()) -> str:
        """The rendered text of one item: ``- [ ] 1: text`` plus ``  - note`` lines."""
        box = "x" if status == "done" else " "
        lines = [f"- [{box}] {item_id}: {text}"]
        lines.extend(f"  - {n}" for n in notes)
        return "\n".join(lines)

    def render_entry(self, entry: Entry) -> str:
        """The item line (entries already hold their rendered line)."""
        return entry.text

    def new_item_id(self) -> str:
        """Allocate the next item id (``"1"``, ``"2"``, ...)."""
        item = str(self._next_item)
        self._next_item += 1
        return item

    def find_open(self, text: str) -> Entry | None:
        """The open item with exactly ``text`` (for duplicate-add detection)."""
        for e in self.entries:
            if e.meta.get("status") == "open" and e.meta.get("text") == text.strip():
                return e
        return None

    def open_items(self) -> list[Entry]:
        """Items whose status is ``open``, in order."""
        return [e for e in self.entries if e.meta.get("status") == "open"]

    @property
    def all_done(self) -> bool:
        """True when no item is open (the "no open items" gate is satisfied)."""
        return not self.open_items()

    def blocks_finish(self) -> bool:
        """True when this checklist has ``gate`` on and open items remain."""
        return self.gate and not self.all_done

    def state_extra(self) -> dict[str, Any]:
        """LRU stamps plus the next item id."""
        return {**super().state_extra(), "next_item": self._next_item}

    def load_state(self, entries: list[Entry], version: int, extra: dict[str, Any]) -> None:
        """Restore entries and counters."""
        super().load_state(entries, version, extra)
        self._next_item = int(extra.get("next_item", 1))
