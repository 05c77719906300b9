"""Spec cache-rules.md section 6, Anthropic vectors A1-A5, plus the 400 rules of 2.1."""

from __future__ import annotations

import attrs
import pytest

from cache_support import blk, mark, req, texts
from regio.cache import AnthropicCache, BreakpointError, CacheReport, resolve
from regio.cache.rules import Lookback
from regio.providers import cache_model_for

SONNET = "anthropic:claude-sonnet-4-5"


def model(name: str = SONNET, **kw: object) -> AnthropicCache:
    m = cache_model_for(name, **kw)
    assert isinstance(m, AnthropicCache)
    return m


def test_a1_lookback_path_a_misses_entries_outside_the_20_position_window() -> None:
    m = model()
    o1 = m.process(req("T1", mark(texts(10)), 0))
    assert (o1.read, o1.creation, o1.uncached) == (0, 2000, 0)
    assert o1.cost_usd == pytest.approx(0.0075, abs=1e-9)
    o2 = m.process(req("T2", mark(texts(15)), 60))
    assert (o2.read, o2.write_5m) == (2000, 1000)
    assert o2.cost_usd == pytest.approx(0.00435, abs=1e-9)
    o3 = m.process(req("T3a", mark(texts(35)), 120))
    assert (o3.read, o3.write_5m) == (0, 7000)
    assert o3.cost_usd == pytest.approx(0.02625, abs=1e-9)
    rep = CacheReport.from_outcomes(m.name, [o1, o2, o3])
    assert rep.hit_rate == pytest.approx(2000 / 12000)
    assert rep.eps == pytest.approx((200 + 12500) / 12000)


def test_a1_lookback_path_b_second_mark_reaches_the_older_entry() -> None:
    m = model()
    o1 = m.process(req("T1", mark(texts(10)), 0))
    o2 = m.process(req("T2", mark(texts(15)), 60))
    o3 = m.process(req("T3b", mark(texts(35), 14, 34), 120))
    assert (o3.read, o3.write_5m, o3.uncached) == (3000, 4000, 0)
    assert o3.cost_usd == pytest.approx(0.0159, abs=1e-9)
    rep = CacheReport.from_outcomes(m.name, [o1, o2, o3])
    assert rep.hit_rate == pytest.approx(5000 / 12000)
    assert rep.eps == pytest.approx((500 + 8750) / 12000)
    bound = cache_model_for("oracle").run(
        [req("T1", texts(10), 0), req("T2", texts(15), 60), req("T3", texts(35), 120)]
    )
    assert rep.hit_rate == pytest.approx(bound.hit_rate) == pytest.approx(1 - 7000 / 12000)
    assert rep.efficiency(bound) == pytest.approx(1.0)


def _a2_second() -> list:
    blocks = texts(10)
    blocks.append(blk("assistant", 50))
    blocks += [blk(f"use{i}", 20, kind="tool_use") for i in range(25)]
    blocks += [blk(f"res{i}", 40, kind="tool_result") for i in range(25)]
    return mark(blocks)


def test_a2_collapsed_tool_runs_keep_the_old_entry_inside_the_lookback() -> None:
    m = model()
    m.process(req("R1", mark(texts(10)), 0))
    o = m.process(req("R2", _a2_second(), 30))
    assert o.prompt_tokens == 3550
    assert (o.read, o.write_5m) == (2000, 1550)
    assert o.cost_usd == pytest.approx(0.0064125, abs=1e-9)


def test_a2_without_run_collapse_the_old_entry_falls_outside_the_window() -> None:
    rule = attrs.evolve(resolve("anthropic", "claude-sonnet-4-5"), lookback=Lookback(20, ()))
    m = AnthropicCache(rule)
    m.process(req("R1", mark(texts(10)), 0))
    o = m.process(req("R2", _a2_second(), 30))
    assert (o.read, o.write_5m) == (0, 3550)
    assert o.cost_usd == pytest.approx(0.0133125, abs=1e-9)


def test_a3_a_prefix_below_the_minimum_is_silently_uncached() -> None:
    o = model().process(req("r", [blk("x", 900, "5m")]))
    assert (o.read, o.creation, o.uncached) == (0, 0, 900)
    assert o.cost_usd == pytest.approx(0.0027, abs=1e-9)
    o = model("anthropic:claude-opus-4-6").process(req("r", [blk("x", 3000, "5m")]))
    assert (o.read, o.creation, o.uncached) == (0, 0, 3000)


def test_a3_sim_date_selects_the_sonnet_4_6_minimum_in_force() -> None:
    late = model("anthropic:claude-sonnet-4-6", sim_date="2026-12")
    early = model("anthropic:claude-sonnet-4-6", sim_date="2026-03")
    assert late.rule.id == "anthropic/sonnet-4-6@2026-H2"
    assert early.rule.id == "anthropic/sonnet-4-6@2026-02"
    assert early.rule.status == "conflicting" and early.rule.conflict
    r = req("r", [blk("x", 1500, "5m")], model="claude-sonnet-4-6")
    assert late.process(r).creation == 1500
    o = early.process(r)
    assert (o.read, o.creation, o.uncached) == (0, 0, 1500)


