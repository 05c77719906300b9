"""Builders shared by the layout / render / field-case layout tests (real regio.regions)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from regio.content import Entry, Message, Text, ToolResult, ToolUse
from regio.layout import ToolSpec
from regio.regions import CompactHistory, Pinned, SlidingWindow, Temporary, Window

TOOLS = (
    ToolSpec(
        "read_file",
        "Read a file.",
        {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    ),
    ToolSpec(
        "run", "Run a shell command.", {"properties": {"cmd": {"type": "string"}}, "type": "object"}
    ),
)


def make_window(
    *,
    system: str = "You are a careful coding agent. " * 200,
    notes_volatility: str = "grows",
    scratch: str | None = "status: idle",
    max_tokens: int = 200_000,
) -> Window:
    """pinned/stable `system`, grows `notes`, compact_history `summaries`, rewritten `scratch`,
    sliding_window `history`."""
    w = Window(
        regions=[
            Pinned(name="system", budget=20_000, volatility="stable"),
            Temporary(name="notes", budget=20_000, volatility=notes_volatility),
            CompactHistory(name="summaries", budget=10_000, volatility="grows"),
            Temporary(name="scratch", budget=5_000, volatility="rewritten"),
            SlidingWindow(name="history", budget=150_000),
        ],
        max_tokens=max_tokens,
    )
    w.write("system", system, tokens=max(1, len(system) // 4))
    if scratch:
        w.write("scratch", scratch, tokens=max(1, len(scratch) // 4))
    return w


def say(w: Window, role: str, text: str) -> None:
    w.add_message(Message(role, (Text(text),)), tokens=max(1, len(text) // 4))  # type: ignore[arg-type]


def call(w: Window, text: str, *ids: str) -> None:
    w.add_message(
        Message.assistant(text, [ToolUse(i, "run", {"cmd": f"ls {i}"}) for i in ids]), tokens=20
    )


def answer(w: Window, *ids: str) -> None:
    w.add_message(Message.tool([ToolResult(i, f"output of {i}") for i in ids]), tokens=30)


def raw_entry(eid: str, role: str, *blocks: Any, tokens: int = 10) -> Entry:
    return Entry(id=eid, blocks=tuple(blocks), role=role, tokens=tokens)  # type: ignore[arg-type]


def history_window(entries: list[Entry], system: str = "S " * 3000) -> Window:
    """A window whose history region holds exactly ``entries`` (bypassing add_message, as a
    restored snapshot would)."""
    w = Window(
        regions=[
            Pinned(name="system", budget=20_000, volatility="stable"),
            CompactHistory(name="summaries", budget=10_000, volatility="grows"),
            SlidingWindow(name="history", budget=150_000),
        ],
        max_tokens=200_000,
    )
    w.write("system", system, tokens=len(system) // 4)
    hist = w.region("history")
    hist.entries.extend(entries)
    return w


# --- generated histories (turns with single / parallel calls, some pending) ---------------

turn_st = st.tuples(
    st.text(alphabet="abcdefgh ", min_size=1, max_size=30),
    st.integers(min_value=0, max_value=3),  # parallel calls
    st.booleans(),  # answered
    st.integers(min_value=5, max_value=400),  # tokens
)


def play(w: Window, turns: list[tuple[str, int, bool, int]], start: int = 0) -> None:
    """Append generated turns; an unanswered call group is only allowed in the last turn."""
    for n, (text, width, answered, tokens) in enumerate(turns, start=start):
        w.add_message(Message.user(f"u{n} {text}"), tokens=tokens)
        ids = [f"c{n}_{k}" for k in range(width)]
        if ids:
            call(w, f"a{n}", *ids)
            if answered or n != start + len(turns) - 1:
                answer(w, *ids)
                w.add_message(Message.assistant(f"done {n}"), tokens=tokens)
        else:
            w.add_message(Message.assistant(f"a{n} {text}"), tokens=tokens)
