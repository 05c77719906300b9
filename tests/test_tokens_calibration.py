"""Calibration from provider-reported prompt tokens (DESIGN.md §4, FC-18)."""

from __future__ import annotations

import itertools

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.tokens import (
    Calibration,
    CalibrationRecord,
    CalibrationResetWarning,
    CalibrationState,
    CalibrationStateError,
)

SETTINGS = settings(max_examples=80, deadline=None)
KEY = ("anthropic", "claude-sonnet-4")


def test_fc_18_the_factor_after_one_report_is_the_reported_ratio() -> None:
    calibration = Calibration()
    calibration.observe(KEY, estimated=100_000, reported=122_000)
    assert calibration.factor(KEY) == pytest.approx(1.22, abs=0.001)


def test_fc_18_turn_two_puts_the_size_at_or_above_the_trigger() -> None:
    calibration = Calibration()
    calibration.observe(KEY, 100_000, 122_000)
    size = 122_000 + calibration.correct(KEY, 40_000)
    assert size >= 170_800
    assert 140_000 < 170_000 <= size  # the raw estimate would not have fired


def test_fc_18_a_five_percent_margin_is_applied_on_top() -> None:
    calibration = Calibration(margin=0.05)
    calibration.observe(KEY, 100_000, 122_000)
    assert calibration.correct(KEY, 100_000) == 128_100
    assert calibration.factor(KEY) == pytest.approx(1.22, abs=0.001)


def test_fc_18_each_provider_and_model_keeps_its_own_factor() -> None:
    calibration = Calibration()
    calibration.observe(("anthropic", "claude-sonnet-4"), 100_000, 122_000)
    calibration.observe(("openai", "gpt-4o"), 100_000, 101_000)
    assert calibration.factor(("anthropic", "claude-sonnet-4")) == pytest.approx(1.22)
    assert calibration.factor(("openai", "gpt-4o")) == pytest.approx(1.01)
    assert calibration.factor(("anthropic", "claude-haiku-3")) == 1.0
    assert calibration.correct(("openai", "gpt-5"), 1_000) == 1_000


def test_the_factor_moves_as_a_moving_average_toward_the_median_of_recent_reports() -> None:
    calibration = Calibration(smoothing=0.5)
    calibration.observe(KEY, 100, 120)
    calibration.observe(KEY, 100, 140)
    # median(1.2, 1.4) = 1.3; 1.2 + 0.5 * (1.3 - 1.2) = 1.25
    assert calibration.factor(KEY) == pytest.approx(1.25)
    record = calibration.record(KEY)
    assert record is not None
    assert record.observations == 2
    assert record.last_ratio == pytest.approx(1.4)


def test_over_count_evidence_moves_the_factor_toward_one_but_never_below() -> None:
    calibration = Calibration(smoothing=0.5)
    calibration.observe(KEY, 100, 140)
    calibration.observe(KEY, 100, 50)  # we over-counted this time: counts as 1.0
    # median(1.4, 1.0) = 1.2; 1.4 + 0.5 * (1.2 - 1.4) = 1.3
    assert calibration.factor(KEY) == pytest.approx(1.3)
    for _ in range(50):
        calibration.observe(KEY, 100, 50)
    assert calibration.factor(KEY) == pytest.approx(1.0)
    assert calibration.factor(KEY) >= 1.0
    fresh = Calibration()
    fresh.observe(KEY, 1000, 800)
    assert fresh.factor(KEY) == 1.0
    assert fresh.correct(KEY, 1000) == 1000


@pytest.mark.parametrize(("estimated", "reported"), [(0, 10), (-5, 10), (10, 0), (10, -1)])
def test_a_non_positive_observation_is_refused_with_the_fix(estimated: int, reported: int) -> None:
    calibration = Calibration()
    with pytest.raises(ValueError, match="must be positive"):
        calibration.observe(KEY, estimated, reported)
    assert calibration.keys == ()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"smoothing": 0.0}, "smoothing"),
        ({"smoothing": 1.5}, "smoothing"),
        ({"margin": -0.1}, "margin"),
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Calibration(**kwargs)


