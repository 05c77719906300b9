"""``/metrics`` never adds the priced parts of a request some part of which has no price: a
request whose own call or whose summary requests are unpriced (:mod:`regio.cache.billing`)
adds nothing to ``regio_cost_usd_total`` (nor its summary part to
``regio_summary_cost_usd_total``) and is counted in ``regio_unpriced_requests_total`` /
``regio_summary_unpriced_total`` instead, as the status page's per-request cost
(``RequestStat.total_cost_usd``) is ``None`` for it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("prometheus_client", reason="the proxy extra (prometheus-client) is missing")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

from mutation_support import fuzz_settings
from proxy_support import metric_families
from regio.proxy.metrics import ProxyMetrics
from regio.proxy.records import RequestStat

SESSION = "s1"


def _value(text: str, name: str) -> float:
    family = metric_families(text).get(name)
    if family is None:
        return 0.0
    return sum(
        s.value
        for s in family.samples
        if s.name.endswith("_total") and s.labels.get("session") == SESSION
    )


def _served(stats: list[RequestStat]) -> str:
    metrics = ProxyMetrics()
    for stat in stats:
        metrics.record(SESSION, "anthropic", stat)
    return metrics.text().decode()


def test_an_unpriced_request_with_a_priced_summary_adds_nothing_to_the_cost() -> None:
    stat = RequestStat(0, 0.0, 100, 80, cost_usd=None, summary_calls=1, summary_cost_usd=0.25)
    text = _served([stat])
    assert _value(text, "regio_cost_usd") == 0.0  # not the summary's $0.25 alone
    assert _value(text, "regio_summary_cost_usd") == 0.0
    assert _value(text, "regio_unpriced_requests") == 1


def test_a_priced_request_with_an_unpriced_summary_adds_nothing_to_the_cost() -> None:
    stat = RequestStat(0, 0.0, 100, 80, cost_usd=0.5, summary_calls=2, summary_cost_usd=None)
    text = _served([stat])
    assert _value(text, "regio_cost_usd") == 0.0  # not the request's $0.50 alone
    assert _value(text, "regio_summary_unpriced") == 2
    assert _value(text, "regio_unpriced_requests") == 0  # its own call has a price


_COST = st.one_of(st.none(), st.floats(0, 10, allow_nan=False))
_STAT = st.builds(
    lambda i, cost, calls, summary: RequestStat(
        i, 0.0, 10, 10, cost_usd=cost, summary_calls=calls, summary_cost_usd=summary
    ),
    st.integers(0, 1000),
    _COST,
    st.integers(0, 3),
    _COST,
)


@given(st.lists(_STAT, max_size=8))
@fuzz_settings(60)
def test_the_cost_counter_is_the_sum_of_the_requests_whose_whole_cost_has_a_price(
    stats: list[RequestStat],
) -> None:
    text = _served(stats)
    whole = [s for s in stats if s.total_cost_usd is not None]
    assert _value(text, "regio_cost_usd") == pytest.approx(
        sum(s.total_cost_usd or 0 for s in whole)
    )
    summary = sum(s.summary_cost_usd or 0.0 for s in whole if s.summary_calls)
    assert _value(text, "regio_summary_cost_usd") == pytest.approx(summary)
    assert _value(text, "regio_unpriced_requests") == sum(s.cost_usd is None for s in stats)
    assert _value(text, "regio_summary_unpriced") == sum(s.summary_unpriced for s in stats)
