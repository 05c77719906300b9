"""The relief chain (issue 16, client side): under token pressure old tool results are cleared
and oversized text trimmed before any summarization, each stage in one batch to the target or
not at all; placeholders are byte-identical forever; nothing is lost (``context_restore``
returns the original, appended at the end); calls and results stay one group."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.compaction.relief._chain import ReliefSkipped
from regio.content import ToolResult, ToolUse
from regio.layout import check_anthropic, check_openai_chat
from regio.policies import Compact
from regio.policies.relief import CLEARED_META, ReliefPolicy, ToolRelief, placeholder
from regio.regions import CompactHistory, Pinned, SlidingWindow
from runtime_stubs import StubCounter, StubSummarizer, make_engine, words

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _engine(
    relief: ReliefPolicy | None, *, trigger: int = 1000, target: int = 400, summarizer: Any = None
) -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=600, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=4000,
                eviction=Compact(compact_count=500, trigger=trigger, target=target),
            ),
        ],
        max_tokens=6000,
        summarizer=summarizer or StubSummarizer(size=8, distinct=True),
        relief=relief,
    )


def _step(engine: Any, i: int, size: int, tool: str = "bash", arg: str | None = None) -> str:
    call = ToolUse(f"c{i}", tool, {"cmd": arg if arg is not None else f"step {i}"})
    engine.add_assistant(f"step {i}", [call])
    engine.add_tool_result(call.id, words(size, f"t{i}x"))
    return call.id


def _events(engine: Any) -> list[Any]:
    seen: list[Any] = []
    engine.subscribe(seen.append)
    return seen


def _results(payload: dict[str, Any]) -> dict[str, str]:
    """tool_use_id -> content of every tool_result in an Anthropic payload."""
    out = {}
    for m in payload["messages"]:
        if isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    content = b["content"]
                    if isinstance(content, list):
                        content = "".join(x.get("text", "") for x in content)
                    out[b["tool_use_id"]] = content
    return out


LOOSE = ReliefPolicy(clear_at_least=10, trim_at_least=10, keep_last=1)


def test_clearing_alone_meets_the_target_so_nothing_is_summarized() -> None:
    engine = _engine(LOOSE)
    seen = _events(engine)
    engine.add_user("fix the bug")
    for i in range(14):
        _step(engine, i, 150)
        engine.request()
    kinds = [e.kind for e in seen]
    assert "relief_applied" in kinds
    assert "compaction_finished" not in kinds
    applied = [e for e in seen if e.kind == "relief_applied"]
    assert all(e.stage == "clear" for e in applied)
    assert engine.window.region("conversation").used_tokens <= 1000
    assert engine.book.relief.stages["clear"].runs == len(applied)


def test_the_chain_stops_when_the_target_is_met() -> None:
    # long assistant texts are trim candidates, but clearing alone meets the target first
    policy = ReliefPolicy(
        clear_at_least=10,
        trim_at_least=10,
        keep_last=1,
        trim_over_chars=400,
        trim_head_chars=100,
        trim_tail_chars=50,
    )
    engine = _engine(policy, target=700)
    seen = _events(engine)
    engine.add_user("fix the bug")
    flushes = []
    for i in range(14):
        call = ToolUse(f"c{i}", "bash", {"cmd": str(i)})
        engine.add_assistant(words(60, f"a{i}x"), [call])
        engine.add_tool_result(call.id, words(150, f"t{i}x"))
        del seen[:]
        engine.request()
        kinds = [e.kind for e in seen]
        before = (
            seen[: kinds.index("compaction_started")] if "compaction_started" in kinds else seen
        )
        stages = [e.stage for e in before if e.kind == "relief_applied"]
        if stages:  # the chain ran first, so it met the target: no summary in the same flush
            flushes.append(stages)
            assert "compaction_finished" not in [e.kind for e in seen]
    # the first relief met the target by clearing: the trim stage did not run
    assert flushes and flushes[0] == ["clear"]
    # later ones run cheapest first, each stage at most once
    assert all(f in (["clear"], ["clear", "trim"], ["trim"]) for f in flushes)


def _below_minimum_run() -> tuple[Any, list[Any]]:
    """The engine and events of 14 calls whose stages' minimum (100,000 tokens) is never met."""
    engine = _engine(ReliefPolicy(clear_at_least=100_000, trim_at_least=100_000, keep_last=2))
    seen = _events(engine)
    engine.add_user("fix the bug")
    for i in range(14):
        _step(engine, i, 150)
        engine.request()
    return engine, seen


