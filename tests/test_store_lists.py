"""Linked lists of records (``regio.persistence.store.lists``): a list read back is the list kept,
and a save of a changed list writes only the nodes of new or changed items and of the items whose
successor changed, never the unchanged rest."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.persistence.store.lists import (
    DamagedListError,
    Recorder,
    content_items,
    id_items,
    read_ids,
    read_list,
)

IDS = st.lists(st.sampled_from(["", *(f"e{i}" for i in range(30))]), max_size=40)


def _save(
    ids: list[str], store: dict[str, bytes], before: Recorder | None, memo: bool = True
) -> tuple[Recorder, tuple[str, int]]:
    """Keep ``ids`` as the list ``@o/r`` against the digests and memo of the save ``before``
    (none: a first save; without ``memo`` only its digests, as after a load); ``store`` (the
    records a store holds) gets the puts and loses the keys no longer kept. Returns the save
    and the list's root."""
    rec = Recorder(before.digests if before else {}, before.next_memo if before and memo else {})
    root = rec.keep_list("@o/r", id_items(ids))
    for key in [k for k in store if k not in rec.digests]:
        del store[key]
    store.update(rec.put)
    return rec, root


@given(first=IDS, second=IDS, memo=st.booleans())
def test_property_a_kept_list_reads_back_and_a_change_writes_only_changed_nodes(
    first: list[str], second: list[str], memo: bool
) -> None:
    store: dict[str, bytes] = {}
    one, root = _save(first, store, None)
    assert read_ids("@o/r", root, store) == first
    two, root = _save(second, store, one, memo)
    assert read_ids("@o/r", root, store) == second
    before = id_items(first)
    after = id_items(second)
    successor_before = {
        k: (before[i + 1][0] if i + 1 < len(before) else "", v) for i, (k, v) in enumerate(before)
    }
    changed = {
        f"@o/r/{k}"
        for i, (k, v) in enumerate(after)
        if successor_before.get(k) != (after[i + 1][0] if i + 1 < len(after) else "", v)
    }
    assert set(two.put) == changed
    assert set(store) == {f"@o/r/{k}" for k, _ in after}


@given(
    first=IDS,
    extra=st.lists(st.sampled_from(["n1", "n2", "n3"]), min_size=1, max_size=3, unique=True),
)
def test_property_appending_to_a_list_writes_the_new_items_and_the_old_last(
    first: list[str], extra: list[str]
) -> None:
    store: dict[str, bytes] = {}
    one, _ = _save(first, store, None)
    two, _ = _save(first + extra, store, one)
    assert len(two.put) == len(extra) + (1 if first else 0)


def test_an_unchanged_list_writes_nothing() -> None:
    store: dict[str, bytes] = {}
    ids = [f"e{i}" for i in range(100)]
    one, _ = _save(ids, store, None)
    assert len(one.put) == 100
    assert _save(ids, store, one)[0].put == {}


@given(values=st.lists(st.binary(max_size=8), max_size=12))
def test_property_content_items_read_back_in_order_with_repeats(values: list[bytes]) -> None:
    rec = Recorder({}, {})
    root = rec.keep_list("@s/L/n", content_items(values))
    assert [v for _, v in read_list("@s/L/n", root, rec.put)] == values


def test_a_list_missing_a_node_is_reported_naming_the_item() -> None:
    rec = Recorder({}, {})
    root = rec.keep_list("@o/r", id_items(["a", "b", "c"]))
    del rec.put["@o/r/b"]
    with pytest.raises(DamagedListError, match="'b'"):
        read_ids("@o/r", root, rec.put)
    with pytest.raises(DamagedListError, match="runs past its 1 items"):
        read_ids("@o/r", ("a", 1), {"@o/r/a": msgspec.msgpack.encode(("b", None))})


def test_an_empty_id_is_an_item_like_any_other() -> None:
    rec = Recorder({}, {})
    root = rec.keep_list("@o/r", id_items(["", "a", ""]))
    assert read_ids("@o/r", root, rec.put) == ["", "a", ""]
