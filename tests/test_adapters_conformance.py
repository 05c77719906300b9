"""The adapter conformance harness: each framework's own agent loop, with its own offline model,
40 tool steps whose results compact the window at least twice, and on EVERY model call the
checks of tests/adapter_harness_support.py (window, pairing, real output or placeholder, a
request valid under W-A and W-O, system prompt and instructions, cache marks for
Anthropic-bound calls, no text twice).

pydantic-ai runs on ``FunctionModel`` and, Anthropic-bound, on the real ``AnthropicModel`` over
an HTTP mock, its marks counted as they reach the wire: before regio carried its marks through
pydantic-ai (``CachePoint``, ``anthropic_cache_instructions``) that case sent none of those
planned.

Before the fixes of issue 25 this failed for pydantic-ai (tool results arrived as "The tool
call was interrupted..." plus a user message; ``system_prompt=`` never reached the model), the
Agents SDK (no windowing inside a run: the input outgrew the window), LiteLLM (no
``cache_control`` for ``anthropic/claude-sonnet-4-6``) and everywhere a compaction summary was
sent twice (as the summary and as an identical context note)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from adapter_drivers_support import (
    run_agents_sdk,
    run_google_adk,
    run_langchain,
    run_litellm,
    run_pydantic_ai,
    run_sdk_client,
)
from adapter_harness_support import INSTRUCTIONS, check_run

#: (framework x provider family) -> (the framework's package, the driver, check options)
CASES: dict[str, tuple[str, Callable[[], Any], dict[str, str]]] = {
    "langchain-anthropic": ("langchain_anthropic", lambda: run_langchain("anthropic"), {}),
    "langchain-openai": ("langchain_openai", lambda: run_langchain("openai"), {}),
    "pydantic-ai-capability": (
        "pydantic_ai",
        lambda: run_pydantic_ai("capability"),
        {"instructions": INSTRUCTIONS},
    ),
    "pydantic-ai-anthropic": (
        "pydantic_ai",
        lambda: run_pydantic_ai("capability-anthropic"),
        {"instructions": INSTRUCTIONS},
    ),
    "pydantic-ai-history-processor": (
        "pydantic_ai",
        lambda: run_pydantic_ai("history"),
        {"instructions": INSTRUCTIONS},
    ),
    "openai-agents-responses": ("agents", run_agents_sdk, {}),
    "google-adk-gemini": ("google.adk", run_google_adk, {}),
    "litellm-anthropic": ("litellm", lambda: run_litellm("anthropic"), {}),
    "litellm-openai": ("litellm", lambda: run_litellm("openai"), {}),
    "anthropic-sdk": ("anthropic", lambda: run_sdk_client("anthropic"), {}),
    "openai-sdk": ("openai", lambda: run_sdk_client("openai"), {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_model_call_of_the_frameworks_own_loop_gets_a_conforming_window(case: str) -> None:
    package, driver, options = CASES[case]
    pytest.importorskip(package)
    calls, engine, compactions = driver()
    check_run(calls, engine, compactions, **options)


def test_the_harness_refuses_a_request_no_provider_would_accept() -> None:
    from adapter_harness_support import Call, Part, request_problems

    call_ = Part("call", id="c1", args={"path": "a"})
    result = Part("result", "out", id="c1")
    valid = Call([], [("user", [Part("text", "go")]), ("assistant", [call_]), ("tool", [result])])
    assert request_problems(valid) == []
    orphaned = Call([], [("user", [Part("text", "go")]), ("tool", [result])])
    unanswered = Call([], [("assistant", [call_]), ("user", [Part("text", "go")])])
    text_first = Call([], [("assistant", [call_]), ("user", [Part("text", "go"), result])])
    twice = Call([], [("assistant", [call_]), ("tool", [result]), ("assistant", [call_])])
    for broken in (orphaned, unanswered, text_first, twice):
        assert request_problems(broken), broken


def test_the_harness_tells_a_relief_form_from_a_foreign_result() -> None:
    from adapter_harness_support import is_output_or_relief, tool_output

    output = tool_output("src/mod3.py")
    trimmed = output[:1200] + "\n[... 2000 characters cut to save context ...]\n" + output[-800:]
    assert is_output_or_relief(output, output, "call_3")
    assert is_output_or_relief(
        "[read_file result of call call_3 cleared to save context]", output, "call_3"
    )
    assert is_output_or_relief(trimmed, output, "call_3")
    interrupted = "The tool call was interrupted before a result was produced."
    assert not is_output_or_relief(interrupted, output, "call_3")
    assert not is_output_or_relief(tool_output("src/mod4.py"), output, "call_3")
    assert not is_output_or_relief("[read_file result of call call_4 cleared]", output, "call_3")
