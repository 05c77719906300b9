"""The summaries that open the conversation get a marker of their own (``history``) when a
slot is free. A relief pass, or a compaction that keeps the summary as it was, rewrites what
follows them; the marker lets the next request read them back with everything before them,
where tools and system prompt alone are below the provider's minimum cacheable prefix (1,024
tokens for Claude Sonnet) and would be read back not at all (regio.layout.breakpoints,
``history``; docs/benchmark.md, "The summaries' own marker").

CI runs a bounded number of examples; ``REGIO_FUZZ_EXAMPLES=N`` runs N.
"""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.content import Text, ToolUse
from regio.layout import LayoutBlock, to_cache_request
from regio.layout.breakpoints import history_end, levels, regio_wanted
from regio.providers import cache_model_for
from runtime_stubs import summary_engine, words

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "10"))
CACHE = "anthropic:claude-sonnet-4-6"
MODEL = "claude-sonnet-4-6"


def _blocks(*spec: tuple[str, str, int]) -> list[LayoutBlock]:
    """Blocks of ``(level, origin, tokens)``, prefix hashes ``p0``, ``p1``, ..."""
    return [
        LayoutBlock(
            level=level,  # type: ignore[arg-type]
            role="system" if level == "system" else "user",
            tokens=tokens,
            digest=f"d{i}",
            prefix_hash=f"p{i}",
            block=Text(f"block {i}"),
            origin=origin,  # type: ignore[arg-type]
            message=None if level == "system" else i,
        )
        for i, (level, origin, tokens) in enumerate(spec)
    ]


def _slots(wanted: list[tuple[int, str, str]]) -> dict[str, int]:
    return {slot: index for index, _ttl, slot in wanted}


def test_the_summaries_that_open_a_short_prompt_are_marked_at_their_end() -> None:
    blocks = _blocks(
        ("system", "region", 600),
        ("messages", "summary", 300),
        ("messages", "summary", 500),
        ("messages", "entry", 2000),
        ("messages", "entry", 2000),
    )
    marked = _slots(regio_wanted(blocks, ttl="5m", stable_ttl="5m"))
    assert marked["history"] == 2 and marked["newest"] == 4


def test_a_system_prefix_that_carries_its_own_marker_keeps_it_first() -> None:
    blocks = _blocks(
        ("system", "region", 1500),
        ("messages", "summary", 500),
        ("messages", "entry", 2000),
    )
    wanted = regio_wanted(blocks, ttl="5m", stable_ttl="5m")
    assert [(i, slot) for i, _t, slot in wanted] == [(2, "newest"), (0, "settled"), (1, "history")]


def test_a_conversation_that_opens_without_a_summary_has_no_history_marker() -> None:
    blocks = _blocks(("system", "region", 600), ("messages", "entry", 2000))
    assert "history" not in _slots(regio_wanted(blocks, ttl="5m", stable_ttl="5m"))
    assert history_end(blocks, levels(blocks)[1]) is None


def test_the_history_marker_takes_only_a_slot_the_others_leave() -> None:
    """Ranked last: placed when the others leave a slot, left out when four others are
    placed (here the system prefix carries ``settled`` too)."""
    from regio.layout.breakpoints import place_marks

    def spec(system: int) -> list[LayoutBlock]:
        return _blocks(
            ("system", "region", system),
            ("messages", "summary", 500),
            *[("messages", "entry", 100)] * 40,
            ("tail", "tail", 50),
        )

    options: dict[str, Any] = {"ttl": "5m", "stable_ttl": "5m", "previous_newest": "p3"}
    short = spec(600)  # settled below the minimum: three others placed, history fourth
    wanted = regio_wanted(short, tail_index=len(short) - 1, **options)
    assert [slot for _i, _t, slot in wanted][-1] == "history"
    assert {m.slot for m in place_marks(short, wanted, 1024)} == {
        "newest",
        "spare",
        "tail",
        "history",
    }
    long = spec(1600)  # settled placed: four others, history left out
    wanted = regio_wanted(long, tail_index=len(long) - 1, **options)
    assert {m.slot for m in place_marks(long, wanted, 1024)} == {
        "settled",
        "newest",
        "spare",
        "tail",
    }


