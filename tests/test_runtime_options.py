"""The engine's options: one frozen value, defaults declared once, saved as they are."""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint.spec import LayoutSpec
from regio.engine import Engine
from regio.regions import SlidingWindow, Temporary
from regio.session import EngineOptions
from regio.tokens import get_counter
from runtime_stubs import make_engine

RUNTIME = Path(__file__).resolve().parents[1] / "src" / "regio" / "runtime"


def _engine(**options: object) -> Engine:
    return make_engine(
        [SlidingWindow(name="conversation", budget=5_000), Temporary(name="scratch", budget=1_000)],
        counter=get_counter("heuristic"),
        **options,
    )


def test_engine_defaults_agree_with_the_blueprint_defaults() -> None:
    layout = LayoutSpec()
    options = EngineOptions()
    assert (options.chunk_tokens, options.settle_share) == (
        layout.chunk_tokens,
        layout.settle_share,
    )
    assert options.strategy == layout.strategy


def test_options_are_frozen_and_changed_by_evolve() -> None:
    options = EngineOptions()
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        options.chunk_tokens = 10  # type: ignore[misc]
    assert attrs.evolve(options, chunk_tokens=10).chunk_tokens == 10


@pytest.mark.parametrize(
    ("name", "value"),
    [("no_progress_limit", 0), ("chunk_tokens", 0), ("settle_share", 0.0), ("carry_forward", "x")],
)
def test_an_option_out_of_range_is_refused_naming_it(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name):
        EngineOptions(**{name: value})  # type: ignore[arg-type]


def test_an_unknown_engine_keyword_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="chunk_size"):
        _engine(chunk_size=3)


def test_option_keywords_override_the_options_value() -> None:
    engine = _engine(options=EngineOptions(strategy="naive", ttl="1h"), strategy="kind")
    assert (engine.options.strategy, engine.options.ttl) == ("kind", "1h")
    assert engine.budget.options is engine.options is engine.session.options


@settings(max_examples=25, deadline=None)
@given(
    chunk_tokens=st.integers(1, 10_000),
    settle_share=st.floats(0.001, 1.0),
    no_progress_limit=st.integers(1, 9),
    carry_forward=st.sampled_from(["append", "replace"]),
    compact_trigger=st.none() | st.integers(1, 100_000),
    cut_at_turns=st.booleans(),
)
def test_saved_options_load_back_equal(
    tmp_path_factory: pytest.TempPathFactory, **values: object
) -> None:
    engine = _engine(**values)
    path = engine.save(tmp_path_factory.mktemp("state") / "engine.json")
    loaded = Engine.load(path)
    assert loaded.options == engine.options


def test_no_runtime_module_imports_the_engine_back() -> None:
    offenders = []
    for path in sorted(RUNTIME.glob("*.py")):
        if path.name in ("engine.py", "__init__.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("engine"):
                offenders.append(path.name)
            if isinstance(node, ast.ImportFrom) and any(a.name == "Engine" for a in node.names):
                offenders.append(path.name)
    assert offenders == []
