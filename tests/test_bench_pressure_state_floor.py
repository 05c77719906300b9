"""A blueprint scaled to a small window keeps room for its small states.

A region sized for one small state (SWE-agent's status footer in the coding example's
300-token ``env_state``) does not shrink with the window below ``STATE_FLOOR_TOKENS``: scaled
to 18 tokens at a 12,288-token window it refused every footer.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.cli import examples_dir
from regio.bench.pressure import STATE_FLOOR_TOKENS, scale_blueprint
from regio.bench.replay import replay
from regio.blueprint import load_blueprint
from regio.traces.detect import expand_sources, import_file

CODING = examples_dir() / "blueprints" / "coding-agent.yaml"


def _budgets(bp):  # type: ignore[no-untyped-def]
    return {r.name: r.budget for r in bp.regions}


@settings(max_examples=30, deadline=None)
@given(window=st.integers(12_288, 150_000))
def test_no_scaled_region_budget_falls_below_the_state_floor(window: int) -> None:
    bp = load_blueprint(CODING)
    before, after = _budgets(bp), _budgets(scale_blueprint(bp, window))
    for name, budget in before.items():
        if isinstance(budget, int):
            assert after[name] >= min(budget, STATE_FLOOR_TOKENS), name
            assert after[name] <= budget, name


def test_large_regions_still_scale_with_the_window() -> None:
    bp = load_blueprint(CODING)
    scaled = _budgets(scale_blueprint(bp, 32_768))
    assert scaled["conversation_history"] < _budgets(bp)["conversation_history"]
    assert scaled["env_state"] == STATE_FLOOR_TOKENS


def test_the_coding_example_at_12288_tokens_files_every_swe_agent_footer() -> None:
    bp = load_blueprint(CODING)
    folder = examples_dir() / "traces" / "swe-agent"
    trace = next(t for p in expand_sources([folder]) for t in import_file(p).traces)
    out = replay(trace, bp, layouts=("regio",), window_tokens=12_288)
    assert out.region_writes > 0
    assert out.refused_writes == 0
