"""What ``--summarizer upstream``'s summary requests cost is in the session's cost.

Each summary is one more upstream request, billed to the client's key: the status page's and
``/status.json``'s session cost is the client's requests plus the summary requests' reported
tokens at the summary model's prices (the model the summary request named), the saving is
computed against that, and ``/metrics``' cost agrees. A summary model without a known price
makes the summaries' cost and the session's cost unpriced and says so (``None``), never a
made-up figure nor the sum of the priced parts alone (``/metrics`` counts the priced parts and
the unpriced requests apart); offline summaries cost nothing and change nothing. Records stored
before the summary cost was kept still decode.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("uvicorn", reason="the proxy extra (starlette, uvicorn) is not installed")
pytest.importorskip("anthropic", reason="the anthropic SDK is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy_loops import OUTPUT, WINDOW, proxied, run_loop, script, summarizing_blueprint
from proxy_status_support import ListedRecords
from proxy_support import ScriptedUpstream, metric_families
from regio.cache.billing import total
from regio.proxy.accounting import summary_cost
from regio.proxy.records import RequestStat, SessionMeta, decode_meta, decode_stat
from regio.proxy.status import status_data
from regio.proxy.turn import _totalled
from regio.session import ModelPricing

API, STEPS = "anthropic", 9
#: A summary model with a price in the cache rules (USD per million tokens), and one without.
PRICED, PRICE = "claude-haiku-4-5", (1.0, 5.0)
UNPRICED = "summary-model-x"


def _run(
    tmp_path: Path, model: str, **config: Any
) -> tuple[ScriptedUpstream, list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The loop through a proxy: the upstream, the request log, ``/status.json`` and the metric
    families."""
    upstream = ScriptedUpstream(script(STEPS, None, API), WINDOW, OUTPUT)
    log, store = tmp_path / "requests.jsonl", f"sqlite:{tmp_path}/proxy.db"
    bp = summarizing_blueprint(API, model, "proxy-sumcost")
    with proxied(upstream, bp, store=store, request_log=str(log), **config) as url:
        run_loop(API, url, STEPS)
        status = httpx.get(f"{url}/status.json").json()
        families = metric_families(httpx.get(f"{url}/metrics").text)
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return upstream, rows, status, families


def _total(families: dict[str, Any], name: str) -> float | None:
    """The sum of a counter's ``_total`` samples (``None``: no sample)."""
    family = families.get(name)
    samples = [s.value for s in (family.samples if family else []) if s.name.endswith("_total")]
    return sum(samples) if samples else None


def test_upstream_summaries_are_priced_into_the_sessions_cost_and_its_saving(
    tmp_path: Path,
) -> None:
    upstream, rows, status, families = _run(tmp_path, PRICED, summarizer="upstream")
    (session,) = status["sessions"]
    used_in = sum(r["summary_input_tokens"] for r in rows)
    used_out = sum(r["summary_output_tokens"] for r in rows)
    assert upstream.summaries and used_in > 0 and used_out > 0
    assert {b["model"] for b in upstream.summaries} == {PRICED}
    expected = (PRICE[0] * used_in + PRICE[1] * used_out) / 1e6
    assert session["summary_calls"] == len(upstream.summaries)
    assert session["summary_input_tokens"] == used_in
    assert session["summary_output_tokens"] == used_out
    assert session["summary_cost_usd"] == pytest.approx(expected)
    assert session["summary_unpriced_calls"] == 0
    assert session["requests_cost_usd"] > 0
    assert session["cost_usd"] == pytest.approx(session["requests_cost_usd"] + expected)
    assert session["saving_usd"] == pytest.approx(session["as_is_cost_usd"] - session["cost_usd"])
    assert session["saving_share"] == pytest.approx(
        session["saving_usd"] / session["as_is_cost_usd"]
    )
    # the chart's points add up to the same, each with its request's summary cost
    chart = session["chart"]
    assert sum(p["cost"] for p in chart) == pytest.approx(session["cost_usd"])
    assert sum(p["summary_cost"] for p in chart) == pytest.approx(expected)
    totals = status["totals"]
    assert totals["cost_usd"] == pytest.approx(session["cost_usd"])
    assert totals["summary_cost_usd"] == pytest.approx(expected)
    assert totals["saving_usd"] == pytest.approx(totals["as_is_cost_usd"] - totals["cost_usd"])
    # /metrics' cost is the status page's
    assert _total(families, "regio_cost_usd") == pytest.approx(session["cost_usd"])
    assert _total(families, "regio_summary_cost_usd") == pytest.approx(expected)


