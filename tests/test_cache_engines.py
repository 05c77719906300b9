"""Spec cache-rules.md section 6: V1 (vLLM), L1 (llama.cpp), X1 (oracle), and SGLang."""

from __future__ import annotations

import pytest

from cache_support import blk, req
from regio.cache import CacheRequestError, OracleCache, PagedCache, SlotCache
from regio.providers import cache_model_for


def ids_req(rid: str, ids: tuple[int, ...], t: float, **kw: object):
    return req(rid, [blk(f"d{rid}", len(ids), token_ids=ids)], t, model="m", **kw)


def test_v1_vllm_recomputes_the_last_token_and_counts_queries_and_hits() -> None:
    m = cache_model_for("vllm")
    assert isinstance(m, PagedCache)
    r1 = tuple(range(2473))
    r4 = (*range(1000), *range(50_000, 52_000))
    outs = [
        m.process(ids_req("R1", r1, 0, output_tokens=1)),
        m.process(ids_req("R2", r1, 1, output_tokens=1)),
        m.process(ids_req("R3", r1[:2464], 2, output_tokens=1)),
        m.process(ids_req("R4", r4, 3, output_tokens=1)),
    ]
    assert [o.read for o in outs] == [0, 2464, 2448, 992]
    assert (m.queries, m.hits) == (10_410, 5_904)
    assert m.hits / m.queries == pytest.approx(0.567, abs=5e-4)


def test_v1_vllm_keeps_decoded_blocks_for_the_next_turn() -> None:
    m = cache_model_for("vllm")
    m.process(req("R1", [blk("p", 100)], 0, model="m", output_tokens=40, output_digest="y"))
    o = m.process(req("R2", [blk("p", 100), blk("y", 40), blk("u", 20)], 1, model="m"))
    assert o.read == 16 * ((100 + 39) // 16)


def test_v1_vllm_lru_capacity_evicts_the_oldest_blocks() -> None:
    m = cache_model_for("vllm", capacity_blocks=100)
    m.process(ids_req("R1", tuple(range(1600)), 0))
    m.process(ids_req("R2", tuple(range(10_000, 11_600)), 1))
    assert m.process(ids_req("R3", tuple(range(1600)), 2)).read == 0
    assert len(m.resident) <= 100


def test_sglang_radix_caps_at_n_minus_one_with_page_size_one() -> None:
    m = cache_model_for("sglang")
    ids = tuple(range(1000))
    m.process(ids_req("R1", ids, 0, output_tokens=1))
    assert m.process(ids_req("R2", ids, 1)).read == 999
    assert m.process(ids_req("R3", (*ids[:537], 9_999_999), 2)).read == 537


def test_l1_llamacpp_slot_keeps_prompt_and_all_but_the_last_sampled_token() -> None:
    m = cache_model_for("llamacpp")
    assert isinstance(m, SlotCache)
    p1 = blk("p1", 1000)
    o1 = m.process(req("R1", [p1], 0, model="m", output_tokens=200, output_digest="y1"))
    assert (o1.read, o1.uncached) == (0, 1000)
    assert len(m.slot_tokens()[0]) == 1199
    r2 = [p1, blk("y1", 200), blk("new", 300)]
    o2 = m.process(req("R2", r2, 1, model="m", output_tokens=1, output_digest="y2"))
    assert (o2.read, o2.uncached) == (1199, 301)
    assert len(m.slot_tokens()[0]) == 1500
    o3 = m.process(req("R3", r2, 2, model="m", output_tokens=1))
    assert (o3.read, o3.uncached) == (1499, 1)


def test_l1_cache_prompt_false_reuses_nothing() -> None:
    m = cache_model_for("llamacpp", cache_prompt=False)
    m.process(req("R1", [blk("p", 1000)], 0, model="m"))
    assert m.process(req("R2", [blk("p", 1000)], 1, model="m")).read == 0


def test_l1_two_slots_pick_the_most_similar_idle_slot() -> None:
    m = cache_model_for("llamacpp", slots=2)
    m.process(req("A1", [blk("a", 500)], 0, model="m"))
    m.process(req("B1", [blk("b", 500)], 1, model="m"))
    assert m.process(req("A2", [blk("a", 500), blk("x", 10)], 2, model="m")).read == 500
    assert m.process(req("B2", [blk("b", 500), blk("x", 10)], 3, model="m")).read == 500


def _x1(model: str = "m"):
    blocks = [blk(f"b{i}", 1000) for i in range(7)]
    return [
        req("R1", blocks[:2], 0, model=model),
        req("R2", blocks[:3], 10, model=model),
        req("R3", blocks[:7], 20, model=model),
    ]


def test_x1_oracle_bounds_for_an_append_only_trace() -> None:
    openai = cache_model_for("oracle:openai:gpt-4o").run(_x1())
    assert openai.read == 1920 + 2944
    assert openai.hit_rate == pytest.approx(0.4053, abs=5e-5)
    vllm = cache_model_for("oracle:vllm").run(_x1())
    assert vllm.read == 2000 + 2992
    assert vllm.hit_rate == pytest.approx(0.416, abs=5e-4)
    side = cache_model_for("oracle").run(_x1())
    assert side.read == 5000
    assert side.hit_rate == pytest.approx(1 - 7000 / 12000)


def test_x1_output_persisting_oracle_counts_the_re_sent_answer() -> None:
    trace = [
        req("R1", [blk("p", 1000)], 0, model="m", output_tokens=200, output_digest="y"),
        req("R2", [blk("p", 1000), blk("y", 200), blk("o", 300)], 1, model="m"),
    ]
    assert cache_model_for("oracle:llamacpp").run(trace).read == 1199
    assert cache_model_for("oracle:llamacpp", persist="request").run(trace).read == 1000
    assert cache_model_for("oracle:deepseek:deepseek-v4-pro").run(trace).read == 1200


def test_x1_oracle_append_only_closed_form_of_section_5() -> None:
    sizes = [10_000 + 1_000 * i for i in range(50)]
    trace = [
        req(f"R{i:02d}", [blk(f"b{j}", 1000) for j in range(s // 1000)], i, model="m")
        for i, s in enumerate(sizes)
    ]
    rep = cache_model_for("oracle", quantize="exact").run(trace)
    assert rep.hit_rate == pytest.approx(1 - 59_000 / 1_725_000)


def test_oracle_rejects_an_unknown_quantizer() -> None:
    with pytest.raises(CacheRequestError, match="quantize"):
        OracleCache(cache_model_for("oracle").rule, quantize="nearest")
