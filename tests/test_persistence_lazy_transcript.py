"""``Engine.load`` of a state file decodes the transcript on first use: the load builds the
window, the ledger and the bookkeeping; the transcript's records are checked as well-formed and
counted, and built when something reads them. Saving a loaded engine writes what it loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.regions import Pinned, SlidingWindow
from regio.runtime import Engine
from regio.runtime.errors import RuntimeStateError
from regio.store import SQLiteStore
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


def test_a_damaged_transcript_record_is_reported_naming_the_file_when_read(
    tmp_path: Path,
) -> None:
    engine = store_engine()
    for turn in range(1, 4):
        play_turn(engine, turn)
    path = engine.save(tmp_path / "s.json")
    data = json.loads(path.read_bytes())
    data["transcript"][2]["kind"] = 5
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = _load(path)
    assert loaded.request()[1] == engine.request()[1]  # the window is intact
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
    first = engine.save(folder / f"a{suffix}")
    loaded = _load(first)
    if read:
        assert loaded.transcript() == engine.transcript()
    second = loaded.save(folder / f"b{suffix}")
    assert second.read_bytes() == first.read_bytes()
