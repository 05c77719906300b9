"""Observed volatility (DESIGN.md section 3 item 7, :mod:`regio.layout.observe`): the ``regio``
layout places a region by what its writes do between requests, not only by its declaration.

Sessions are driven through :class:`regio.engine.Engine` (blueprint, writes, requests), as an
application drives them; the property tests play random write sequences. CI runs a bounded
number of examples; ``REGIO_FUZZ_EXAMPLES=N`` runs N per property."""

from __future__ import annotations

import os
import tempfile
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.blueprint import load_blueprint
from regio.content import ToolUse
from regio.engine import Engine
from regio.layout import Request, VolatilityObserved, classify, to_cache_request
from regio.layout.observe import OBSERVED_CHANGES, diff_entries
from regio.providers import cache_model_for
from regio.summarizers import ExtractiveSummarizer
from state_fixture_support import Ticks

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "25"))
PROP = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

#: What every blueprint of this page shares (name, model, tokenizer).
HEAD = """
version: 1
name: observed
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 4000}
tokenizer: heuristic
"""
BLUEPRINT = (
    HEAD
    + """tools: {context: none}
layout: {strategy: regio, chunk_tokens: 256}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 6000,
     seed: "SYSTEM"}
  - {name: notes, kind: temporary, volatility: grows, budget: 30000}
  - {name: facts, kind: keyed, volatility: grows, budget: 8000, max_entries: 50}
  - {name: status, kind: keyed, volatility: rewritten, budget: 500, max_entries: 1}
  - {name: conversation, kind: sliding_window, budget: 100000, max_items: 100000}
"""
)
SYSTEM = "You are a careful engineer who reads before editing. " * 60


def _engine(blueprint: str = BLUEPRINT) -> Engine:
    # a reproducible clock: the layout state remembers when its marked prefixes expire
    return Engine.from_blueprint(blueprint.replace("SYSTEM", SYSTEM), clock=Ticks())


def _request(engine: Engine) -> tuple[Request, bytes]:
    req, payload = engine.request("anthropic", "claude-sonnet-4-6")
    return req, msgspec.json.encode(payload)


def _placed(req: Request, region: str) -> str:
    watch = req.state.watch.get(region)
    return watch.placed if watch is not None else ""


def _levels(req: Request, region: str) -> set[str]:
    return {b.level for b in req.blocks if b.region == region}


def _turn(engine: Engine, n: int) -> None:
    engine.add_user(f"step {n}: look at module m{n}.py")
    engine.add_assistant(f"m{n}.py defines f{n}")


# --- the rule, by example ------------------------------------------------------------------


def test_a_grows_region_that_removes_entries_is_laid_out_in_the_tail() -> None:
    engine = _engine()
    seen: list[Any] = []
    engine.subscribe(lambda e: seen.append(e) if isinstance(e, VolatilityObserved) else None)
    engine.write("notes", "parked output 0 " * 200)
    _turn(engine, 0)
    first, _ = _request(engine)
    assert _levels(first, "notes") == {"system"}
    engine.release("notes", oldest=1)  # what `park` with `keep: 1` does on every park
    engine.write("notes", "parked output 1 " * 200)
    _turn(engine, 1)
    second, _ = _request(engine)
    assert _levels(second, "notes") == {"tail"}
    assert _placed(first, "notes") == "grows" and _placed(second, "notes") == "rewritten"
    moves = [e for e in second.events if isinstance(e, VolatilityObserved)]
    assert [(e.region, e.declared, e.laid_out, e.reason) for e in moves] == [
        ("notes", "grows", "rewritten", "removes")
    ]
    assert moves[0].removed == 1 and moves[0].appended == 1 and moves[0].churns == 1
    assert moves[0].first_changed == sum(
        b.tokens for b in first.blocks if b.level in ("tools", "system") and b.region != "notes"
    )
    assert moves[0].rewrite_tokens == first.tokens - moves[0].first_changed
    assert seen == moves  # told once on the engine's bus too
    engine.release("notes", oldest=1)
    engine.write("notes", "parked output 2 " * 200)
    _turn(engine, 2)
    third, _ = _request(engine)
    # in the tail, a replacement invalidates only itself: everything before the tail is kept
    assert classify(second, third).kind == "extension"
    assert not [e for e in third.events if isinstance(e, VolatilityObserved)]
    assert len(seen) == 1
    note = next(r for r in engine.snapshot().regions if r.name == "notes")
    assert (note.volatility, note.laid_out) == ("grows", "rewritten")
    assert "removed or rewrote entries" in note.placement and "2 removed" in note.placement


