"""Sessions stored by older regio versions load, render the same and save on in the current
format: ``tests/fixtures/state/main-20261201-head3.db`` was written by regio's main of
2026-12-01 (``regio.session-head/3``: each window-sized part one record, rewritten whole when
it changed), built by ``state_fixture_support.fixture_engine`` saved after every turn; a
``regio.session-head/2`` session (layout states under the fixed keys ``@ls`` / ``@li``) is
made from it by rewriting its head. ``main-20261201-head4.db`` is the same session as regio's
main of 2026-12-01 later wrote it (``regio.session-head/4``: the relief originals' call ids in
the head), and ``main-20261201-head5.db`` as it wrote it after that (``regio.session-head/5``:
the call ids a linked list of ``@rl/`` records, newest first). Each saves on with its originals
as ``@ro/`` and ``@rn/`` records and nothing of the old layout left."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import msgspec
from msgspec.structs import replace

from regio.engine import Engine
from regio.persistence._statefile import engine_state
from regio.persistence.store import SQLiteStore
from regio.persistence.store.base import HEAD_FORMAT
from state_fixture_support import FIXTURES, SHELL, Ticks, fixture_engine, unmarked, unwatched

HEAD3 = FIXTURES / "main-20261201-head3.db"
HEAD4 = FIXTURES / "main-20261201-head4.db"
HEAD5 = FIXTURES / "main-20261201-head5.db"


def _head(path: Path, session_id: str) -> dict[str, object]:
    with contextlib.closing(sqlite3.connect(path)) as db:
        (raw,) = db.execute("select head from sessions where id = ?", (session_id,)).fetchone()
    return dict(msgspec.msgpack.decode(raw))


def _as_head_2(path: Path, session_id: str) -> None:
    """Rewrite a ``regio.session-head/3`` session as a ``regio.session-head/2`` one: its
    layout states under the fixed keys ``@ls`` / ``@li`` (what regio wrote before the digest
    keys)."""
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        (raw,) = db.execute("select head from sessions where id = ?", (session_id,)).fetchone()
        head = msgspec.msgpack.decode(raw)
        last, carried = head.pop("layouts")
        renamed = {last: "@ls", carried: "@li"}
        for key, old in ((last, "@ls"), (carried, "@li")):
            (data,) = db.execute(
                "select data from entries where session = ? and key = ?", (session_id, key)
            ).fetchone()
            db.execute("insert into entries values (?, ?, ?)", (session_id, old, data))
        db.execute("delete from entries where session = ? and key like '@ls/%'", (session_id,))
        head["parts"] = [renamed.get(k, k) for k in head["parts"]]
        head["format"] = "regio.session-head/2"
        db.execute(
            "update sessions set head = ? where id = ?",
            (msgspec.msgpack.encode(head), session_id),
        )


def _loads_renders_and_saves_on(path: Path) -> None:
    rebuilt = fixture_engine()
    store = SQLiteStore(path)
    try:
        loaded = Engine.load_from(store, "fixture", clock=Ticks())
        assert engine_state(loaded) == unmarked(engine_state(rebuilt))  # saved before kept
        assert loaded.state.layout_input == unwatched(rebuilt.state.layout_input)
        assert loaded.state.last_request == unwatched(
            replace(rebuilt.state.last_request, events=())
        )
        for engine in (loaded, rebuilt):
            engine.add_user("and the next turn")
        assert loaded.request(tools=[SHELL])[1] == rebuilt.request(tools=[SHELL])[1]
        loaded.save_to(store)  # an old session saves on in the current format
        assert _head(path, "fixture")["format"] == HEAD_FORMAT
        again = Engine.load_from(store, "fixture", clock=Ticks())
        assert engine_state(again) == engine_state(loaded)
        keys = {k for (k,) in store._db.execute("select key from entries")}
        assert not {k for k in keys if k.startswith(("@order/", "@ls/", "@ri", "@cg", "@rl"))}
        calls = list(rebuilt.book.relief.originals)
        assert {k for k in keys if k.startswith(("@ro/", "@rn/"))} == {
            f"{prefix}{c}" for c in calls for prefix in ("@ro/", "@rn/")
        }
        lazy = Engine.load_from(store, "fixture", clock=Ticks())  # originals read on demand
        assert lazy.book.relief.originals.lazy
        assert all(
            lazy.book.relief.originals.get(c) == rebuilt.book.relief.originals[c] for c in calls
        )
        assert lazy.book.relief.originals == rebuilt.book.relief.originals
    finally:
        store.close()


def test_a_session_saved_by_main_of_2026_12_01_loads_renders_and_saves_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "head3.db"
    shutil.copyfile(HEAD3, path)
    assert _head(path, "fixture")["format"] == "regio.session-head/3"
    _loads_renders_and_saves_on(path)


def test_a_head_2_session_with_fixed_layout_keys_loads_renders_and_saves_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "head2.db"
    shutil.copyfile(HEAD3, path)
    _as_head_2(path, "fixture")
    assert _head(path, "fixture")["format"] == "regio.session-head/2"
    _loads_renders_and_saves_on(path)


def test_a_head_4_session_with_its_originals_in_the_head_loads_renders_and_saves_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "head4.db"
    shutil.copyfile(HEAD4, path)
    old = _head(path, "fixture")
    assert old["format"] == "regio.session-head/4"
    assert old["originals"] == [f"call_{t}" for t in range(6)]
    _loads_renders_and_saves_on(path)
    new = _head(path, "fixture")
    assert new["originals"] is None and new["originals_seq"] == 6  # @rn/ records now


def test_a_head_5_session_with_its_originals_listed_loads_renders_and_saves_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "head5.db"
    shutil.copyfile(HEAD5, path)
    old = _head(path, "fixture")
    assert old["format"] == "regio.session-head/5"
    assert old["lists"]["@rl"] == ["call_5", 6]  # type: ignore[index]
    _loads_renders_and_saves_on(path)
    new = _head(path, "fixture")
    assert "@rl" not in new["lists"] and new["originals_seq"] == 6  # type: ignore[operator]
