"""A save's work follows what changed since the last save, not the session's length: the last
request's blocks that are the very blocks of the last save (a settled prefix the render log
kept) are not keyed, stripped or compared again, and a stored list (an entry order, the
request's block index) that grew at its end is walked from its first changed item, not from
its head. (The records a save writes were already bounded; this bounds the work that finds
them, which the proxy pays on every request.) The window's entries, the block index and the
call index are taken from the last save's up to their first change the same way, so the Python
steps a save takes in the store's code are as many at turn 60 as at turn 5.)"""

from __future__ import annotations

import hashlib
import os
import sys
import types
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence.store import SQLiteStore, blocks, lists, parts
from runtime_stubs import StubCounter
from store_support import play_turn, store_engine


class _Count:
    """Counts the block keys a save derives and the list items it walks item by item."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.keys = 0
        self.walked = 0

        def blake2b(data: bytes, **kw: Any) -> Any:
            self.keys += 1
            return hashlib.blake2b(data, **kw)

        monkeypatch.setattr(blocks, "hashlib", types.SimpleNamespace(blake2b=blake2b))
        successors = lists._successors

        def counted(items: Any) -> Any:
            self.walked += len(items)
            return successors(items)

        monkeypatch.setattr(lists, "_successors", counted)


def _one_more_turn(path: Any, turns: int) -> tuple[SQLiteStore, Engine]:
    """A store at ``path`` holding ``turns`` turns of a session, and its engine one turn on."""
    db = SQLiteStore(path)
    engine = store_engine()
    for turn in range(1, turns + 1):
        play_turn(engine, turn)
        engine.save_to(db)
    play_turn(engine, turns + 1)
    return db, engine


def _check_and_close(db: SQLiteStore, engine: Engine) -> None:
    """The saved session loads to the engine's request; ``db`` closed."""
    loaded = Engine.load_from(db, "s", token_counter=StubCounter())
    assert loaded.request()[1] == engine.request()[1]
    db.close()


def _save_work(monkeypatch: pytest.MonkeyPatch, tmp_path: Any, turns: int) -> tuple[int, int]:
    db, engine = _one_more_turn(tmp_path / f"s{turns}.db", turns)
    with monkeypatch.context() as patch:
        count = _Count(patch)
        engine.save_to(db)
    _check_and_close(db, engine)
    return count.keys, count.walked


def test_a_save_after_one_more_turn_keys_and_walks_as_much_at_turn_60_as_at_turn_5(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    early = _save_work(monkeypatch, tmp_path, 5)
    late = _save_work(monkeypatch, tmp_path, 60)
    assert late[0] <= early[0] + 2, (early, late)  # the turn's new blocks (and the tail's)
    assert late[1] <= early[1] + 4, (early, late)  # the changed items of each list


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.booleans(), st.integers(0, 30)), min_size=1, max_size=12))
def test_property_a_list_saved_from_its_first_change_stores_what_a_whole_save_stores(
    changes: list[tuple[bool, int]],
) -> None:
    """Each step inserts or removes an item of a list: a save that takes the memo's common
    prefix keeps and writes the records a save from scratch against the same store does."""
    items = [(f"k{i}", None) for i in range(8)]
    stored: dict[str, str] = {}
    memo: dict[str, Any] = {}
    fresh = 100
    for append, at in changes:
        if append or not items:
            items.insert(min(at, len(items)), (f"k{fresh}", lists._encode(fresh)))
            fresh += 1
        else:
            items.pop(at % len(items))
        rec = lists.Recorder(stored, memo)
        root = rec.keep_list("@o/c", items)
        whole = lists.Recorder(stored, {})
        assert whole.keep_list("@o/c", items) == root
        assert (rec.digests, rec.put) == (whole.digests, whole.put)
        stored, memo = dict(rec.digests), rec.next_memo  # the store after the save


_STORE_CODE = os.sep + os.path.join("persistence", "store") + os.sep


def _save_steps(tmp_path: Any, turns: int) -> int:
    """The calls (Python functions and builtins) the store's own code makes in a save after
    one more turn."""
    db, engine = _one_more_turn(tmp_path / f"steps{turns}.db", turns)
    steps = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal steps
        if event in ("call", "c_call") and _STORE_CODE in frame.f_code.co_filename:
            steps += 1

    sys.setprofile(count)
    try:
        engine.save_to(db)
    finally:
        sys.setprofile(None)
    _check_and_close(db, engine)
    return steps