def test_a_region_that_really_only_appends_keeps_its_grows_place() -> None:
    engine = _engine()
    requests = []
    for n in range(OBSERVED_CHANGES + 4):
        engine.write("notes", f"fact {n}: m{n}.py defines f{n}")
        engine.write("facts", f"defines f{n}", key=f"m{n}.py")  # a new key: an append
        _turn(engine, n)
        requests.append(_request(engine)[0])
    for prev, cur in pairwise(requests):
        assert classify(prev, cur).kind == "extension"
        assert not [e for e in cur.events if isinstance(e, VolatilityObserved)]
    assert _placed(requests[-1], "notes") == _placed(requests[-1], "facts") == "grows"
    assert all(r.laid_out == r.volatility for r in engine.snapshot().regions if r.laid_out)


def test_a_keyed_grows_region_that_replaces_a_key_goes_to_the_tail() -> None:
    engine = _engine()
    engine.write("facts", "defines f", key="m.py")
    _turn(engine, 0)
    _request(engine)
    engine.write("facts", "defines f and g", key="m.py")  # the same key: rewritten in place
    _turn(engine, 1)
    req, _ = _request(engine)
    [move] = [e for e in req.events if isinstance(e, VolatilityObserved)]
    assert (move.region, move.rewritten, move.removed, move.laid_out) == (
        "facts",
        1,
        0,
        "rewritten",
    )


def test_a_moved_region_returns_only_after_appending_and_only_where_the_prefix_is_rewritten():
    engine = _engine()
    engine.write("notes", "a note")
    _turn(engine, 0)
    _request(engine)
    engine.release("notes", oldest=1)
    _turn(engine, 1)
    assert _placed(_request(engine)[0], "notes") == "rewritten"
    for n in range(OBSERVED_CHANGES):
        engine.write("notes", f"note {n}")
        _turn(engine, 2 + n)
        req, _ = _request(engine)
        assert _placed(req, "notes") == "rewritten"  # appends alone never move it back
    engine.release("conversation", oldest=2)  # an eviction rewrites the conversation anyway
    req, _ = _request(engine)
    assert _placed(req, "notes") == "grows"
    [move] = [e for e in req.events if isinstance(e, VolatilityObserved)]
    assert (move.laid_out, move.reason, move.churns) == ("grows", "appends_only", 0)
    assert _levels(req, "notes") == {"system"}


def test_a_stable_region_changed_once_stays_and_changed_twice_goes_by_what_it_did() -> None:
    once = _engine()
    _turn(once, 0)
    _request(once)
    once.clear("system")
    once.write("system", "You are a careful engineer. Prefer small diffs. " * 60)
    _turn(once, 1)
    req, _ = _request(once)
    assert _placed(req, "system") == "stable" and _levels(req, "system") == {"system"}

    appends = _engine()
    for n in range(2):
        _turn(appends, n)
        _request(appends)
        appends.write("system", f"Also: rule {n}.")
    _turn(appends, 2)
    req, _ = _request(appends)
    assert _placed(req, "system") == "grows"
    [move] = [e for e in req.events if isinstance(e, VolatilityObserved)]
    assert (move.declared, move.reason, move.changes) == ("stable", "changes", 2)

    edits = _engine()
    for n in range(2):
        _turn(edits, n)
        _request(edits)
        edits.clear("system")
        edits.write("system", f"You are engineer number {n}. " * 60)
    _turn(edits, 2)
    req, _ = _request(edits)
    assert _placed(req, "system") == "rewritten" and _levels(req, "system") == {"tail"}


PARK = (
    HEAD
    + """regions:
  - {name: system, kind: pinned, volatility: stable, budget: 6000, seed: "SYSTEM"}
  - name: tool_output
    kind: temporary
    volatility: grows
    budget: 20000
    capture:
      - {rule: park, min_tokens: 500, keep: 1}
  - {name: conversation, kind: sliding_window, budget: 100000, max_items: 100000}
"""
)


