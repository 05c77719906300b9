"""A cleared tool result's placeholder keeps the values the result reports, as lines a
summary reads as items (``regio.policies.relief.placeholder``, the clear stage)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from regio.content import Entry, ToolResult
from regio.policies import relief as rp
from regio.summarizers.extract import extract_items
from regio.summarizers.toolfacts import tool_facts

_RESULT = "ran the deploy\n" + "step ok\n" * 20 + "Job ID: 7f3a91\nVersion: 3.2.1\n"


def test_a_placeholder_lists_the_reported_values_after_its_bracket() -> None:
    text = rp.placeholder(
        "c7", "bash", restorable=False, extract="7f3a91", reported=tool_facts(_RESULT)
    )
    first, *rest = text.splitlines()
    assert first.startswith("[bash result of call c7 cleared") and first.endswith("]")
    assert rest == ["Job ID: 7f3a91", "Version: 3.2.1"]


def test_a_placeholder_without_reported_values_is_one_line_as_before() -> None:
    text = rp.placeholder("c7", "bash", restorable=False, extract="a; b")
    assert text == (
        "[bash result of call c7 cleared to save context; kept in the session transcript;"
        " it held: a; b]"
    )


def test_a_summary_of_a_placeholder_keeps_the_reported_values_as_tool_facts() -> None:
    text = rp.placeholder("c7", "bash", restorable=False, reported=tool_facts(_RESULT))
    entry = Entry("e1", (ToolResult("c7", text),), role="tool")
    items = extract_items([entry]).items.items()
    facts = {i.text for i in items if i.kind == "fact" and i.by_tool}
    assert facts == {"Job ID: 7f3a91", "Version: 3.2.1"}


_LINES = st.sampled_from(
    ["plain", "Job ID: 7f3a91", "Version: 3.2.1", "  nested: 4", "ValueError: x", "", "Port: 9090"]
)


@given(st.lists(_LINES, max_size=30), st.booleans())
def test_a_placeholder_is_a_function_of_the_result_and_holds_every_reported_value(
    lines: list[str], restorable: bool
) -> None:
    result = "\n".join(lines)

    def make() -> str:
        return rp.placeholder("c1", "bash", restorable=restorable, reported=tool_facts(result))

    text = make()
    assert text == make()
    assert text.splitlines()[1:] == tool_facts(result)
    assert tool_facts(text) == tool_facts(result)
