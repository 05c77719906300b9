"""An item set finds the item a new key supersedes by a lookup of its concept name, with the
same answer as comparing the key with every kept key (the scan it replaced: quadratic on a long
span, benchmarks/test_bench_extract.py)."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from regio.summarizers.items import ItemSet
from regio.summarizers.subjects import related

EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "50"))

_NAMES = st.sampled_from(["budget", "timeout", "text", "value", "port"])
_SCOPES = st.lists(st.sampled_from(["trip", "field", "api", "db", "read"]), max_size=3).map(
    " ".join
)
_KEYS = st.one_of(
    st.builds(lambda n, s: f"{n}:{s}", _NAMES, _SCOPES), st.sampled_from(["plain", "x"])
)


def _scan(items: ItemSet, key: str) -> str | None:
    same = items.get(key)
    if same is not None:
        return same.key
    near = [i.key for i in items.items() if related(i.key, key)]
    return near[0] if len(near) == 1 else None


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _KEYS), max_size=30), _KEYS)
def test_the_superseded_item_found_by_lookup_is_the_one_a_scan_finds(
    steps: list[tuple[bool, str]], probe: str
) -> None:
    items = ItemSet()
    for n, (remove, key) in enumerate(steps):
        if remove:
            items.remove([key])
        else:
            items.add("value", f"item {n} of {key}", key=key)
        found = items._target(probe)
        assert (found.key if found is not None else None) == _scan(items, probe)
