"""One bad number does not poison a session: a wild overflow or usage report moves the
calibration factor by one bounded step, later requests go out, and a saved or loaded factor
stays in range."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence_support import driven_engine
from regio.engine import Engine
from regio.errors import ContextOverflowError, RuntimeStateError
from regio.tokens import CalibrationResetWarning


def _overflow(reported: int) -> dict[str, object]:
    return {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": f"prompt is too long: {reported} tokens > 200000 maximum",
        },
        "status_code": 400,
    }


def test_one_overflow_report_far_above_the_estimate_does_not_block_later_requests(
    tmp_path: Path,
) -> None:
    engine = driven_engine(hook=None)
    engine.request()
    estimate = engine.state.last_estimate
    assert estimate < 2_000
    with contextlib.suppress(ContextOverflowError):
        engine.recover_overflow(_overflow(250_000))
    key = engine.budget.calibration_key()
    assert engine.calibration.factor(key) <= 2.0
    for _ in range(3):
        engine.add_user("and again")
        engine.request()  # never ContextOverflowError
        engine.observe({"input_tokens": engine.state.last_estimate, "output_tokens": 1})
    loaded = Engine.load(engine.save(tmp_path / "state.json"))
    assert loaded.calibration.factor(key) <= 2.0
    loaded.request()


def test_a_poisoned_factor_in_an_old_state_file_is_reset_with_a_warning_naming_the_file(
    tmp_path: Path,
) -> None:
    engine = driven_engine(hook=None)
    path = engine.save(tmp_path / "state.json")
    state = json.loads(path.read_text())
    key = engine.budget.calibration_key()
    state["calibration"]["records"][key]["factor"] = 360.23
    path.write_text(json.dumps(state))
    with pytest.warns(CalibrationResetWarning, match=r"state\.json.*factor 360\.23"):
        loaded = Engine.load(path)
    assert loaded.calibration.factor(key) == 1.0
    loaded.request()


def test_broken_calibration_settings_in_a_state_file_are_refused(tmp_path: Path) -> None:
    path = driven_engine(hook=None).save(tmp_path / "state.json")
    state = json.loads(path.read_text())
    state["calibration"]["smoothing"] = 7.0
    path.write_text(json.dumps(state))
    with pytest.raises(RuntimeStateError, match=r"state\.json.*smoothing"):
        Engine.load(path)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.integers(1, 10**9), min_size=1, max_size=8))
def test_property_no_sequence_of_usage_reports_blocks_a_small_request(
    tmp_path: Path, reports: list[int]
) -> None:
    engine = driven_engine(hook=None)
    for reported in reports:
        engine.request()
        engine.observe({"input_tokens": reported, "output_tokens": 1})
        factor = engine.calibration.factor(engine.budget.calibration_key())
        assert 1.0 <= factor <= engine.calibration.max_ratio
    engine.request()  # a ~100-token prompt fits a 199,000-token ceiling whatever was reported
    again = Engine.load(engine.save(tmp_path / "state.json"))
    assert again.calibration.to_state() == engine.calibration.to_state()
