"""A capture that a region refuses loses nothing: the engine keeps the recorded text.

Capture rules take text out of an observation (a stripped state footer, a parked output) and
file it in a region. When the region refuses the write (too small for it, as a blueprint
scaled to a small window can be) the replayed agent keeps the text where it was recorded,
so every request still holds the newest footer and the newest parked output.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from _bench_fixtures import FOOTER, footer_state_blueprint
from regio.bench.capture import (
    AddMessage,
    Call,
    FooterRule,
    RegionOp,
    capture_stream,
    rules_for,
)
from regio.bench.replay import replay
from regio.bench.retention import Probe, RetentionMeter
from regio.bench.tracking import Tracker
from regio.capture.filing import apply_all, file_moves
from regio.content import Text, ToolResult, ToolUse, block_text
from regio.engine import Engine
from regio.summarizers._extractive import ExtractiveSummarizer
from regio.tokens import get_counter
from regio.traces.format import (
    AssistantMessage,
    Header,
    SystemPrompt,
    ToolResults,
    Trace,
    UserMessage,
)


def _blueprint(state_budget: int, park_budget: int):  # type: ignore[no-untyped-def]
    return footer_state_blueprint("capture-refusals", state_budget, park_budget)


def _trace(sizes: list[int], files: list[str]) -> Trace:
    """Observations of ``sizes[i]`` filler words, each ending with a unique marker line and
    the SWE-agent footer naming ``files[i]``."""
    events: list = [SystemPrompt(0.0, "You are a careful engineer. " * 50)]
    events.append(UserMessage(0.0, (Text("Fix the bug."),)))
    t = 0.0
    for i, (size, name) in enumerate(zip(sizes, files, strict=False)):
        t += 3.0
        events.append(AssistantMessage(t, (Text(f"step {i}\n```\ncat {name}\n```"),)))
        t += 2.0
        body = f"head of output {i}\n" + "word " * size + f"\nEND-OF-OUTPUT-{i}"
        events.append(UserMessage(t, (Text(body + FOOTER.format(f=name)),), observation=True))
    t += 3.0
    events.append(AssistantMessage(t, (Text("done"),)))
    return Trace(Header(id="tiny/refusals", source_format="swe-agent"), tuple(events))


def _probes(trace: Trace) -> list[Probe]:
    """The newest footer state and the newest observation's end marker, each counted until
    the next observation replaces it."""
    rule = FooterRule("env_state")
    seen = [i for i, e in enumerate(trace.events) if isinstance(e, UserMessage) and e.observation]
    probes = []
    for k, i in enumerate(seen):
        event = trace.events[i]
        assert isinstance(event, UserMessage)
        until = seen[k + 1] if k + 1 < len(seen) else None
        state = rule.split(event.blocks[0].text)[1]
        assert state is not None
        probes.append(Probe("fact", state, i, until=until))
        probes.append(Probe("constraint", f"END-OF-OUTPUT-{k}", i, until=until))
    return probes


def _requests(state_budget: int, park_budget: int, trace: Trace) -> list[str]:
    """The text of every request regio sends on ``trace``, driven as the bench's replay drives
    it (the captured stream, each message's moves filed first)."""
    blueprint = _blueprint(state_budget, park_budget)
    counter = get_counter(blueprint.tokenizer)
    engine = Engine.from_blueprint(
        blueprint,
        summarizer=ExtractiveSummarizer(counter=counter),
        token_counter=counter,
        clock=lambda: 0.0,
        strategy="regio",
    )
    names = {r.name for r in engine.window.regions}
    texts = []
    for item in capture_stream(trace, rules_for(blueprint), counter.count):
        if isinstance(item, RegionOp):
            apply_all({"regio": engine}, {"regio": _tracker()}, item)
        elif isinstance(item, AddMessage):
            filed = file_moves({"regio": engine}, None, item, names, [])
            message = item.message if filed.by_engine["regio"] else item.fallback or item.message
            engine.add_message(message, observation=item.observation)
        elif isinstance(item, Call):
            req, _ = engine.request("anthropic", blueprint.model.name)
            texts.append("\n".join(block_text(b.block) for b in req.blocks if b.block is not None))
    return texts


def _tracker() -> Tracker:
    return Tracker(RetentionMeter((), ()))


def _lost(state_budget: int, park_budget: int, trace: Trace) -> list[tuple[int, str]]:
    """(request, needle) for every probe of :func:`_probes` a request should hold and does not."""
    texts = _requests(state_budget, park_budget, trace)
    calls = [i for i, e in enumerate(trace.events) if isinstance(e, AssistantMessage)]
    return [
        (n, p.needle)
        for n, (at, text) in enumerate(zip(calls, texts, strict=True))
        for p in _probes(trace)
        if p.event < at and (p.until is None or p.until >= at) and p.needle not in text
    ]


def _refused(state_budget: int, park_budget: int, trace: Trace) -> int:
    out = replay(trace, _blueprint(state_budget, park_budget), layouts=("regio",))
    return out.refused_writes


def test_a_stripped_footer_is_a_move_of_its_observation_with_the_recorded_text_as_fallback() -> (
    None
):
    trace = _trace([5, 5], ["a.py", "b.py"])
    items = list(capture_stream(trace, [FooterRule("env_state")], lambda s: len(s) // 4))
    moved = [i for i in items if isinstance(i, AddMessage) and i.moves]
    assert len(moved) == 2 and not any(isinstance(i, RegionOp) for i in items)
    for item in moved:
        assert "(Open file:" not in item.message.text
        assert item.fallback is not None and "(Open file:" in item.fallback.text


def test_a_state_region_too_small_for_the_footer_keeps_every_footer_in_the_conversation() -> None:
    trace = _trace([5] * 4, ["a.py", "b.py", "c.py", "d.py"])
    assert _refused(2, 4000, trace) > 0
    assert _lost(2, 4000, trace) == []


def test_an_output_too_large_for_its_park_region_stays_whole_in_the_conversation() -> None:
    trace = _trace([200, 5, 300], ["a.py", "a.py", "b.py"])
    assert _refused(200, 20, trace) > 0
    assert _lost(200, 20, trace) == []


def test_a_refused_capture_is_not_a_cut() -> None:
    """The text stays in the message, so the strategy has dropped nothing (its first cut is
    ``None``, and the run is not scored from the refusal on)."""
    trace = _trace([5] * 4, ["a.py", "b.py", "c.py", "d.py"])
    out = replay(trace, _blueprint(2, 4000), layouts=("regio",), probes=_probes(trace))
    assert out.refused_writes > 0
    assert out.runs["regio"].first_cut is None and out.retention_from is None


def test_two_large_results_of_one_tool_message_are_both_parked() -> None:
    """A tool message with two results over the park threshold: the agent reads both before
    its next call, so the second must not displace the first before any request saw it."""
    events: list = [SystemPrompt(0.0, "sys"), UserMessage(0.0, (Text("Fix it."),))]
    calls = (ToolUse("c1", "cat", {"path": "a"}), ToolUse("c2", "cat", {"path": "b"}))
    events.append(AssistantMessage(1.0, calls))
    bodies = [f"out {i}\n" + "word " * 200 + f"\nMARKER-{i}" for i in (1, 2)]
    events.append(
        ToolResults(2.0, tuple(ToolResult(c.id, b) for c, b in zip(calls, bodies, strict=True)))
    )
    events.append(AssistantMessage(3.0, (Text("done"),)))
    trace = Trace(Header(id="tiny/two-parks", source_format="swe-agent"), tuple(events))
    last = _requests(200, 4000, trace)[-1]
    assert "MARKER-1" in last and "MARKER-2" in last


@settings(max_examples=25, deadline=None)
@given(
    state_budget=st.integers(1, 60),
    park_budget=st.integers(1, 600),
    sizes=st.lists(st.integers(1, 300), min_size=2, max_size=6),
    names=st.lists(st.sampled_from(["a.py", "b.py", "src/pkg/long_module_name.py"]), min_size=6),
)
def test_whatever_a_capture_region_refuses_the_newest_footer_and_output_stay_in_the_request(
    state_budget: int, park_budget: int, sizes: list[int], names: list[str]
) -> None:
    assert _lost(state_budget, park_budget, _trace(sizes, names)) == []


def test_two_large_blocks_of_one_observation_are_both_parked() -> None:
    """The same rule for an observation sent as user text with two large blocks."""
    blocks = tuple(Text(f"out {i}\n" + "word " * 200 + f"\nMARKER-{i}") for i in (1, 2))
    events: list = [SystemPrompt(0.0, "sys"), UserMessage(0.0, (Text("Fix it."),))]
    events.append(AssistantMessage(1.0, (Text("cat a b"),)))
    events.append(UserMessage(2.0, blocks, observation=True))
    events.append(AssistantMessage(3.0, (Text("done"),)))
    trace = Trace(Header(id="tiny/two-blocks", source_format="swe-agent"), tuple(events))
    last = _requests(200, 4000, trace)[-1]
    assert "MARKER-1" in last and "MARKER-2" in last