def test_a_stage_below_its_minimum_does_not_run() -> None:
    engine, seen = _below_minimum_run()
    kinds = [e.kind for e in seen]
    assert "relief_applied" not in kinds
    assert "compaction_finished" in kinds  # token pressure went on to summarization
    assert (
        engine.book.relief.stages.get("clear") is None
        or engine.book.relief.stages["clear"].runs == 0
    )


def _small_results_run(
    policy: ReliefPolicy, seen: list[Any] | None = None
) -> tuple[Any, list[str]]:
    """The engine and the event kinds of a run of 40 small calls and results (12 and 14
    words) after a 300-word task, one request each: clearing alone cannot meet the target.
    ``seen`` collects the events themselves."""
    engine = _engine(policy)
    if seen is None:
        seen = []
    engine.subscribe(seen.append)
    engine.add_user("fix the bug " + words(300))
    for i in range(40):
        call = ToolUse(f"c{i}", "bash", {"cmd": "x"})
        engine.add_assistant(words(12, f"a{i}"), [call])
        engine.add_tool_result(call.id, words(14, f"t{i}x"))
        engine.request()
    return engine, [e.kind for e in seen]


def test_stages_that_cannot_reach_the_target_leave_it_to_the_summary() -> None:
    # small results: clearing all of them cannot bring 1,000 tokens down to 400 (and what
    # the summary keeps stays verbatim: no clearing after it)
    policy = ReliefPolicy(clear_at_least=1, trim_at_least=1, keep_last=2, clear_after_summary=False)
    engine, kinds = _small_results_run(policy)
    assert "relief_applied" not in kinds
    assert "relief_skipped" in kinds and "compaction_finished" in kinds
    assert engine.book.relief.stages["clear"].short >= 1


def test_a_stage_short_of_the_target_is_counted_apart_from_one_below_its_minimum() -> None:
    # `regio demo` printed "clear ran 69x (skipped 69x)" while the docs said "skipped below
    # its minimum": the chain falling short of the target was counted in the same tally
    short, _ = _small_results_run(
        ReliefPolicy(clear_at_least=1, trim_at_least=1, keep_last=2, clear_after_summary=False)
    )
    assert short.book.relief.stages["clear"].short >= 1
    assert short.book.relief.stages["clear"].skipped == 0  # its batch always met its 1 token
    below, seen = _below_minimum_run()
    clear = below.book.relief.stages["clear"]
    assert clear.skipped >= 1 and clear.short == 0 and clear.runs == 0
    reasons = {e.reason for e in seen if isinstance(e, ReliefSkipped)}
    assert reasons == {"below_minimum"}


def test_the_skipped_event_says_which_of_the_two_it_was() -> None:
    policy = ReliefPolicy(clear_at_least=1, trim_at_least=1, keep_last=2, clear_after_summary=False)
    seen: list[Any] = []
    engine, _ = _small_results_run(policy, seen)
    skips = [e for e in seen if isinstance(e, ReliefSkipped) and e.stage == "clear"]
    assert skips and {e.reason for e in skips} == {"short_of_target"}
    assert len(skips) == engine.book.relief.stages["clear"].short


def test_clear_after_summary_clears_what_the_summary_kept_in_the_same_rewrite() -> None:
    policy = ReliefPolicy(clear_at_least=1, trim_at_least=1, keep_last=2, clear_after_summary=True)
    engine, kinds = _small_results_run(policy)
    finished = kinds.index("compaction_finished")
    # the clearing comes right after the summary's commit, before the flush reports back
    assert "relief_applied" in kinds[:finished]
    assert engine.book.relief.stages["clear"].runs >= 1


def _summarized_results(policy: ReliefPolicy) -> list[str]:
    summarizer = StubSummarizer(size=8, distinct=True)
    engine = _engine(policy, summarizer=summarizer)
    engine.add_user("fix the bug")
    for i in range(60):
        _step(engine, i, 150)
        engine.request()
    assert summarizer.inputs, "the run never summarized"
    texts = [
        b.content
        for batch in summarizer.inputs
        for e in batch
        for b in e.blocks
        if isinstance(b, ToolResult)
    ]
    assert texts
    return texts


