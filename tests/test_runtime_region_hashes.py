"""The request fingerprint's region content hashes are kept from request to request
(``SessionState.region_hashes``): after any sequence of appends and rewrites of a region's entry
list, the kept hash equals a fresh sha256 over the entry digests, and a request on an unchanged
window costs no digest at all."""

from __future__ import annotations

import hashlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.regions.entrylist import EntryList
from regio.session import _state as state_module
from regio.session._state import RegionHashes
from test_regions_entrylist_epoch import _POOL, _mutate, ops


class _Region:
    def __init__(self, name: str, entries: Any) -> None:
        self.name, self.entries = name, entries

    def content_hash(self) -> str:
        return _fresh(self.entries)


def _fresh(entries: Any) -> str:
    h = hashlib.sha256()
    for e in entries:
        h.update(e.digest.encode())
    return h.hexdigest()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), ops), min_size=1, max_size=14))
def test_kept_region_hashes_equal_a_fresh_hash_after_any_edits(steps):
    hashes = RegionHashes()
    regions = [_Region("a", EntryList()), _Region("b", EntryList([_POOL[3]]))]
    for second, (op, a, b) in steps:
        region = regions[int(second)]
        _mutate(region.entries, op, a, b)
        if op == "clear" and a % 3 == 0:  # a region may also get a new list object
            region.entries = EntryList(_POOL[: b % 4])
        for r in regions:
            assert hashes.content_hash(r) == _fresh(r.entries)


def test_an_unchanged_region_is_not_hashed_again(monkeypatch):
    hashes = RegionHashes()
    region = _Region("a", EntryList(_POOL[:3]))
    first = hashes.content_hash(region)
    calls: list[object] = []

    class _Counting:
        @staticmethod
        def sha256() -> Any:
            calls.append(1)
            return hashlib.sha256()

    monkeypatch.setattr(state_module, "hashlib", _Counting)
    assert hashes.content_hash(region) == first and not calls
    region.entries.append(_POOL[4])
    assert hashes.content_hash(region) == _fresh(region.entries) and not calls  # extends a copy


def test_a_plain_list_falls_back_to_the_regions_own_hash():
    region = _Region("a", list(_POOL[:2]))
    assert RegionHashes().content_hash(region) == _fresh(_POOL[:2])
