"""The prefix-sharing summarizer (issue 13): a compaction forks the agent's last request byte
for byte with the instruction as a final user turn, so it reads the provider cache; it falls
back to the transcript prompt only when the fork would overflow the summarizer's window; an
expired cache compacts early above the soft mark."""

from __future__ import annotations

from typing import Any

from regio.agent.types import Completion
from regio.blueprint import load_blueprint
from regio.compaction._forking import ForkSummarizer
from regio.content import Message, ToolUse
from regio.engine import Engine
from regio.layout.cachebridge import to_cache_request
from regio.policies import Compact
from regio.providers import cache_model_for
from regio.regions import CompactHistory, Pinned, SlidingWindow, Window
from regio.summarizers import ExtractiveSummarizer
from runtime_stubs import StubCounter, words

MODEL = "claude-sonnet-4-5"


class RecordingProvider:
    """A provider that records every payload and answers with a short summary."""

    api = "anthropic"

    def __init__(self, model: str = MODEL, on_call: Any = None) -> None:
        self.model = model
        self.payloads: list[dict[str, Any]] = []
        self.on_call = on_call

    def complete(self, payload: dict[str, Any]) -> Completion:
        self.payloads.append(payload)
        if self.on_call is not None:
            self.on_call(payload)
        return Completion(message=Message.assistant(f"Goal: summary {len(self.payloads)}."))


def _engine(summarizer: Any, clock: Any = None, budget: int = 6000) -> Engine:
    window = Window(
        regions=[
            Pinned(name="system", budget=1500, volatility="stable"),
            CompactHistory(name="history", source="conversation", budget=800, volatility="grows"),
            SlidingWindow(
                name="conversation",
                budget=budget,
                eviction=Compact(trigger="80%", target="40%"),
                elastic=False,  # the marks are shares of this budget
            ),
        ],
        max_tokens=budget + 3000,
        counter=StubCounter(),
    )
    kwargs: dict[str, Any] = {} if clock is None else {"clock": clock}
    engine = Engine(window, summarizer=summarizer, provider="anthropic", model=MODEL, **kwargs)
    engine.write("system", words(1100, "sys"))
    return engine


def _step(engine: Engine, i: int, size: int = 300) -> None:
    call = ToolUse(f"c{i}", "bash", {"cmd": f"step {i}"})
    engine.add_assistant(f"step {i}", [call])
    engine.add_tool_result(call.id, words(size, f"r{i}x"))


def _until_forked(
    engine: Engine, provider: RecordingProvider, step: Any
) -> tuple[dict[str, Any], dict[str, Any], int]:
    """Requests with ``step(engine, i)`` between them until the summarizer is called: the
    first summary payload, the agent's last request before it, and the last step's ``i``."""
    engine.add_user("fix it")
    sent: list[dict[str, Any]] = []
    for i in range(40):
        sent.append(engine.request()[1])
        if provider.payloads:
            return provider.payloads[0], sent[-2], i
        step(engine, i)
    raise AssertionError("no compaction happened")


def test_a_compaction_forks_the_last_request_byte_for_byte() -> None:
    provider = RecordingProvider()
    engine = _engine(ForkSummarizer(provider, context_window=200_000, max_summary_tokens=200))
    fork, last, _ = _until_forked(engine, provider, _step)
    assert fork["system"] == last["system"]
    assert fork.get("tools") == last.get("tools")
    assert fork["messages"][: len(last["messages"])] == last["messages"]
    (extra,) = fork["messages"][len(last["messages"]) :]
    assert extra["role"] == "user"
    assert "Summarize" in str(extra["content"])


def test_each_forked_summary_request_reads_at_least_90_percent_from_the_cache() -> None:
    model = cache_model_for(f"anthropic:{MODEL}")
    clock = [0.0]
    shares: list[float] = []
    holder: dict[str, Engine] = {}

    def bill(_: dict[str, Any]) -> None:
        request = holder["engine"].state.last_summary_request
        assert request is not None
        outcome = model.process(to_cache_request(request, t_start=clock[0] + 1.0))
        shares.append(outcome.read / outcome.prompt_tokens)

    provider = RecordingProvider(on_call=bill)
    engine = _engine(
        ForkSummarizer(provider, context_window=200_000, max_summary_tokens=200),
        clock=lambda: clock[0],
    )
    holder["engine"] = engine
    engine.add_user("fix it")
    for i in range(120):
        request, _ = engine.request()
        model.process(to_cache_request(request, t_start=clock[0], output_tokens=50))
        clock[0] += 5.0
        _step(engine, i)
    assert len(shares) >= 3
    assert min(shares) >= 0.9, shares
    print("fork cache-read shares:", " ".join(f"{x:.1%}" for x in shares))


