"""Replay drives the runtime Engine: the requests are what the engine produces."""

from __future__ import annotations

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from _bench_fixtures import swe_trace, tau_trace, tiny_blueprint
from regio.bench.capture import AddMessage, Call, capture_stream
from regio.bench.replay import replay, trace_tools
from regio.engine import Engine
from regio.layout import to_cache_request
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from regio.traces.format import Header, Trace


def test_the_regio_requests_are_what_a_hand_driven_engine_produces() -> None:
    trace = swe_trace(steps=4)
    counter = get_counter("heuristic")
    out = replay(trace, tiny_blueprint(), layouts=("regio",), rules=(), counter=counter)
    engine = Engine.from_blueprint(
        tiny_blueprint(),
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter),
        clock=lambda: 0.0,
    )
    mine = []
    for item in capture_stream(trace, (), counter.count):
        if isinstance(item, AddMessage):
            engine.add_message(item.message)
        elif isinstance(item, Call):
            req, _ = engine.request("anthropic", "claude-sonnet-4-5")
            mine.append(to_cache_request(req, t_start=item.t, id=f"{item.index:05d}"))
    got = [[(b.digest, b.tokens, b.mark) for b in r.blocks] for r in out.requests["regio"]]
    assert got == [[(b.digest, b.tokens, b.mark) for b in r.blocks] for r in mine]


def test_every_request_of_a_strategy_starts_with_the_same_block() -> None:
    out = replay(tau_trace(), tiny_blueprint(), layouts=("kind", "regio", "recorded", "trim"))
    firsts = {name: {r.blocks[0].digest for r in reqs} for name, reqs in out.requests.items()}
    assert all(len(d) == 1 for d in firsts.values())
    layouts = [out.requests["kind"], out.requests["regio"]]
    assert all(r.blocks[0].level == "tools" for reqs in layouts for r in reqs)


def test_captured_lookups_land_in_the_engine_window() -> None:
    out = replay(tau_trace(), tiny_blueprint(), layouts=("regio",))
    # get_user_details and get_reservation_details are captured after the first call
    assert out.region_writes == 2 and out.refused_writes == 0


def test_trace_tools_read_anthropic_and_openai_shapes() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}}
    header = Header(
        id="t",
        source_format="regio",
        tools=(
            {"name": "a", "description": "A", "input_schema": schema},
            {"type": "function", "function": {"name": "b", "parameters": schema}},
            {"description": "no name"},
        ),
    )
    tools = trace_tools(Trace(header, ()))
    assert [(t.name, t.input_schema) for t in tools] == [("a", schema), ("b", schema)]


@settings(max_examples=25, deadline=None)
@given(steps=st.integers(1, 8), files=st.lists(st.sampled_from(["a.py", "b.py"]), min_size=1))
def test_one_request_per_model_call_in_every_layout(steps: int, files: list[str]) -> None:
    out = replay(swe_trace(steps=steps, files=tuple(files)), tiny_blueprint())
    assert {len(r) for r in out.requests.values()} == {steps}
    for reqs in out.requests.values():
        starts = [r.t_start for r in reqs]
        assert starts == sorted(starts)
    encoded = {k: msgspec.json.encode(v) for k, v in out.requests.items()}
    again = replay(swe_trace(steps=steps, files=tuple(files)), tiny_blueprint())
    assert encoded == {k: msgspec.json.encode(v) for k, v in again.requests.items()}
