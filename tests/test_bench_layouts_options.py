"""The bench's comparison layouts (``naive``, ``kind``, ``volatility``) take exactly the options
:class:`regio.layout.LayoutStrategy` declares: a misspelled option is a ``TypeError`` (it used
to be swallowed by ``**_`` and silently ignored), and every declared one is accepted."""

from __future__ import annotations

import inspect

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from regio.content import Text
from regio.layout.comparison import MarkOptions
from regio.layout.model import LayoutBlock
from regio.layout.sections import NO_MEMO
from regio.layout.strategy import LayoutStrategy
from regio.layout.strategy_registry import strategy_for

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


def test_the_options_are_declared_once_and_match_the_layout_protocol() -> None:
    declared = inspect.signature(LayoutStrategy.wanted).parameters
    keywords = {k for k, p in declared.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert {f.name for f in attrs.fields(MarkOptions)} == keywords
    # no layout restates the signature: all three share one wanted(), which reads MarkOptions
    assert len({type(strategy_for(name)).wanted for name in NAMES}) == 1


def test_a_declared_option_reaches_the_layout() -> None:
    blocks = [
        LayoutBlock("system", "system", 2000, "d0", block=Text("s " * 2000), region="s"),
        *(
            LayoutBlock("messages", "user", 10, f"m{i}", block=Text(f"m{i}"), message=i)
            for i in range(40)
        ),
    ]
    volatility = strategy_for("volatility")
    same = volatility.plan_breakpoints(blocks, **DECLARED)
    changed = volatility.plan_breakpoints(blocks, **{**DECLARED, "system_changed": True})
    assert len(changed) < len(same)  # no conversation marks once the system prefix changed
