"""The proxy's costs say "unpriced" rather than $0 (regio.cache.billing's rule).

A client request of a model whose output price the cache rules do not record (Claude Opus 4.6)
is unpriced in its stat, the session's and the store's totals, the status page and
``/metrics`` (counted in ``regio_unpriced_requests_total``, not added to the cost as $0); a
session mixing priced and unpriced summary requests has an unpriced cost, not the priced part;
and cached summary input is billed at the cache rule's read and write prices, not as uncached
input.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

import httpx

from proxy_status_support import ListedRecords
from regio import ExtractiveSummarizer
from regio.content import Entry, Text
from regio.proxy.accounting import as_is_cost, summary_cost
from regio.proxy.records import RequestStat, SessionMeta
from regio.proxy.status import status_data
from regio.proxy.summaries import SummaryClient, SummaryTally, UpstreamSummarizer, summary_usage
from regio.proxy.turn import _totalled
from regio.session._usage import rule_prices
from unpriced_support import ANTHROPIC_USAGE, OPUS

HAIKU = ("anthropic", "claude-haiku-4-5")  # $1 / $5 per MTok, read 0.1x, 5-minute write 1.25x


def test_an_as_is_request_of_a_model_without_an_output_price_is_unpriced() -> None:
    pricing = rule_prices(*OPUS)
    assert as_is_cost(pricing, 1_000, 5_000, 300, cached=True) is None
    assert as_is_cost(pricing, 1_000, 5_000, 0, cached=True) == pytest.approx(
        5.0 * (1_000 * 0.1 + 4_000 * 1.25) / 1e6
    )


def test_cached_summary_input_is_billed_at_the_cache_read_and_write_prices() -> None:
    reply = {"type": "message", "content": [{"type": "text", "text": "S"}]}
    usage = summary_usage("anthropic", {**reply, "usage": ANTHROPIC_USAGE})
    assert usage["uncached_tokens"] == 1_000
    assert usage["cache_read_tokens"] == 50_000
    assert usage["cache_write_5m_tokens"] + usage["cache_write_tokens"] == 2_000
    cost = summary_cost(rule_prices(*HAIKU), usage)
    by_hand = (1_000 * 1.0 + 50_000 * 0.1 + 2_000 * 1.25) * 1.0 / 1e6 + 800 * 5.0 / 1e6
    assert cost == pytest.approx(by_hand)
    chat = summary_usage(
        "openai_chat",
        {
            "choices": [{"message": {"content": "S"}}],
            "usage": {
                "prompt_tokens": 10_000,
                "completion_tokens": 100,
                "prompt_tokens_details": {"cached_tokens": 8_000},
            },
        },
    )
    assert (chat["uncached_tokens"], chat["cache_read_tokens"]) == (2_000, 8_000)


def _summarized(usage: dict[str, Any]) -> SummaryTally:
    """The tally of one ``--summarizer upstream`` call whose Anthropic reply reports ``usage``."""
    text = "The agent read three files and keeps editing the parser; next it runs the tests."
    body = {"type": "message", "content": [{"type": "text", "text": text}]}

    def upstream(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={**body, "usage": usage})

    client = SummaryClient("https://upstream.test", 5.0, httpx.MockTransport(upstream))
    engine = SimpleNamespace(summarizer=ExtractiveSummarizer())
    client.bind(
        engine,  # type: ignore[arg-type]  # a stand-in with a summarizer attribute
        api="anthropic",
        path="/v1/messages",
        headers=[("x-api-key", "k"), ("anthropic-version", "2023-06-01")],
        model=HAIKU[1],
        session="s-1",
        params={},
    )
    summarizer = engine.summarizer
    assert isinstance(summarizer, UpstreamSummarizer)
    entries = [
        Entry(f"e{i}", (Text(f"step {i}: read a{i}.py"),), "user", tokens=9) for i in range(3)
    ]
    assert summarizer(entries, "", None) == text
    return summarizer.tally


def test_an_upstream_summary_call_keeps_its_cached_tokens_apart_in_the_tally() -> None:
    tally = _summarized(ANTHROPIC_USAGE)
    assert tally.input_tokens == 53_000  # the whole prompt, as before
    cost = summary_cost(rule_prices(*HAIKU), tally.usage)
    assert cost == pytest.approx((1_000 + 5_000 + 2_500) / 1e6 + 800 * 5.0 / 1e6)
    assert cost < (53_000 * 1.0 + 800 * 5.0) / 1e6  # not every input token at the input price


def test_a_summary_calls_logged_tokens_are_the_tokens_its_cost_is_priced_on() -> None:
    # the cache write's breakdown by TTL (5 tokens) disagrees with its total (7): the ledger's
    # reading prices the breakdown, so the logged prompt is the breakdown's too, not the total's
    usage = {
        "input_tokens": 10,
        "cache_read_input_tokens": 5,
        "cache_creation_input_tokens": 7,
        "cache_creation": {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 2},
        "output_tokens": 4,
    }
    tally = _summarized(usage)
    priced = sum(n for k, n in tally.usage.items() if k != "output_tokens")
    assert priced == 10 + 5 + 3 + 2
    assert tally.fields()["summary_input_tokens"] == priced
    assert tally.fields()["summary_output_tokens"] == tally.usage["output_tokens"] == 4


def _stat(i: int, cost: float | None, as_is: float | None = 1.0, **summary: Any) -> RequestStat:
    return RequestStat(
        index=i, t=float(i), client_tokens=10, upstream_tokens=8, prompt_tokens=8,
        cost_usd=cost, as_is_cost_usd=as_is, **summary,
    )  # fmt: skip


def _session(sid: str, stats: list[RequestStat]) -> tuple[SessionMeta, list[RequestStat]]:
    meta = SessionMeta(id=sid, key="fp:x", api="anthropic", created=0.0, updated=0.0)
    for s in stats:
        meta = _totalled(meta, s)
    return meta, stats


def test_an_unpriced_client_request_makes_the_sessions_cost_unpriced_not_zero() -> None:
    priced = _session("a", [_stat(0, 0.25), _stat(1, 0.5)])
    mixed = _session("b", [_stat(0, 0.25), _stat(1, None, as_is=None)])
    data = status_data(ListedRecords([priced, mixed]))  # type: ignore[arg-type]
    by_id = {r["id"]: r for r in data["sessions"]}
    assert by_id["a"]["cost_usd"] == pytest.approx(0.75)
    assert by_id["a"]["saving_usd"] == pytest.approx(2.0 - 0.75)
    row = by_id["b"]
    assert row["cost_usd"] is None and row["requests_cost_usd"] is None
    assert row["unpriced_requests"] == 1
    assert row["as_is_cost_usd"] is None and row["saving_usd"] is None
    assert [p["cost"] for p in row["chart"]] == [0.25, None]
    totals = data["totals"]
    assert totals["cost_usd"] is None and totals["saving_usd"] is None
    assert totals["unpriced_requests"] == 1


def test_a_mix_of_priced_and_unpriced_summaries_gives_an_unpriced_session_cost() -> None:
    stats = [
        _stat(0, 0.1, summary_calls=1, summary_cost_usd=0.02),
        _stat(1, 0.1, summary_calls=2, summary_cost_usd=None),
    ]
    meta, _ = _session("s", stats)
    assert meta.totals.total_cost_usd is None  # not 0.2 + 0.02
    assert stats[1].total_cost_usd is None and stats[0].total_cost_usd == pytest.approx(0.12)
    (row,) = status_data(ListedRecords([(meta, stats)]))["sessions"]  # type: ignore[arg-type]
    assert row["cost_usd"] is None and row["summary_unpriced_calls"] == 2


def test_the_proxy_reports_a_request_of_a_model_without_an_output_price_as_unpriced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("starlette", "uvicorn", "anthropic", "prometheus_client"):
        pytest.importorskip(name, reason=f"{name} is not installed (the proxy extra or SDK)")
    import proxy_loops
    from proxy_support import ScriptedUpstream, metric_families

    monkeypatch.setitem(proxy_loops.MODEL, "anthropic", OPUS[1])
    steps = 4
    upstream = ScriptedUpstream(
        proxy_loops.script(steps, None, "anthropic"), proxy_loops.WINDOW, proxy_loops.OUTPUT
    )
    bp = proxy_loops.summarizing_blueprint("anthropic", None, "proxy-unpriced")
    with proxy_loops.proxied(upstream, bp, store=f"sqlite:{tmp_path}/proxy.db") as url:
        proxy_loops.run_loop("anthropic", url, steps)
        status = httpx.get(f"{url}/status.json").json()
        families = metric_families(httpx.get(f"{url}/metrics").text)
        page = httpx.get(url).text
    (session,) = status["sessions"]
    assert session["requests"] == steps
    assert session["cost_usd"] is None and session["requests_cost_usd"] is None
    assert session["unpriced_requests"] == steps
    assert session["saving_usd"] is None
    assert all(p["cost"] is None for p in session["chart"])
    assert status["totals"]["cost_usd"] is None
    unpriced = families["regio_unpriced_requests"]
    assert sum(s.value for s in unpriced.samples if s.name.endswith("_total")) == steps
    cost = families.get("regio_cost_usd")
    assert cost is None or all(s.value == 0 for s in cost.samples if s.name.endswith("_total"))
    assert '"unpriced"' in page  # the page says so where a figure would be
