"""Spec cache-rules.md section 6: O1, O2, G1, D1 vectors (OpenAI, GPT-5.6, Gemini, DeepSeek)."""

from __future__ import annotations

import pytest

from cache_support import blk, req
from regio.cache import (
    AutoPrefixCache,
    BreakpointExactCache,
    CacheExpiredError,
    CacheRequestError,
    DeepSeekCache,
    GeminiExplicitCache,
    openai_q,
    resolve,
)
from regio.providers import cache_model_for


def gpt4o(**kw: object) -> AutoPrefixCache:
    m = cache_model_for("openai:gpt-4o", **kw)
    assert isinstance(m, AutoPrefixCache)
    return m


def oreq(rid: str, blocks: list, t: float, **kw: object):
    return req(rid, blocks, t, model="gpt-4o", key="k", ttft=1.0, **kw)


def test_o1_q_reports_cached_tokens_on_the_1024_plus_128k_grid() -> None:
    assert openai_q(2400) == 2304
    assert openai_q(2473) == 2432
    assert openai_q(2006) == 1920
    assert openai_q(1100) == 1024
    assert openai_q(1152) == 1152
    assert openai_q(1000) == 0


def test_o1_gpt4o_second_request_reads_2304_of_2473() -> None:
    m = gpt4o()
    o1 = m.process(oreq("R1", [blk("p", 2400)], 0))
    assert o1.read == 0 and o1.cost_usd == pytest.approx(0.006, abs=1e-9)
    o2 = m.process(oreq("R2", [blk("p", 2400), blk("q", 73)], 30))
    assert (o2.read, o2.uncached) == (2304, 169)
    assert o2.cost_usd == pytest.approx(0.0033025, abs=1e-9)
    o3 = m.process(oreq("R3", [blk("p", 2400), blk("q", 73)], 40))
    assert o3.read == 2432


def test_o1_token_ids_give_a_per_token_prefix() -> None:
    m = gpt4o()
    ids = tuple(range(2473))
    m.process(oreq("R1", [blk("a", 2473, token_ids=ids)], 0))
    changed = (*ids[:2006], *range(10_000, 10_000 + 467))
    o = m.process(oreq("R2", [blk("b", 2473, token_ids=changed)], 10))
    assert o.read == 1920


def test_o1_an_entry_idle_for_700_seconds_is_gone() -> None:
    m = gpt4o()
    m.process(oreq("R1", [blk("p", 2400)], 0))
    assert m.process(oreq("R2", [blk("p", 2400), blk("q", 73)], 700)).read == 0


def test_o1_optimistic_idle_keeps_an_entry_for_500_seconds() -> None:
    pess, opt = gpt4o(), gpt4o(idle_mode="optimistic")
    for m in (pess, opt):
        m.process(oreq("R1", [blk("p", 2400)], 0))
    assert pess.process(oreq("R2", [blk("p", 2400)], 500)).read == 0
    assert opt.process(oreq("R2", [blk("p", 2400)], 500)).read == 2304


def test_o1_24h_retention_has_no_idle_expiry() -> None:
    m = cache_model_for("openai:gpt-5")
    m.process(req("R1", [blk("p", 2400)], 0, model="gpt-5"))
    o = m.process(req("R2", [blk("p", 2400)], 20_000, model="gpt-5"))
    assert o.read == 2304
    assert o.cost_usd == pytest.approx((2304 * 0.1 + 96) * 1.25e-6, abs=1e-9)
    # each request re-stores the prompt: a day after the latest store it is gone (max_s only)
    assert m.process(req("R3", [blk("p", 2400)], 20_000 + 86_399, model="gpt-5")).read == 2304
    assert m.process(req("R4", [blk("p", 2400)], 20_000 + 86_399 + 86_400, model="gpt-5")).read == 0


def test_o1_overflow_beyond_15_per_minute_routes_to_other_machines() -> None:
    m = gpt4o()
    reads = [m.process(oreq(f"R{i:02d}", [blk("p", 2400)], i)).read for i in range(40)]
    assert reads[0] == 0 and all(r == 2304 for r in reads[1:15])
    # requests 16.. go to 2 overflow machines: each pays one cold miss, then hits
    assert reads[15:].count(0) == 2
    again = gpt4o()
    assert [again.process(oreq(f"R{i:02d}", [blk("p", 2400)], i)).read for i in range(40)] == reads


