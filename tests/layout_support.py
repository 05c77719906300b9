"""Builders shared by the layout / render / field-case layout tests (real regio.regions)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
from hypothesis import strategies as st

from regio.content import Entry, Message, Text, ToolResult, ToolUse
from regio.layout import RenderLog, ToolSpec, assemble, to_cache_request
from regio.providers import cache_model_for, economics_for
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


def set_scratch(w: Window, text: str) -> None:
    """Give the rewritten ``scratch`` region the single value ``text`` (~4 characters a token)."""
    w.clear("scratch")
    w.write("scratch", text, tokens=max(1, len(text) // 4))


def common_prefix_tokens(prev: Any, cur: Any) -> int:
    """Tokens of the leading blocks request ``cur`` shares with request ``prev`` (equal prefix
    hash): what an ideal cache could read back of ``prev``."""
    total = 0
    for a, b in zip(prev.blocks, cur.blocks, strict=False):
        if a.prefix_hash != b.prefix_hash:
            break
        total += b.tokens
    return total


def clear_result(w: Window, index: int) -> None:
    """Replace the ``index``-th tool-result entry of the ``history`` region in place by a short
    placeholder, as the relief chain's ``clear`` stage does (same id, role and group)."""
    hist = w.region("history")
    at = [i for i, e in enumerate(hist.entries) if e.role == "tool"][index]
    old = hist.entries[at]
    blocks = tuple(
        ToolResult(b.tool_use_id, f"[result of call {b.tool_use_id} cleared]")
        for b in old.blocks
        if isinstance(b, ToolResult)
    )
    hist.rewrite_entry(at, msgspec.structs.replace(old, blocks=blocks, tokens=8))


def tail_session(
    steps: Sequence[tuple[Any, ...]],
    settle_share: float,
    model: str = "claude-sonnet-4-5",
    cold: bool = False,
) -> Iterator[tuple[Any, Any, Any, bool]]:
    """Drive the ``regio`` layout through one request per step ``(tool calls, change scratch[,
    index of a result to clear])``: a ~300-token user turn, that many calls with their
    results, ``scratch`` set to a new ~500-token value when asked, then the clear
    (:func:`clear_result`, skipped when there is no such result). One render log for the
    session, as an engine keeps; requests 5 s apart (well inside the 5-minute TTL), each
    simulated under the Anthropic cache model of ``model``; ``cold``: a fresh render log for
    every request instead (what a session loaded from a store starts with). Yields (previous
    request, request, cache outcome, whether a result was cleared)."""
    sim = cache_model_for(f"anthropic:{model}")
    econ = economics_for("anthropic", model)
    w = make_window(max_tokens=60_000, scratch=None)
    log = RenderLog()
    prev = None
    for n, (calls, change, *rest) in enumerate(steps):
        say(w, "user", f"step {n} " * 150)
        for k in range(calls):
            call(w, f"call {n}.{k}", f"c{n}_{k}")
            answer(w, f"c{n}_{k}")
        if change:
            set_scratch(w, f"plan version {n} " * 120)
        clear = rest[0] if rest else None
        results = sum(1 for e in w.region("history").entries if e.role == "tool")
        cleared = clear is not None and clear < results
        if cleared:
            clear_result(w, clear)
        req = assemble(
            w,
            "regio",
            tools=TOOLS,
            state=prev.state if prev is not None else None,
            economics=econ,
            settle_share=settle_share,
            log=RenderLog() if cold else log,
            sent_at=n * 5.0,
        )
        assert len(req.breakpoints) <= 4
        out = sim.process(to_cache_request(req, t_start=n * 5.0, id=f"r{n:03d}"))
        yield prev, req, out, cleared
        say(w, "assistant", f"done {n}")
        prev = req


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
