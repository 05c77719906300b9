"""The Anthropic renderer counts cache markers without reading the messages the session's
kept prefix holds whole (:attr:`regio.layout.render.prefix.MessagePrefix.whole`): a kept unit
never carries a marker, but the last kept message may take the next run, marker and all (a
tool-result message and the user text after it render as one ``user`` message). The count
must still see that marker, or a request over the API's four markers goes out."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Text
from regio.layout.model import LayoutBlock
from regio.layout.render.anthropic import count_cache_markers
from regio.layout.render.common import RenderedMessage
from regio.layout.render.prefix import MessagePrefix
from regio.layout.wellformed import CallsProgress


def _message(n: int, role: str, *, marked: bool = False, separate: bool = False) -> RenderedMessage:
    block = LayoutBlock(
        "messages",
        role,
        1,
        f"d{n}",
        block=Text(f"m{n}"),
        message=n,
        breakpoint="5m" if marked else None,
        separate=separate,
    )
    return RenderedMessage(role, (block,), separate=separate)


def _payload_after(prefix: MessagePrefix[CallsProgress], m: RenderedMessage) -> dict[str, Any]:
    """The kept messages with ``m`` (one marked text) after them, merged by the renderer's
    rule (same role, not ``separate``: into the last kept message)."""
    messages = prefix.copy()
    role = "user" if m.role == "tool" else m.role
    part = {"type": "text", "text": "next", "cache_control": {"type": "ephemeral", "ttl": "5m"}}
    if messages and messages[-1]["role"] == role and not m.separate:
        messages[-1]["content"].append(part)
    else:
        messages.append({"role": role, "content": [part]})
    return {"messages": messages}


def test_a_marker_merged_into_the_last_kept_message_is_counted() -> None:
    """A call, its kept result, then a marked user text: one ``user`` message holds the kept
    result and the marker."""
    prefix = MessagePrefix(CallsProgress)
    assert prefix.add(_message(0, "assistant"), "assistant", [{"type": "text", "text": "a"}])
    assert prefix.add(_message(1, "tool"), "user", [{"type": "text", "text": "r"}])
    payload = _payload_after(prefix, _message(2, "user", marked=True))
    assert len(payload["messages"]) == 2
    assert count_cache_markers(payload, unmarked=prefix.whole) == 1


@settings(max_examples=60, deadline=None)
@given(
    kept=st.lists(
        st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.booleans()), max_size=8
    ),
    after=st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.booleans()),
)
def test_property_the_markers_counted_past_the_kept_prefix_are_all_the_markers(
    kept: list[tuple[str, bool]], after: tuple[str, bool]
) -> None:
    """Whatever the kept units' roles and ``separate`` flags, and wherever the marked unit
    after them lands (merged or its own message), skipping ``whole`` messages loses no
    marker."""
    prefix = MessagePrefix(CallsProgress)
    for n, (role, separate) in enumerate(kept):
        unit = [{"type": "text", "text": f"k{n}"}]
        payload_role = "user" if role == "tool" else role
        assert prefix.add(_message(n, role, separate=separate), payload_role, unit)
    payload = _payload_after(prefix, _message(len(kept), after[0], marked=True, separate=after[1]))
    assert count_cache_markers(payload, unmarked=prefix.whole) == count_cache_markers(payload) == 1
