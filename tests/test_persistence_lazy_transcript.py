"""``Engine.load`` of a state file decodes the transcript on first use: the load builds the
window, the ledger and the bookkeeping; the transcript's records are checked as well-formed and
checked to have a record's shape (a record that has not refuses the load, naming the file), and
built when something reads them. Saving a loaded engine writes what it loaded, never decoding
the records it has not read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.errors import RuntimeStateError
from regio.persistence.store import SQLiteStore
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine
from store_support import play_turn


def _clock() -> float:
    return 1_764_547_200.0


def store_engine() -> Engine:
    regions = [Pinned(name="system", budget=2_000), SlidingWindow(name="conversation", budget=900)]
    return make_engine(regions, max_tokens=4_000, session_id="s", clock=_clock)


def _load(path: Path) -> Engine:
    return Engine.load(path, token_counter=StubCounter(), clock=_clock)


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_a_loaded_state_file_decodes_its_transcript_on_first_use(
    tmp_path: Path, suffix: str
) -> None:
    engine = store_engine()
    for turn in range(1, 8):
        play_turn(engine, turn)
    loaded = _load(engine.save(tmp_path / f"s{suffix}"))
    assert not loaded.transcript_log.decoded
    assert len(loaded.transcript_log) == len(engine.transcript_log)
    for e in (engine, loaded):
        play_turn(e, 8)
    store = SQLiteStore(tmp_path / "s.db")
    loaded.save_to(store)  # an incremental save of a loaded file reads the history it appends
    store.close()
    assert loaded.transcript() == engine.transcript()


def _damaged(tmp_path: Path, damage: Any) -> tuple[Engine, Path]:
    """An engine after 3 turns and its JSON state file with ``damage(data)`` applied."""
    engine = store_engine()
    for turn in range(1, 4):
        play_turn(engine, turn)
    path = engine.save(tmp_path / "s.json")
    data = json.loads(path.read_bytes())
    damage(data)
    path.write_text(json.dumps(data), encoding="utf-8")
    return engine, path


@pytest.mark.parametrize(
    "damage",
    [
        lambda d: d["transcript"].__setitem__(2, {"bogus": 1}),
        lambda d: d["transcript"][2].__setitem__("kind", 5),
        lambda d: d["transcript"][1].__setitem__("seq", "one"),
        lambda d: d["transcript"][0].pop("region"),
    ],
    ids=["foreign-record", "kind", "seq", "missing-field"],
)
def test_a_load_refuses_a_damaged_transcript_record_up_front_naming_the_file(
    tmp_path: Path, damage: Any
) -> None:
    _, path = _damaged(tmp_path, damage)
    before = path.read_bytes()
    with pytest.raises(RuntimeStateError, match=f"^{path}: not a regio engine state"):
        _load(path)
    assert path.read_bytes() == before  # nothing stored is touched


def test_a_damaged_entry_inside_a_record_is_written_back_unchanged_and_reported_when_read(
    tmp_path: Path,
) -> None:
    engine, path = _damaged(tmp_path, lambda d: d["transcript"][2]["entry"].pop("blocks"))
    loaded = _load(path)
    assert loaded.request()[1] == engine.request()[1]  # the window is intact
    play_turn(loaded, 4)
    again = loaded.save(tmp_path / "again.json")  # saving never decodes the loaded records
    saved = json.loads(again.read_bytes())["transcript"]
    assert saved[:3] == json.loads(path.read_bytes())["transcript"][:3]
    assert len(saved) == len(loaded.transcript_log)
    with pytest.raises(RuntimeStateError, match=f"^{path}: a transcript record is damaged"):
        loaded.transcript()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.integers(0, 12), suffix=st.sampled_from([".json", ".msgpack"]), read=st.booleans())
def test_property_save_of_a_loaded_engine_writes_the_state_it_loaded(
    tmp_path_factory: Any, turns: int, suffix: str, read: bool
) -> None:
    folder = Path(tmp_path_factory.mktemp("lazyfile"))
    engine = store_engine()
    for turn in range(1, turns + 1):
        play_turn(engine, turn)
    other = ".msgpack" if suffix == ".json" else ".json"
    first = engine.save(folder / f"a{suffix}")
    loaded = _load(first)
    if read:
        assert loaded.transcript() == engine.transcript()
    second = loaded.save(folder / f"b{suffix}")
    assert second.read_bytes() == first.read_bytes()
    converted = loaded.save(folder / f"b{other}")  # the other format: the records converted
    assert converted.read_bytes() == engine.save(folder / f"a{other}").read_bytes()


@pytest.mark.parametrize("suffix", [".json", ".msgpack"])
def test_new_items_after_a_load_read_only_the_new_turn(tmp_path: Path, suffix: str) -> None:
    engine = store_engine()
    for turn in range(1, 8):
        play_turn(engine, turn)
    loaded = _load(engine.save(tmp_path / f"s{suffix}"))
    for e in (engine, loaded):
        play_turn(e, 8)
    assert [x.id for x in loaded.new_items()] == [x.id for x in engine.new_items()]
    assert loaded.new_items()  # the turn's messages, not an empty list
    assert not loaded.transcript_log.decoded  # the stored turns were never decoded
    # an earlier turn reaches into the stored records, and is read from them
    early = loaded.transcript_log.new_items(3)
    assert [x.id for x in early] == [x.id for x in engine.transcript_log.new_items(3)] and early
