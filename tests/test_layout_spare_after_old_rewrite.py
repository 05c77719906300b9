"""A request that rewrites the conversation in place from an entry older than the last
``MARKED_HISTORY`` requests (an old tool result cleared by relief, with no tail copy after it)
reads back the prefix before that entry while the provider holds it: the request that sent
the entry before it marked that prefix with its ``newest`` marker, and the layout state
remembers older marked prefixes, thinned, while the request times say their TTL runs
(``LayoutState.held``, :mod:`regio.layout.breakpoints`; the ``spare`` marker,
:mod:`regio.layout.breakpoints`). Before ``held`` a clear of a result 18+ requests old read
back the system prompt alone (1,652 of the 8,291 tokens before the change) although every
request was sent 5 s apart."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from layout_support import common_prefix_tokens, tail_session
from regio.layout import LayoutState
from regio.layout.breakpoints import HELD_CAP, HELD_DIGITS, held_after, remembered, stride
from regio.layout.model import MARKED_HISTORY, HeldMark

MODEL = "claude-sonnet-4-5"
FIXTURE = Path(__file__).parent / "fixtures" / "state" / "layout-main-20261205.json"
EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "6"))


def _held(runs, req) -> int:
    """Tokens through the deepest block of ``req`` whose prefix an earlier request of ``runs``
    marked (all sent within the TTL): what the provider still holds of ``req``."""
    marked = {r.blocks[m.index].prefix_hash for _p, r, _o, _c in runs for m in r.breakpoints}
    total, held = 0, 0
    for b in req.blocks:
        total += b.tokens
        if b.prefix_hash in marked:
            held = total
    return held


def test_an_in_place_clear_older_than_the_marked_history_reads_back_the_prefix_before_it():
    at = 38
    old = at - MARKED_HISTORY - 2  # the result of that step is cleared at request ``at``
    steps = [(1, False, old if n == at else None) for n in range(at + 1)]
    runs = list(tail_session(steps, 0.05, MODEL))
    prev, req, out, cleared = runs[at]
    assert cleared and not (prev.state.frozen or prev.state.tail)  # no tail copy involved
    head = sum(b.tokens for b in prev.blocks if b.level in ("tools", "system"))
    held = _held(runs[:at], req)
    assert head + 1_500 < held <= common_prefix_tokens(prev, req)  # deep in the conversation
    assert out.read >= held
    assert any(m.slot == "spare" for m in req.breakpoints)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    at=st.integers(min_value=MARKED_HISTORY + 4, max_value=56),
    back=st.integers(min_value=2, max_value=50),
)
def test_a_clear_within_the_remembered_range_reads_back_at_least_the_deepest_kept_mark_before_it(
    at: int, back: int
) -> None:
    """Over random clear positions and ages (requests 5 s apart, all within the 5-minute
    TTL): the request reads back at least the deepest prefix the state remembers before the
    first changed entry, and the state never holds more than :data:`HELD_CAP` marks."""
    old = max(0, at - back)
    steps = [(1, False, old if n == at else None) for n in range(at + 1)]
    runs = list(tail_session(steps, 0.05, MODEL))
    for _prev, req, _out, _c in runs:
        assert len(req.state.held) <= HELD_CAP
        assert not req.state.marked
    prev, req, out, cleared = runs[at]
    assert cleared
    kept = {m.prefix_hash for m in prev.state.held}
    total, deepest = 0, 0
    for b in req.blocks:
        total += b.tokens
        if b.prefix_hash[:HELD_DIGITS] in kept:
            deepest = total
    assert deepest <= common_prefix_tokens(prev, req)
    assert out.read >= deepest


def test_a_mark_whose_ttl_ran_out_is_neither_offered_nor_kept():
    marks = (("5m", "h1"),)
    state = LayoutState(held=held_after(None, request=1, now=0.0, newest=marks[0], marks=marks))
    for n in range(2, MARKED_HISTORY + 3):  # age the first mark out of the recent ones
        mark = ("5m", f"h{n}")
        held = held_after(state, request=n, now=float(n), newest=mark, marks=(mark,))
        state = LayoutState(held=held)
    assert "h2" in remembered(state, 100.0)  # 16+ requests old, within its 300 s
    assert "h2" not in remembered(state, 302.0)  # its TTL ran out: never offered
    assert "h2" not in remembered(state, None)  # no time: only the last 16 are offered
    later = held_after(state, request=MARKED_HISTORY + 3, now=400.0, newest=None, marks=())
    assert [m.request for m in later] == list(range(3, MARKED_HISTORY + 3))


def test_a_marker_on_a_remembered_prefix_renews_it_as_marked_by_that_request():
    state = LayoutState(held=(HeldMark(4, 300.0, "h4"), HeldMark(9, 305.0, "h9")))
    held = held_after(state, request=10, now=250.0, newest=None, marks=(("5m", "h4"),))
    # read back by this request: it counts as marked by it, so thinning keeps it
    assert held == (HeldMark(9, 305.0, "h9"), HeldMark(10, 550.0, "h4", read=True))


def test_older_marks_thin_with_age_and_the_state_stays_within_its_cap():
    state = LayoutState()
    for n in range(1, 400):
        mark = ("1h", f"h{n}")
        state = LayoutState(
            held=held_after(state, request=n, now=n * 5.0, newest=mark, marks=(mark,))
        )
        held = state.held
        assert len(held) <= HELD_CAP
        assert [m.request for m in held[-MARKED_HISTORY:]] == list(
            range(max(1, n - MARKED_HISTORY + 1), n + 1)
        )
        for m in held[:-MARKED_HISTORY]:
            assert m.request % stride(n - m.request) == 0
    ages = [399 - m.request for m in state.held[:-MARKED_HISTORY]]
    assert max(ages) >= 60  # about 64 requests back, sparser further back
    assert [stride(a) for a in (15, 16, 31, 32, 64)] == [1, 2, 2, 4, 8]


def test_the_same_session_remembers_the_same_marks():
    steps = [(1, False, 3 if n == 30 else None) for n in range(34)]
    first = [r.state.held for _p, r, _o, _c in tail_session(steps, 0.05, MODEL)]
    again = [r.state.held for _p, r, _o, _c in tail_session(steps, 0.05, MODEL)]
    assert first == again


def test_a_layout_state_saved_before_held_loads_and_offers_its_marks_as_before():
    """``layout-main-20261205.json``: the state after request 21 of a one-call-per-step
    :func:`tail_session`, saved by regio's main of 2026-12-05 (``marked``, no ``held``)."""
    old = LayoutState.from_json(FIXTURE.read_bytes())
    assert len(old.marked) == MARKED_HISTORY and not old.held
    runs = list(tail_session([(1, False)] * 22, 0.05, MODEL))
    now = runs[20][1].state
    short = [h[:HELD_DIGITS] for h in old.marked]  # held keeps 16 hex digits of each
    assert remembered(old, None) == remembered(now, None) == tuple(reversed(short))
    assert remembered(old, 105.0)[:MARKED_HISTORY] == remembered(now, 105.0)[:MARKED_HISTORY]
    carried = held_after(old, request=22, now=105.0, newest=("5m", "hx"), marks=())
    assert [m.prefix_hash for m in carried] == [*short[1:], "hx"]
    assert all(m.request == 0 for m in carried[:-1])  # unknown: they age out, never held
    aged = held_after(
        LayoutState(held=carried), request=23, now=110.0, newest=("5m", "hy"), marks=()
    )
    assert [m.prefix_hash for m in aged] == [*short[2:], "hx", "hy"]


def test_a_second_relief_wave_reads_back_the_prefix_the_first_one_read_back():
    """Relief clears later and later results: the second clear rewrites from a later entry,
    and the first clear rewrote everything after its own entry, so the deepest prefix the
    provider still holds before the second is the one the first clear's ``spare`` read
    back; that marker renewed it, so the state still remembers it 22 requests on."""
    first, second = 38, 60
    steps = [(1, False, {first: first - 18, second: first - 8}.get(n)) for n in range(second + 1)]
    runs = list(tail_session(steps, 0.05, MODEL))
    _p, wave, _o, _c = runs[first]
    spare = next(m for m in wave.breakpoints if m.slot == "spare")
    read_back = wave.prefix_tokens(spare.index)
    prev, req, out, cleared = runs[second]
    assert cleared
    head = sum(b.tokens for b in prev.blocks if b.level in ("tools", "system"))
    assert head + 1_500 < read_back <= common_prefix_tokens(prev, req)
    assert out.read >= read_back
