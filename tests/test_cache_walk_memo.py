"""A breakpoint cache model that walks a request's blocks through a caller's
:class:`regio.cache.walk.BlockWalk` (and hashes them through a
:class:`regio.cache.prefix.HashMemo`) predicts what it predicts walking every block: the same
outcomes, the same stored entries and the same errors, whatever the memo walked before."""

from __future__ import annotations

import os
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from regio.cache import CacheError
from regio.cache.prefix import HashMemo
from regio.cache.types import CacheBlock, CacheRequest
from regio.cache.walk import BlockWalk, last_of, walk_blocks
from regio.providers import cache_model_for

#: examples per property (``REGIO_FUZZ_EXAMPLES`` for a long run)
EXAMPLES = int(os.environ.get("REGIO_FUZZ_EXAMPLES", "60"))

_KINDS = ["text", "tool_use", "tool_result", "thinking"]
#: the blocks the requests are made of (the same objects request after request, as one
#: session's settled prefix gives them); some carry marks, some are empty or thinking blocks
#: (a mark there is refused), some carry token ids (of the wrong length: refused)
_POOL = [
    CacheBlock(
        tokens=0 if i == 11 else 300 + 250 * (i % 5),
        digest=f"d{i % 9}",
        kind=_KINDS[i % 4] if i % 7 else "tool_result",  # type: ignore[arg-type]
        level="tools" if i == 0 else "system" if i == 1 else "messages",
        mark="1h" if i == 1 else "5m" if i in (4, 9, 11, 14) else None,
        token_ids=(1, 2) if i == 13 else None,
    )
    for i in range(16)
]


def _outcome(model: Any, request: CacheRequest) -> Any:
    try:
        return model.process(request)
    except CacheError as exc:
        return (type(exc).__name__, str(exc))


def _store(model: Any) -> dict[bytes, tuple[Any, ...]]:
    return {h: (e.tokens, e.ttl, e.readable_at, e.expires_at) for h, e in model.store.items()}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prompts=st.lists(
        st.tuples(
            st.lists(st.integers(0, 15), max_size=14),
            st.integers(0, 14),
            st.sampled_from([None, "5m"]),
        ),
        min_size=1,
        max_size=8,
    ),
    profile=st.sampled_from(
        ["anthropic", "anthropic:claude-opus-4-1", "anthropic:claude-haiku-4-5"]
    ),
)
def test_property_a_model_walking_through_a_memo_predicts_what_a_model_walking_every_block_does(
    prompts: list[tuple[list[int], int, str | None]], profile: str
) -> None:
    """Requests that grow, shrink, rewind and differ anywhere (a request of the kept prefix
    and new blocks from the pool), marks valid and not: the memo model's outcomes, errors and
    stored entries are the plain model's, request after request."""
    carried = cache_model_for(profile, hash_memo=HashMemo(), walk_memo=BlockWalk())
    plain = cache_model_for(profile)
    blocks: list[CacheBlock] = []
    for i, (more, keep, auto) in enumerate(prompts):
        blocks = blocks[: min(keep, len(blocks))] + [_POOL[j] for j in more]
        request = CacheRequest(
            id=f"r{i}", blocks=tuple(blocks), t_start=60.0 * i, ttft=1.0, auto_mark=auto
        )
        assert _outcome(carried, request) == _outcome(plain, request)
        assert _store(carried) == _store(plain)


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    kinds=st.lists(st.lists(st.sampled_from(_KINDS), max_size=12), min_size=1, max_size=6),
    collapses=st.lists(
        st.sampled_from([(), ("tool_use", "tool_result"), ("tool_result",)]), min_size=1
    ),
)
@example(  # the same blocks walked again under other collapse kinds: nothing taken from the memo
    kinds=[["tool_use", "tool_use"], []], collapses=[(), ("tool_use", "tool_result")]
)
def test_property_walked_facts_through_a_memo_are_the_facts_of_the_blocks_alone(
    kinds: list[list[str]], collapses: list[tuple[str, ...]]
) -> None:
    """Token sums, marked indexes and lookback positions through a memo (after any earlier
    walk, with the same or other collapse kinds: a cache profile that changed between two
    requests of one memo) are those of the blocks walked from nothing; the last block at each
    position is the one a map over every block gives."""
    from regio.cache.anthropic import positions
    from regio.cache.walk import walked_prefix

    memo = BlockWalk()
    made: list[CacheBlock] = []
    for n, ks in enumerate(kinds):
        collapse = collapses[n % len(collapses)]
        made = made[: n % 3 * 2] + [
            CacheBlock(tokens=len(k) + j, digest=k, kind=k, mark="5m" if j % 3 else None)  # type: ignore[arg-type]
            for j, k in enumerate(ks)
        ]
        start = walked_prefix(made, collapse, memo)
        cum, marked, pos = walk_blocks(made, collapse, memo, start)
        assert (cum, marked, pos) == walk_blocks(made, collapse, None)
        assert pos == positions([b.kind for b in made], collapse)
        assert marked == [i for i, b in enumerate(made) if b.mark is not None]
        last = {p: i for i, p in enumerate(pos)}
        assert all(last_of(pos, p) == i for p, i in last.items())
