"""The text a caller sends beside the window (``EngineBudget.send_beside``: the LangChain
middleware's system prompt) is counted in every request's size; a save records its tokens, so
a loaded engine (file as JSON or msgpack, or a session store) counts the same size, ceiling and
trigger as the one that was saved. State files written before the field existed load with 0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import driven_engine, reload_engine
from regio.engine import Engine
from state_fixture_support import FIXTURES

CALLER = "Always answer in English and cite the file you read. " * 40


def _accounting(engine: Engine) -> tuple[int, int, int, int]:
    return (
        engine.budget.beside_tokens,
        engine.size(),
        engine.ceiling(),
        engine.budget.estimate(),
    )


@pytest.mark.parametrize("how", ["json", "msgpack", "store"])
def test_a_loaded_engine_counts_the_text_sent_beside_the_window(tmp_path: Path, how: str) -> None:
    engine = driven_engine(hook=None)
    sent = engine.budget.send_beside(CALLER)
    assert sent > 100
    loaded = reload_engine(engine, tmp_path, how)
    assert loaded.budget.beside_tokens == sent
    assert _accounting(loaded) == _accounting(engine)


@pytest.mark.parametrize("how", ["json", "msgpack", "store"])
def test_a_later_save_records_the_text_sent_beside_cleared(tmp_path: Path, how: str) -> None:
    engine = driven_engine(hook=None)
    engine.budget.send_beside(CALLER)
    reload_engine(engine, tmp_path, how)
    engine.budget.send_beside("")
    loaded = reload_engine(engine, tmp_path, how)
    assert loaded.budget.beside_tokens == 0
    assert _accounting(loaded) == _accounting(engine)


@pytest.mark.parametrize("name", ["main-20261201.json", "main-20261201.msgpack"])
def test_a_state_file_without_the_count_loads_with_none_sent_beside(name: str) -> None:
    loaded = Engine.load(FIXTURES / name)
    assert loaded.budget.beside_tokens == 0


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(st.text(max_size=300), min_size=1, max_size=3),
    how=st.sampled_from(["json", "msgpack", "store"]),
)
def test_the_size_after_save_and_load_is_the_size_before(
    tmp_path_factory: Any, texts: list[str], how: str
) -> None:
    folder = Path(tmp_path_factory.mktemp("beside"))
    engine = driven_engine(hook=None)
    for text in texts:
        engine.budget.send_beside(text)
        loaded = reload_engine(engine, folder, how)
        assert _accounting(loaded) == _accounting(engine)