def test_a_save_after_one_more_turn_takes_as_many_python_steps_at_turn_60_as_at_turn_5(
    tmp_path: Any,
) -> None:
    """Turn 60's window holds ten times turn 5's blocks (244 against 24); the store's code
    steps through what changed (main before this: 915 steps at turn 5, 5,870 at turn 60)."""
    early, late = _save_steps(tmp_path, 5), _save_steps(tmp_path, 60)
    assert late <= early + 60, (early, late)


class _Entry(msgspec.Struct, frozen=True):
    id: str
    text: str


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    changes=st.lists(
        st.tuples(st.sampled_from(["insert", "remove", "rewrite"]), st.integers(0, 30)),
        min_size=1,
        max_size=12,
    )
)
def test_property_objects_kept_from_their_first_change_store_what_a_whole_save_stores(
    changes: list[tuple[str, int]],
) -> None:
    """Each step inserts, removes or rewrites an entry of a region: a save that takes the
    memo's leading entries keeps and writes the records a save from scratch against the same
    store does."""
    values = [_Entry(f"e{i}", f"text {i}") for i in range(8)]
    stored: dict[str, str] = {}
    memo: dict[str, Any] = {}
    fresh = 100
    for change, at in changes:
        if change == "insert" or not values:
            values.insert(min(at, len(values)), _Entry(f"e{fresh}", f"text {fresh}"))
            fresh += 1
        elif change == "remove":
            values.pop(at % len(values))
        else:
            old = values[at % len(values)]
            values[at % len(values)] = _Entry(old.id, old.text + " again")
        rec = lists.Recorder(stored, memo)
        rec.keep_objects("conversation", values)
        whole = lists.Recorder(stored, {})
        whole.keep_objects("conversation", values)
        assert (rec.digests, rec.put) == (whole.digests, whole.put)
        stored, memo = dict(rec.digests), rec.next_memo  # the store after the save


_BLOCK_STEP = st.tuples(
    st.integers(0, 12),  # how many of the last request's blocks the next one keeps
    st.lists(st.integers(0, 5), max_size=5),  # the new blocks after them (repeats collide)
    st.sampled_from(["none", "copy", "marker", "message", "other"]),  # an edit before the cut
    st.integers(0, 12),  # where that edit falls
    st.booleans(),  # whether the new blocks' prefix hashes are the digest chain
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_BLOCK_STEP, min_size=1, max_size=8))
def test_property_request_blocks_keyed_from_the_last_save_store_what_a_whole_save_stores(
    steps: list[tuple[int, list[int], str, int, bool]],
) -> None:
    """Each request keeps a prefix of the last one's block objects and adds blocks (the same
    digest and source more than once, chained or not), and may replace a kept block by an
    equal copy, move a marker or a message index, or put another block in its place (the
    kept blocks after it repeat its digest one time less): the request saved through the last save's
    memo gives the index, its list items, the records and the writes a save from scratch
    gives."""
    from regio.content import Text
    from regio.layout.model import LayoutBlock, Request

    current: list[LayoutBlock] = []
    stored: dict[str, str] = {}
    memo: dict[str, Any] = {}
    made = 0
    for keep, new, edit, at, chained in steps:
        current = current[: min(keep, len(current))]
        if current and edit != "none":
            i = at % len(current)
            b = current[i]
            if edit == "copy":  # an equal block, another object
                current[i] = msgspec.structs.replace(b)
            elif edit == "marker":
                current[i] = msgspec.structs.replace(b, breakpoint=None if b.breakpoint else "5m")
            elif edit == "message":
                current[i] = msgspec.structs.replace(b, message=(b.message or 0) + 1)
            else:  # another block in its place: the repetitions of its digest after it shift
                current[i] = msgspec.structs.replace(b, digest=f"x{at}", source="other")
        root = current[-1].prefix_hash if current else None
        hashes = blocks.chain([f"d{k}" for k in new], root=root or None)
        for k, h in zip(new, hashes, strict=True):
            made += 1
            current.append(
                LayoutBlock(
                    level="messages", role="user", tokens=5, digest=f"d{k}",
                    prefix_hash=h if chained else "", block=Text(f"text {k}"), message=made,
                    source=f"e{k % 3}", breakpoint="5m" if made % 4 == 0 else None,
                )
            )  # fmt: skip
        request = Request(strategy="test", blocks=tuple(current))
        rec = lists.Recorder(stored, memo)
        carried = blocks.keyed_request(request, rec)
        whole_rec = lists.Recorder(stored, {})
        assert carried == blocks.keyed_request(request, whole_rec)
        index = carried[1]  # its ``@i`` list items, taken from the last save's up to a change
        assert parts._index_items(index, rec) == parts._index_items(index, whole_rec)
        assert (rec.digests, rec.put) == (whole_rec.digests, whole_rec.put)
        stored, memo = dict(rec.digests), rec.next_memo  # the store after the save
