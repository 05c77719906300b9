"""Broken histories through each framework's own loop: the adapter repairs what it receives
before the window is laid out (issue 31: "the proxy and the adapters use the same repair on
what they receive"), so the model gets a valid request (W-A and W-O of the field cases) on
every call, each result paired with the call that made it, and the repair is reported
(``history_repaired`` events). The histories: tests/adapter_repair_support.py.

Before the adapters repaired, every case here failed: no repair was reported; a call that never
returned reached the model with a neutral placeholder on every request (and stayed in the window
as an open group, never compacted) instead of a result saying it was interrupted; of two calls
under one id the second was dropped and its result paired with the first call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from adapter_repair_support import (
    BROKEN,
    check_repaired_run,
    run_agents_sdk,
    run_google_adk,
    run_langchain,
    run_litellm,
    run_pydantic_ai,
)

#: framework (x provider family) -> (the framework's package, the driver)
FRAMEWORKS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "langchain-anthropic": ("langchain_anthropic", lambda k: run_langchain(k, "anthropic")),
    "langchain-openai": ("langchain_openai", lambda k: run_langchain(k, "openai")),
    "pydantic-ai-capability": ("pydantic_ai", lambda k: run_pydantic_ai(k, "capability")),
    "pydantic-ai-anthropic": ("pydantic_ai", lambda k: run_pydantic_ai(k, "capability-anthropic")),
    "pydantic-ai-history-processor": ("pydantic_ai", lambda k: run_pydantic_ai(k, "history")),
    "openai-agents": ("agents", run_agents_sdk),
    "google-adk": ("google.adk", run_google_adk),
    "litellm-anthropic": ("litellm", lambda k: run_litellm(k, "anthropic")),
    "litellm-openai": ("litellm", lambda k: run_litellm(k, "openai")),
}


_PYDANTIC_DROPS = (
    "pydantic-ai drops a ToolReturnPart without its call from message_history before the first "
    "model request (and closes a call left open there itself)"
)
#: (framework, break) -> why the break never reaches the adapter.
UNREACHABLE: dict[tuple[str, str], str] = {
    ("pydantic-ai-capability", "orphaned-result"): _PYDANTIC_DROPS,
    ("pydantic-ai-anthropic", "orphaned-result"): _PYDANTIC_DROPS,
    ("pydantic-ai-history-processor", "orphaned-result"): _PYDANTIC_DROPS,
    ("pydantic-ai-history-processor", "orphaned-call"): (
        "a history processor records a reply at the next request, so a run that stopped after "
        "the model's call leaves no call in the engine; " + _PYDANTIC_DROPS
    ),
    ("google-adk", "orphaned-result"): (
        "ADK drops a function response without its call from the contents it builds"
    ),
}


@pytest.mark.parametrize("kind", list(BROKEN))
@pytest.mark.parametrize("framework", list(FRAMEWORKS))
def test_a_broken_history_is_repaired_before_the_model_gets_it(framework: str, kind: str) -> None:
    package, driver = FRAMEWORKS[framework]
    pytest.importorskip(package)
    if (framework, kind) in UNREACHABLE:
        pytest.skip(UNREACHABLE[framework, kind])
    calls, repairs = driver(kind)
    check_repaired_run(calls, repairs, kind)


def test_adk_contents_before_a_stopped_run_are_admitted_once() -> None:
    """ADK leaves the model content whose call never got a response out of the contents it
    builds, so the cursor's anchor (the content it recorded last) is gone: the second anchor
    (the content before it) says where the new contents start. Before it, every content was
    taken as new and the user's first message reached the model twice."""
    pytest.importorskip("google.adk")
    calls, _ = run_google_adk("orphaned-call")
    for n, call in enumerate(calls, 1):
        texts = [p.text for _, parts in call.messages for p in parts if p.kind == "text"]
        lines = [line for t in texts for line in t.split("\n\n")]
        assert len(lines) == len(set(lines)), f"call {n}: a user message sent twice: {lines}"


@pytest.mark.parametrize("adapter", ["capability", "history"])
def test_pydantic_ai_resumed_from_the_history_before_a_stopped_run_admits_it_once(
    adapter: str,
) -> None:
    """A run that stopped (its tool raised after the adapter recorded the model's call), then a
    run resumed from the ``message_history`` saved before it: the history ends before the
    stopped run's messages, so the cursor's anchor (the call) is not in it; the second anchor
    (the end of the saved history) says where the new messages start. Before it, the whole
    saved history was admitted again and the model got every earlier message twice."""
    pytest.importorskip("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.models.function import FunctionModel

    from adapter_harness_support import FINAL, SYSTEM_PROMPT, TOOL, engine, request_problems
    from adapter_repair_support import LOST, TASK, Script, pydantic_function, read
    from regio.adapters.pydantic_ai import RegioCapability, RegioHistory

    script = Script(
        [("call_0", TOOL, "src/mod0.py"), None, ("call_lost", TOOL, LOST), *MOVES_AFTER]
    )
    calls: list[Any] = []

    model = pydantic_function(calls, script)
    eng = engine()
    capability: Any = (
        RegioCapability(eng) if adapter == "capability" else ProcessHistory(RegioHistory(eng))
    )
    agent = Agent(FunctionModel(model), system_prompt=SYSTEM_PROMPT, capabilities=[capability])
    agent.tool_plain(name=TOOL)(read)
    saved = agent.run_sync("Read src/mod0.py.").all_messages()
    with pytest.raises(RuntimeError):
        agent.run_sync(f"Read {LOST}.", message_history=saved)
    assert agent.run_sync(TASK, message_history=saved).output == FINAL
    assert len(calls) == 5
    for n, call in enumerate(calls, 1):
        assert not request_problems(call), f"call {n}: {request_problems(call)[:2]}"
        texts = [p.text for _, parts in call.messages for p in parts if p.kind != "call"]
        lines = [line for t in texts for line in t.split("\n") if len(line) >= 20]
        twice = sorted({line for line in lines if lines.count(line) > 1})
        assert not twice, f"call {n}: sent twice: {twice[:2]}"


#: The model's moves in the resumed run: read src/mod1.py, answer.
MOVES_AFTER: list[Any] = [("call_new", "read_file", "src/mod1.py"), None]
