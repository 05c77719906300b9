"""One mechanism for the records a load leaves to read on first use
(:class:`regio.session._stored.StoredRecords`): the usage ledger's stored records behave like
the transcript's (counted, appended after and read once, in order, the count checked), and
``UsageLedger.totals`` (running sums, started from the stored records' saved totals or from
one pass over them) equals the naive sums."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from regio.session._stored import StoredRecords, stored_records
from regio.session._transcript import Transcript, TranscriptRecord
from regio.session._usage import UsageLedger, UsageRecord

_RECORDS = st.lists(
    st.tuples(
        st.integers(0, 10_000),  # uncached
        st.integers(0, 10_000),  # cache read
        st.integers(0, 5_000),  # 5-minute writes
        st.integers(0, 5_000),  # 1-hour writes
        st.integers(0, 5_000),  # writes without a TTL
        st.integers(0, 2_000),  # output
        st.one_of(st.none(), st.floats(0, 5, allow_nan=False)),  # cost (None: unpriced)
    ),
    max_size=40,
)


def _usage(i: int, spec: tuple[Any, ...]) -> UsageRecord:
    uncached, read, w5, w1, w, output, cost = spec
    return UsageRecord(
        index=i,
        provider="anthropic",
        model="m",
        api="anthropic",
        prompt_tokens=uncached + read + w5 + w1 + w,
        uncached_tokens=uncached,
        cache_read_tokens=read,
        cache_write_5m_tokens=w5,
        cache_write_1h_tokens=w1,
        cache_write_tokens=w,
        output_tokens=output,
        cost_usd=cost,
    )


def _ledger(records: list[UsageRecord], split: int, reads: list[int]) -> UsageLedger:
    """A ledger whose first ``split`` records are stored (each full read logged in ``reads``)
    and the rest observed since."""
    stored = records[:split]

    def read() -> list[UsageRecord]:
        reads.append(len(stored))
        return list(stored)

    last = stored[-1] if stored else None
    ledger = UsageLedger(stored=StoredRecords(len(stored), read, last=last))
    ledger._records.extend(records[split:])
    return ledger


@settings(max_examples=80, deadline=None)
@given(_RECORDS, st.integers(0, 40))
def test_totals_in_one_pass_equal_the_naive_sums(spec: list[Any], split: int) -> None:
    records = [_usage(i, s) for i, s in enumerate(spec)]
    reads: list[int] = []
    totals = _ledger(records, min(split, len(records)), reads).totals()
    costs = [r.cost_usd for r in records]
    assert totals.calls == len(records)
    assert totals.prompt_tokens == sum(r.prompt_tokens for r in records)
    assert totals.cache_read_tokens == sum(r.cache_read_tokens for r in records)
    assert totals.cache_creation_tokens == sum(r.cache_creation_tokens for r in records)
    assert totals.uncached_tokens == sum(r.uncached_tokens for r in records)
    assert totals.output_tokens == sum(r.output_tokens for r in records)
    if any(c is None for c in costs):
        assert totals.cost_usd is None
    else:
        assert totals.cost_usd is not None
        assert math.isclose(totals.cost_usd, sum(c or 0.0 for c in costs), abs_tol=1e-9)
    assert len(reads) <= 1  # the stored records are read once


@settings(max_examples=60, deadline=None)
@given(_RECORDS, st.integers(0, 40), st.integers(0, 45))
def test_stored_usage_records_are_counted_and_read_only_when_reached(
    spec: list[Any], split: int, start: int
) -> None:
    records = [_usage(i, s) for i, s in enumerate(spec)]
    split = min(split, len(records))
    reads: list[int] = []
    ledger = _ledger(records, split, reads)
    assert ledger.count == len(records)
    assert ledger.last == (records[-1] if records else None)
    assert ledger.since(start) == records[start:]
    assert bool(reads) == (start < split)  # only a start among the stored ones reads them
    assert ledger.records == records
    assert ledger.records == records and len(reads) <= 1


def _record(i: int) -> TranscriptRecord:
    return TranscriptRecord(i, i // 3, "message", "conversation")


@pytest.mark.parametrize(
    ("make", "what"),
    [
        (lambda s: Transcript(stored=s), "transcript"),
        (lambda s: UsageLedger(stored=s), "usage ledger"),
    ],
)
def test_a_source_with_another_record_count_is_refused_naming_the_list(
    make: Any, what: str
) -> None:
    held = make(StoredRecords(3, lambda: [_record(0), _record(1)]))
    count = len(held) if isinstance(held, Transcript) else held.count
    assert count == 3  # counted without reading
    with pytest.raises(ValueError, match=f"the stored {what} has 2 records, not the 3 saved"):
        held.records  # noqa: B018


def test_stored_records_read_their_source_once_and_name_a_damaged_record() -> None:
    import msgspec

    calls: list[int] = []
    good = [msgspec.msgpack.encode(_record(i)) for i in range(4)]

    def raw() -> list[bytes]:
        calls.append(1)
        return [*good, b"\xc1"]

    dec = msgspec.msgpack.Decoder(TranscriptRecord)
    stored = stored_records(
        raw,
        5,
        dec.decode,
        lambda exc: RuntimeError(f"damaged: {exc}"),
        lambda b: dec.decode(b).turn,
    )
    assert stored.one is not None and stored.one(2) == _record(2)
    with pytest.raises(RuntimeError, match="damaged"):
        stored.read()
    with pytest.raises(RuntimeError, match="damaged"):
        assert stored.turns is not None
        stored.turns()
    assert calls == [1]


@settings(max_examples=80, deadline=None)
@given(_RECORDS, st.integers(0, 40), st.lists(st.integers(0, 5), max_size=8), st.booleans())
def test_running_totals_from_the_saved_sums_equal_the_sums_over_every_record(
    spec: list[Any], split: int, steps: list[int], saved: bool
) -> None:
    """A ledger loaded with its stored records' totals (``StoredRecords.summary``) never reads
    them for :meth:`UsageLedger.totals`; without them it reads them once. Either way, after any
    interleaving of observed records and ``totals()`` calls, the totals are the sums over every
    record, costs added in record order (exactly)."""
    from regio.session._usage import UsageTotals

    records = [_usage(i, s) for i, s in enumerate(spec)]
    split = min(split, len(records))
    stored, rest = records[:split], records[split:]

    def naive(rs: list[UsageRecord]) -> UsageTotals:
        cost: float | None = 0.0
        for r in rs:
            cost = None if cost is None or r.cost_usd is None else cost + r.cost_usd
        return UsageTotals(
            len(rs),
            sum(r.prompt_tokens for r in rs),
            sum(r.cache_read_tokens for r in rs),
            sum(r.cache_creation_tokens for r in rs),
            sum(r.uncached_tokens for r in rs),
            sum(r.output_tokens for r in rs),
            cost,
        )

    reads: list[int] = []
    summary = naive(stored) if saved else None
    source = StoredRecords(len(stored), lambda: reads.append(1) or list(stored), summary=summary)
    ledger = UsageLedger(stored=source)
    done = split
    for step in [*steps, len(rest)]:
        ledger._records.extend(rest[done - split : done - split + step])
        done = min(len(records), done + step)
        assert ledger.totals() == naive(records[:done])
    assert ledger.totals() == naive(records)
    assert reads == ([] if saved or not stored else [1])