def test_with_summarize_originals_the_summary_covers_the_original_results() -> None:
    policy = ReliefPolicy(
        clear_at_least=10, trim_at_least=10, keep_last=1, summarize_originals=True
    )
    texts = _summarized_results(policy)
    assert not any("cleared to save context" in t for t in texts)


def test_by_default_the_summary_reads_the_placeholders_the_conversation_holds() -> None:
    texts = _summarized_results(LOOSE)
    cleared = [t for t in texts if "cleared to save context" in t]
    assert cleared, "no cleared result reached the summarizer"
    # each is the placeholder the conversation held, byte for byte (call id and tool named)
    assert all(t.startswith("[bash result of call c") for t in cleared)


#: Sessions that always pass the trigger (600 tokens) with results clearing can reach it by.
sizes = st.lists(st.integers(min_value=60, max_value=160), min_size=20, max_size=40)


@FAST
@given(sizes)
def test_a_placeholder_is_byte_identical_on_every_later_request(lengths: list[int]) -> None:
    engine = _engine(LOOSE, trigger=600, target=250)
    engine.add_user("fix the bug")
    first: dict[str, str] = {}
    for i, n in enumerate(lengths):
        _step(engine, i, n)
        _, payload = engine.request()
        for call_id, content in _results(payload).items():
            if "cleared to save context" in content:
                assert first.setdefault(call_id, content) == content
    assert first
    for call_id, content in first.items():
        assert content == placeholder(call_id, "bash", restorable=True)


@FAST
@given(sizes, st.data())
def test_a_cleared_result_comes_back_byte_identical_and_appended_at_the_end(
    lengths: list[int], data: st.DataObject
) -> None:
    engine = _engine(LOOSE, trigger=600, target=250)
    seen = _events(engine)
    engine.add_user("fix the bug")
    originals = {}
    for i, n in enumerate(lengths):
        originals[_step(engine, i, n)] = words(n, f"t{i}x")
        engine.request()
    # every call ever cleared, also those a later summary has replaced since
    cleared = [c for e in seen if e.kind == "relief_applied" for c in e.call_ids]
    assert cleared
    call_id = data.draw(st.sampled_from(cleared))
    outcome = engine.handle_tool_call("context_restore", {"call_id": call_id})
    assert outcome.ok and outcome.text == originals[call_id]
    # the agent's loop appends it as the result of its context_restore call, at the end
    call = ToolUse("r1", "context_restore", {"call_id": call_id})
    engine.add_assistant("", [call])
    engine.add_tool_result(call.id, outcome.text)
    _, payload = engine.request()
    last = payload["messages"][-1]["content"]
    assert any(b.get("tool_use_id") == "r1" for b in last if isinstance(b, dict))
    assert _results(payload)["r1"] == originals[call_id]
    assert _results(payload).get(call_id, "") != originals[call_id]  # not re-inserted in place


def test_an_unknown_call_id_comes_back_as_text() -> None:
    engine = _engine(LOOSE)
    engine.add_user("fix the bug")
    _step(engine, 0, 10)
    outcome = engine.handle_tool_call("context_restore", {"call_id": "nope"})
    assert not outcome.ok and "no tool result with call_id 'nope'" in outcome.text
    live = engine.handle_tool_call("context_restore", {"call_id": "c0"})
    assert not live.ok and "unchanged" in live.text


@FAST
@given(
    st.lists(
        st.tuples(st.integers(min_value=5, max_value=900), st.integers(min_value=1, max_value=3)),
        min_size=6,
        max_size=30,
    )
)
def test_no_clearing_or_trimming_ever_separates_a_tool_use_from_its_result(
    steps: list[tuple[int, int]],
) -> None:
    policy = ReliefPolicy(
        clear_at_least=5,
        trim_at_least=5,
        keep_last=1,
        trim_over_chars=600,
        trim_head_chars=200,
        trim_tail_chars=100,
    )
    engine = _engine(policy, trigger=1500, target=500)
    engine.add_user("fix the bug")
    for i, (n, calls) in enumerate(steps):
        uses = [ToolUse(f"c{i}_{k}", "bash", {"cmd": f"{i} {k}"}) for k in range(calls)]
        engine.add_assistant(words(3, f"a{i}"), uses)
        for u in uses:
            engine.add_tool_result(u.id, words(n, f"t{i}x"))
        for provider in ("anthropic", "openai"):
            _, payload = engine.request(provider)
            problems = (
                check_anthropic(payload) if provider == "anthropic" else check_openai_chat(payload)
            )
            assert problems == []