def test_a_request_that_writes_no_conversation_prefix_marks_only_summaries_held() -> None:
    """With ``newest_unread`` the summaries get their marker only when an earlier request
    marked them (a read, never a new write: docs/layout.md, "A write no request reads")."""
    blocks = _blocks(
        ("system", "region", 600),
        ("messages", "summary", 800),
        ("messages", "entry", 2000),
    )
    options: dict[str, Any] = {"ttl": "5m", "stable_ttl": "5m", "newest_unread": True}
    assert "history" not in _slots(regio_wanted(blocks, **options))
    held = regio_wanted(blocks, previous_marks=("p1",), **options)
    assert _slots(held)["history"] == 1


def _engine() -> Any:
    """A 400-token system prompt (below Claude's 1,024-token minimum), one rolling 700-word
    summary (the stub writes the same words each time, as a merge that keeps the summary as
    it was), a conversation compacted on demand."""
    engine = summary_engine(
        100_000,
        system=(600, 400),
        history=5000,
        conversation=(60_000, 2000),
        summary=700,
        carry_forward="replace",
    )
    engine.add_user("fix the bug")
    return engine


def _steps(engine: Any, start: int, n: int) -> None:
    for i in range(start, start + n):
        engine.add_assistant(f"step {i}", [ToolUse(f"c{i}", "bash", {"i": i})])
        engine.add_tool_result(f"c{i}", words(300, f"r{i}x"))


def test_a_compaction_that_keeps_the_summary_reads_it_back_with_the_prompt_before_it() -> None:
    engine = _engine()
    sim = cache_model_for(CACHE)
    t = 0.0

    def send() -> tuple[Any, Any]:
        nonlocal t
        req, _payload = engine.request("anthropic", MODEL)
        t += 5.0
        return req, sim.process(to_cache_request(req, t_start=t, id=f"r{t:06.0f}", model=MODEL))

    _steps(engine, 0, 8)
    send()
    engine.compact(keep_messages=4)
    req, _out = send()
    first = [m for m in req.breakpoints if m.slot == "history"]
    assert len(first) == 1
    through_first = sum(b.tokens for b in req.blocks[: first[0].index + 1])
    assert through_first >= 1024
    _steps(engine, 8, 8)
    send()
    engine.compact(keep_messages=4)  # the same rolling summary; what follows it rewritten
    req, out = send()
    assert "history" in {m.slot for m in req.breakpoints}
    assert out.read == through_first  # system prompt, summary and task, read back


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plan=st.lists(
        st.tuples(st.integers(5, 8), st.booleans()), min_size=2, max_size=8
    ),  # (steps, compact after them: 900+ tokens, more than a summary)
    system=st.sampled_from([(600, 200), (600, 400), (3000, 1500)]),
    summary=st.sampled_from([300, 700]),
)
def test_a_prompt_that_opens_with_summaries_marks_them_where_a_slot_is_free(
    plan: list[tuple[int, bool]], system: tuple[int, int], summary: int
) -> None:
    """Every request whose conversation opens with summaries marks their end when the prefix
    through them reaches the minimum, unless four other markers took every slot (or, in a
    request that writes no conversation prefix, no earlier request marked them); never when
    it is below the minimum; a conversation that opens otherwise has no such marker."""
    engine = summary_engine(
        100_000, system=system, history=20_000, conversation=(60_000, 2000), summary=summary
    )
    engine.add_user("fix the bug")
    done = 0
    earlier: set[str] = set()  # the prefixes earlier requests marked
    for steps, compact in plan:
        _steps(engine, done, steps)
        done += steps
        if compact:
            engine.compact(keep_messages=4)
        req, _payload = engine.request("anthropic", MODEL)
        before = set(earlier)
        earlier |= {req.blocks[m.index].prefix_hash for m in req.breakpoints}
        _sys, msgs = levels(req.blocks)
        end = history_end(req.blocks, msgs)
        slots = [m.slot for m in req.breakpoints]
        if end is None:
            assert "history" not in slots
            continue
        through = sum(b.tokens for b in req.blocks[: end + 1])
        marked = any(m.index == end for m in req.breakpoints)  # its own, or one shared
        if through < 1024:
            assert not marked
        elif "newest" in slots:  # a request that writes: only a full set keeps it out
            assert marked or len(slots) == 4
        elif "history" in slots:  # one that writes no conversation prefix: a read back
            assert req.blocks[end].prefix_hash in before
