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


@pytest.mark.xfail(
    strict=True,
    reason="ADK leaves a model content whose call never got a response out of the contents it "
    "builds, so the adapters' cursor loses its anchor (the content it recorded last) and admits "
    "the contents before it again (regio.adapters.cursor.first_new: every message is new when "
    "the anchor is gone); the cursor needs a second anchor (the content before the reply)",
)
def test_adk_contents_before_a_stopped_run_are_admitted_once() -> None:
    pytest.importorskip("google.adk")
    calls, _ = run_google_adk("orphaned-call")
    for n, call in enumerate(calls, 1):
        texts = [p.text for _, parts in call.messages for p in parts if p.kind == "text"]
        lines = [line for t in texts for line in t.split("\n\n")]
        assert len(lines) == len(set(lines)), f"call {n}: a user message sent twice: {lines}"
