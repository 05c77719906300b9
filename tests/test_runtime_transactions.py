"""Engine operations are transactions: a subscriber that raises during a compaction sees the
finished compaction and leaves the engine exactly as a quiet twin."""

from __future__ import annotations

import pytest

from regio.engine import Engine
from regio.errors import SubscriberError
from regio.events import Event
from regio.regions import CompactHistory, SlidingWindow
from runtime_stubs import make_engine, words


def _engine() -> Engine:
    return make_engine(
        [
            SlidingWindow(name="conversation", budget=5_000),
            CompactHistory(name="history", budget=1_000, source="conversation"),
        ]
    )


def _fill(engine: Engine) -> None:
    for i in range(6):
        engine.add_user(words(40, f"u{i}"))
        engine.add_assistant(words(40, f"a{i}"))


def test_a_subscriber_raising_mid_compaction_leaves_the_engine_as_a_quiet_twin() -> None:
    quiet, noisy = _engine(), _engine()
    _fill(quiet)
    _fill(noisy)
    seen: list[int] = []

    def subscriber(event: Event) -> None:
        seen.append(len(noisy.transcript()))
        if event.kind == "compaction_completed":
            raise RuntimeError("subscriber failed")

    noisy.subscribe(subscriber)
    expected = quiet.compact(keep_messages=2)
    with pytest.raises(SubscriberError):
        noisy.compact(keep_messages=2)
    assert expected is not None
    assert noisy.window.snapshot_state() == quiet.window.snapshot_state()
    assert noisy.book.versions == quiet.book.versions and noisy.book.last == quiet.book.last
    assert len(noisy.transcript()) == len(quiet.transcript())
    # every event was delivered once the compaction (and its transcript record) was done
    assert seen and set(seen) == {len(noisy.transcript())}
