"""The ski-rental rule of the freezing tail: stale copies are kept while keeping them is cheaper
than the rewrite that drops them, and dropped once their accumulated rent reaches that price
(regio.layout.tail, docs/layout.md)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import TOOLS, make_window, say
from regio.layout import assemble
from regio.layout.tail import DEFAULT_GC_RATIO
from regio.providers import economics_for


def gc_ratio(provider: str | None, model: str | None) -> float:
    return economics_for(provider, model).gc_ratio


def _set_scratch(w, text: str) -> None:
    w.clear("scratch")
    w.write("scratch", text, tokens=max(1, len(text) // 4))


def test_the_gc_ratio_comes_from_the_providers_cache_multipliers() -> None:
    assert abs(gc_ratio("anthropic", "claude-sonnet-4-5") - (1.25 - 0.1) / 0.1) < 1e-9
    assert abs(gc_ratio("openai", "gpt-4o") - (1.0 - 0.5) / 0.5) < 1e-9
    assert gc_ratio(None, None) == DEFAULT_GC_RATIO
    assert gc_ratio("nobody", "nothing") == DEFAULT_GC_RATIO


def _session(provider: str, model: str, turns: int) -> list:
    """A large rewritten region changes once early, then the conversation grows slowly: the
    stale copy's rent accrues every request while the rewrite that drops it stays cheap."""
    w = make_window()
    _set_scratch(w, "draft plan " * 400)
    state, requests = None, []
    for n in range(turns):
        say(w, "user", f"question {n}")
        if n == 2:
            _set_scratch(w, "final plan " * 400)
        econ = economics_for(provider, model)
        req = assemble(w, "regio", tools=TOOLS, state=state, economics=econ)
        requests.append(req)
        state = req.state
        say(w, "assistant", f"answer {n}")
    return requests


def _rent_events(requests: list) -> list:
    return [e for r in requests for e in r.events if e.kind == "tail_settled"]


def test_a_stale_copy_is_dropped_once_its_rent_reaches_the_price_of_the_rewrite() -> None:
    requests = _session("openai", "gpt-4o", turns=8)
    events = _rent_events(requests)
    assert [e.reason for e in events] == ["rent"]
    dropped_at = next(i for i, r in enumerate(requests) if r.events and _rent_events([r]))
    before = requests[dropped_at - 1].state
    assert before.stale_rent > 0  # rent was accruing until the drop
    assert requests[dropped_at].state.stale_rent == 0
    # after the drop the current value is the only copy of the region again
    copies = [
        c for c in (*requests[-1].state.frozen, *requests[-1].state.tail) if c.region == "scratch"
    ]
    assert len(copies) == 1


def test_a_provider_with_dear_rewrites_keeps_stale_copies_longer() -> None:
    cheap = _rent_events(_session("openai", "gpt-4o", turns=8))
    dear = _rent_events(_session("anthropic", "claude-sonnet-4-5", turns=8))
    assert cheap and not dear  # 11.5x the price: the same 8 requests are not enough to pay it


@settings(max_examples=40, deadline=None)
@given(st.lists(st.booleans(), min_size=3, max_size=12))
def test_only_a_collection_ever_changes_bytes_before_the_tail(changes: list[bool]) -> None:
    w = make_window()
    state, prev = None, None
    for n, change in enumerate(changes):
        say(w, "user", f"q{n}")
        if change:
            _set_scratch(w, f"value {n} " * 200)
        econ = economics_for("openai", "gpt-4o")
        req = assemble(w, "regio", tools=TOOLS, state=state, economics=econ)
        if prev is not None and not [e for e in req.events if e.kind == "tail_settled"]:
            body = [b.prefix_hash for b in prev.blocks if b.level != "tail"]
            assert [b.prefix_hash for b in req.blocks[: len(body)]] == body
        state, prev = req.state, req
        say(w, "assistant", f"a{n}")
