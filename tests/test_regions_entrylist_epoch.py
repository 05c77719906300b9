"""The append-only signal of a region's entry list (DESIGN.md section 6, engine overhead):
``EntryList.rewrite_epoch`` changes on every mutation that is not an append and never on an
append; the render log that trusts it equals a fresh computation after any in-place edits of
the live list."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text
from regio.layout import RenderLog
from regio.layout.assemble import _entry_split
from regio.layout.model import CHAIN_ROOT
from regio.regions import SlidingWindow
from regio.regions.entrylist import EntryList

_POOL = [
    Entry(f"e{i}", (Text(f"message {i}"),), "user" if i % 2 == 0 else "assistant", tokens=3 + i)
    for i in range(10)
]

APPENDS = ["append", "extend", "iadd"]
REWRITES = ["setitem", "setslice", "delitem", "delslice", "insert", "pop", "remove", "clear"]
REWRITES += ["sort", "reverse", "imul"]

ops = st.tuples(st.sampled_from(APPENDS + REWRITES), st.integers(0, 9), st.integers(0, 9))


def _mutate(lst: EntryList, op: str, a: int, b: int) -> EntryList:
    e = _POOL[b]
    n = len(lst)
    if op == "append":
        lst.append(e)
    elif op == "extend":
        lst.extend([e, _POOL[a]])
    elif op == "iadd":
        lst += [e]
    elif op == "setitem" and n:
        lst[a % n] = e
    elif op == "setslice":
        lst[a % (n + 1) :] = [e]
    elif op == "delitem" and n:
        del lst[a % n]
    elif op == "delslice":
        del lst[a % (n + 1) :]
    elif op == "insert":
        lst.insert(a, e)
    elif op == "pop" and n:
        lst.pop(a % n)
    elif op == "remove" and n:
        lst.remove(lst[a % n])
    elif op == "clear":
        lst.clear()
    elif op == "sort":
        lst.sort(key=lambda x: x.id)
    elif op == "reverse":
        lst.reverse()
    elif op == "imul":
        lst *= 1
    else:  # a rewrite of an empty list: make it a plain append so the step still does something
        lst.append(e)
        return lst
    return lst


@settings(max_examples=100, deadline=None)
@given(st.lists(ops, min_size=1, max_size=12))
def test_the_rewrite_epoch_changes_on_every_non_append_mutation_and_never_on_appends(
    steps: list[tuple[str, int, int]],
) -> None:
    lst = EntryList()
    for op, a, b in steps:
        before, was = lst.rewrite_epoch, list(lst)
        empty_rewrite = op in REWRITES and not lst and op not in ("setslice", "delslice")
        empty_rewrite = empty_rewrite and op not in ("insert", "clear", "sort", "reverse", "imul")
        _mutate(lst, op, a, b)
        if op in APPENDS or empty_rewrite:
            assert lst.rewrite_epoch == before
            assert lst[: len(was)] == was and all(x is y for x, y in zip(lst, was, strict=False))
        else:
            assert lst.rewrite_epoch > before


def test_a_region_keeps_an_entry_list_when_its_entries_are_reassigned() -> None:
    r = SlidingWindow(name="conversation", budget=1000)
    assert isinstance(r.entries, EntryList)
    r.entries = [_POOL[0]]
    assert isinstance(r.entries, EntryList) and r.entries == [_POOL[0]]


class _Window:
    max_tokens = 100_000
    regions: tuple[Any, ...] = ()


def _view(log: RenderLog, conv: list[Entry], source: Any) -> tuple[Any, ...]:
    log.sync(conv, source)
    view = log.conversation("regio", {}, CHAIN_ROOT, _entry_split, lambda b: 1)
    return (
        [(b.prefix_hash, b.tokens, b.region, b.message, b.source) for b in view.blocks],
        [repr(e) for e in view.events],
        view.tokens,
        sorted(e.id for e in conv if log.has_entry(e.id)),
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(ops, min_size=1, max_size=10))
def test_the_render_log_trusting_the_epoch_equals_a_fresh_computation(
    steps: list[tuple[str, int, int]],
) -> None:
    log = RenderLog()
    live = EntryList([_POOL[0], _POOL[1]])
    for op, a, b in [("append", 0, 2), *steps]:
        _mutate(live, op, a, b)
        conv = list(live)
        warm = _view(log, conv, live)  # append-only steps skip the prefix scan
        cold = _view(RenderLog(), conv, None)
        assert warm == cold
        assert warm[3] == sorted(e.id for e in conv)
