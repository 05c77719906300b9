"""Pinned W-A / W-O / L problems (field-cases.md section 0) of the one W/L implementation:
these examples pin what the whole-payload checks report, rule by rule."""

from __future__ import annotations

from typing import Any

import pytest

from regio.layout import check_anthropic, check_openai_chat


def _use(i: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": i, "name": "n", "input": {}}


def _res(i: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": i, "content": "r"}


_TEXT = {"type": "text", "text": "t"}


@pytest.mark.parametrize(
    ("messages", "problems"),
    [
        ([{"role": "user", "content": "hi"}], []),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [_use("a")]},
                {"role": "user", "content": [_res("a")]},
            ],
            [],
        ),
        (
            [{"role": "user", "content": "hi"}, {"role": "user", "content": [_res("x")]}],
            ["W-A.1: tool_result x in message 1 does not answer the message before it"],
        ),
        (
            [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [_use("a")]}],
            ["W-A.2: tool_use a not answered once in message 2"],
        ),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [_use("a")]},
                {"role": "user", "content": [_TEXT, _res("a")]},
            ],
            ["W-A.3: tool_result after other content in message 2"],
        ),
        (
            [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [_use("a")]},
                {"role": "user", "content": [_res("a")]},
                {"role": "assistant", "content": [_use("a")]},
                {"role": "user", "content": [_res("a")]},
            ],
            ["W-A.4: tool_use id a appears twice"],
        ),
        (
            [{"role": "user", "content": [_res("a")]}],
            [
                "W-A.1: tool_result a in message 0 does not answer the message before it",
                "L: the first message carries a tool_result",
            ],
        ),
    ],
)
def test_the_anthropic_check_reports_each_broken_w_a_and_l_rule(
    messages: list[dict[str, Any]], problems: list[str]
) -> None:
    assert check_anthropic({"messages": messages}) == problems


def _call(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": i, "type": "function"} for i in ids],
    }


def _tool(i: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": i, "content": "r"}


_USER = {"role": "user", "content": "u"}
_SYSTEM = {"role": "system", "content": "s"}


@pytest.mark.parametrize(
    ("messages", "problems"),
    [
        ([_SYSTEM, _USER, _call("a"), _tool("a")], []),
        (
            [_USER, _call("a"), _tool("b")],
            [
                "W-O.1: tool message 2 answers b, not a pending call",
                "W-O.2: calls ['a'] unanswered at the end",
            ],
        ),
        ([_USER, _call("a"), _tool("a"), _tool("a")], ["W-O.2: a answered twice"]),
        (
            [_USER, _call("a", "b"), _tool("a"), _USER],
            ["W-O.2: calls ['b'] unanswered before message 3"],
        ),
        (
            [_USER, _tool("a")],
            [
                "W-O.3: tool message 1 directly after a user message",
                "W-O.1: tool message 1 answers a, not a pending call",
            ],
        ),
        (
            [_SYSTEM, _tool("a")],
            [
                "L: the first conversational message has role tool",
                "W-O.3: tool message 1 directly after a system message",
                "W-O.1: tool message 1 answers a, not a pending call",
            ],
        ),
        ([], []),
    ],
)
def test_the_openai_chat_check_reports_each_broken_w_o_and_l_rule(
    messages: list[dict[str, Any]], problems: list[str]
) -> None:
    assert check_openai_chat({"messages": messages}) == problems
