"""The JSON report: schema, round trip, and replay of small traces."""

from __future__ import annotations

import json

import pytest

from _bench_fixtures import swe_trace, tau_trace, tiny_blueprint
from regio.bench.peers import PEERS, peer_available
from regio.bench.replay import ALL_LAYOUTS, replay
from regio.bench.report import REPORT_SCHEMA, load_report, report_json
from regio.bench.run import DEFAULT_CACHE_MODELS, run_bench

LAYOUT_KEYS = {
    "layout",
    "requests",
    "prompt_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "uncached_tokens",
    "hit_rate",
    "cost_usd",
    "oracle_hit_rate",
    "placement_share",
    "bound_hit_rate",
    "bound_share",
    "compaction_calls",
    "compaction_cost_usd",
    "summarizer",
    "retention",
    "broken_requests",
    "read_per_request",
    "prompt_per_request",
    "cost_per_request",
    "compaction_cost_per_request",
    "relief",
    "first_cut",
    "request_cost_usd",
    "lost_task_requests",
    "over_window_requests",
    "unsent_requests",
    "failure",
    "failed_at",
    "cost_bound_usd",
    "cost_bound_share",
    "cost_bound_trigger",
    "kept_tokens",
    "periodic_hit_bound",
    "compactions",
}


def _needs_peers(*names: str) -> None:
    """Skip unless every named peer's package (extra 'bench') is installed."""
    missing = [name for name in names if name in PEERS and not peer_available(name)]
    if missing:
        pytest.skip(f"the bench extra is not installed: no package for {', '.join(missing)}")


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    bp = tiny_blueprint()
    return run_bench([(swe_trace(), bp), (tau_trace(), bp)])


def test_the_json_report_has_every_documented_field(report) -> None:  # type: ignore[no-untyped-def]
    _needs_peers(*ALL_LAYOUTS)
    data = json.loads(report_json(report))
    assert data["schema"] == REPORT_SCHEMA
    assert [t["trace"] for t in data["traces"]] == ["tiny/swe", "tiny/tau"]
    for trace in data["traces"]:
        assert 0.0 <= trace["append_only_hit_rate"] <= 1.0
        assert {m["cache_model"] for m in trace["models"]} == set(DEFAULT_CACHE_MODELS)
        for model in trace["models"]:
            assert [x["layout"] for x in model["layouts"]] == list(ALL_LAYOUTS)
            for item in model["layouts"]:
                assert set(item) == LAYOUT_KEYS
                assert item["requests"] == trace["requests"]
                total = (
                    item["cache_read_tokens"] + item["cache_write_tokens"] + item["uncached_tokens"]
                )
                assert total == item["prompt_tokens"]
    assert {m["cache_model"] for m in data["totals"]} == set(DEFAULT_CACHE_MODELS)


def test_the_report_round_trips_through_json(report) -> None:  # type: ignore[no-untyped-def]
    assert load_report(report_json(report)) == report


def test_a_report_of_another_schema_is_refused(report) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(report_json(report))
    data["schema"] = "other/9"
    with pytest.raises(ValueError, match="other/9"):
        load_report(json.dumps(data))


def test_replay_builds_one_request_per_model_call_for_every_layout() -> None:
    _needs_peers(*ALL_LAYOUTS)
    out = replay(swe_trace(steps=5), tiny_blueprint())
    assert set(out.requests) == set(ALL_LAYOUTS)
    assert all(len(v) == 5 for v in out.requests.values())
    assert [r.t_start for r in out.requests["regio"]] == [0.0, 5.0, 10.0, 15.0, 20.0]


def test_captured_state_reaches_the_region_in_every_layout() -> None:
    out = replay(swe_trace(steps=3), tiny_blueprint())
    # the task message is not an observation; a.py, b.py, a.py come after the first call
    assert out.region_writes == 3
    # the regio layout carries the env_state region in the tail, the others in the system
    for name, requests in out.requests.items():
        assert requests[-1].prompt_tokens > 0, name


def test_an_unknown_layout_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown layouts"):
        replay(swe_trace(), tiny_blueprint(), layouts=("fancy",))
