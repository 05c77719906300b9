"""The request ceiling is checked with a factor that follows a rising ratio
(``Calibration.ceiling_factor``: the learned factor, or the median of the last three bounded
reports when that is higher). The moving average behind the factor lags a session whose
content drifts toward text the local counter undercounts more; a request the upstream would
count past the window must not pass the check on the lagging factor. One outlier among three
reports still moves nothing."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Message, Text
from regio.policies import Compact
from regio.regions import CompactHistory, Pinned, SlidingWindow
from regio.tokens import Calibration
from regio.tokens.calibration import CEILING_EVIDENCE
from runtime_stubs import StubSummarizer, make_engine, words

KEY = "anthropic:claude-sonnet-4-6"


@settings(max_examples=200)
@given(
    st.lists(st.tuples(st.integers(1, 100_000), st.integers(1, 400_000)), min_size=1, max_size=12),
    st.integers(0, 200_000),
    st.sampled_from([0.0, 0.05]),
)
def test_the_ceiling_correction_covers_the_factor_and_the_recent_reports_median(
    reports: list[tuple[int, int]], estimate: int, margin: float
) -> None:
    cal = Calibration(margin=margin)
    for estimated, reported in reports:
        cal.observe(KEY, estimated, reported)
    bounded = [min(max(r / e, 1.0), cal.max_ratio) for e, r in reports][-CEILING_EVIDENCE:]
    strict = cal.correct_ceiling(KEY, estimate)
    assert strict >= cal.correct(KEY, estimate)
    assert cal.ceiling_factor(KEY) >= cal.factor(KEY)
    if len(reports) >= CEILING_EVIDENCE:  # the last three reports all say at least their least
        least = min(bounded)
        assert cal.ceiling_factor(KEY) >= least
        assert strict >= math.ceil(round(estimate * least * (1 + margin), 6))
    else:  # fewer: the factor alone (one outlier must not be the evidence)
        assert cal.ceiling_factor(KEY) == cal.factor(KEY)


def test_a_rising_ratio_is_followed_where_the_moving_average_lags() -> None:
    cal = Calibration()
    for n in range(30):
        cal.observe(KEY, 10_000, round(10_000 * (1.20 + 0.005 * n)))
    assert cal.factor(KEY) < 1.33  # the average lags the last report, 1.345
    assert cal.ceiling_factor(KEY) >= 1.34


def test_an_outlier_among_the_first_reports_does_not_raise_the_ceiling_factor_past_the_factor():
    cal = Calibration()
    for reported in (12_000, 40_000):
        cal.observe(KEY, 10_000, reported)
    assert cal.ceiling_factor(KEY) == cal.factor(KEY)


def test_one_outlier_after_two_equal_reports_does_not_move_the_ceiling_factor() -> None:
    cal = Calibration()
    for reported in (12_000, 12_000, 40_000):
        cal.observe(KEY, 10_000, reported)
    assert cal.ceiling_factor(KEY) == 1.2


def test_an_engine_whose_ratio_rose_compacts_a_request_the_lagging_factor_would_pass() -> None:
    """Near the ceiling, the laid-out request counts as the recent reports do: the engine
    compacts before sending instead of sending what the upstream would count past its room."""
    engine = make_engine(
        [
            Pinned(name="system", budget=100),
            CompactHistory(name="history", budget=500, source="conversation"),
            SlidingWindow(name="conversation", budget=20_000, eviction=Compact()),
        ],
        max_tokens=10_000,
        summarizer=StubSummarizer(5),
    )
    cal, key = engine.budget.calibration, engine.budget.calibration_key()
    for n in range(30):
        cal.observe(key, 1_000, round(1_000 * (1.20 + 0.005 * n)))
    lagging, recent = cal.factor(key), cal.ceiling_factor(key)
    assert recent - lagging > 0.01
    limit = engine.budget.limit
    # a conversation whose raw size passes the limit at the recent ratio, not at the factor
    raw_target = int(limit / ((lagging + recent) / 2))
    n = 0
    while engine.budget.estimate() < raw_target - 60:
        engine.add_message(Message("user", (Text(words(50, f"m{n}_")),)))
        engine.add_message(Message("assistant", (Text("ok"),)))
        n += 1
    raw = engine.budget.estimate()
    assert engine.budget.calibrated(raw) <= limit < engine.budget.calibrated_ceiling(raw)
    engine.request()
    sent = engine.state.last_estimate
    assert engine.budget.calibrated_ceiling(sent) <= limit  # compacted before it was sent
    assert any(e.kind == "compaction_completed" for e in engine.events.history)