def _dev(mark: str | None = None):
    return blk("dev", 1500, mark, role="developer", message=0)


def _o2(mode: str, key: str, rid: str, blocks: list, t: float):
    return req(rid, blocks, t, model="gpt-5.6", key=key, ttft=1.0, cache_mode=mode)


def test_o2_gpt56_explicit_reads_the_old_mark_and_writes_the_new_one() -> None:
    m = cache_model_for("openai:gpt-5.6")
    assert isinstance(m, BreakpointExactCache)
    r1 = [_dev(), blk("u1", 500, "5m", role="user", message=1)]
    o1 = m.process(_o2("explicit", "k", "R1", r1, 0))
    assert (o1.write, o1.input_units, o1.cost_usd) == (2000, 2500, None)
    r2 = [
        *r1,
        blk("a1", 300, role="assistant", message=2),
        blk("u2a", 100, "5m", role="user", message=3),
        blk("u2b", 200, role="user", message=3),
    ]
    o2 = m.process(_o2("explicit", "k", "R2", r2, 60))
    assert (o2.read, o2.write, o2.uncached, o2.input_units) == (2000, 400, 200, pytest.approx(900))
    o3 = m.process(_o2("explicit", "k2", "R2k2", r2, 61))
    assert (o3.read, o3.write, o3.uncached, o3.input_units) == (0, 2400, 200, pytest.approx(3200))


def test_o2_gpt56_explicit_mode_without_marks_caches_nothing() -> None:
    m = cache_model_for("openai:gpt-5.6")
    o = m.process(_o2("explicit", "k", "R", [_dev(), blk("u", 500, role="user", message=1)], 0))
    assert (o.read, o.write, o.uncached) == (0, 0, 2000)


def _implicit(stamp: str, dev_mark: str | None = None):
    return [
        _dev(dev_mark),
        blk(stamp, 20, role="user", message=1),
        blk("u", 480, role="user", message=1),
    ]


def test_o2_gpt56_implicit_has_no_fallback_to_a_shorter_unmarked_prefix() -> None:
    m = cache_model_for("openai:gpt-5.6")
    assert m.process(_o2("implicit", "k", "R1", _implicit("ts1"), 0)).write == 2000
    o = m.process(_o2("implicit", "k", "R2", _implicit("ts2"), 60))
    assert (o.read, o.write) == (0, 2000)


def test_o2_gpt56_implicit_with_a_developer_mark_reads_the_developer_prefix() -> None:
    m = cache_model_for("openai:gpt-5.6")
    o1 = m.process(_o2("implicit", "k", "R1", _implicit("ts1", "5m"), 0))
    assert (o1.read, o1.write) == (0, 2000)
    assert len(m.store) == 2
    o2 = m.process(_o2("implicit", "k", "R2", _implicit("ts2", "5m"), 60))
    assert (o2.read, o2.write) == (1500, 500)


def _gem(rid: str, blocks: list, t: float, **kw: object):
    return req(rid, blocks, t, model="gemini-2.5-flash", ttft=1.0, **kw)


def test_g1_gemini_implicit_minimum_depends_on_the_rule_date() -> None:
    new = cache_model_for("gemini:gemini-2.5-flash", sim_date="2026-06")
    old = cache_model_for("gemini:gemini-2.5-flash", sim_date="2025-06")
    assert (new.rule.id, old.rule.id) == ("gemini/2.5-flash@2026", "gemini/2.5-flash@2025-05-08")
    for m in (new, old):
        m.process(_gem("R1", [blk("p", 1500)], 0))
    assert new.process(_gem("R2", [blk("p", 1500)], 30)).read == 0
    o = old.process(_gem("R2", [blk("p", 1500)], 30))
    assert o.read == 1500 and o.input_units == pytest.approx(1500 * 0.25)


