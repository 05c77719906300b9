"""The pure rules of the relief chain (:mod:`regio.policies.relief`) and its blueprint section:
one batch of the fewest oldest candidates or none, trims that keep head and tail with an honest
marker, and clear errors for a relief section that cannot work."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.blueprint import BlueprintError, load_blueprint
from regio.blueprint.reliefspec import relief_policy
from regio.errors import RegioError
from regio.policies.relief import (
    MARKER_TOKENS,
    Candidate,
    ReliefPolicy,
    ToolRelief,
    choose,
    placeholder,
    trim_marker,
    trim_text,
    trimmed_to,
)
from regio.tokens import get_counter


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
    cut = len(text) - head - tail
    marker = trim_marker(cut)
    if cut <= 0 or head + len(marker) + tail >= len(text):
        assert out == text  # nothing to cut, or the marker would not make it shorter
        return
    assert len(out) == head + len(marker) + tail  # exactly head, marker, tail
    assert out[:head] == text[:head] and out[head : head + len(marker)] == marker
    assert out[head + len(marker) :] == text[len(text) - tail :]


def _word_count(text: str) -> int:
    return len(text.split())


@given(
    st.integers(min_value=MARKER_TOKENS, max_value=200),
    st.one_of(st.integers(min_value=-20, max_value=20), st.integers(min_value=-20, max_value=2000)),
    st.booleans(),
)
def test_a_result_trimmed_on_admission_fits_its_token_limit(
    limit: int, over: int, dense: bool
) -> None:
    n = max(1, limit + over)  # words; near the limit as often as far above it
    # dense: one-character words, a text shorter in characters than the marker alone
    text = " ".join("a" if dense else f"w{i}" for i in range(n))
    out = trimmed_to(text, n, limit, _word_count)
    if n <= limit:
        assert out == text
        return
    assert _word_count(out) <= limit  # the limit itself, not a range around it
    assert "characters cut to save context" in out
    kept = out.split(trim_marker(0)[:5])[0]  # the head is the text's own start
    assert text.startswith(kept)


@settings(max_examples=40, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=3000),
    st.integers(min_value=MARKER_TOKENS, max_value=400),
    st.sampled_from(["heuristic", "o200k_base", "cl100k_base"]),
)
def test_a_result_trimmed_by_a_real_counter_fits_its_token_limit(
    text: str, limit: int, name: str
) -> None:
    count = get_counter(name).count
    tokens = count(text)
    out = trimmed_to(text, tokens, limit, count)
    assert out == text if tokens <= limit else count(out) <= limit


def test_the_trim_marker_fits_marker_tokens_under_every_counter_regio_ships() -> None:
    for name in ("heuristic", "o200k_base", "cl100k_base"):
        for cut in (1, 10**6, 10**12):
            assert get_counter(name).count(trim_marker(cut)) <= MARKER_TOKENS


def test_a_max_result_tokens_below_the_marker_size_is_refused() -> None:
    with pytest.raises(ValueError, match="max_result_tokens must be >= 16"):
        ToolRelief(max_result_tokens=MARKER_TOKENS - 1)
    with pytest.raises(BlueprintError) as info:
        load_blueprint(
            BASE + "relief:\n  enabled: true\n  tools:\n    - {name: cat, max_result_tokens: 8}\n"
        )
    assert isinstance(info.value, RegioError)
    assert "relief.tools[0].max_result_tokens" in str(info.value) and "16" in str(info.value)


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
