"""Per-session leases and compaction under them: one writer works on a session at a time, a
second one waits or gets SessionLeasedError (a SessionConflictError), and a compaction is
stored whole or not at all, also with two processes racing on one session."""

from __future__ import annotations

import math
import multiprocessing
import os
import traceback
from pathlib import Path
from typing import Any

import pytest

from regio.content import ToolResult, ToolUse
from regio.engine import Engine
from regio.layout import check_anthropic, check_openai_chat
from regio.persistence.store import (
    LeaseTimeError,
    RedisStore,
    SessionConflictError,
    SessionDamagedError,
    SessionLeasedError,
    SessionStoreError,
    SQLiteStore,
    compact_session,
)
from regio.persistence.store.lease import MAX_TTL
from regio.summarizers import ExtractiveSummarizer
from regio.tokens import get_counter
from store_support import HISTORY_BLUEPRINT, redis_url, sqlite_or_redis, stray_lease

__all__ = ["redis_url"]


@pytest.fixture(params=["sqlite", "redis"])
def store(request: Any, tmp_path: Path) -> Any:
    yield from sqlite_or_redis(request, tmp_path / "sessions.db", f"lease:{request.node.name}:")


def _opened(spec: tuple[str, str, str]) -> Any:
    """A store from ``(kind, where, prefix)`` (what a child process opens for itself)."""
    kind, where, prefix = spec
    return SQLiteStore(where) if kind == "sqlite" else RedisStore.from_url(where, prefix=prefix)


def _spec(store: Any) -> tuple[str, str, str]:
    if isinstance(store, SQLiteStore):
        return ("sqlite", str(store.path), "")
    return ("redis", store.url, store.prefix)


def _counter() -> Any:
    return get_counter("heuristic")


def _engine() -> Engine:
    counter = _counter()
    return Engine.from_blueprint(
        HISTORY_BLUEPRINT,
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=200),
        clock=lambda: 0.0,
        session_id="s",
    )


def _load(store: Any) -> Engine:
    counter = _counter()
    return Engine.load_from(
        store,
        "s",
        token_counter=counter,
        summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=200),
        clock=lambda: 0.0,
    )


def _turn(engine: Engine, tag: str) -> None:
    engine.add_user(f"turn {tag}: please check item {tag} and report the status")
    engine.add_assistant(f"checking {tag}", [ToolUse(f"c-{tag}", "read", {"item": tag})])
    engine.add_tool_result(f"c-{tag}", f"item {tag}: status ok, size {len(tag) * 7} " * 3)
    engine.add_assistant(f"item {tag} checked: status ok")


def _seeded(store: Any, turns: int = 8) -> Engine:
    engine = _engine()
    for i in range(turns):
        _turn(engine, f"seed{i}")
    engine.save_to(store, "s")
    return engine


# ----- the lease ---------------------------------------------------------------------------
def test_a_second_writer_gets_the_lease_only_after_the_first_releases_it(store: Any) -> None:
    first = store.lease("s", ttl=30, wait=0)
    with pytest.raises(SessionLeasedError) as info:
        store.lease("s", ttl=30, wait=0)
    assert isinstance(info.value, SessionConflictError)
    assert info.value.expires_in is not None and 0 < info.value.expires_in <= 30
    assert "leased by another writer" in str(info.value)
    first.release()
    with store.lease("s", ttl=30, wait=0) as second:
        assert second.token != first.token
    store.lease("s", ttl=30, wait=0).release()  # released on leaving the block


def test_a_save_while_another_writer_holds_the_lease_writes_nothing(store: Any) -> None:
    engine = _seeded(store)
    before = _load(store).transcript()
    with store.lease("s", ttl=30, wait=0) as lease:
        _turn(engine, "stale")
        with pytest.raises(SessionLeasedError, match=r"store\.lease"):
            engine.save_to(store, "s")  # no lease: refused
        assert _load(store).transcript() == before
        assert engine.save_to(store, "s", lease=lease) == 2  # the holder's save goes through


def test_a_writer_whose_lease_expired_and_was_taken_over_cannot_save(store: Any) -> None:
    engine = _seeded(store)
    lease = store.lease("s", ttl=0.05, wait=0)
    other = store.lease("s", ttl=30, wait=5)  # waits out the short lease, then takes it
    _turn(engine, "late")
    with pytest.raises(SessionLeasedError, match="expired and was taken over"):
        engine.save_to(store, "s", lease=lease)
    with pytest.raises(SessionLeasedError, match="lost"):
        lease.renew()
    other.renew(60)
    other.release()


def test_a_lease_for_another_session_is_refused_at_the_save(store: Any) -> None:
    engine = _seeded(store)
    with (
        store.lease("other", ttl=30, wait=0) as lease,
        pytest.raises(SessionStoreError, match="pass the lease of this session"),
    ):
        engine.save_to(store, "s", lease=lease)


@pytest.mark.parametrize("ttl", [0, -1, math.inf, math.nan, True, "5", MAX_TTL + 1])
def test_a_lease_needs_a_finite_positive_ttl_and_takes_nothing_otherwise(
    store: Any, ttl: Any
) -> None:
    with pytest.raises(LeaseTimeError, match="ttl is the seconds a lease lasts"):
        store.lease("s", ttl=ttl)
    store.lease("s", ttl=5, wait=0).release()  # nothing was taken


@pytest.mark.parametrize("wait", [-1, math.nan, None, "1"])
def test_a_lease_wait_must_be_seconds(store: Any, wait: Any) -> None:
    with pytest.raises(LeaseTimeError, match="wait is the seconds"):
        store.lease("s", ttl=5, wait=wait)