def test_g1_gemini_explicit_cache_reads_its_content_and_bills_storage() -> None:
    m = cache_model_for("gemini:gemini-3.5-flash", mechanism="explicit_object")
    assert isinstance(m, GeminiExplicitCache)
    content = (blk("doc", 10_000),)
    made = m.create("c1", content, t=0, ttl_s=3600)
    assert made.storage_usd == pytest.approx(0.01, abs=1e-9)
    assert made.create_units == 10_000
    o = m.process(_gem("R", [*content, blk("q", 500)], 600, cached_content="c1"))
    assert (o.read, o.uncached, o.prompt_tokens) == (10_000, 500, 10_500)
    with pytest.raises(CacheExpiredError, match="expired"):
        m.process(_gem("late", [*content, blk("q", 500)], 3600, cached_content="c1"))
    with pytest.raises(CacheExpiredError, match="does not exist"):
        m.process(_gem("none", [*content], 10, cached_content="nope"))
    with pytest.raises(CacheRequestError, match="below the minimum"):
        m.create("tiny", (blk("x", 100),), t=0)


def _ds(rid: str, blocks: list, t: float, model: str = "deepseek-chat", **kw: object):
    return req(rid, blocks, t, model=model, ttft=1.0, scope="user1", **kw)


def test_d1_deepseek_2024_hits_whole_64_token_units() -> None:
    m = cache_model_for("deepseek:deepseek-chat")
    assert isinstance(m, DeepSeekCache)
    m.process(_ds("R1", [blk("s", 700), blk("a", 200)], 0))
    o = m.process(_ds("R2", [blk("s", 700), blk("b", 200)], 10))
    assert (o.read, o.uncached) == (640, 260)
    m2 = cache_model_for("deepseek:deepseek-chat")
    m2.process(_ds("R1", [blk("s", 50), blk("a", 850)], 0))
    assert m2.process(_ds("R2", [blk("s", 50), blk("b", 850)], 10)).read == 0


def test_d1_deepseek_2024_prefix_is_not_ready_before_build_time() -> None:
    m = cache_model_for("deepseek:deepseek-chat")
    m.process(_ds("R1", [blk("s", 700)], 0))
    assert m.process(_ds("R2", [blk("s", 700)], 2)).read == 0


def test_d1_deepseek_v4_persists_units_at_prompt_output_and_common_prefixes() -> None:
    m = cache_model_for("deepseek:deepseek-v4-pro")
    assert m.rule.mechanism == "persisted_units"
    a, b, c, d, e = (blk("A", 3000), blk("B", 500), blk("C", 400), blk("D", 600), blk("E", 100))
    y = blk("y", 200)
    v4 = "deepseek-v4-pro"
    o1 = m.process(_ds("R1", [a, b], 0, v4, output_tokens=200, output_digest="y"))
    assert (o1.read, o1.uncached) == (0, 3500)
    o2 = m.process(_ds("R2", [a, c], 10, v4))
    assert (o2.read, o2.uncached) == (0, 3400)
    o3 = m.process(_ds("R3", [a, d], 20, v4))
    assert (o3.read, o3.uncached) == (3000, 600)
    o4 = m.process(_ds("R4", [a, b, y, e], 30, v4))
    assert (o4.read, o4.uncached) == (3700, 100)
    assert o4.cost_usd == pytest.approx((3700 * 0.0333 + 100) * 0.66e-6, abs=1e-9)


def test_gemini_rules_resolve_implicit_by_default() -> None:
    assert resolve("google", "gemini-2.5-flash", mechanism="auto_prefix").mechanism == "auto_prefix"
    assert cache_model_for("gemini:gemini-2.5-flash").rule.mechanism == "auto_prefix"


def test_re_sending_an_identical_prompt_keeps_its_entry_readable() -> None:
    m = gpt4o()
    m.process(oreq("R1", [blk("p", 2400)], 0))
    assert m.process(oreq("R2", [blk("p", 2400)], 10)).read == 2304
    # R2 re-stored the same prompt; a sibling before R2's first token still reads R1's entry
    assert m.process(oreq("R3", [blk("p", 2400)], 10.5)).read == 2304


def test_deepseek_v4_re_storing_a_unit_keeps_it_ready() -> None:
    m = cache_model_for("deepseek:deepseek-v4-pro")
    v4 = "deepseek-v4-pro"
    m.process(_ds("R1", [blk("A", 3000)], 0, v4))
    assert m.process(_ds("R2", [blk("A", 3000), blk("B", 100)], 10, v4)).read == 3000
    assert m.process(_ds("R3", [blk("A", 3000), blk("C", 100)], 11, v4)).read == 3000
