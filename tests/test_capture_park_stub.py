"""A parked tool output's stub keeps what the output reports (``regio.capture.rules.ParkRule``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from regio.capture.rules import ParkRule, observe
from regio.summarizers.kinds import tool_errors
from regio.summarizers.toolfacts import tool_facts

_POINTER = "[1600 tokens of output parked in region 'tool_output']"


def _count(text: str) -> int:
    return len(text) // 4


def test_a_stub_keeps_the_first_line_error_lines_and_reported_values_then_the_pointer() -> None:
    text = (
        "$ make deploy\n"
        + "building layer 3 of 9\n" * 40
        + "Traceback (most recent call last):\n"
        + '  File "deploy.py", line 12, in push\n'
        + "ValueError: registry refused the manifest\n"
        + "Job ID: 7f3a91\n"
    )
    stub = ParkRule("tool_output").stub(text, 1600)
    assert stub.splitlines() == [
        "$ make deploy",
        "ValueError: registry refused the manifest (at deploy.py:12, in push)",
        "Job ID: 7f3a91",
        _POINTER,
    ]


def test_a_stub_of_plain_output_is_its_first_line_and_the_pointer() -> None:
    text = "\n\n  collected 3 files\n" + "x = compute(y)\n" * 50
    assert ParkRule("tool_output").stub(text, 1600) == f"  collected 3 files\n{_POINTER}"


def test_a_first_line_that_is_a_reported_value_is_not_repeated() -> None:
    text = "Version: 3.2.1\n" + "log line of the build\n" * 30
    assert ParkRule("tool_output").stub(text, 1600) == f"Version: 3.2.1\n{_POINTER}"


def test_observe_parks_a_large_result_and_the_conversation_keeps_its_reported_value() -> None:
    rule = ParkRule("tool_output", min_tokens=100)
    text = "listing\n" + "src/module_%d.py\n" * 60 + "Reference code for this result: RC-4821\n"
    kept, ops = observe(text, (rule,), _count)
    assert [op.action for op in ops] == ["trim"]
    assert ops[0].text == text
    assert "Reference code for this result: RC-4821" in kept.splitlines()


_LINES = st.sampled_from(
    [
        "plain output line",
        "    indented: 42",
        "Job ID: 7f3a91",
        "Version: 3.2.1",
        "ValueError: bad input",
        "FAILED tests/test_x.py::test_y",
        "Constraint: always cite CANARY-1",
        "",
        "x = compute(y)",
    ]
)


@given(st.lists(_LINES, min_size=1, max_size=40))
def test_a_stub_holds_only_lines_of_the_output_and_every_reported_item(lines: list[str]) -> None:
    text = "\n".join(lines)
    stub = ParkRule("tool_output").stub(text, 1600).splitlines()
    assert stub[-1] == _POINTER
    first = next((ln for ln in text.splitlines() if ln.strip()), "")[:200]
    assert stub[0] == first
    for line in (*tool_errors(text), *tool_facts(text)):
        assert line in stub or line.strip() == first.strip()
    assert len(stub) <= 2 + 3 + 2  # first line, at most 3 errors and 2 values, pointer
    for line in stub[1:-1]:
        assert line in tool_errors(text) or line in tool_facts(text)