@pytest.mark.parametrize("ttl", [-1, 0, math.inf, math.nan])
def test_a_renewal_needs_a_finite_positive_ttl_and_keeps_the_lease(store: Any, ttl: Any) -> None:
    lease = store.lease("s", ttl=5, wait=0)
    with pytest.raises(LeaseTimeError):
        lease.renew(ttl)
    assert lease.ttl == 5
    with pytest.raises(SessionLeasedError):  # still held: nobody else takes it
        store.lease("s", ttl=5, wait=0)
    lease.renew()
    lease.release()


def test_a_lease_that_never_expires_is_named_with_the_fix_not_waited_on_forever(
    store: Any,
) -> None:
    engine = _engine()
    engine.save_to(store, "s")
    stray_lease(store)
    for attempt in (lambda: store.lease("s", ttl=5, wait=0.2), lambda: engine.save_to(store, "s")):
        with pytest.raises(SessionDamagedError, match="forever") as caught:
            attempt()
        assert "DEL" in str(caught.value) or "DELETE FROM leases" in str(caught.value)


# ----- compaction under the lease, two processes -------------------------------------------
def _compact_holding(spec: tuple[str, str, str], held: Any, go: Any, out: Any) -> None:
    """Child A: hold the lease, let B try, then add a turn, compact and save under it."""
    try:
        store = _opened(spec)
        with store.lease("s", ttl=60, wait=30) as lease:
            held.set()
            go.wait(30)
            engine = _load(store)
            _turn(engine, "a")
            result = engine.compact(keep_messages=8)
            engine.save_to(store, "s", lease=lease)
        out.put(("a", "compacted" if result is not None else "nothing"))
    except BaseException:
        out.put(("a", traceback.format_exc()))


def _compact_waiting(spec: tuple[str, str, str], held: Any, go: Any, out: Any) -> None:
    """Child B: try the lease at once (refused while A holds it), then wait for it."""
    try:
        store = _opened(spec)
        held.wait(30)
        counter = _counter()
        kw = {"token_counter": counter, "clock": lambda: 0.0}
        try:
            compact_session(Engine, store, "s", keep_messages=2, ttl=60, wait=0, **kw)
            out.put(("b-first", "compacted while A held the lease"))
        except SessionLeasedError:
            out.put(("b-first", "leased"))
        go.set()
        result = compact_session(Engine, store, "s", keep_messages=2, ttl=60, wait=60, **kw)
        out.put(("b", "compacted" if result is not None else "nothing"))
    except BaseException:
        out.put(("b", traceback.format_exc()))


def _run(targets: list[Any], spec: tuple[str, str, str]) -> dict[str, str]:
    ctx = multiprocessing.get_context("fork" if hasattr(os, "fork") else "spawn")
    held, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=t, args=(spec, held, go, out)) for t in targets]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    results: dict[str, str] = {}
    while not out.empty():
        name, text = out.get()
        results[name] = text
    return results


def _check_whole(store: Any) -> Engine:
    """The stored session: loads, its summaries cover no entry still in the window, no entry
    was compacted twice, and both providers accept its request."""
    engine = _load(store)
    window_ids = {e.id for r in engine.window.regions for e in r.entries}
    covered: list[str] = []
    for record in engine.transcript():
        if record.kind == "compaction":
            covered.extend(record.ids)
    assert len(covered) == len(set(covered)), "an entry was compacted twice"
    assert not set(covered) & window_ids, "a compacted entry is still in the window"
    _, anthropic = engine.request("anthropic", "claude-sonnet-4-6")
    _, openai = engine.request("openai", "gpt-4o")
    assert check_anthropic(anthropic) == [] and check_openai_chat(openai) == []
    for m in openai["messages"]:
        for r in m.get("tool_calls") or []:
            assert isinstance(r["id"], str)
    return engine


def test_two_processes_racing_compactions_apply_one_after_the_other(store: Any) -> None:
    _seeded(store)
    results = _run([_compact_holding, _compact_waiting], _spec(store))
    assert results.get("b-first") == "leased", results
    assert results.get("a") == "compacted", results
    assert results.get("b") == "compacted", results  # on A's compacted session, after A
    engine = _check_whole(store)
    assert engine.store_mark.version == 3
    texts = [e.text for e in engine.transcript_log.messages()]
    assert sum("turn a:" in t for t in texts) == 1  # A's turn, saved once, never lost
    tool_results = [
        b for e in engine.transcript_log.messages() for b in e.blocks if isinstance(b, ToolResult)
    ]
    assert len({b.tool_use_id for b in tool_results}) == len(tool_results)


def _dies_holding(spec: tuple[str, str, str], held: Any, go: Any, out: Any) -> None:
    """Child A: take a short lease, start a compaction and die before saving (kill -9)."""
    store = _opened(spec)
    store.lease("s", ttl=3, wait=30)
    held.set()
    engine = _load(store)
    engine.compact(keep_messages=2)
    os._exit(9)


def test_a_writer_that_dies_mid_compaction_leaves_the_session_whole_and_frees_it(
    store: Any,
) -> None:
    seeded = _seeded(store)
    results = _run([_dies_holding, _compact_waiting], _spec(store))
    assert results.get("b-first") == "leased", results
    assert results.get("b") == "compacted", results  # after A's lease ran out
    engine = _check_whole(store)
    assert engine.store_mark.version == 2
    assert len(engine.transcript()) > len(seeded.transcript())
