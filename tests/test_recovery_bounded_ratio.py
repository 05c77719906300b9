"""One overflow report far above the estimate does not make recovery itself fail: the one-off
compaction of ``recover_overflow`` scales by the bounded ratio of the calibration rule."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import driven_engine
from regio.engine._recovery import RetryToken
from regio.session._options import EngineOptions


def _overflow(reported: int) -> dict[str, object]:
    return {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {reported} tokens > 200000 maximum",
        },
        "status_code": 400,
    }


def test_one_wild_overflow_report_gives_a_retry_not_an_overflow_error() -> None:
    engine = driven_engine(hook=None)
    engine.request()
    assert engine.state.last_estimate < 2_000
    token = engine.recover_overflow(_overflow(250_000))  # 360x the estimate
    assert isinstance(token, RetryToken)
    assert token.tokens_after <= token.ceiling
    assert token.tokens_after <= 4 * engine.budget.estimate() + 1  # the bounded ratio, not 360
    engine.request()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ratio=st.floats(min_value=1.0, max_value=10_000.0))
def test_a_small_prompt_always_recovers_whatever_ratio_is_reported(ratio: float) -> None:
    engine = driven_engine(hook=None)
    engine.request()
    reported = max(int(engine.state.last_estimate * ratio), 1)
    token = engine.recover_overflow(_overflow(reported))
    assert isinstance(token, RetryToken) and token.tokens_after <= token.ceiling
    scale = token.tokens_after / max(engine.budget.estimate(), 1)
    assert scale <= engine.calibration.max_ratio + 0.01


@pytest.mark.parametrize("window", [0, -1, -200_000, True, 1.5])
def test_a_non_positive_context_window_is_refused_where_it_is_given(window: object) -> None:
    with pytest.raises(ValueError, match="context_window"):
        EngineOptions(context_window=window)  # type: ignore[arg-type]