def _a4(ttl: str = "5m"):
    return mark(texts(10), ttl=ttl)


def test_a4_each_hit_renews_the_5m_ttl_from_the_reader_start() -> None:
    m = model()
    assert m.process(req("R1", _a4(), 0, t_end=250)).creation == 2000
    entry = next(iter(m.store.values()))
    assert (entry.readable_at, entry.expires_at) == (2, 300)
    assert m.process(req("R2", _a4(), 290)).read == 2000
    assert entry.expires_at == 590
    assert m.process(req("R3", _a4(), 589)).read == 2000
    assert entry.expires_at == 889
    assert m.process(req("R4", _a4(), 900)).creation == 2000


def test_a4_streaming_time_counts_against_the_ttl() -> None:
    m = model()
    m.process(req("R1", _a4(), 0, t_end=250))
    o = m.process(req("R2'", _a4(), 310))
    assert (o.read, o.creation) == (0, 2000)


def test_a4_a_1h_entry_is_still_read_after_50_minutes() -> None:
    m = model()
    o1 = m.process(req("R1", _a4("1h"), 0))
    assert o1.write_1h == 2000 and o1.cost_usd == pytest.approx(2000 * 6e-6, abs=1e-9)
    assert m.process(req("R2", _a4("1h"), 3000)).read == 2000


def test_a4_a_parallel_sibling_before_the_first_token_pays_its_own_write() -> None:
    m = model()
    m.process(req("R1", _a4(), 0))
    o = m.process(req("R1copy", _a4(), 1))
    assert (o.read, o.creation) == (0, 2000)
    assert m.process(req("R2", _a4(), 10)).read == 2000


def test_a5_mixed_ttl_bills_read_1h_and_5m_segments() -> None:
    m = model()
    first = blk("p1", 1500, "1h")
    m.process(req("warm", [first], 0))
    o = m.process(
        req("R", [first, blk("p2", 2500, "1h"), blk("p3", 2000, "5m"), blk("p4", 200)], 10)
    )
    assert (o.read, o.write_1h, o.write_5m, o.uncached) == (1500, 2500, 2000, 200)
    assert o.cost_usd == pytest.approx(0.02355, abs=1e-9)


def test_more_than_four_marks_is_a_400() -> None:
    with pytest.raises(BreakpointError, match="5 cache_control marks"):
        model().process(req("r", mark(texts(10), 1, 3, 5, 7, 9)))


def test_a_1h_mark_after_a_5m_mark_is_a_400() -> None:
    blocks = mark(mark(texts(10), 3), 9, ttl="1h")
    with pytest.raises(BreakpointError, match="1h marks must precede 5m"):
        model().process(req("r", blocks))


def test_a_mark_on_a_thinking_block_is_a_400() -> None:
    with pytest.raises(BreakpointError, match="thinking"):
        model().process(req("r", [blk("t", 2000, "5m", kind="thinking")]))


def test_automatic_mode_marks_the_last_cacheable_block() -> None:
    blocks = [*texts(10), blk("think", 300, kind="thinking")]
    m = model()
    o = m.process(req("r", blocks, auto_mark="5m"))
    assert (o.write_5m, o.uncached) == (2000, 300)
    assert m.process(req("r2", blocks, 10, auto_mark="5m")).read == 2000


def test_automatic_mode_with_another_ttl_on_the_last_block_is_a_400() -> None:
    with pytest.raises(BreakpointError, match="conflicts"):
        model().process(req("r", mark(texts(10), ttl="1h"), auto_mark="5m"))


def test_automatic_mode_with_four_explicit_marks_is_a_400() -> None:
    with pytest.raises(BreakpointError, match="needs a slot"):
        model().process(req("r", mark(texts(10), 1, 3, 5, 7), auto_mark="5m"))


def test_automatic_mode_same_ttl_on_the_last_block_is_a_no_op() -> None:
    o = model().process(req("r", mark(texts(10), 1, 3, 5, 9), auto_mark="5m"))
    assert o.write_5m == 2000


def test_a_system_level_param_change_invalidates_system_and_messages() -> None:
    blocks = [blk("tools", 1200, level="tools", mark="5m"), *mark(texts(10))]
    m = model()
    m.process(req("r1", blocks, params={"speed": "fast"}))
    o = m.process(req("r2", blocks, 10, params={"speed": "slow"}))
    assert (o.read, o.write_5m) == (1200, 2000)
    o = m.process(req("r3", blocks, 20, params={"speed": "slow", "tool_choice": "auto"}))
    assert (o.read, o.write_5m) == (1200, 2000)  # tool_choice salts the messages level