# dedupe (at most one live result per tool and arguments after a pass in which it ran):
# tests/test_relief_dedupe.py


def test_max_result_tokens_trims_on_admission_with_a_marker_and_keeps_the_original() -> None:
    policy = ReliefPolicy(tools={"cat": ToolRelief(max_result_tokens=50)})
    engine = _engine(policy, trigger=3000, target=1500)
    engine.add_user("read")
    text = "\n".join(words(10, f"line{i}-") for i in range(40))
    call = ToolUse("c1", "cat", {"path": "a.py"})
    engine.add_assistant("", [call])
    engine.add_tool_result(call.id, text)
    kept = engine.window.region("conversation").entries[-1].blocks[0]
    assert isinstance(kept, ToolResult)
    assert "characters cut to save context" in kept.content
    assert engine.counter.count(kept.content) <= 50
    assert kept.content.startswith("line0-0") and kept.content.endswith("line39-9")
    assert engine.handle_tool_call("context_restore", {"call_id": "c1"}).text == text


def test_a_routed_result_never_enters_the_conversation() -> None:
    from regio.regions import Temporary

    policy = ReliefPolicy(tools={"grep": ToolRelief(route="hits")})
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            Temporary(name="hits", budget=3000, volatility="rewritten"),
            SlidingWindow(name="conversation", budget=4000),
        ],
        max_tokens=8000,
        relief=policy,
    )
    engine.add_user("find it")
    bulky = words(800, "hit")
    call = ToolUse("g1", "grep", {"pattern": "foo"})
    engine.add_assistant("", [call])
    engine.add_tool_result(call.id, bulky)
    _, payload = engine.request()
    conversation = json.dumps(payload["messages"][:-1])
    assert "hit799" not in conversation
    pointer = _results(payload)["g1"]
    assert "stored in region 'hits'" in pointer and "g1" in pointer
    assert any(bulky in e.text for e in engine.window.region("hits").entries)
    assert engine.book.relief.stages["route"].runs == 1
    assert engine.handle_tool_call("context_restore", {"call_id": "g1"}).text == bulky


def test_an_excluded_tool_is_never_cleared() -> None:
    policy = ReliefPolicy(clear_at_least=10, keep_last=0, tools={"bash": ToolRelief(clear=False)})
    engine = _engine(policy, target=700)
    seen = _events(engine)
    engine.add_user("fix the bug")
    tools = {}
    for i in range(20):
        tools[_step(engine, i, 250, tool="bash" if i % 2 else "cat")] = "bash" if i % 2 else "cat"
        engine.request()
    conv = engine.window.region("conversation")
    live = [cid for e in conv.entries for cid in e.meta.get(CLEARED_META, ())]
    # every clearing of the run (also those a later summary covered since)
    cleared = [c for e in seen if e.kind == "relief_applied" for c in e.call_ids]
    assert cleared and all(tools[c] == "cat" for c in cleared)
    assert all(tools[c] == "cat" for c in live)


def test_without_relief_nothing_changes() -> None:
    engine = _engine(None)
    seen = _events(engine)
    engine.add_user("fix the bug")
    for i in range(14):
        _step(engine, i, 150)
        engine.request()
    assert not [e for e in seen if e.kind.startswith("relief")]
    assert [t.name for t in engine.tools()] == []


def test_a_saved_engine_keeps_its_relief_policy_tallies_and_originals(tmp_path: Any) -> None:
    policy = ReliefPolicy(
        clear_at_least=10, keep_last=1, tools={"cat": ToolRelief(max_result_tokens=20)}
    )
    engine = _engine(policy)
    engine.add_user("fix the bug")
    for i in range(14):
        _step(engine, i, 150, tool="cat" if i == 0 else "bash")
        engine.request()
    _, before = engine.request()
    path = engine.save(tmp_path / "s.json")
    loaded = type(engine).load(
        path, summarizer=StubSummarizer(size=8, distinct=True), token_counter=StubCounter()
    )
    assert loaded.options.relief == policy
    assert loaded.book.relief == engine.book.relief
    _, after = loaded.request()
    assert after == before
    text = words(150, "t0x")
    assert loaded.handle_tool_call("context_restore", {"call_id": "c0"}).text == text


