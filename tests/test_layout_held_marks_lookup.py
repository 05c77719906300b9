"""The remembered marks (``LayoutState.held``, :mod:`regio.layout.breakpoints`) are resolved
to the request's full prefix hashes through the render log's committed blocks
(``RenderLog.short``) and a walk of the other blocks only (head, fresh messages, tail): the
held-mark bookkeeping of a request follows the marks it remembers (at most ``HELD_CAP``), not
the conversation's length, and finds the same prefixes a walk of every block finds."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from layout_support import tail_session
from regio.layout.breakpoints import HELD_CAP, HELD_DIGITS, carried_prefixes, held_after

assemble_module = importlib.import_module("regio.layout.assemble")
MODEL = "claude-sonnet-4-5"
#: a session long enough that its blocks outnumber HELD_CAP, with an old result cleared
STEPS = [(1, False, 8 if n == 36 else None) for n in range(44)]


def test_the_held_mark_bookkeeping_is_handed_the_remembered_prefixes_not_every_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handed: list[int] = []

    def recording(*args: Any, present: Any = (), **kwargs: Any) -> Any:
        present = list(present)
        handed.append(len(present))
        return held_after(*args, present=present, **kwargs)

    monkeypatch.setattr(assemble_module, "held_after", recording)
    runs = list(tail_session(STEPS, 0.05, MODEL))
    assert len(runs[-1][1].blocks) > 3 * HELD_CAP  # the session outgrew the remembered marks
    assert len(handed) == len(runs) and max(handed) <= HELD_CAP


def test_the_remembered_prefixes_found_are_those_a_walk_of_every_block_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found: list[dict[str, str]] = []

    def recording(*args: Any) -> dict[str, str]:
        out = carried_prefixes(*args)
        found.append(out)
        return out

    monkeypatch.setattr(assemble_module, "carried_prefixes", recording)
    runs = list(tail_session(STEPS, 0.05, MODEL))
    assert len(found) == len(runs)
    for (prev, req, _out, _cleared), got in zip(runs, found, strict=True):
        keys = {m.prefix_hash for m in prev.state.held} if prev is not None else set()
        walked = {b.prefix_hash[:HELD_DIGITS]: b.prefix_hash for b in req.blocks}
        assert got == {k: walked[k] for k in keys if k in walked}
    assert any(len(got) > 1 for got in found)