def test_a_region_a_park_capture_fills_is_laid_out_in_the_tail_from_the_first_request() -> None:
    text = PARK.replace("SYSTEM", SYSTEM)
    bp = load_blueprint(text)
    [warning] = bp.warnings
    assert warning.path == "regions[1].volatility"
    assert "park capture (it keeps the newest 1 parked output)" in warning.message
    engine = _engine(PARK)
    assert engine.window.region("tool_output").replacing_writer.startswith("the park capture")
    engine.write("tool_output", "parked output 0 " * 200)
    _turn(engine, 0)
    first, _ = _request(engine)
    assert _levels(first, "tool_output") == {"tail"}
    [move] = [e for e in first.events if isinstance(e, VolatilityObserved)]
    assert (move.reason, move.laid_out) == ("writer", "rewritten")
    assert move.writer.startswith("the park capture")
    engine.release("tool_output", oldest=1)
    engine.write("tool_output", "parked output 1 " * 200)
    _turn(engine, 1)
    second, _ = _request(engine)
    assert classify(first, second).kind == "extension"
    note = next(r for r in engine.snapshot().regions if r.name == "tool_output")
    assert note.placement.startswith("declared grows, laid out as rewritten: its writer the park")


def test_entry_changes_are_counted_by_what_they_do_to_the_bytes_after_them() -> None:
    a, b, c = ("a", "1"), ("b", "2"), ("c", "3")
    assert diff_entries([a, b], [a, b, c]) == (1, 0, 0)  # appended
    assert diff_entries([a, b], [b, c]) == (1, 0, 1)  # oldest removed, one appended
    assert diff_entries([a, b], [a, ("b", "9")]) == (0, 1, 0)  # rewritten in place
    assert diff_entries([a, b, c], [a, ("x", "4"), c]) == (0, 1, 0)  # a replacement in place
    assert diff_entries([a, b, c], [a, c, b]) == (0, 2, 0)  # moved
    assert diff_entries([a, c], [a, b, c]) == (0, 1, 0)  # inserted before a kept entry
    assert diff_entries([a, b], []) == (0, 0, 2)


# --- properties over random write sequences --------------------------------------------------

op_st = st.one_of(
    st.tuples(st.just("note"), st.integers(1, 400)),
    st.tuples(st.just("release"), st.integers(1, 2)),
    st.tuples(st.just("fact"), st.integers(0, 4), st.integers(1, 60)),
    st.tuples(st.just("status"), st.integers(0, 9)),
    st.tuples(st.just("system"), st.integers(0, 3)),
)
steps_st = st.lists(st.lists(op_st, min_size=0, max_size=3), min_size=2, max_size=9)


def _apply(engine: Engine, op: tuple[Any, ...], n: int) -> None:
    kind = op[0]
    if kind == "note":
        engine.write("notes", f"note {n}: " + "word " * op[1])
    elif kind == "release" and engine.window.region("notes").entries:
        engine.release("notes", oldest=min(op[1], len(engine.window.region("notes").entries)))
    elif kind == "fact":
        engine.write("facts", f"fact {n} " + "detail " * op[2], key=f"k{op[1]}")
    elif kind == "status":
        engine.write("status", f"step {n} status {op[1]}", key="now")
    elif kind == "system":
        engine.write("system", f"Rule {n}: variant {op[1]}.")


def _play(
    steps: list[list[tuple[Any, ...]]], engine: Engine | None = None, start: int = 0
) -> tuple[Engine, list[tuple[Request, bytes, dict[str, str]]]]:
    """Each step: its writes, a turn, a request; returns (engine, [(request, payload bytes,
    region -> content hash when it was laid out)])."""
    engine = engine or _engine()
    out = []
    for n, ops in enumerate(steps, start):
        for op in ops:
            _apply(engine, op, n)
        _turn(engine, n)
        req, payload = _request(engine)
        out.append((req, payload, {r.name: r.content_hash() for r in engine.window.regions}))
    return engine, out