def test_the_trim_stage_keeps_head_and_tail_with_a_marker_and_restores_the_original() -> None:
    policy = ReliefPolicy(
        clear=False,
        trim_at_least=10,
        keep_last=1,
        trim_over_chars=600,
        trim_head_chars=120,
        trim_tail_chars=80,
    )
    engine = _engine(policy, target=700)
    seen = _events(engine)
    engine.add_user("fix the bug")
    originals = {}
    for i in range(12):
        originals[_step(engine, i, 120)] = words(120, f"t{i}x")
        engine.request()
    trims = [e for e in seen if e.kind == "relief_applied"]
    assert trims and {e.stage for e in trims} == {"trim"}
    assert "compaction_finished" not in [e.kind for e in seen]
    conv = engine.window.region("conversation")
    trimmed = [
        b
        for e in conv.entries
        for b in e.blocks
        if isinstance(b, ToolResult) and "characters cut to save context" in b.content
    ]
    assert trimmed
    for b in trimmed:
        original = originals[b.tool_use_id]
        assert b.content.startswith(original[:120]) and b.content.endswith(original[-80:])
        assert (
            engine.handle_tool_call("context_restore", {"call_id": b.tool_use_id}).text == original
        )


def test_a_result_routed_to_a_keyed_region_is_kept_under_its_argument() -> None:
    from regio.regions import Keyed

    policy = ReliefPolicy(tools={"open": ToolRelief(route="files", route_key="file:{path}")})
    engine = make_engine(
        [
            Pinned(name="system", budget=200, volatility="stable"),
            Keyed(name="files", budget=3000),
            SlidingWindow(name="conversation", budget=4000),
        ],
        max_tokens=8000,
        relief=policy,
    )
    engine.add_user("read")
    for i, text in enumerate((words(300, "old"), words(300, "new"))):
        call = ToolUse(f"o{i}", "open", {"path": "src/app.py"})
        engine.add_assistant("", [call])
        engine.add_tool_result(call.id, text)
    files = engine.window.region("files")
    assert [e.key for e in files.entries] == ["file:src/app.py"]
    assert files.entries[0].text == words(300, "new")
    _, payload = engine.request()
    assert "old299" not in json.dumps(payload["messages"]) and "new299" not in json.dumps(
        payload["messages"][:-1]
    )
    assert "under key 'file:src/app.py'" in _results(payload)["o1"]


def test_a_route_whose_key_argument_is_missing_keeps_the_result_in_the_conversation() -> None:
    from regio.regions import Keyed

    policy = ReliefPolicy(tools={"open": ToolRelief(route="files", route_key="file:{path}")})
    engine = make_engine(
        [Keyed(name="files", budget=3000), SlidingWindow(name="conversation", budget=4000)],
        max_tokens=8000,
        relief=policy,
    )
    engine.add_user("read")
    call = ToolUse("o1", "open", {"name": "x"})
    engine.add_assistant("", [call])
    engine.add_tool_result(call.id, words(50, "body"))
    _, payload = engine.request()
    assert _results(payload)["o1"] == words(50, "body")
    assert engine.window.region("files").entries == []


def test_the_trim_stage_keeps_a_results_images_and_clearing_drops_them_until_restored() -> None:
    from media_support import png

    policy = ReliefPolicy(
        clear=False, trim_at_least=10, keep_last=1, trim_over_chars=600,
        trim_head_chars=120, trim_tail_chars=80,
    )  # fmt: skip
    engine = _engine(policy, target=700)
    engine.add_user("fix the bug")
    for i in range(12):
        call = ToolUse(f"c{i}", "screenshot", {"n": i})
        engine.add_assistant(f"step {i}", [call])
        engine.add_tool_result(call.id, words(120, f"t{i}x"), media=(png(64, 64),))
        engine.request()
    conv = engine.window.region("conversation")
    results = [b for e in conv.entries for b in e.blocks if isinstance(b, ToolResult)]
    trimmed = [b for b in results if "characters cut to save context" in b.content]
    assert trimmed
    assert all(len(b.media) == 1 for b in trimmed)
