"""A summarizer on another model than the agent's is priced at its own model's prices wherever
regio prices a compaction's summarizer call: the cache rules (Claude Haiku 4.5 at $1 / $5 per
MTok, not inherited by older Haikus), the cost controller's terms (``o s`` at its output price,
its transcript read at its input price), the engine's terms and ``regio validate``'s expected
cost per request (docs/runtime.md, "Compaction's own cost")."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint import load_blueprint
from regio.blueprint.costnote import cost_notes
from regio.cache import default_rules, resolve
from regio.compaction import ForkSummarizer
from regio.engine import Engine
from regio.policies.costcontrol import CostTerms, compaction_cost, interval, request_cost
from regio.regions import SlidingWindow
from regio.session._cacheprices import (
    cache_terms,
    model_price,
    summarizer_model,
    summary_cost_terms,
)
from regio.summarizers import ExtractiveSummarizer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "blueprints"
FUZZ = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))

#: Sonnet 4.6's 5-minute cache with a Claude Haiku 4.5 summarizer, in Sonnet input-price
#: units: Haiku reads at $1 / $3 = 1/3 and writes at $5 / $3 = 5/3.
HAIKU = CostTerms(read=0.1, write=1.25, output=5 / 3, summary=1500, transcript_input=1 / 3)


def _coding(**summarizer: Any) -> Any:
    bp = load_blueprint(EXAMPLES / "coding-agent.yaml")
    return attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, **summarizer))


def test_haiku_4_5_is_priced_and_the_older_haikus_do_not_inherit_its_price() -> None:
    rules = default_rules()
    haiku = rules.by_id("anthropic/haiku-4-5@2026-H2")
    assert (haiku.price.input, haiku.price.output, haiku.min_tokens) == (1.0, 5.0, 4096)
    assert "haiku-4-5/overview" in (haiku.note or "") and "[S]" in (haiku.note or "")
    for older in ("claude-3-5-haiku-20241022", "claude-3-haiku-20240307"):
        rule = resolve("anthropic", older)
        assert rule.price.input is None and rule.price.output is None, rule.id
        assert rule.min_tokens == 2048 and "not recorded" in (rule.note or "")
    assert model_price("anthropic", "claude-haiku-4-5") == (1.0, 5.0)
    assert model_price("claude", "claude-haiku-4-5-20251001") == (1.0, 5.0)  # an alias
    assert model_price("anthropic", "claude-3-5-haiku-20241022") is None
    assert model_price("anthropic", "no-such-model") is None


def test_a_haiku_transcript_of_10000_tokens_and_a_1500_token_summary_costs_0_0175_usd() -> None:
    # $1 / MTok x 10,000 + $5 / MTok x 1,500 = $0.01 + $0.0075, in Sonnet's $3 input units;
    # the kept prefix written again (w R) is the agent's, not the summarizer's
    units = compaction_cost(0, 10_000, HAIKU)
    assert units * 3 / 1e6 == pytest.approx(0.01 + 0.0075)
    assert compaction_cost(20_000, 10_000, HAIKU) == pytest.approx(units + 1.25 * 20_000)
    # the same call as a fork of the agent's cached 30,000-token request on Sonnet:
    # 0.1 x 30,000 read + 5 x 1,500 written = 10,500 units ($0.0315), plus w R
    fork = CostTerms(read=0.1, write=1.25, output=5.0, summary=1500)
    assert compaction_cost(20_000, 10_000, fork) == pytest.approx(3_000 + 7_500 + 25_000)


def test_the_controller_weighs_a_transcript_summarizer_at_its_own_prices() -> None:
    # x* = sqrt(2 D (o s + w R) / r) with D 1,500, R 20,000, s 1,500, o 5/3:
    # sqrt(3,000 * (2,500 + 25,000) / 0.1) = sqrt(825,000,000) = 28,722.81
    x = interval(1500, 20_000, HAIKU)
    assert x == pytest.approx(28_722.81, abs=0.01)
    # c(x) = r (R + x/2) + w D + D i + D (o s + w R) / x
    #      = 2,000 + 1,436.14 + 1,875 + 500 + 1,436.14 = 7,247.28
    assert request_cost(1500, 20_000, x, HAIKU) == pytest.approx(7_247.28, abs=0.01)


@settings(max_examples=FUZZ, deadline=None)
@given(
    delta=st.floats(50, 5_000),
    kept=st.floats(1_000, 100_000),
    summary=st.floats(0, 4_000),
    read=st.floats(0.01, 0.5),
    transcript=st.floats(0.05, 2.0),
    output=st.floats(0.5, 10.0),
)
def test_the_interval_is_the_least_cost_for_a_transcript_summarizer(
    delta: float, kept: float, summary: float, read: float, transcript: float, output: float
) -> None:
    terms = CostTerms(
        read=read, write=1.25, output=output, summary=summary, transcript_input=transcript
    )
    best = interval(delta, kept, terms)
    at = request_cost(delta, kept, best, terms)
    for x in (best * 0.7, best * 1.4):
        assert request_cost(delta, kept, x, terms) >= at * (1 - 1e-12)


def test_a_summarizer_on_another_model_gets_its_own_prices_in_the_engine() -> None:
    summarizer = ForkSummarizer(_Haiku(), max_summary_tokens=1500)
    assert summarizer_model(summarizer, "anthropic", "claude-sonnet-4-6") == (
        "anthropic",
        "claude-haiku-4-5",
    )
    engine = Engine.from_blueprint(_coding(), summarizer=summarizer)
    conv = engine.window.conversation
    assert isinstance(conv, SlidingWindow) and conv.cost_terms is not None
    terms = conv.cost_terms
    assert terms.transcript_input == pytest.approx(1 / 3)
    assert terms.output == pytest.approx(5 / 3)
    assert (terms.read, terms.write, terms.summary) == (0.1, 1.25, 1500)
    # the agent's own model (a fork) and an offline summarizer keep the agent's terms
    for own in (ForkSummarizer(_Haiku("claude-sonnet-4-6")), ExtractiveSummarizer()):
        engine.summarizer = own
        kept = conv.cost_terms
        assert kept is not None and kept.transcript_input is None and kept.output == 5.0


def test_a_summarizer_model_without_a_price_keeps_the_agents_terms() -> None:
    cache = cache_terms("anthropic", "claude-sonnet-4-6")
    for writer in (("anthropic", "claude-3-5-haiku-20241022"), ("anthropic", "nope"), None):
        terms = summary_cost_terms(cache, writer, 1500)
        assert terms == CostTerms(read=0.1, write=1.25, output=5.0, summary=1500)
    # an agent model without a price: nothing to compare the summarizer's price with
    unpriced = cache_terms("anthropic", "claude-3-5-haiku-20241022")
    terms = summary_cost_terms(unpriced, ("anthropic", "claude-haiku-4-5"), 1500)
    assert terms.transcript_input is None


def test_validate_prices_the_blueprints_haiku_summarizer_at_haikus_prices() -> None:
    notes = cost_notes(_coding())
    assert len(notes) == 2
    for growth, note in zip((1000, 3000), notes, strict=True):
        assert "written by claude-haiku-4-5 at that model's prices" in note
        trigger, target = (int(n.replace(",", "")) for n in _marks(note))
        cost = float(re.search(r"about ([\d,]+) input-token", note)[1].replace(",", ""))  # type: ignore[index]
        usd = float(re.search(r"\(\$([\d.]+)\)", note)[1])  # type: ignore[index]
        # by hand: c = 0.1 (R + x/2) + 1.25 D + D/3 + D (5/3 * 1,500 + 1.25 R) / x
        x = trigger - target
        by_hand = (
            0.1 * (target + x / 2)
            + 1.25 * growth
            + growth / 3
            + growth * (5 / 3 * 1500 + 1.25 * target) / x
        )
        assert cost == pytest.approx(by_hand, abs=0.5)
        assert usd == pytest.approx(by_hand * 3 / 1e6, abs=5e-5)
        # the trigger is R + x* = R + sqrt(2 D (5/3 * 1,500 + 1.25 R) / 0.1): with the
        # example's kept size (4% of the conversation's room) it comes before the
        # window-fill mark at both rates
        best = math.ceil(target + math.sqrt(2 * growth * (2500 + 1.25 * target) / 0.1))
        assert trigger == best
    # the example keeps 4% of the conversation's room (7,418 tokens of request):
    # 7,418 + sqrt(6,000 * (2,500 + 9,272.5) / 0.1) = 7,418 + 26,577.2, before the 165,606
    # window-fill mark, once the session is old enough for that to pay back
    assert notes[1].count("33,996") == 1
    assert "once the session has made 24 requests" in notes[1]


def test_validate_says_when_the_summarizer_model_has_no_price() -> None:
    notes = cost_notes(_coding(model="claude-3-5-haiku-20241022"))
    assert notes and all("the cache rules give no price for claude-3-5-haiku" in n for n in notes)
    # the summarizer on the agent's model: no remark, the fork's terms
    own = cost_notes(_coding(model=None))
    assert own and not any("summaries" in n for n in own)


def _marks(note: str) -> tuple[str, str]:
    found = re.search(r"compacts at ([\d,]+) tokens .*? down to ([\d,]+):", note)
    assert found is not None, note
    return found[1], found[2]


@attrs.define
class _Haiku:
    """A provider client asking for ``model`` (never called here)."""

    model: str = "claude-haiku-4-5"
    api: str = "anthropic"

    def complete(self, payload: dict[str, Any]) -> Any:  # pragma: no cover - never sent
        raise AssertionError("no request is sent in these tests")