def test_empty_keys_and_negative_estimates_are_refused() -> None:
    calibration = Calibration()
    with pytest.raises(ValueError, match="provider and a model"):
        calibration.observe(("", "m"), 1, 1)
    with pytest.raises(ValueError, match="negative"):
        calibration.correct(KEY, -1)


def test_calibration_round_trips_through_json() -> None:
    calibration = Calibration(smoothing=0.25, margin=0.05)
    calibration.observe(KEY, 100_000, 122_000)
    calibration.observe("openai:gpt-4o", 1_000, 1_100)
    encoded = msgspec.json.encode(calibration.to_state())
    loaded = Calibration.from_state(msgspec.json.decode(encoded, type=CalibrationState))
    again = Calibration.from_dict(calibration.to_dict())
    for other in (loaded, again):
        assert other.keys == calibration.keys
        assert other.smoothing == 0.25 and other.margin == 0.05
        for key in calibration.keys:
            assert other.factor(key) == calibration.factor(key)
            assert other.correct(key, 12_345) == calibration.correct(key, 12_345)


def test_a_saved_factor_below_one_is_refused_as_corrupt() -> None:
    data = {
        "smoothing": 0.3,
        "margin": 0.0,
        "records": {
            "p:m": {
                "factor": 0.8,
                "observations": 1,
                "last_ratio": 0.8,
                "last_estimated": 10,
                "last_reported": 8,
            }
        },
    }
    with pytest.raises(ValueError, match="corrupt"):
        Calibration.from_dict(data)


observations = st.lists(
    st.tuples(st.integers(1, 500_000), st.floats(0.2, 3.0)), min_size=1, max_size=30
)


@SETTINGS
@given(observations, st.integers(0, 1_000_000), st.floats(0.0, 0.5))
def test_property_a_corrected_estimate_is_never_below_the_raw_one(
    seen: list[tuple[int, float]], estimate: int, margin: float
) -> None:
    calibration = Calibration(margin=margin)
    for estimated, ratio in seen:
        calibration.observe(KEY, estimated, max(1, round(estimated * ratio)))
        assert calibration.factor(KEY) >= 1.0
        assert calibration.correct(KEY, estimate) >= estimate


@SETTINGS
@given(st.floats(1.0, 3.0), st.floats(0.05, 1.0), st.floats(1.0, 3.0))
def test_property_the_factor_converges_to_a_steady_observed_ratio(
    start: float, smoothing: float, ratio: float
) -> None:
    calibration = Calibration(smoothing=smoothing)
    calibration.observe(KEY, 100_000, round(100_000 * start))
    reported = round(100_000 * ratio)
    observed = reported / 100_000
    gaps = []
    for step in range(200):
        calibration.observe(KEY, 100_000, reported)
        if step >= calibration.window // 2:  # the median window holds mostly the steady ratio
            gaps.append(abs(calibration.factor(KEY) - observed))
    assert all(later <= earlier + 1e-12 for earlier, later in itertools.pairwise(gaps))
    assert gaps[-1] < 1e-3


@SETTINGS
@given(st.floats(1.0, 3.0), st.floats(0.05, 1.0), st.floats(0.1, 1.0))
def test_property_over_count_evidence_converges_to_exactly_one(
    start: float, smoothing: float, ratio: float
) -> None:
    calibration = Calibration(smoothing=smoothing)
    calibration.observe(KEY, 100_000, round(100_000 * start))
    for _ in range(300):
        calibration.observe(KEY, 100_000, max(1, round(100_000 * ratio)))
        assert calibration.factor(KEY) >= 1.0
    assert calibration.factor(KEY) == pytest.approx(1.0, abs=1e-3)


