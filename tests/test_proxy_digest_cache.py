"""A worker's history digests per session (regio.proxy.sessions.DigestCache) stay the longest
known prefix of the session's stored history when a commit remembers a longer history while
another thread's ``known`` reads the store: ``known``'s write-back never replaces the commit's
(a lost update made the next request read those positions from the store again)."""

from __future__ import annotations

from collections.abc import Callable

import attrs
from hypothesis import given
from hypothesis import strategies as st

from mutation_support import fuzz_settings
from regio.proxy.records import SessionMeta
from regio.proxy.sessions import DigestCache

SESSION = "s1"
HISTORY = [bytes([i]) * 16 for i in range(64)]


@attrs.define
class _Records:
    """The store's history positions of one session; ``during`` runs inside each read (what
    another thread does between ``known``'s read of the cache and its write-back)."""

    during: Callable[[], None] = lambda: None
    reads: list[tuple[int, int]] = attrs.field(factory=list)

    def positions(self, session: str, start: int, stop: int) -> list[tuple[bytes, int]]:
        self.reads.append((start, stop))
        self.during()
        return [(HISTORY[i], 1) for i in range(start, stop)]


def _meta(count: int) -> SessionMeta:
    return SessionMeta(SESSION, "k", "anthropic", 0.0, 0.0, count=count)


def test_a_commit_remembered_during_a_read_is_not_replaced_by_the_shorter_read() -> None:
    cache = DigestCache()
    cache.remember(SESSION, HISTORY[:4])
    # a request resolving against the session's meta of 8 items reads positions 4..8; a
    # commit of 12 items on another thread remembers them meanwhile
    records = _Records(during=lambda: cache.remember(SESSION, HISTORY[:12]))
    assert cache.known(records, _meta(8)) == HISTORY[:8]
    records = _Records()
    assert cache.known(records, _meta(12)) == HISTORY[:12]
    assert records.reads == []  # the commit's 12 digests were kept: nothing read again


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["commit", "elsewhere", "known"]), st.integers(0, 63), st.integers(0, 63)
    ),
    max_size=12,
)


@given(_OPS)
@fuzz_settings(100)
def test_the_cache_holds_a_prefix_of_the_history_at_least_as_long_as_every_commit_it_saw(
    ops: list[tuple[str, int, int]],
) -> None:
    cache = DigestCache()
    stored = 0  # the store's history: it only grows
    remembered = 0  # the longest history a commit on this worker remembered

    def commit(n: int, here: bool = True) -> None:
        nonlocal stored, remembered
        stored = max(stored, n)
        if here:
            remembered = stored
            cache.remember(SESSION, HISTORY[:stored])

    for op, n, during in ops:
        if op == "known":  # a resolve reading meta.count = n, a commit here inside its read
            count = min(n, stored)
            records = _Records(during=lambda d=during: commit(d))
            assert cache.known(records, _meta(count)) == HISTORY[:count]
        else:  # a commit on this worker, or on another one (the store grows, not the cache)
            commit(n, here=op == "commit")
        # what this worker's commits remembered is known without reading the store again
        probe = _Records()
        assert cache.known(probe, _meta(remembered)) == HISTORY[:remembered]
        assert probe.reads == []