def test_a_summary_model_without_a_price_makes_the_sessions_cost_unpriced_and_says_so(
    tmp_path: Path,
) -> None:
    upstream, rows, status, families = _run(tmp_path, UNPRICED, summarizer="upstream")
    (session,) = status["sessions"]
    calls = len(upstream.summaries)
    assert calls > 0 and sum(r["summary_input_tokens"] for r in rows) > 0
    assert session["summary_calls"] == calls
    assert session["summary_cost_usd"] is None  # unknown, not 0.0
    assert session["summary_unpriced_calls"] == calls
    assert session["requests_cost_usd"] > 0
    assert session["cost_usd"] is None  # not the client's requests alone
    assert session["saving_usd"] is None and session["saving_share"] is None
    assert status["totals"]["summary_cost_usd"] is None
    assert status["totals"]["cost_usd"] is None and status["totals"]["saving_usd"] is None
    assert any(p["summary_cost"] is None for p in session["chart"])
    assert _total(families, "regio_summary_unpriced") == calls
    assert _total(families, "regio_summary_cost_usd") is None
    # the counter holds the requests whose whole cost has a price (the chart's priced
    # points), never a request's priced part alone; the others are counted apart
    priced = [p["cost"] for p in session["chart"] if p["cost"] is not None]
    assert len(session["chart"]) == len(rows) and len(priced) < len(rows)
    assert (_total(families, "regio_cost_usd") or 0.0) == pytest.approx(sum(priced))
    assert (_total(families, "regio_cost_usd") or 0.0) < session["requests_cost_usd"]


def test_offline_summaries_leave_the_sessions_cost_the_client_requests_alone(
    tmp_path: Path,
) -> None:
    upstream, rows, status, families = _run(tmp_path, PRICED)
    (session,) = status["sessions"]
    assert any(r["compacted"] for r in rows), "the session never compacted: the check is too easy"
    assert upstream.summaries == []
    assert session["summary_calls"] == 0 and session["summary_cost_usd"] == 0.0
    assert session["summary_unpriced_calls"] == 0
    assert session["requests_cost_usd"] > 0
    assert session["cost_usd"] == session["requests_cost_usd"]
    assert session["saving_usd"] == pytest.approx(session["as_is_cost_usd"] - session["cost_usd"])
    assert all(p["summary_cost"] == 0.0 for p in session["chart"])
    assert _total(families, "regio_cost_usd") == pytest.approx(session["cost_usd"])


def _used(uncached: int, output: int, read: int = 0) -> dict[str, int]:
    return {"uncached_tokens": uncached, "cache_read_tokens": read, "output_tokens": output}


def test_summary_cost_prices_input_and_output_tokens_or_says_it_cannot() -> None:
    haiku = ModelPricing(input=1.0, output=5.0)
    assert summary_cost(haiku, _used(1_000_000, 200_000)) == pytest.approx(2.0)
    assert summary_cost(haiku, _used(0, 0)) == 0.0
    assert summary_cost(None, _used(100, 10)) is None
    assert summary_cost(ModelPricing(input=None, output=5.0), _used(100, 10)) is None
    assert summary_cost(ModelPricing(input=1.0, output=None), _used(100, 10)) is None
    assert summary_cost(None, _used(0, 0)) == 0.0  # no usage costs nothing, price or not