def test_one_report_far_above_the_estimate_moves_a_fresh_factor_by_one_bounded_step() -> None:
    calibration = Calibration()
    calibration.observe(KEY, estimated=694, reported=250_000)  # ratio 360
    assert calibration.factor(KEY) == pytest.approx(2.0)
    assert calibration.correct(KEY, 694) == 1388


def test_one_outlier_after_consistent_reports_does_not_move_the_factor() -> None:
    calibration = Calibration()
    for _ in range(2):
        calibration.observe(KEY, 100_000, 110_000)
    before = calibration.factor(KEY)
    calibration.observe(KEY, 694, 250_000)
    assert calibration.factor(KEY) == pytest.approx(before)
    assert calibration.factor(KEY) == pytest.approx(1.1)


def test_consistent_evidence_of_a_large_ratio_is_learned_up_to_the_bound() -> None:
    calibration = Calibration(smoothing=1.0)
    seen = [calibration.observe(KEY, 1_000, 3_500) for _ in range(6)]
    assert seen[:3] == pytest.approx([2.0, 3.5, 3.5])
    assert seen[-1] == pytest.approx(3.5)
    for _ in range(10):
        calibration.observe(KEY, 1_000, 1_000_000)
    assert calibration.factor(KEY) == pytest.approx(calibration.max_ratio)


@pytest.mark.parametrize("factor", [360.0, 0.5, float("nan"), float("inf"), 4.01])
def test_a_loaded_factor_out_of_range_is_refused_or_reset_by_choice(factor: float) -> None:
    state = CalibrationState(
        smoothing=0.3,
        margin=0.0,
        records={"p:m": CalibrationRecord(factor, 1, factor, 694, 250_000)},
    )
    with pytest.raises(CalibrationStateError, match=r"state\.json: calibration record 'p:m'"):
        Calibration.from_state(state, source="state.json")
    with pytest.warns(CalibrationResetWarning, match="reset to 1.0"):
        reset = Calibration.from_state(state, source="state.json", reset_invalid=True)
    assert reset.factor("p:m") == 1.0 and reset.keys == ()


def test_loaded_settings_out_of_range_are_refused() -> None:
    state = CalibrationState(smoothing=0.3, margin=0.0, max_ratio=0.5)
    with pytest.raises(CalibrationStateError, match="max_ratio"):
        Calibration.from_state(state, reset_invalid=True)


reports = st.tuples(st.integers(1, 10**6), st.integers(1, 10**9))


@SETTINGS
@given(st.lists(reports, min_size=1, max_size=40), st.floats(0.05, 1.0), st.floats(0.05, 2.0))
def test_property_every_observation_moves_the_factor_by_a_bounded_step_within_range(
    seen: list[tuple[int, int]], smoothing: float, max_step: float
) -> None:
    calibration = Calibration(smoothing=smoothing, max_step=max_step)
    previous = 1.0
    for estimated, reported in seen:
        factor = calibration.observe(KEY, estimated, reported)
        assert 1.0 <= factor <= calibration.max_ratio
        assert previous / (1 + max_step) - 1e-9 <= factor <= previous * (1 + max_step) + 1e-9
        previous = factor
    again = Calibration.from_state(calibration.to_state())
    assert again.factor(KEY) == calibration.factor(KEY)


@SETTINGS
@given(
    st.floats(1.0, 4.0),
    st.integers(2, 10),
    st.integers(1, 10**9),
    st.integers(1, 10**5),
)
def test_property_a_single_outlier_never_moves_an_established_factor(
    ratio: float, consistent: int, outlier_reported: int, outlier_estimated: int
) -> None:
    calibration = Calibration()
    for _ in range(consistent):
        calibration.observe(KEY, 100_000, round(100_000 * ratio))
    before = calibration.factor(KEY)
    target = round(100_000 * ratio) / 100_000
    calibration.observe(KEY, outlier_estimated, outlier_reported)
    assert abs(calibration.factor(KEY) - target) <= abs(before - target) + 1e-9
