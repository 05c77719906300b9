"""The conversation cache carries its look-ups forward in place (DESIGN.md section 6, engine
overhead) and still equals a fresh computation after any edit sequence: appends, truncations
(eviction), replacements and rewrites of the prefix."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.content import Entry, Text, ToolResult, ToolUse
from regio.layout.assemble import _chain, _digest, _entry_split
from regio.layout.convcache import clear_slots, conversation_blocks, entry_ids
from regio.layout.model import CHAIN_ROOT


class _Window:
    max_tokens = 100_000
    regions: tuple[Any, ...] = ()


_POOL = [
    Entry(f"e{i}", blocks, role, tokens=3 + i)
    for i, (role, blocks) in enumerate(
        [
            ("user", (Text("hello"),)),
            ("assistant", (Text("hi"), ToolUse("c1", "t"))),
            ("tool", (ToolResult("c1", "ok"),)),
            ("assistant", (Text("done"),)),
            ("user", (Text("next"), Text("more"))),
            ("assistant", (ToolUse("c2", "t"),)),
            ("user", (Text("again"),)),
            ("tool", (ToolResult("c2", "late"),)),
        ]
    )
]

edits = st.tuples(
    st.sampled_from(["append", "truncate", "replace", "drop_first", "same"]),
    st.integers(min_value=0, max_value=12),
    st.lists(st.sampled_from(range(len(_POOL))), min_size=1, max_size=3),
)


def _apply(conv: list[Entry], edit: tuple[str, int, list[int]]) -> list[Entry]:
    kind, at, picks = edit
    new = [_POOL[i] for i in picks]
    at = min(at, len(conv))
    if kind == "append":
        return [*conv, *new]
    if kind == "truncate":
        return conv[:at]
    if kind == "replace":
        return [*conv[:at], *new]
    if kind == "drop_first":
        return conv[1:]
    return list(conv)


def _view(window: Any, conv: list[Entry]) -> tuple[Any, ...]:
    blocks, events, hashes = conversation_blocks(
        window,
        "regio",
        conv,
        {},
        CHAIN_ROOT,
        _entry_split,
        lambda level, role, b: _digest(level, role, b, None),
        _chain,
    )
    return (
        [(b.prefix_hash, b.tokens, b.region, b.message, b.source) for b in blocks],
        [repr(e) for e in events],
        sorted(hashes),
        sorted(entry_ids(window, conv)),
    )


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(range(len(_POOL))), max_size=8), st.lists(edits, max_size=6))
def test_carried_forward_lookups_equal_a_fresh_computation_after_any_edits(
    start: list[int], steps: list[tuple[str, int, list[int]]]
) -> None:
    window = _Window()
    fresh: list[_Window] = []  # kept alive, so no fresh window reuses another's id
    conv = [_POOL[i] for i in start]
    clear_slots()
    for edit in [("same", 0, [0]), *steps]:
        conv = _apply(conv, edit)
        warm = _view(window, conv)  # carried forward over every step
        fresh.append(_Window())
        cold = _view(fresh[-1], conv)  # a window the caches have never seen
        assert warm == cold
        assert warm[2] == sorted({h for h, *_ in warm[0]})
        assert warm[3] == sorted({e.id for e in conv})
