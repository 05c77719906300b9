"""A request that rewrites the conversation before every frozen tail copy (old tool results
cleared in place by the relief chain, an entry evicted) collects the freezing tail then, at no
extra cost; copies left in place would keep, as the prefix a later collection reads back
(``TailCopy.follows``), a prefix the provider no longer holds (regio.layout.tail, plan.py).

Before the fix a relief clear left the copies frozen after the cleared result in place; when
their rent fell due some requests later, the collection's ``spare`` marker had no held prefix
before the oldest copy to read, and the whole prompt was written again (the generated bigtool
session, seed 303, at 200k: request 260 wrote 114,380 tokens of which 101,411 the previous
request had sent identically)."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from layout_support import (
    TOOLS,
    common_prefix_tokens,
    make_window,
    say,
    set_scratch,
    tail_session,
)
from regio.layout import RenderLog, assemble

PROP = settings(max_examples=int(os.environ.get("REGIO_FUZZ_EXAMPLES", "60")), deadline=None)
MODEL = "claude-sonnet-4-5"
#: sessions of (tool calls, whether the scratch value changes, index of a result to clear)
STEPS = st.lists(
    st.tuples(st.integers(0, 3), st.booleans(), st.none() | st.integers(0, 12)),
    min_size=6,
    max_size=16,
)


def _session(steps, settle_share: float = 0.05):
    return tail_session(steps, settle_share, MODEL)


def _first_copy(req) -> int | None:
    return next((i for i, b in enumerate(req.blocks) if b.source.startswith("frozen:")), None)


def _settled(req) -> list:
    return [e for e in req.events if e.kind == "tail_settled"]


def test_a_relief_clear_before_every_frozen_copy_collects_the_tail_at_once():
    # scratch changes at 2, 4 and 6 (copies frozen after results of steps 2..6); the result
    # of step 0 is cleared at step 8, before every copy
    steps = [(1, n in (2, 4, 6), 0 if n == 8 else None) for n in range(10)]
    runs = list(_session(steps))
    prev, req, _out, cleared = runs[8]
    assert cleared and _first_copy(prev) is not None
    assert [e.reason for e in _settled(req)] == ["conversation_rewritten"]
    assert _first_copy(req) is None  # every copy dropped, the current value in the tail
    # free: the request rewrites from the cleared result, as it had to anyway
    hist_first = next(i for i, b in enumerate(prev.blocks) if b.source.startswith("results:"))
    assert common_prefix_tokens(prev, req) == sum(b.tokens for b in prev.blocks[:hist_first])


def test_a_tail_collection_after_a_relief_clear_reads_back_the_prefix_before_the_oldest_copy():
    # scratch set at 3 (frozen from 4 on); the result of step 0 cleared at 6 (rewrites
    # before that copy); scratch changed at 8, so the copy frozen at 4 turns stale and is
    # collected (tight settle share) once the spare marker is needed
    steps = [(2, n in (3, 8), 0 if n == 6 else None) for n in range(14)]
    collections = [
        (prev, req, out)
        for prev, req, out, cleared in _session(steps, settle_share=0.005)
        if _settled(req) and not cleared
    ]
    assert collections, "no collection after the clear"
    for prev, req, out in collections:
        first = _first_copy(prev)
        if first is None:
            continue
        held = sum(b.tokens for b in prev.blocks[:first])
        assert common_prefix_tokens(prev, req) >= held
        assert out.read >= held  # on main: only the system prompt was read back


def test_a_rewrite_after_a_frozen_copy_leaves_the_tail_in_place():
    # the copy frozen at 2 follows step 2's entries; clearing step 3's result changes an
    # entry after it: collecting would move the rewrite earlier, so nothing is collected
    steps = [(1, n == 2, 3 if n == 5 else None) for n in range(7)]
    runs = list(_session(steps))
    prev, req, _out, cleared = runs[5]
    assert cleared and _first_copy(prev) is not None
    assert not _settled(req)
    assert _first_copy(req) == _first_copy(prev)


@PROP
@given(STEPS, st.sampled_from([0.002, 0.01, 0.05]))
def test_every_tail_collection_reads_back_what_the_previous_request_held_before_its_change(
    steps, settle_share: float
) -> None:
    """Whatever the turns, value changes and in-place clears of old results: a request that
    collects the tail without clearing anything itself reads back every block before the
    oldest copy it drops (all requests within the TTL), and a collection at a clear happens
    only when the clear changed the prompt at or before every copy."""
    for prev, req, out, cleared in _session(steps, settle_share):
        if prev is None or not _settled(req):
            continue
        first = _first_copy(prev)
        if first is None:
            continue
        held = sum(b.tokens for b in prev.blocks[:first])
        common = common_prefix_tokens(prev, req)
        if any(e.reason == "conversation_rewritten" for e in _settled(req)):
            assert cleared
            assert common <= held
        elif not cleared:
            assert common >= held
            assert out.read >= held


def _digests_of_last_request(steps, monkeypatch) -> int:
    """Entry digests the render log hands out for the last request of a session of ``steps``
    (:func:`layout_support.tail_session`), which keeps a tail copy."""
    calls = [0]
    digest = RenderLog.entry_digest

    def counted(self, entry):
        calls[0] += 1
        return digest(self, entry)

    with monkeypatch.context() as patch:
        patch.setattr(RenderLog, "entry_digest", counted)
        for n, (_prev, req, _out, _cleared) in enumerate(_session(steps)):
            if n < len(steps) - 1:
                calls[0] = 0
            else:
                assert req.state.tail or req.state.frozen
    return calls[0]


def test_a_request_that_appends_after_a_frozen_copy_does_not_digest_the_entries_before_it(
    monkeypatch,
):
    """The check for a rewrite before every copy (``LayoutState.anchored``) costs a request
    that only appends nothing per entry before the oldest copy: a copy frozen late in a long
    session costs what one frozen early does (on main: a digest of every entry through the
    copy's anchor, twice a request)."""
    early = _digests_of_last_request([(1, k == 1, None) for k in range(30)], monkeypatch)
    late = _digests_of_last_request([(1, k == 25, None) for k in range(30)], monkeypatch)
    assert _first_copy_at_end([(1, k == 25, None) for k in range(30)])
    assert late == early, (early, late)


def test_a_value_changed_every_request_costs_its_new_entries_not_the_conversation(monkeypatch):
    """A rewritten region whose value changes every request (its copy re-emitted in the tail
    each time, anchored at the newest entry) costs a request the entries it adds, however long
    the conversation is (on main: a digest of every entry of the conversation a request)."""
    short = _digests_of_last_request([(1, True, None)] * 8, monkeypatch)
    long = _digests_of_last_request([(1, True, None)] * 40, monkeypatch)
    assert long == short, (short, long)


def _first_copy_at_end(steps) -> bool:
    *_, (_prev, req, _out, _cleared) = _session(steps)
    return _first_copy(req) is not None


@PROP
@given(STEPS)
def test_property_a_session_on_its_warm_render_log_lays_out_what_a_cold_one_does(steps) -> None:
    """Turns, value changes and in-place clears of old results: every request built on the
    session's render log (which keeps the last rewrite check's entries) has the blocks,
    events and layout state of the one built on a fresh log."""
    warm = _session(steps)
    cold = tail_session(steps, 0.05, MODEL, cold=True)
    for (_, a, _, _), (_, b, _, _) in zip(warm, cold, strict=True):
        assert [(x.prefix_hash, x.source) for x in a.blocks] == [
            (x.prefix_hash, x.source) for x in b.blocks
        ]
        assert a.events == b.events
        assert a.state == b.state


@PROP
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["append", "append", "rewrite", "drop"]),
            st.integers(0, 40),
            st.integers(0, 40),
        ),
        min_size=1,
        max_size=24,
    )
)
def test_property_the_rewrite_check_through_a_warm_log_digests_the_entries_through_the_anchor(
    ops,
) -> None:
    """Conversations that grow, have an entry rewritten in place or dropped, with the first
    copy's anchor anywhere (or gone): the check's digest through the session's render log
    (which carries the last one's entries and hash state) is ``content_hash`` of the digests
    of the entries through the anchor, asked once or twice a request."""
    import types

    from layout_support import raw_entry
    from regio.content import Text, content_hash
    from regio.layout import RenderLog, TailCopy
    from regio.layout.plan import anchored_digest

    log = RenderLog()
    conv: list = []
    for n, (op, i, a) in enumerate(ops):
        if op == "append" or not conv:
            conv = [*conv, raw_entry(f"e{n}", "user", Text(f"turn {n}"))]
        elif op == "rewrite":
            k = i % len(conv)
            conv = [*conv[:k], raw_entry(conv[k].id, "user", Text(f"cleared {n}")), *conv[k + 1 :]]
        else:
            k = i % len(conv)
            conv = conv[:k] + conv[k + 1 :]
        at = a % (len(conv) + 1)  # len(conv): an anchor no longer in the conversation
        anchor = conv[at].id if at < len(conv) else "gone"
        expected = content_hash([e.digest for e in conv[: at + 1]]) if at < len(conv) else ""
        job = types.SimpleNamespace(conversation=conv, log=log)
        copies = (TailCopy("scratch", "d", "text", 1, 0, anchor, n),)
        for _ in range(1 + i % 2):
            assert anchored_digest(job, copies) == expected  # type: ignore[arg-type]


def test_a_reset_render_log_holds_no_entries_of_the_conversation_it_forgot():
    # the rewrite check's memo (RenderLog.anchored) holds the entries through the first
    # copy's anchor; a reset (the conversation rewritten) must let them go like the rest of
    # the log, or a session whose copies are then all dropped keeps the compacted-away
    # entries alive for as long as it runs
    w = make_window(max_tokens=60_000, scratch=None)
    log = RenderLog()
    state = None
    for n in range(4):
        say(w, "user", f"step {n} " * 150)
        if n == 1:
            set_scratch(w, "plan " * 400)
        state = assemble(w, "regio", tools=TOOLS, state=state, log=log).state
        say(w, "assistant", f"done {n}")
    assert state.frozen and log.anchored is not None
    log.reset()
    assert log.anchored is None
