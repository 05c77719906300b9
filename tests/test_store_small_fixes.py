"""Small invariants of the stored session: ``|=`` on the relief originals is a logged set like
any other (a save writes it), a lazy store load decodes the head once, and the ledger's
totals are the sums of the records' own fields."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import ToolResult
from regio.persistence.store import SQLiteStore, encode_save
from regio.session._reliefbook import Originals
from test_store_originals_append_only import _load, _saved_session

_IDS = st.sampled_from([f"c{i}" for i in range(5)])


@settings(max_examples=60, deadline=None)
@given(st.lists(_IDS, unique=True, max_size=5), st.lists(_IDS, max_size=5))
def test_or_assign_is_a_logged_set_of_each_call(first: list[str], then: list[str]) -> None:
    originals = Originals({c: ToolResult(c, "old") for c in first})
    new = {c: ToolResult(c, "new") for c in then}
    originals |= new
    assert isinstance(originals, Originals)
    assert originals.changes == list(new)
    assert list(originals) == [c for c in first if c not in new] + list(new)


def test_or_assign_after_a_lazy_load_is_saved(tmp_path: Path) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        _saved_session(db, 8)
        loaded = _load(db)
        originals = loaded.book.relief.originals
        originals |= {"x1": ToolResult("x1", "kept whole")}
        put = encode_save(loaded, loaded.store_mark).put
        assert sorted(k for k in put if k.startswith(("@ro/", "@rn/"))) == ["@rn/x1", "@ro/x1"]
    finally:
        db.close()


def test_a_lazy_store_load_decodes_the_head_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        _saved_session(db, 8)
        head = db.load_window("r")[0]
        seen: list[Any] = []
        decode = msgspec.msgpack.decode

        def counting(data: Any, **kwargs: Any) -> Any:
            if bytes(data) == head:
                seen.append(kwargs.get("type"))
            return decode(data, **kwargs)

        monkeypatch.setattr(msgspec.msgpack, "decode", counting)
        _load(db)
        assert len(seen) == 1
    finally:
        db.close()
