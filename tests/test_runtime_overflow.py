"""classify_overflow: provider length refusals are recognised, other errors are not (FC-20)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.providers.overflow import classify_overflow


def _sdk(name: str) -> Any:
    """A provider SDK (``anthropic``, ``openai``, ``httpx``), or a skip with the reason."""
    return pytest.importorskip(name, reason=f"the {name} package is not installed")


def _response(status: int) -> Any:
    httpx = _sdk("httpx")
    return httpx.Response(status, request=httpx.Request("POST", "https://example.invalid/v1"))


def test_an_anthropic_prompt_too_long_error_is_overflow_with_both_sizes() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "prompt is too long: 210345 tokens > 200000 maximum",
        },
    }
    err = _sdk("anthropic").BadRequestError(
        "prompt is too long: 210345 tokens > 200000 maximum", response=_response(400), body=body
    )
    info = classify_overflow(err)
    assert info is not None
    assert (info.provider, info.status, info.reported, info.maximum) == (
        "anthropic",
        400,
        210345,
        200000,
    )
    assert info.excess == 10345


def test_an_openai_context_length_exceeded_error_is_overflow() -> None:
    body = {
        "message": "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 130512 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    err = _sdk("openai").BadRequestError(body["message"], response=_response(400), body=body)
    info = classify_overflow(err)
    assert info is not None
    assert info.code == "context_length_exceeded"
    assert (info.reported, info.maximum) == (130512, 128000)


def test_an_openai_code_without_numbers_is_still_overflow() -> None:
    info = classify_overflow(
        {"status": 400, "error": {"code": "context_length_exceeded", "message": "too long"}}
    )
    assert info is not None and info.reported is None and info.provider == "openai"


def test_an_anthropic_413_request_too_large_is_overflow() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "request_too_large",
            "message": "Request exceeds the maximum allowed number of bytes.",
        },
    }
    info = classify_overflow({"status": 413, **body})
    assert info is not None and info.code == "request_too_large"


def test_input_plus_max_tokens_over_the_limit_adds_both_numbers() -> None:
    info = classify_overflow(
        "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"
    )
    assert info is not None and (info.reported, info.maximum) == (205192, 200000)


def test_a_llamacpp_exceed_context_error_parses_its_fields() -> None:
    info = classify_overflow(
        {
            "error": {
                "code": 400,
                "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size",
                "n_prompt_tokens": 9000,
                "n_ctx": 8192,
            }
        }
    )
    assert info is not None and (info.reported, info.maximum) == (9000, 8192)


def test_an_invalid_tool_schema_400_is_not_overflow() -> None:
    body = {
        "type": "error",
        "error": {
            "type": "invalid_request_error",
            "message": "tools.0.input_schema: JSON schema is invalid",
        },
    }
    err = _sdk("anthropic").BadRequestError("invalid schema", response=_response(400), body=body)
    assert classify_overflow(err) is None


@pytest.mark.parametrize("status", [429, 500, 503, 401])
def test_other_statuses_are_never_overflow_even_with_a_length_message(status: int) -> None:
    err = {"status": status, "error": {"message": "prompt is too long: 5 tokens > 4 maximum"}}
    assert classify_overflow(err) is None


def test_a_rate_limit_sdk_error_is_not_overflow() -> None:
    err = _sdk("anthropic").RateLimitError("rate limited", response=_response(429), body=None)
    assert classify_overflow(err) is None


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 10**7), st.integers(1, 10**7))
def test_reported_and_maximum_are_parsed_for_any_numbers(reported: int, maximum: int) -> None:
    info = classify_overflow(f"prompt is too long: {reported:,} tokens > {maximum} maximum")
    assert info is not None and (info.reported, info.maximum) == (reported, maximum)


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=80))
def test_classify_never_raises_and_random_text_is_rarely_overflow(text: str) -> None:
    info = classify_overflow({"status": 400, "error": {"message": text}})
    if info is not None:
        assert any(w in text.lower() for w in ("context", "too long", "maximum"))