def test_a_fork_that_would_overflow_the_summarizer_falls_back_to_the_transcript() -> None:
    provider = RecordingProvider()
    engine = _engine(ForkSummarizer(provider, context_window=4000, max_summary_tokens=200))
    engine.add_user("fix it")
    for i in range(40):
        engine.request()
        if provider.payloads:
            break
        _step(engine, i)
    assert provider.payloads
    payload = provider.payloads[0]
    assert "working context" in payload["system"]
    assert "Transcript to summarize" in payload["messages"][-1]["content"]


def test_another_model_than_the_agents_gets_the_transcript_prompt() -> None:
    provider = RecordingProvider(model="claude-haiku-4-5")
    engine = _engine(ForkSummarizer(provider, context_window=200_000, max_summary_tokens=200))
    engine.add_user("fix it")
    for i in range(40):
        engine.request()
        if provider.payloads:
            break
        _step(engine, i)
    assert provider.payloads and "Transcript to summarize" in str(provider.payloads[0])


def test_an_expired_cache_compacts_above_the_soft_mark_only() -> None:
    for idle, compacts in ((10.0, False), (301.0, True)):
        clock = [0.0]
        engine = _engine(ExtractiveSummarizer(), clock=lambda c=clock: c[0])
        engine.add_user("fix it")
        conv = engine.window.region("conversation")
        i = 0
        while conv.used_tokens < 3700:  # above the soft mark (3360), below the trigger (4800)
            engine.request()
            _step(engine, i)
            i += 1
        assert not engine.events.of_kind("compaction_completed")
        engine.request()
        clock[0] += idle
        engine.request()
        queued = [e for e in engine.events.of_kind("compaction_queued")]
        assert any(e.reason == "cache_expired" for e in queued) is compacts
        assert bool(engine.events.of_kind("compaction_completed")) is compacts


def test_the_blueprint_summarizer_section_builds_the_summarizer() -> None:
    base = """
version: 1
name: t
model: {provider: anthropic, name: claude-sonnet-4-5, context_window: 100000}
regions:
  - {name: sys, kind: pinned, budget: 1000, volatility: stable}
"""
    offline = Engine.from_blueprint(load_blueprint(base))
    assert isinstance(offline.summarizer, ExtractiveSummarizer)
    llm = Engine.from_blueprint(
        load_blueprint(base + "summarizer: {provider: anthropic, max_summary_tokens: 700}\n")
    )
    assert isinstance(llm.summarizer, ForkSummarizer)
    assert llm.summarizer.model == "claude-sonnet-4-5"
    assert llm.summarizer.max_summary_tokens == 700
    assert llm.summarizer.api == "anthropic"


def test_a_compaction_reaching_past_the_last_request_still_forks_it() -> None:
    provider = RecordingProvider()
    engine = _engine(ForkSummarizer(provider, context_window=200_000, max_summary_tokens=200))
    conversation = engine.window.conversation
    assert conversation is not None
    conversation.eviction = Compact(trigger="80%", target="5%")  # keeps the newest message

    def chat(engine: Engine, i: int) -> None:
        engine.add_assistant(words(300, f"answer{i}x"))  # the reply to the request just sent
        engine.add_user(words(200, f"ask{i}x"))

    fork, last, i = _until_forked(engine, provider, chat)
    assert fork["messages"][: len(last["messages"])] == last["messages"]
    (extra,) = fork["messages"][len(last["messages"]) :]
    text = str(extra["content"])
    assert "came after this context was sent" in text
    assert f"answer{i - 1}x0 answer{i - 1}x1" in text  # the reply, as a transcript
    assert f"ask{i - 1}x0" not in text  # the newest message is kept, not summarized