def _first_change_before_conversation(prev: Request, cur: Request) -> str | None:
    """When ``cur``'s first changed byte falls before the conversation of ``prev`` (in its
    tools or system blocks), the region of ``prev``'s first changed block (``""``: none),
    else ``None``."""
    s = classify(prev, cur)
    head = sum(1 for b in prev.blocks if b.level in ("tools", "system"))
    if s.kind != "divergence" or s.block is None or s.block >= head:
        return None
    return prev.blocks[s.block].region or ""


@PROP
@given(steps_st)
def test_no_request_changes_bytes_before_the_conversation_unless_a_region_laid_out_there_changed(
    steps: list[list[tuple[Any, ...]]],
) -> None:
    _, played = _play(steps)
    system_hits: dict[str, int] = {}
    for (prev, _, before), (cur, _, after) in pairwise(played):
        changed = {name for name in after if after[name] != before.get(name)}
        front = {
            name
            for name in changed
            if (prev.state.watch[name].placed if name in prev.state.watch else "")
            in ("stable", "grows")
        }
        culprit = _first_change_before_conversation(prev, cur)
        if culprit is not None:
            assert front, (classify(prev, cur), changed)
        for name in changed:
            watch = cur.state.watch.get(name)
            if (
                watch is None
                or not watch.changes
                or watch.changes[-1].request != cur.state.requests
            ):
                continue
            if watch.changes[-1].churn and culprit == name:
                system_hits[name] = system_hits.get(name, 0) + 1
            if name in ("notes", "facts") and watch.changes[-1].churn:
                # a grows region that removed or rewrote entries is laid out in the tail
                assert watch.placed == "rewritten"
                assert "system" not in _levels(cur, name)
    # no prefix rewrite happens in these sessions, so a grows region moves once, for good:
    # its removals cost the bytes before the conversation at most once
    assert system_hits.get("notes", 0) <= 1 and system_hits.get("facts", 0) <= 1


@PROP
@given(steps_st)
def test_the_same_write_sequence_renders_the_same_bytes(
    steps: list[list[tuple[Any, ...]]],
) -> None:
    _, one = _play(steps)
    _, two = _play(steps)
    assert [p for _, p, _ in one] == [p for _, p, _ in two]
    assert [r.state for r, _, _ in one] == [r.state for r, _, _ in two]


@PROP
@given(steps_st, st.integers(min_value=1, max_value=8))
def test_a_saved_and_loaded_engine_renders_the_same_bytes(
    steps: list[list[tuple[Any, ...]]], cut: int
) -> None:
    cut = min(cut, len(steps) - 1)
    kept, _ = _play(steps[:cut])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.json"
        kept.save(path)
        loaded = Engine.load(path)
    _, a = _play(steps[cut:], kept, cut)
    _, b = _play(steps[cut:], loaded, cut)
    assert [p for _, p, _ in a] == [p for _, p, _ in b]
    assert a[-1][0].state.watch == b[-1][0].state.watch


@pytest.mark.parametrize("strategy", ["naive", "kind", "volatility"])
def test_the_comparison_layouts_keep_their_declared_order(strategy: str) -> None:
    engine = Engine.from_blueprint(BLUEPRINT.replace("SYSTEM", SYSTEM), strategy=strategy)
    for n in range(3):
        engine.write("notes", f"note {n}")
        if n:
            engine.release("notes", oldest=1)
        _turn(engine, n)
        req, _ = _request(engine)
        assert req.state.watch == {}
        assert not [e for e in req.events if isinstance(e, VolatilityObserved)]


ROUTE = (
    HEAD
    + """relief:
  enabled: true
  tools:
    - {name: open_file, route: files, route_key: "file:{path}"}
    - {name: grep, route: hits}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 6000, seed: "SYSTEM"}
  - {name: files, kind: keyed, volatility: grows, budget: 20000, max_entries: 20}
  - {name: hits, kind: temporary, volatility: grows, budget: 20000}
  - name: env
    kind: keyed
    volatility: grows
    budget: 300
    max_entries: 1
    capture:
      - {rule: footer, key: environment, pattern: '\\(cwd: [^)]*\\)\\s*\\Z'}
  - {name: conversation, kind: sliding_window, budget: 100000, max_items: 100000}
"""
)


