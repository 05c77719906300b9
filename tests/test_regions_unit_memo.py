"""A region's unit memo (:mod:`regio.regions.unitmemo`), carried from one read to the next
across appends, replacements and removals, says what a reading of the whole list says: the
grouping, the newest turn start, the tokens relief took, the entries holding results, the
protected units and the analysis; and the newest turn an admission keeps, read from it, is
the one the whole analysis gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.compaction._cuts import unsent, unsent_from
from regio.content import Entry, Text, ToolResult, ToolUse
from regio.engine._turnfit import turn_indexes
from regio.policies import analyze
from regio.regions import SlidingWindow
from regio.regions.entrylist import EntryList
from regio.regions.unitmemo import units_of
from regio.turngroups import group_entries
from runtime_stubs import make_engine, words

_op = st.one_of(
    st.tuples(st.just("user"), st.integers(0, 3)),
    st.tuples(st.just("system"), st.integers(0, 3)),
    st.tuples(st.just("answer"), st.integers(0, 3)),
    st.tuples(st.just("rewrite"), st.integers(0, 40)),
    st.tuples(st.just("calls"), st.integers(1, 3)),
    st.tuples(st.just("result"), st.integers(0, 6)),
    st.tuples(st.just("relieve"), st.integers(0, 40)),
    st.tuples(st.just("delete"), st.integers(0, 40)),
    st.tuples(st.just("foreign"), st.integers(0, 2)),
)


def _entry(n: int, role: str, blocks: tuple[Any, ...], **meta: Any) -> Entry:
    return Entry(id=f"e{n}", blocks=blocks, role=role, tokens=3 + n % 5, meta=dict(meta))


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(_op, min_size=1, max_size=40))
def test_property_a_carried_unit_memo_equals_one_read_from_scratch(
    ops: list[tuple[str, int]],
) -> None:
    entries = EntryList()
    memo = None
    calls: list[str] = []
    for n, (kind, arg) in enumerate(ops):
        if kind == "user":
            entries.append(_entry(n, "user", (Text(f"ask {n}"),) * (arg or 1)))
        elif kind == "system":  # a system note or a summary placed in the conversation
            entries.append(_entry(n, "system", (Text(f"note {n}"),), summary=arg % 2 == 0))
        elif kind == "answer":  # an assistant turn without calls
            entries.append(_entry(n, "assistant", (Text(f"answer {n}"),) * (arg or 1)))
        elif kind == "rewrite" and entries:  # an entry replaced in place by other blocks
            i = arg % len(entries)
            old = entries[i]
            entries[i] = Entry(
                id=old.id,
                blocks=(Text(f"[cleared {old.id}]"),),
                role=old.role,
                tokens=2,
                meta=dict(old.meta),
            )
        elif kind == "calls":
            ids = [f"c{n}x{k}" for k in range(arg)]
            calls.extend(ids)
            uses = tuple(ToolUse(i, "read", {"n": n}) for i in ids)
            entries.append(_entry(n, "assistant", (Text("calling"), *uses)))
        elif kind == "result":
            cid = calls[arg % len(calls)] if calls else f"gone{n}"
            entries.append(_entry(n, "user", (ToolResult(cid, f"out {n}"),)))
        elif kind == "foreign":  # a result entry a caller made: its own id
            cid = calls[arg % len(calls)] if calls else f"gone{n}"
            eid = (f"e{900 + n}", f"e00{n}", f"x{n}")[arg]
            entries.append(Entry(id=eid, blocks=(ToolResult(cid, f"out {n}"),), role="user"))
        elif kind == "relieve" and entries:
            i = arg % len(entries)
            old = entries[i]
            entries[i] = Entry(
                id=old.id,
                blocks=old.blocks,
                role=old.role,
                tokens=1,
                meta={**old.meta, "admitted_tokens": old.tokens},
            )
        elif kind == "delete" and entries:
            del entries[arg % len(entries)]
        memo = units_of(entries, memo)
        fresh = units_of(entries, None)
        assert memo.grouping == fresh.grouping == group_entries(entries)
        assert (memo.turn_start, memo.relieved) == (fresh.turn_start, fresh.relieved)
        assert (memo.results, memo.numbers) == (fresh.results, fresh.numbers)
        info = analyze(entries)
        assert memo.protected_units() == {u for u, p in enumerate(info.protected) if p}
        assert memo.unit_analysis(entries) == info
        assert memo.turn_start == info.turn_start


_step = st.one_of(
    st.tuples(st.just("user"), st.integers(1, 3)),
    st.tuples(st.just("calls"), st.integers(1, 3)),
    st.tuples(st.just("answer"), st.integers(0, 3)),
    st.tuples(st.just("request"), st.just(0)),
    st.tuples(st.just("foreign"), st.integers(0, 2)),
)


@settings(max_examples=25, deadline=None)
@given(steps=st.lists(_step, min_size=1, max_size=25))
def test_property_the_newest_turn_read_from_the_memo_is_the_analysed_one(
    steps: list[tuple[str, int]],
) -> None:
    """The newest turn an admission keeps (:func:`regio.engine._turnfit.turn_indexes`: the
    protected units and those holding a result no request carried yet) equals the one read
    from the whole analysis and a scan of every entry (:func:`regio.compaction._cuts.unsent`),
    result entries a caller wrote with ids of its own (``e900``, ``e007``) included."""
    engine = make_engine([SlidingWindow(name="conversation", budget=50_000)])
    open_calls: list[str] = []
    for n, (kind, size) in enumerate(steps):
        if kind == "user":
            engine.add_user(words(size, f"u{n}"))
        elif kind == "calls":
            ids = [f"c{n}x{k}" for k in range(size)]
            engine.add_assistant(f"calling {n}", [ToolUse(i, "read", {"n": n}) for i in ids])
            open_calls.extend(ids)
        elif kind == "answer" and open_calls:
            engine.add_tool_result(open_calls.pop(size % len(open_calls)), words(3, f"r{n}"))
        elif kind == "foreign" and open_calls:  # a result entry a caller made, with its own id
            call = open_calls.pop(size % len(open_calls))
            eid = (f"e{900 + n}", f"e00{n}", f"x{n}")[size % 3]
            result = Entry(id=eid, blocks=(ToolResult(call, f"r{n}"),), role="tool", tokens=3)
            engine.session.window.write(engine.session.window.conversation, result)
        elif kind != "foreign":
            engine.request()
        c = engine.session
        conv = c.window.conversation
        info = analyze(conv.entries)
        held = {info.unit_of[i] for i in unsent(conv.entries, unsent_from(c))}
        expected = [
            i for i in range(len(conv.entries)) if info.is_protected(i) or info.unit_of[i] in held
        ]
        assert turn_indexes(c, conv) == expected