def test_records_stored_before_the_summary_cost_was_kept_still_decode() -> None:
    old_stat = {
        "index": 3, "t": 1.0, "client_tokens": 900, "upstream_tokens": 800, "cost_usd": 0.01,
        "summary_calls": 2, "summary_input_tokens": 1500, "summary_output_tokens": 300,
    }  # fmt: skip
    stat = decode_stat(msgspec.msgpack.encode(old_stat))
    assert stat.summary_cost_usd is None  # never priced: unknown, not free
    old_meta = {
        "id": "s1", "key": "fp:x", "api": "anthropic", "created": 0.0, "updated": 0.0,
        "totals": {"requests": 4, "cost_usd": 0.5, "as_is_cost_usd": 0.8},
    }  # fmt: skip
    meta = decode_meta(msgspec.msgpack.encode(old_meta))
    assert meta.totals.summary_calls == 0 and meta.totals.summary_cost_usd == 0.0
    (row,) = status_data(ListedRecords([(meta, [stat])]))["sessions"]  # type: ignore[arg-type]
    assert row["cost_usd"] == pytest.approx(0.5)
    assert row["saving_usd"] == pytest.approx(0.3)


_STAT = st.builds(
    lambda cost, calls, used_in, used_out, summary: (cost, calls, used_in, used_out, summary),
    st.one_of(st.none(), st.floats(0, 1, allow_nan=False)),
    st.integers(0, 3),
    st.integers(0, 5000),
    st.integers(0, 800),
    st.one_of(st.none(), st.floats(0, 1, allow_nan=False)),
)


@settings(max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "100")), deadline=None)
@given(st.lists(st.lists(_STAT, max_size=6), min_size=1, max_size=3))
def test_a_sessions_cost_is_its_requests_plus_its_summaries_and_unpriced_when_one_is_not(
    sessions: list[list[tuple[float | None, int, int, int, float | None]]],
) -> None:
    stored = []
    for n, figures in enumerate(sessions):
        meta = SessionMeta(id=f"s{n}", key="fp:x", api="anthropic", created=0.0, updated=n)
        stats = []
        for i, (cost, calls, used_in, used_out, summary) in enumerate(figures):
            stat = RequestStat(
                index=i, t=float(i), client_tokens=1, upstream_tokens=1, cost_usd=cost,
                as_is_cost_usd=1.0, summary_calls=calls, summary_input_tokens=used_in,
                summary_output_tokens=used_out, summary_cost_usd=summary if calls else 0.0,
            )  # fmt: skip
            meta = _totalled(meta, stat)
            stats.append(stat)
        stored.append((meta, stats))
    data = status_data(ListedRecords(stored))  # type: ignore[arg-type]
    for (_, stats), row in zip(stored, data["sessions"], strict=True):
        requests = total(s.cost_usd for s in stats)
        priced = sum(s.summary_cost_usd or 0.0 for s in stats)
        unpriced = sum(s.summary_calls for s in stats if s.summary_cost_usd is None)
        assert row["unpriced_requests"] == sum(s.cost_usd is None for s in stats)
        assert row["summary_calls"] == sum(s.summary_calls for s in stats)
        assert row["summary_unpriced_calls"] == unpriced
        assert (row["summary_cost_usd"] is None) == (unpriced > 0)
        if requests is None:
            assert row["requests_cost_usd"] is None
        else:
            assert row["requests_cost_usd"] == pytest.approx(requests)
        if requests is None or unpriced:  # never the priced part alone
            assert row["cost_usd"] is None and row["saving_usd"] is None
            assert row["saving_share"] is None
            assert any(p["cost"] is None for p in row["chart"])
            continue
        assert row["cost_usd"] == pytest.approx(requests + priced)
        assert row["summary_cost_usd"] == pytest.approx(priced)
        assert row["saving_usd"] == pytest.approx(row["as_is_cost_usd"] - row["cost_usd"])
        assert sum(p["cost"] for p in row["chart"]) == pytest.approx(row["cost_usd"])
    totals = data["totals"]
    assert totals["unpriced_requests"] == sum(r["unpriced_requests"] for r in data["sessions"])
    costs = [r["cost_usd"] for r in data["sessions"]]
    if None in costs:
        assert totals["cost_usd"] is None and totals["saving_usd"] is None
    else:
        assert totals["cost_usd"] == pytest.approx(sum(costs))
    assert (totals["summary_cost_usd"] is None) == any(
        r["summary_cost_usd"] is None for r in data["sessions"]
    )
