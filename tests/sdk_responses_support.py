"""Valid provider responses as the SDKs return them (``model_dump()`` of an Anthropic
``Message``, an OpenAI ``ChatCompletion`` and a Responses ``Response``, each an assistant turn
that says "Reading it." and calls ``read(path="a.py")``), shared by the SDK reader tests and
the response fuzzer, which mutates them."""

from __future__ import annotations

from typing import Any

ANTHROPIC_MESSAGE: dict[str, Any] = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-6",
    "content": [
        {"type": "thinking", "thinking": "look first", "signature": "sig"},
        {"type": "text", "text": "Reading it."},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.py"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90},
}

CHAT_COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1,
    "model": "gpt-5",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Reading it.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
        }
    ],
    "usage": {
        "prompt_tokens": 100,
        "completion_tokens": 5,
        "total_tokens": 105,
        "prompt_tokens_details": {"cached_tokens": 64},
    },
}

RESPONSES_RESPONSE: dict[str, Any] = {
    "id": "resp_1",
    "object": "response",
    "created_at": 1,
    "model": "gpt-5",
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Reading it.", "annotations": []}],
        },
        {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "read",
            "arguments": '{"path": "a.py"}',
        },
    ],
    "usage": {
        "input_tokens": 100,
        "output_tokens": 5,
        "total_tokens": 105,
        "input_tokens_details": {"cached_tokens": 64, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    },
}

#: A Chat Completions response with the legacy single ``function_call`` (no call id), as
#: ``gpt-3.5-turbo-0613`` sent it and some OpenAI-compatible servers still do.
LEGACY_FUNCTION_CALL: dict[str, Any] = {
    "id": "chatcmpl-9",
    "object": "chat.completion",
    "created": 1_700_000_000,
    "model": "gpt-3.5-turbo-0613",
    "choices": [
        {
            "index": 0,
            "finish_reason": "function_call",
            "message": {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "read", "arguments": '{"path": "a.py"}'},
            },
        }
    ],
    "usage": {"prompt_tokens": 80, "completion_tokens": 9},
}