def test_a_keyed_route_and_a_footer_are_writers_that_replace_and_an_unkeyed_route_is_not() -> None:
    bp = load_blueprint(ROUTE.replace("SYSTEM", SYSTEM))
    assert sorted(w.path for w in bp.warnings) == ["regions[1].volatility", "regions[3].volatility"]
    engine = _engine(ROUTE)
    writers = {r.name: r.replacing_writer for r in engine.window.regions}
    assert writers["files"].startswith("the relief route of 'open_file' results")
    assert writers["env"].startswith("the footer capture")
    assert writers["hits"] == ""  # it appends until full: left to the observation
    call = ToolUse("c1", "open_file", {"path": "a.py"})
    engine.add_user("open a.py")
    engine.add_assistant("opening", [call])
    engine.add_tool_result("c1", "def a():\n    return 1\n" * 40)
    req, _ = _request(engine)
    assert [b.level for b in req.blocks if b.region == "files"] == ["tail"]
    assert _placed(req, "files") == "rewritten" and _placed(req, "hits") == "grows"


def test_a_rewrite_mid_conversation_reads_back_the_last_prefix_an_earlier_request_marked():
    """A region leaving the grows place takes its notes out of the conversation, which is
    rewritten from the first of them; the markers of the request before lie after that point.
    The ``spare`` marker sits on the newest prefix an earlier request marked before it, so the
    provider reads everything up to there instead of nothing."""
    engine = _engine()
    cache = cache_model_for("anthropic:claude-sonnet-4-6")
    sent: list[Request] = []

    def step(n: int) -> None:
        engine.add_user(f"step {n}: look at module m{n}.py " + "and its tests " * 30)
        call = ToolUse(f"c{n}", "read_file", {"path": f"m{n}.py"})
        engine.add_assistant(f"reading m{n}.py", [call])
        engine.add_tool_result(call.id, f"def f{n}():\n    return {n}\n" * 20)
        req, _ = _request(engine)
        cache.process(to_cache_request(req, t_start=10.0 * n, id=str(n)))
        sent.append(req)

    for n in range(4):
        step(n)
    before_note = sent[-1].state.newest_hash
    engine.write("notes", "a note written mid-run " * 20)  # travels in the conversation
    for n in range(4, 12):
        step(n)
    engine.release("notes", oldest=1)  # the region removes an entry: it leaves the grows place
    engine.add_user("step 12: and now?")
    req, _ = _request(engine)
    assert _placed(req, "notes") == "rewritten" and not _levels(req, "notes")
    spare = [m for m in req.breakpoints if m.slot == "spare"]
    assert [req.blocks[m.index].prefix_hash for m in spare] == [before_note]
    outcome = cache.process(to_cache_request(req, t_start=130.0, id="12"))
    assert outcome.read == req.prefix_tokens(spare[0].index)


COMPACTING = (
    HEAD
    + """regions:
  - {name: system, kind: pinned, volatility: stable, budget: 6000, seed: "SYSTEM"}
  - {name: work, kind: compacting, volatility: grows, budget: 4000, compact_at: 0.5,
     target: 0.25}
  - {name: work_history, kind: compact_history, source: work, volatility: grows, budget: 4000}
  - {name: conversation, kind: sliding_window, budget: 100000, max_items: 100000}
"""
)


def test_a_compacting_region_whose_compaction_rewrites_the_conversation_keeps_its_grows_place():
    """Its compaction removes its entries in the request whose new summary opens the
    messages, which rewrites the conversation anyway: that removal does not count, so the
    region appended to on every turn stays where its appends are cheap."""
    engine = Engine.from_blueprint(
        COMPACTING.replace("SYSTEM", SYSTEM), summarizer=ExtractiveSummarizer()
    )
    compacted = False
    for n in range(12):
        engine.write("work", f"note {n}: tried option {n} " + "detail " * 250)
        _turn(engine, n)
        req, _ = _request(engine)
        watch = req.state.watch["work"]
        compacted = compacted or any(c.churn for c in watch.changes)
        assert watch.placed == "grows"
        assert not [e for e in req.events if isinstance(e, VolatilityObserved)]
    assert compacted and all(c.free for c in watch.changes if c.churn)
