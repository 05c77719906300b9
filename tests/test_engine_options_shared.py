"""An engine's options are one value: assigning them reaches every part that reads them."""

from __future__ import annotations

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.regions import SlidingWindow
from regio.session._declared import adopt_context_window
from runtime_stubs import make_engine


def _engine() -> Engine:
    return make_engine([SlidingWindow(name="conversation", budget=4000)], max_tokens=8000)


def test_assigned_options_reach_the_budget_and_the_compactor() -> None:
    engine = _engine()
    new = attrs.evolve(engine.options, context_window=9000, standing_instructions="keep ids")
    engine.options = new
    assert engine.budget.options is new
    assert engine.session.options is new
    assert engine.options is new


def test_an_adopted_context_window_changes_the_ceiling() -> None:
    engine = _engine()
    before = engine.ceiling()
    adopt_context_window(engine, 2000, "TestProvider")
    assert engine.session.options.context_window == 2000
    assert engine.ceiling() < before


@settings(max_examples=30, deadline=None)
@given(window=st.integers(500, 200_000), reserve=st.integers(0, 400))
def test_every_part_reads_the_same_options(window: int, reserve: int) -> None:
    engine = _engine()
    engine.options = attrs.evolve(engine.options, context_window=window, output_reserve=reserve)
    assert engine.budget.options == engine.session.options == engine.options
    assert engine.budget.options.context_window == window


def test_assigned_options_set_the_cache_terms_they_imply() -> None:
    engine = make_engine(
        [SlidingWindow(name="conversation", budget=4000)],
        max_tokens=8000,
        provider="anthropic",
        model="claude-sonnet-4-6",
    )
    conv = engine.window.regions[0]
    assert engine.session.cache_ttl_s == 300.0
    engine.options = attrs.evolve(engine.options, provider="openai", model="gpt-4.1", ttl="1h")
    fresh = make_engine(
        [SlidingWindow(name="conversation", budget=4000)],
        max_tokens=8000,
        provider="openai",
        model="gpt-4.1",
        ttl="1h",
    )
    assert engine.session.cache_ttl_s == fresh.session.cache_ttl_s
    assert conv.cache_multipliers == fresh.window.regions[0].cache_multipliers
    assert conv.cache_multipliers != (1.25, 0.1)
