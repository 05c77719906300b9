"""The bench counts regio's committed compactions by the region compacted and the reason its
compaction was queued (``LayoutResult.compactions``): a summarizer call is then told apart
as a conversation compaction (at its token trigger, or for room for a write) or a merge of a
history's summaries."""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

import attrs
import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.bench.metrics import layout_result, oracle_report, sum_layout_results
from regio.bench.replay import replay
from regio.bench.report import LayoutResult
from regio.bench.run import score
from regio.blueprint import load_blueprint
from regio.cache.types import CacheBlock, CacheRequest
from regio.providers import cache_model_for
from regio.traces.synth import synthesize

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "blueprints"
CACHE = "anthropic:claude-sonnet-4-6"
EXAMPLES_RUN = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))


@cache
def _regio() -> LayoutResult:
    """regio on a generated 150-call session with the coding example at a 16k window, its
    summaries appended (it compacts its conversation and merges its history's summaries)."""
    bp = load_blueprint(EXAMPLES / "coding-agent.yaml")
    # appended summaries, so the history's merges are counted too (the example rolls one)
    bp = attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, carry_forward="append"))
    out = replay(synthesize(150, 3), bp, layouts=("regio",), window_tokens=16384)
    return score(out, [CACHE])[0].layout("regio")


def test_every_summarizer_call_is_counted_under_the_region_and_reason_that_queued_it() -> None:
    mine = _regio()
    regions = {r.name for r in load_blueprint(EXAMPLES / "coding-agent.yaml").regions}
    assert mine.compaction_calls > 0
    # the extractive summarizer never has a summary refused: one call, one compaction
    assert sum(mine.compactions.values()) == mine.compaction_calls
    for key, n in mine.compactions.items():
        region, _, reason = key.partition(":")
        assert region in regions and reason and reason != "unknown" and n > 0
    assert any(k.startswith("conversation:") for k in mine.compactions)
    assert mine.compactions.get("conversation_history:history_over_budget", 0) > 0  # a merge


def test_the_counts_by_reason_reach_the_json_report() -> None:
    mine = _regio()
    decoded = msgspec.json.decode(msgspec.json.encode(mine), type=LayoutResult)
    assert decoded.compactions == mine.compactions


def _item(counts: dict[str, int]) -> LayoutResult:
    model = "anthropic:claude-sonnet-4-5"
    requests = [CacheRequest(id="r0", blocks=(CacheBlock(2000, "b0", mark="5m"),))]
    item = layout_result("x", cache_model_for(model).run(requests), oracle_report(model, requests))
    return msgspec.structs.replace(item, compactions=counts)


_COUNTS = st.dictionaries(
    st.sampled_from(["conversation:room", "conversation:token_trigger", "h:history_over_budget"]),
    st.integers(min_value=1, max_value=500),
)


@settings(max_examples=EXAMPLES_RUN, deadline=None)
@given(st.lists(_COUNTS, min_size=1, max_size=5))
def test_totals_over_traces_add_the_counts_of_each_reason(counts: list[dict[str, int]]) -> None:
    total = sum_layout_results("x", [_item(c) for c in counts])
    keys = {k for c in counts for k in c}
    assert total.compactions == {k: sum(c.get(k, 0) for c in counts) for k in sorted(keys)}
    assert list(total.compactions) == sorted(total.compactions)
