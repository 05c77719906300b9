"""What never becomes a reported value: a long line, a recognised secret in the value
(``regio.summarizers.toolfacts``), and what that bounds downstream (park stubs, placeholders)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.capture.rules import ParkRule
from regio.policies import relief as rp
from regio.summarizers.toolfacts import MAX_FACT_CHARS, secret_value, tool_facts


def test_a_report_line_over_the_length_cap_is_no_fact() -> None:
    long = "Result: " + "ab1" * 20_000
    assert tool_facts(long) == []
    at_cap = "Result: " + "a1" * ((MAX_FACT_CHARS - len("Result: ")) // 2)
    assert len(at_cap) <= MAX_FACT_CHARS and tool_facts(at_cap) == [at_cap]


@pytest.mark.parametrize(
    "line",
    [
        "Database URL: postgres://admin:hunter2@db.internal:5432/prod",
        "Download: https://bucket.s3/a?X-Amz-Credential=AKIA1&X-Amz-Signature=abc123",
        "Callback: https://hooks.example.com/run?token=abc123",
        "Key ID: sk-abcdefgh1234",
        "Owner: ghp_abcdefghijk123",
        "Account: AKIAABCDEFGHIJKLMNOP",
        "Bot: xoxb-1234-abcdefgh",
        "Header: eyJhbGciOiJI.eyJzdWIiOiIx",
    ],
)
def test_a_value_holding_a_recognised_secret_is_no_fact(line: str) -> None:
    assert secret_value(line.split(":", 1)[1])
    assert tool_facts(line) == []


@pytest.mark.parametrize(
    "line",
    ["Job ID: 7f3a91", "Link: https://example.com/pr/4821", "Version: 3.2.1", "Image: app:1.4"],
)
def test_an_ordinary_report_is_still_a_fact(line: str) -> None:
    assert not secret_value(line.split(":", 1)[1])
    assert tool_facts(line) == [line]


_TOKEN = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=400)


@given(st.lists(st.builds(lambda t: f"Result: {t}1", _TOKEN), max_size=8), _TOKEN)
def test_no_fact_stub_line_or_placeholder_line_passes_its_cap(lines: list[str], head: str) -> None:
    text = "\n".join([head, *lines])
    facts = tool_facts(text)
    assert all(len(f) <= MAX_FACT_CHARS for f in facts)
    stub = ParkRule("tool_output").stub(text, 2000).splitlines()
    assert all(len(line) <= max(200, MAX_FACT_CHARS, 400) for line in stub[:-1])
    placeholder = rp.placeholder("c1", "bash", restorable=False, reported=facts).splitlines()
    assert all(len(line) <= MAX_FACT_CHARS for line in placeholder[1:])
