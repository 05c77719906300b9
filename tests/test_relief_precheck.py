"""The chain's feasibility pre-check (``relief.relieve``: the stages run only when together
they can bring the region to its target) agrees with the plain dry run: running every stage in
order toward the target reaches it exactly when the pre-check lets them run, and when it does
not, nothing is edited (the summary rewrites the prefix anyway)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief import _chain as relief
from regio.content import ToolUse
from regio.policies.relief import ReliefPolicy, ToolRelief
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import make_engine, words

# per step: (tool, argument, result words, assistant text words)
_STEPS = st.lists(
    st.tuples(
        st.sampled_from(["bash", "cat", "grep"]),
        st.integers(0, 2),
        st.integers(1, 160),
        st.integers(0, 120),
    ),
    min_size=1,
    max_size=14,
)
_POLICY = st.fixed_dictionaries(
    {
        "keep_last": st.integers(0, 3),
        "clear_at_least": st.integers(0, 400),
        "trim_at_least": st.integers(0, 400),
        "dedupe_at_least": st.integers(0, 300),
        "placeholder_extract_tokens": st.sampled_from([0, 8]),
        "trim_over_chars": st.just(400),
        "trim_head_chars": st.just(120),
        "trim_tail_chars": st.just(60),
        "clear_after_summary": st.just(False),
    }
)
_TOOLS = st.dictionaries(
    st.sampled_from(["bash", "cat", "grep"]),
    st.builds(
        ToolRelief,
        clear=st.booleans(),
        keep_last=st.none() | st.integers(0, 2),
        dedupe=st.booleans(),
    ),
    max_size=3,
)


def _built(steps: list[Any], policy: ReliefPolicy) -> Any:
    engine = make_engine(
        [Pinned(name="system", budget=200), SlidingWindow(name="conversation", budget=10**6)],
        max_tokens=2 * 10**6,
        relief=policy,
    )
    engine.add_user("fix the bug")
    for i, (tool, arg, size, text) in enumerate(steps):
        call = ToolUse(f"c{i}", tool, {"arg": arg})
        engine.add_assistant(words(text, f"a{i}x") or f"step {i}", [call])
        engine.add_tool_result(call.id, words(size, f"t{i}x"))
    engine.add_assistant("done", [])
    return engine


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_STEPS, _POLICY, _TOOLS, st.floats(0.0, 1.0))
def test_the_pre_check_lets_the_stages_run_exactly_when_the_dry_run_reaches_the_target(
    steps: list[Any], options: dict[str, Any], tools: dict[str, ToolRelief], share: float
) -> None:
    policy = ReliefPolicy(**options, tools=tools)
    checked, dry = _built(steps, policy), _built(steps, policy)
    region = checked.window.conversation
    target = int(region.used_tokens * share)
    before = list(region.entries)
    freed = relief.relieve(checked.session, region, target)
    # the plain dry run: every stage in order toward the target, no pre-check
    plain = dry.window.conversation
    run = relief._Pass(dry.session, plain, policy, relief._stages(dry.session, policy))
    for stage in run.stages:
        if plain.used_tokens <= target:
            break
        run.stage(stage, target)
    reached = plain.used_tokens <= target
    assert (region.used_tokens <= target) == reached
    if not reached:
        assert freed == 0 and list(region.entries) == before
    else:
        assert list(region.entries) == list(plain.entries)


def test_a_result_too_small_to_clear_is_still_room_for_the_trim_stage() -> None:
    # clearing the one result would free ~71 tokens, under clear_at_least (74): the clear
    # stage does not run, so the result stays the trim stage's to cut (the pre-check used to
    # count it as taken by clearing and refused a chain that reaches the target)
    policy = ReliefPolicy(
        keep_last=0,
        clear_at_least=74,
        trim_at_least=0,
        placeholder_extract_tokens=0,
        trim_over_chars=400,
        trim_head_chars=120,
        trim_tail_chars=60,
        clear_after_summary=False,
    )
    engine = _built([("bash", 0, 86, 1)], policy)
    region = engine.window.conversation
    target = region.used_tokens // 2
    assert relief.relieve(engine.session, region, target) > 0
    assert region.used_tokens <= target
    assert engine.book.relief.stages["trim"].runs == 1
    assert "clear" not in engine.book.relief.stages or not engine.book.relief.stages["clear"].runs
