"""The tail's cache marker goes only where a later request is likely to read it
(:func:`regio.layout.tail.settling_copies`): on the tail copy ``k`` that maximises
``T_k (P_k - odds)``, ``T_k`` the tokens of copies 1..k, ``P_k`` the chance they all stay
current until the next request (each region's chance estimated by
:func:`regio.layout.tail.tally_held` from the session's own tail), ``odds`` the provider's
break-even chance. A region that changes on most requests (a ``park`` capture replacing the
newest tool output, a footer that moves every step) stops getting a marker: its copy is
replaced on the next request, and writing it at Anthropic's 1.25x input price buys nothing
over sending it unmarked at 1.0x. A region whose copies freeze keeps it, and the next request
reads the copy back."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, make_window, say
from regio.layout import CacheEconomics, LayoutState, assemble, to_cache_request
from regio.layout.model import TailCopy
from regio.layout.tail import HELD_DISCOUNT, settling_copies, tally_held
from regio.providers import cache_model_for, economics_for
from regio.regions import Keyed, Pinned, SlidingWindow, Window

MODEL = "claude-sonnet-4-5"
ODDS = CacheEconomics().mark_odds


def _copy(region: str, digest: str = "", tokens: int = 10) -> TailCopy:
    return TailCopy(region, digest or f"d-{region}", f"text {region}", tokens, 1, None, 1)


def test_the_marker_odds_come_from_the_providers_prices_and_the_markers_ttl() -> None:
    anthropic = economics_for("anthropic", "claude-sonnet-4-6")
    assert anthropic.mark_odds == pytest.approx(0.25 / 1.15)  # (1.25 - 1) / (1.25 - 0.1)
    assert anthropic.mark_odds_1h == pytest.approx(1.0 / 1.9)  # (2 - 1) / (2 - 0.1)
    openai = economics_for("openai", "gpt-5")
    assert openai.mark_odds == openai.mark_odds_1h == 0.0  # no write fee: always worth it


def test_a_region_never_seen_counts_one_half() -> None:
    assert settling_copies([_copy("a")], {}, ODDS) == 1
    assert settling_copies([], {}, ODDS) == 0


def test_the_marker_needs_every_copy_up_to_it_to_freeze() -> None:
    # three regions each current 40% of the time: each alone clears 0.217, but all three
    # together freeze 6.4% of the time, so the marker covers only the first
    held = {r: (10.0, 3.8) for r in "abc"}  # (3.8 + 1) / 12 = 0.4
    assert settling_copies([_copy("a"), _copy("b"), _copy("c")], held, ODDS) == 1
    churning = {"a": (10.0, 0.0)}  # 1 / 12
    assert settling_copies([_copy("a"), _copy("b")], churning, ODDS) == 0
    assert settling_copies([_copy("a"), _copy("b")], churning, 0.0) == 2  # no write fee


def test_a_large_settling_copy_behind_a_small_doubtful_one_can_still_be_worth_it() -> None:
    held = {"small": (2.0, 1.0), "big": (8.0, 8.0)}  # 1/2, then 0.9: together 0.45 > 0.217
    tail = [_copy("small", tokens=10), _copy("big", tokens=5_000)]
    assert settling_copies(tail, held, ODDS) == 2


def test_the_tally_discounts_old_evidence_and_counts_what_held() -> None:
    prev = LayoutState(
        tail=(_copy("a"), _copy("b"), _copy("c"), _copy("d")), tail_held={"a": (2.0, 1.0)}
    )
    # a unchanged (froze), b changed, c emptied, d set back to an older value
    now = {"a": "d-a", "b": "new", "d": "older"}
    g = HELD_DISCOUNT
    assert tally_held(prev, now) == {
        "a": (g * 2 + 1, g * 1 + 1),
        "b": (1.0, 0.0),
        "c": (1.0, 0.0),
        "d": (1.0, 0.0),
    }
    assert tally_held(None, now) == {}


def _tail_marked(req) -> bool:
    return any(b.level == "tail" and b.breakpoint is not None for b in req.blocks)


def test_a_region_that_changes_on_every_request_stops_being_marked() -> None:
    w = make_window()
    state = None
    marked = []
    for n in range(6):
        say(w, "user", f"q{n}")
        w.clear("scratch")
        w.write("scratch", f"step {n}: " + "long status line " * 200, tokens=800)
        req = assemble(w, "regio", tools=TOOLS, state=state)
        state = req.state
        marked.append(_tail_marked(req))
        say(w, "assistant", f"a{n}")
    # the chance at each request: 1/2, 1/3, then 1/(2 + 1.9) = 0.256, 1/(2 + 2.71) = 0.212
    assert marked == [True, True, True, False, False, False]


def test_a_region_that_changes_once_is_marked_and_read_back_when_it_freezes() -> None:
    w = make_window()
    model = cache_model_for(f"anthropic:{MODEL}")
    reqs = []
    state = None
    for n in range(4):
        say(w, "user", f"q{n}")
        if n == 2:  # scratch froze on request 1; it changes once, on request 2
            w.clear("scratch")
            w.write("scratch", "status: " + "settled value " * 200, tokens=800)
        req = assemble(w, "regio", tools=TOOLS, state=state)
        state = req.state
        reqs.append(req)
        say(w, "assistant", f"a{n}")
    assert [bool(r.level("tail")) for r in reqs] == [True, False, True, False]
    assert _tail_marked(reqs[2])
    outs = [
        model.process(to_cache_request(r, id=f"r{i}", model=MODEL, t_start=20.0 * i))
        for i, r in enumerate(reqs)
    ]
    (tail,) = reqs[2].level("tail")
    through_tail = sum(b.tokens for b in reqs[2].blocks[: reqs[2].blocks.index(tail) + 1])
    assert outs[3].read >= through_tail  # the copy froze and request 3 reads it back


def _keyed_window() -> Window:
    w = Window(
        regions=[
            Pinned(name="system", budget=20_000, volatility="stable"),
            Keyed(name="a", budget=5_000, volatility="rewritten"),
            Keyed(name="b", budget=5_000, volatility="rewritten"),
            SlidingWindow(name="history", budget=100_000),
        ],
        max_tokens=200_000,
    )
    w.write("system", "S " * 3000, tokens=1500)
    return w


#: what a step does to a region: keep its value, set a new one, set back the one before, empty it
_ACTIONS = st.sampled_from(["keep", "new", "revert", "clear"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_ACTIONS, _ACTIONS), min_size=2, max_size=14))
def test_the_held_counts_follow_whether_each_regions_value_was_still_current(
    steps: list[tuple[str, str]],
) -> None:
    """An independent model of the tally: the test keeps each region's value as text and
    counts, for every tail copy, whether the region still had that value at the next request."""
    w = _keyed_window()
    state = None
    values: dict[str, list[str | None]] = {"a": [None], "b": [None]}
    expected: dict[str, tuple[float, float]] = {}
    shown: dict[str, str | None] = {}  # region -> value its copy in the last tail showed
    for n, actions in enumerate(steps):
        say(w, "user", f"q{n}")
        for name, action in zip("ab", actions, strict=True):
            history = values[name]
            value = {
                "keep": history[-1],
                "new": f"{name} value {n} " * 40,
                "revert": history[-2] if len(history) > 1 else None,
                "clear": None,
            }[action]
            if value != history[-1]:
                w.clear(name)
                if value is not None:
                    w.write(name, value, key="k", tokens=120)
                history.append(value)
        for name, was in shown.items():
            copies, held = expected.get(name, (0.0, 0.0))
            still = float(values[name][-1] == was)
            expected[name] = (HELD_DISCOUNT * copies + 1, HELD_DISCOUNT * held + still)
        req = assemble(w, "regio", tools=TOOLS, state=state)
        got = req.state.tail_held
        assert set(got) == set(expected)
        for name, counts in expected.items():
            assert got[name] == pytest.approx(counts), (name, got, expected)
        tail = list(req.level("tail"))
        marked = [b for b in tail if b.breakpoint is not None]
        assert len(marked) <= 1
        shown = {b.region: values[b.region][-1] for b in tail}
        state = req.state
        say(w, "assistant", f"a{n}")
