"""Hypothesis state machine over random writes, appends, releases, tool calls and results.

Invariants: no region exceeds its token budget (a compact_history only while its merge is
queued); the window never exceeds its budget; pinned, keyed, checklist and compact_history
entries are lost only by an explicit release (or a completed compaction that replaces them);
a refused write changes nothing; no eviction splits a turn group or touches an open one.
"""

from __future__ import annotations

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from regio.content import Message, ToolResult, ToolUse
from regio.errors import CompactionError
from regio.regions import (
    Checklist,
    Clearable,
    CompactHistory,
    Compacting,
    Keyed,
    Pinned,
    Refusal,
    SlidingWindow,
    Temporary,
    Window,
)
from regions_support import StubCounter, check_units

KEEP = ("pinned", "keyed", "checklist", "hist", "hist2")
EVICTIONS = ["per_item", {"bulk": {"overflow": 3}}, {"compact": {"compact_count": 2}}]


class WindowMachine(RuleBasedStateMachine):
    @initialize(eviction=st.sampled_from(EVICTIONS), max_items=st.integers(2, 10))
    def setup(self, eviction, max_items):
        self.w = Window(
            regions=[
                Pinned(name="pinned", budget=30),
                SlidingWindow(name="conv", budget=120, max_items=max_items, eviction=eviction),
                CompactHistory(name="hist", budget=40, source="conv"),
                Keyed(name="keyed", budget=40, admission="reject"),
                Checklist(name="checklist", budget=40),
                Temporary(name="temp", budget=60),
                Temporary(name="strict", budget=30, admission="reject"),
                Clearable(name="scratch", budget=30),
                Compacting(name="notes", budget=60, compact_at=0.7),
                CompactHistory(name="hist2", budget=40, source="notes"),
            ],
            max_tokens=330,
            counter=StubCounter(),
        )
        self.kept = {name: set() for name in KEEP}
        self.open_calls: list[str] = []
        self.n = 0

    # ----- helpers ---------------------------------------------------------------------------
    def _snap(self):
        return {r.name: (list(r.entries), r.content_hash(), r.version) for r in self.w.regions}

    def _groups(self):
        conv = self.w.region("conv")
        open_groups = {self.w.call_groups[c] for c in self.open_calls if c in self.w.call_groups}
        return {e.id: e.group for e in conv.entries}, open_groups

    def _do(self, fn):
        before = self._snap()
        groups_before, open_before = self._groups()
        result = fn()
        if isinstance(result, Refusal):
            assert self._snap() == before, "a refused write changed something"
        groups_after, _ = self._groups()
        removed = set(groups_before) - set(groups_after)
        removed_groups = {groups_before[i] for i in removed}
        assert not removed_groups & set(groups_after.values()), "eviction split a turn group"
        assert not removed_groups & open_before, "eviction touched an open group"
        self._track()
        return result

    def _ids(self, name):
        # keyed entries are identified by key (an upsert replaces the entry, keeping the key)
        entries = self.w.region(name).entries
        return {e.key for e in entries} if name == "keyed" else {e.id for e in entries}

    def _track(self):
        for name in KEEP:
            self.kept[name] |= self._ids(name)

    def _lost_check(self, name):
        lost = self.kept[name] - self._ids(name)
        assert not lost, f"{name} lost {lost}"

    # ----- rules -----------------------------------------------------------------------------
    @rule(
        region=st.sampled_from(["temp", "strict", "scratch", "notes", "pinned"]),
        size=st.integers(1, 35),
    )
    def write(self, region, size):
        self.n += 1
        self._do(lambda: self.w.write(region, f"w{self.n} [{size}]"))

    @rule(key=st.sampled_from("abcde"), size=st.integers(1, 20))
    def upsert(self, key, size):
        self.n += 1
        self._do(lambda: self.w.write("keyed", f"v{self.n} [{size}]", key=key))

    @rule(size=st.integers(1, 10))
    def todo(self, size):
        self.n += 1
        self._do(lambda: self.w.todo_add("checklist", f"item{self.n} [{size}]"))

    @rule(size=st.integers(1, 12))
    def user(self, size):
        self.n += 1
        self._do(lambda: self.w.add_message(Message.user(f"u{self.n} [{size}]")))

    @rule(size=st.integers(1, 12), calls=st.integers(0, 2))
    def assistant(self, size, calls):
        self.n += 1
        ids = [f"c{self.n}_{i}" for i in range(calls)]
        msg = Message.assistant(f"a{self.n} [{size}]", [ToolUse(c, "tool") for c in ids])
        result = self._do(lambda: self.w.add_message(msg))
        if not isinstance(result, Refusal):
            self.open_calls.extend(ids)

    @rule(data=st.data(), size=st.integers(1, 12))
    def tool_result(self, data, size):
        if not self.open_calls:
            return
        call = data.draw(st.sampled_from(self.open_calls))
        msg = Message.tool([ToolResult(call, f"r{self.n} [{size}]")])
        result = self._do(lambda: self.w.add_message(msg))
        if not isinstance(result, Refusal):
            self.open_calls.remove(call)

    @rule(
        region=st.sampled_from(["temp", "conv", "pinned", "keyed", "checklist"]),
        n=st.integers(1, 2),
    )
    def release_oldest(self, region, n):
        removed = self._do(lambda: self.w.release(region, oldest=n))
        for e in removed:
            self.kept.get(region, set()).discard(e.key if region == "keyed" else e.id)

    @rule(data=st.data())
    def complete(self, data):
        pending = self.w.pending_compactions()
        if not pending:
            return
        p = data.draw(st.sampled_from(pending))
        if p.tokens < 2:
            self._do(lambda: self.w.fail_compaction(p.id, "too small"))
            return
        size = data.draw(st.integers(1, min(p.tokens - 1, 60)))
        target = self.w.region(p.target)
        if size > target.budget:
            # a single summary larger than its compact_history is refused, changing nothing
            before = self._snap()
            with pytest.raises(CompactionError, match="larger than region"):
                self.w.complete_compaction(p.id, f"s{self.n} [{size}]")
            assert self._snap() == before
            return
        if p.operation == "merge":
            for i in p.entry_ids:
                self.kept[p.region].discard(i)
        self._do(lambda: self.w.complete_compaction(p.id, f"s{self.n} [{size}]"))

    # ----- invariants ------------------------------------------------------------------------
    @invariant()
    def regions_within_budget(self):
        # documented rule (regions.compaction): a compact_history may exceed its budget only
        # while a merge of its oldest summaries is queued; no single entry is ever larger than
        # its region (complete_compaction and write refuse it)
        for r in self.w.regions:
            assert all(e.tokens <= r.budget for e in r.entries), (r.name, r.budget)
            merges = [p for p in r.pending() if p.operation == "merge"]
            if isinstance(r, CompactHistory) and merges:
                assert [e.id for e in r.entries[: len(merges[0].entry_ids)]] == list(
                    merges[0].entry_ids
                )  # the merge takes its oldest summaries
                continue
            assert r.used_tokens <= r.budget, (r.name, r.used_tokens, r.budget)

    @invariant()
    def window_within_budget(self):
        assert self.w.used_tokens <= self.w.max_tokens

    @invariant()
    def kept_regions_lose_nothing(self):
        for name in KEEP:
            self._lost_check(name)

    @invariant()
    def conversation_is_whole_units(self):
        check_units(self.w.region("conv").entries)

    @invariant()
    def queue_points_at_present_entries(self):
        for p in self.w.pending_compactions():
            ids = {e.id for e in self.w.region(p.region).entries}
            assert set(p.entry_ids) <= ids


WindowMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
test_window_machine = WindowMachine.TestCase
