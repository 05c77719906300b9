"""``UsageLedger.totals()`` after a lazy load reads no stored usage record: a store save keeps
the totals of the stored records with the session's head, and the ledger adds the records
observed since to them (running sums, so ``Engine.snapshot`` of a long stored session costs
what its window needs). A session saved before the head held them falls back to one pass over
its records. Whatever the sequence of observations, saves and loads, the totals equal the sums
over every record."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from regio.engine import Engine
from regio.persistence.store import RedisStore, SQLiteStore
from regio.session._usage import UsageLedger, UsageRecord, UsageTotals
from store_support import redis_url, store_engine
from test_store_originals_append_only import store

__all__ = ["redis_url", "store"]


def _naive(records: list[UsageRecord]) -> UsageTotals:
    """The sums over ``records``, field by field, costs added in record order."""
    cost: float | None = 0.0
    for r in records:
        cost = None if cost is None or r.cost_usd is None else cost + r.cost_usd
    return UsageTotals(
        calls=len(records),
        prompt_tokens=sum(r.prompt_tokens for r in records),
        cache_read_tokens=sum(r.cache_read_tokens for r in records),
        cache_creation_tokens=sum(r.cache_creation_tokens for r in records),
        uncached_tokens=sum(r.uncached_tokens for r in records),
        output_tokens=sum(r.output_tokens for r in records),
        cost_usd=cost,
    )


def _observe(engine: Any, n: int, priced: bool = True) -> None:
    usage = {"input_tokens": 100 + n, "cache_read_input_tokens": 7 * n, "output_tokens": n % 50}
    if priced:
        engine.observe(usage, provider="anthropic", model="claude-sonnet-4-6")
    else:
        engine.observe(usage)


def _counted(store: Any) -> list[int]:
    """Log each read of the stored usage records (its count) in the returned list."""
    reads: list[int] = []
    read = store.usage_records
    store.usage_records = lambda sid, count: reads.append(count) or read(sid, count)
    return reads


def test_a_snapshot_after_a_lazy_load_reads_no_usage_record(store: Any) -> None:
    engine = store_engine("u")
    for n in range(40):
        _observe(engine, n)
        if n % 7 == 0:
            engine.save_to(store, "u")
    engine.save_to(store, "u")
    reads = _counted(store)
    loaded = Engine.load_from(store, "u", token_counter=engine.counter)
    assert loaded.snapshot().usage == engine.ledger.totals() == _naive(engine.ledger.records)
    _observe(loaded, 40)
    _observe(engine, 40)
    assert loaded.ledger.totals() == engine.ledger.totals()
    assert reads == []  # before: the first totals() read all 40 records
    loaded.save_to(store, "u")  # the head now counts 41
    again = Engine.load_from(store, "u", token_counter=engine.counter)
    assert again.ledger.totals() == engine.ledger.totals() and reads == []


def _without_totals(db: SQLiteStore, session_id: str) -> None:
    """Rewrite the stored head as regio wrote it before it kept the usage totals."""
    with db._lock:
        (head,) = db._db.execute("SELECT head FROM sessions WHERE id = ?", (session_id,)).fetchone()
        fields = msgspec.msgpack.decode(head)
        assert fields.pop("usage") is not None
        db._db.execute(
            "UPDATE sessions SET head = ? WHERE id = ?",
            (msgspec.msgpack.encode(fields), session_id),
        )


def test_a_session_saved_before_the_head_kept_totals_sums_its_records_in_one_pass(
    tmp_path: Path,
) -> None:
    db = SQLiteStore(tmp_path / "s.db")
    try:
        engine = store_engine("u")
        for n in range(12):
            _observe(engine, n, priced=n != 5)  # one unpriced call: the cost is unknown
        engine.save_to(db, "u")
        _without_totals(db, "u")
        reads = _counted(db)
        loaded = Engine.load_from(db, "u", token_counter=engine.counter)
        assert loaded.ledger.saved_totals() is None  # a save keeps no guess
        assert loaded.ledger.totals() == _naive(engine.ledger.records)
        assert loaded.ledger.totals().cost_usd is None
        assert reads == [12]  # one pass, then running sums
        _observe(loaded, 12)
        loaded.save_to(db, "u")  # now the head holds them again
        assert reads == [12]
        again = Engine.load_from(db, "u", token_counter=engine.counter)
        assert again.ledger.totals().calls == 13 and reads == [12]
    finally:
        db.close()


def test_replacing_the_records_starts_the_sums_over() -> None:
    ledger = UsageLedger()
    for n in range(3):
        ledger.observe({"input_tokens": n + 1})
    assert ledger.totals().prompt_tokens == 6
    ledger.records = ledger.records[:1]
    assert ledger.totals() == _naive(ledger.records)
    ledger.records.append(ledger.records[0])  # appending to the list is observed too
    assert ledger.totals().calls == 2


#: per step: observe (priced or not), save to the store, reload from the store, save to a
#: state file and load it
_STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("observe"), st.booleans()),
        st.tuples(st.sampled_from(["save", "reload", "file"]), st.just(False)),
    ),
    min_size=1,
    max_size=30,
)


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(steps=_STEPS)
def test_totals_equal_the_sums_over_every_record_across_saves_and_loads(
    request: Any, kind: str, steps: list[tuple[str, bool]]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        if kind == "sqlite":
            db: Any = SQLiteStore(Path(folder) / "s.db")
        else:
            url = request.getfixturevalue("redis_url")
            db = RedisStore.from_url(url, prefix=f"ut:{Path(folder).name}:")
        twin, engine = store_engine("u"), store_engine("u")  # the twin is never saved
        counter, sid = engine.counter, "u"
        try:
            for n, (step, priced) in enumerate(steps):
                if step == "observe":
                    for e in (twin, engine):
                        _observe(e, n, priced)
                elif step == "save":
                    engine.save_to(db, sid)
                elif step == "reload":
                    engine.save_to(db, sid)
                    engine = Engine.load_from(db, sid, token_counter=counter)
                else:  # a file holds every record; saved on as a new store session
                    path = engine.save(Path(folder) / "s.msgpack")
                    engine, sid = Engine.load(path, token_counter=counter), f"u{n}"
                assert engine.ledger.totals() == _naive(twin.ledger.records)
            assert engine.ledger.records == twin.ledger.records
        finally:
            if isinstance(db, SQLiteStore):
                db.close()
            else:
                for sid in db.sessions():
                    db.delete(sid)
