"""The bench's comparison layouts (``naive``, ``kind``, ``volatility``) take exactly the options
:class:`regio.layout.LayoutStrategy` declares: a misspelled option is a ``TypeError`` (it used
to be swallowed by ``**_`` and silently ignored), and every declared one is accepted."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import regio.bench.layouts  # noqa: F401  (registers the strategies)
from regio.content import Text
from regio.layout.model import LayoutBlock
from regio.layout.sections import NO_MEMO
from regio.layout.strategy import strategy_for

NAMES = ("naive", "kind", "volatility")
DECLARED = {
    "ttl": "5m",
    "stable_ttl": "1h",
    "min_tokens": 1024,
    "previous_newest": None,
    "previous_marks": (),
    "tail_index": None,
    "system_changed": False,
}
SECTIONS = {"settled": None, "previous_chunks": {}, "chunk_tokens": 1024, "memo": NO_MEMO}


def _blocks() -> list[LayoutBlock]:
    system = LayoutBlock("system", "system", 2000, "d0", block=Text("s " * 2000), region="s")
    user = LayoutBlock("messages", "user", 10, "d1", block=Text("hi"), message=0)
    return [system, user]


@pytest.mark.parametrize("name", NAMES)
def test_every_declared_option_is_accepted(name: str) -> None:
    strategy = strategy_for(name)
    assert strategy.plan_breakpoints(_blocks(), **DECLARED)
    assert strategy.sections(None, [], **SECTIONS) == ([], [], {})


@pytest.mark.parametrize("name", NAMES)
def test_a_misspelled_breakpoint_option_is_an_error(name: str) -> None:
    options = {**DECLARED, "previous_mark": ()}  # previous_marks misspelled
    with pytest.raises(TypeError, match="previous_mark"):
        strategy_for(name).plan_breakpoints(_blocks(), **options)


@given(
    st.sampled_from(NAMES),
    st.from_regex(r"[a-z_]{1,20}", fullmatch=True).filter(
        lambda k: k not in DECLARED and k not in SECTIONS
    ),
)
def test_no_undeclared_option_is_ever_ignored(name: str, option: str) -> None:
    strategy = strategy_for(name)
    with pytest.raises(TypeError):
        strategy.plan_breakpoints(_blocks(), **{**DECLARED, option: 1})
    with pytest.raises(TypeError):
        strategy.sections(None, [], **{**SECTIONS, option: 1})
