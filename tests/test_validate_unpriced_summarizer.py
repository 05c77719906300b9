"""``regio validate`` with a summarizer whose model the cache rules do not know or do not price:
the cost controller still chooses its trigger at the agent model's prices (and the note says
so), but the expected cost per request is unpriced, with the reason and what to add to the
cache rules, never a USD figure at prices that do not exist (:mod:`regio.cache.billing`; the
bench reports such a summarizer's calls as unpriced too)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mutation_support import fuzz_settings
from regio.blueprint import load_blueprint
from regio.blueprint.costnote import cost_notes, unpriced_summarizer
from regio.cli import main
from regio.session._cacheprices import model_price

CODING = Path(__file__).resolve().parents[1] / "examples" / "blueprints" / "coding-agent.yaml"


def _coding(**summarizer: Any) -> Any:
    bp = load_blueprint(CODING)
    return attrs.evolve(bp, summarizer=attrs.evolve(bp.summarizer, **summarizer))


def _decision(note: str) -> str:
    """The trigger and target of a note (the controller's decision)."""
    found = re.search(r"compacts at ([\d,]*\d) tokens a request.*? down to ([\d,]*\d)", note)
    assert found is not None, note
    return f"{found[1]} -> {found[2]}"


def test_validate_prints_an_unknown_summarizer_models_cost_as_unpriced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "coding.yaml"
    text = CODING.read_text()
    assert "model: claude-haiku-4-5" in text
    path.write_text(text.replace("model: claude-haiku-4-5", "model: my-summarizer-7b"))
    assert main(["validate", str(path)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    lines = re.findall(r"the cost controller compacts at .*?(?=token pressure:|valid$)", out)
    assert len(lines) == 2, out
    for line in lines:
        assert "$" not in line and "input-token equivalents" not in line
        assert "assuming my-summarizer-7b's summaries cost what the agent model's would" in line
        assert "cost a request: unpriced: the cache rules do not know my-summarizer-7b" in line
        assert "add a rule for provider anthropic, model_family [my-summarizer-7b*]" in line
        assert "price: {input, output}" in line


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("my-summarizer-7b", "the cache rules do not know my-summarizer-7b (anthropic)"),
        (
            "claude-3-5-haiku-20241022",
            "no price for claude-3-5-haiku-20241022 (rule anthropic/haiku-3-5@2026-H2 records "
            "no input and output price); to price it, record its price.input and price.output",
        ),
        (
            "claude-opus-4-6",
            "no price for claude-opus-4-6 (rule anthropic/opus-4-6@2026-H2 records no output "
            "price); to price it, record its price.output",
        ),
    ],
)
def test_an_unpriced_summarizer_leaves_the_cost_unpriced_and_the_decision_the_agents(
    model: str, reason: str
) -> None:
    notes = cost_notes(_coding(model=model))
    own = cost_notes(_coding(model=None))  # the agent's own model: the agent's prices
    assert len(notes) == len(own) == 2
    for note, mine in zip(notes, own, strict=True):
        assert "unpriced" in note and reason in note, note
        assert "$" not in note and "input-token equivalents" not in note
        assert _decision(note) == _decision(mine)
        assert "$" in mine


def test_a_priced_summarizer_still_gets_a_usd_cost() -> None:
    assert unpriced_summarizer(("anthropic", "claude-haiku-4-5")) is None
    notes = cost_notes(_coding())
    assert notes and all("$" in n and "unpriced" not in n for n in notes)


_MODELS = st.one_of(
    st.sampled_from(
        [
            "claude-haiku-4-5",
            "claude-3-5-haiku-20241022",
            "claude-3-haiku-20240307",
            "claude-opus-4-6",
            "claude-sonnet-4-5",
        ]
    ),
    st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
)


@given(model=_MODELS, growth=st.integers(200, 8_000))
@fuzz_settings(15)
def test_a_cost_note_has_a_usd_figure_exactly_when_the_summarizers_model_has_a_price(
    model: str, growth: int
) -> None:
    bp = _coding(model=model)
    notes = cost_notes(bp, (growth,))
    writer = bp.summary_model
    priced = writer is None or model_price(*writer) is not None
    for note in notes:
        assert ("$" in note) == priced, note
        assert ("unpriced" in note) == (not priced), note
