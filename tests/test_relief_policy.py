"""The pure rules of the relief chain (:mod:`regio.policies.relief`) and its blueprint section:
one batch of the fewest oldest candidates or none, trims that keep head and tail with an honest
marker, and clear errors for a relief section that cannot work."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.blueprint import BlueprintError, load_blueprint
from regio.blueprint.reliefspec import relief_policy
from regio.policies.relief import (
    Candidate,
    ReliefPolicy,
    choose,
    placeholder,
    trim_marker,
    trim_text,
    trimmed_to,
)


@given(
    st.lists(st.integers(min_value=0, max_value=500), max_size=30),
    st.integers(min_value=-10, max_value=3000),
    st.integers(min_value=0, max_value=2000),
)
def test_a_stage_takes_the_fewest_oldest_candidates_or_none(
    gains: list[int], need: int, at_least: int
) -> None:
    cands = [Candidate(i, 0) for i in range(len(gains))]
    chosen, total = choose(cands, lambda c: gains[c.index], need, at_least)
    if not chosen:
        assert total == 0
        assert need <= 0 or sum(gains) < max(at_least, 1) or at_least > sum(gains)
        return
    assert total >= at_least and total == sum(gains[c.index] for c in chosen)
    assert [c.index for c in chosen] == sorted(c.index for c in chosen)
    goal = max(need, at_least)
    if total >= goal:  # minimal: without its newest candidate the batch falls short
        assert total - gains[chosen[-1].index] < goal
    else:  # it took every candidate that frees something
        assert len(chosen) == sum(1 for g in gains if g > 0)


def test_a_stage_that_would_free_less_than_its_minimum_takes_nothing() -> None:
    cands = [Candidate(i, 0) for i in range(5)]
    assert choose(cands, lambda c: 100, need=300, at_least=600) == ([], 0)
    assert choose(cands, lambda c: 100, need=300, at_least=500)[1] == 500


@given(st.text(min_size=0, max_size=3000), st.integers(0, 400), st.integers(0, 400))
def test_a_trimmed_text_keeps_its_head_and_tail_and_says_how_much_was_cut(
    text: str, head: int, tail: int
) -> None:
    out = trim_text(text, head, tail)
    if out == text:
        return
    cut = len(text) - head - tail
    assert out.startswith(text[:head]) and out.endswith(text[len(text) - tail :])
    assert trim_marker(cut) in out and len(out) < len(text)


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=50, max_value=2000))
def test_a_result_trimmed_on_admission_fits_its_token_limit(limit: int, n: int) -> None:
    text = " ".join(f"w{i}" for i in range(n))
    out = trimmed_to(text, n, limit, lambda t: len(t.split()))
    assert len(out.split()) <= max(limit, len(trim_marker(0).split()) + 2) or out == text


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=20), st.booleans())
def test_a_placeholder_depends_only_on_the_call_and_the_tool(
    call_id: str, tool: str, restorable: bool
) -> None:
    a = placeholder(call_id, tool, restorable=restorable)
    assert a == placeholder(call_id, tool, restorable=restorable)
    assert call_id in a and tool in a


def test_a_trim_that_would_be_trimmed_again_is_refused() -> None:
    with pytest.raises(ValueError, match="trim_over_chars"):
        ReliefPolicy(trim_over_chars=1000, trim_head_chars=600, trim_tail_chars=300)


BASE = """
version: 1
name: r
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 4000}
regions:
  - {name: system, kind: pinned, budget: 1000, volatility: stable}
  - {name: hits, kind: temporary, budget: 4000}
  - {name: files, kind: keyed, budget: 4000}
  - {name: history, kind: compact_history, source: conversation, budget: 2000}
  - {name: conversation, kind: sliding_window, budget: 20000, eviction: {strategy: compact}}
"""


def test_the_blueprint_relief_section_builds_the_engine_policy() -> None:
    bp = load_blueprint(
        BASE
        + """
relief:
  enabled: true
  keep_last: 5
  tools:
    - {name: grep, route: hits}
    - {name: read_file, route: files, route_key: "file:{path}", max_result_tokens: 800}
    - {name: plan, clear: false}
"""
    )
    policy = relief_policy(bp.relief)
    assert policy.keep_last == 5
    assert policy.tool("grep").route == "hits"
    assert policy.tool("read_file").route_key == "file:{path}"
    assert policy.tool("read_file").max_result_tokens == 800
    assert not policy.tool("plan").clear and policy.tool("other").clear


@pytest.mark.parametrize(
    ("tools", "path", "words"),
    [
        ("- {name: grep, route: nowhere}", "relief.tools[0].route", "no region 'nowhere'"),
        ("- {name: grep, route: conversation}", "relief.tools[0].route", "is sliding_window"),
        ("- {name: grep, route: files}", "relief.tools[0]", "give route_key"),
        (
            "- {name: grep, route: hits, route_key: 'k:{a}'}",
            "relief.tools[0].route_key",
            "not keyed",
        ),
        ("- {name: grep, route_key: 'k'}", "relief.tools[0].route_key", "only with route"),
        ("- {name: a}\n    - {name: a}", "relief.tools[1].name", "merge them"),
    ],
)
def test_a_relief_rule_that_cannot_work_is_an_error_naming_its_place(
    tools: str, path: str, words: str
) -> None:
    with pytest.raises(BlueprintError) as info:
        load_blueprint(BASE + f"relief:\n  enabled: true\n  tools:\n    {tools}\n")
    assert path in str(info.value) and words in str(info.value)


def test_a_relief_section_off_gives_no_policy() -> None:
    assert relief_policy(load_blueprint(BASE).relief) is None
