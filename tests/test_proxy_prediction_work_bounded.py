"""The proxy's cache prediction follows what changed since the session's previous request, not
the session's length: the session keeps the last request it converted for the cache model and
its prefix hashes (:class:`regio.proxy.accounting.CachePrediction`), so a request converts and
hashes its new blocks only, and the figures are the ones a fresh model replaying the previous
request gives (a worker that loads the session from the store predicts the same as one that
kept it warm). Not timed: counts of the blocks converted and hashed."""

from __future__ import annotations

import hashlib
import tempfile
import types
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")

from proxy_support import ScriptedUpstream, blueprint, in_process
from reading_agent_support import READ_CALL as CALL
from reading_agent_support import add_read, request_body
from regio.cache import prefix
from regio.cache import types as cache_types
from regio.cache.types import CacheBlock, CacheRequest
from regio.layout import cachebridge

#: a window no history of these tests fills (the work per request is compared without compaction)
WIDE = blueprint(
    "prediction-wide", "anthropic:claude-sonnet-4-6", window=200_000, output=2000,
    conversation="70%", system=2000,
)  # fmt: skip
#: a window the history outgrows: the conversation compacts on the way
NARROW = blueprint(
    "prediction-narrow", "anthropic:claude-sonnet-4-6", window=9000, output=1000,
    conversation="70%", history=1500, system=1000,
    extra="relief: {enabled: true, restore_tool: false}\n",
)  # fmt: skip


def _step(client: Any, history: list[dict[str, Any]], step: int, lines: int) -> None:
    """One request of a reading agent (the proxy benchmark's shape), then its call and result
    added to ``history``."""
    response = client.post(
        "/v1/messages", json=request_body(history), headers={"x-regio-session": "s1"}
    )
    assert response.status_code == 200, response.text
    call = next(b for b in response.json()["content"] if b["type"] == "tool_use")
    result = "\n".join(f"step {step} line {j}: value = compute({j})" for j in range(lines))
    add_read(history, call["id"], result)


class _Count:
    """Counts the blocks the prediction hashes (``regio.cache.prefix``'s sha256) and converts
    (``CacheBlock`` made by the layout's cache bridge)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.hashed = 0
        self.converted = 0

        def sha256(data: bytes = b"") -> Any:
            self.hashed += 1
            return hashlib.sha256(data)

        def block(**fields: Any) -> CacheBlock:
            self.converted += 1
            return CacheBlock(**fields)

        monkeypatch.setattr(prefix, "hashlib", types.SimpleNamespace(sha256=sha256))
        monkeypatch.setattr(cache_types, "CacheBlock", block)


def test_a_request_late_in_a_session_hashes_and_converts_as_many_blocks_as_an_early_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    upstream = ScriptedUpstream([CALL] * 60)
    work: list[tuple[int, int]] = []
    count = _Count(monkeypatch)
    with in_process(upstream, WIDE, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history: list[dict[str, Any]] = [{"role": "user", "content": "Read every file."}]
        for step in range(41):
            before = (count.hashed, count.converted)
            _step(client, history, step, 12)
            work.append((count.hashed - before[0], count.converted - before[1]))
    early, late = work[10], work[40]
    assert len(upstream.requests[-1]["messages"]) == 81  # the window holds the whole history
    assert late[0] <= early[0] + 4, (early, late)  # the turn's new blocks, not the window
    assert late[1] <= early[1] + 4, (early, late)


def _predicted(client: Any) -> list[tuple[int | None, int | None]]:
    stats = client.app.state.proxy.records.stats("s1", 1000)
    return [(s.predicted_read, s.predicted_write) for s in sorted(stats, key=lambda s: s.index)]


def test_a_worker_that_loads_the_session_from_the_store_predicts_what_a_warm_worker_predicts():
    """One worker serves 24 requests (the conversation compacts on the way); another pair of
    workers on one store serves the same requests, the second taking over after 11 from the
    store (its prediction state empty): every request's predicted read and write are the
    same."""
    steps = 24

    def run(cut: int) -> list[tuple[int | None, int | None]]:
        upstream = ScriptedUpstream([CALL] * steps, 9000, 1000)
        store = f"sqlite:{tempfile.mkdtemp()}/p.db"
        history: list[dict[str, Any]] = [{"role": "user", "content": "Read every file."}]
        with in_process(upstream, NARROW, store) as client:
            for step in range(cut):
                _step(client, history, step, 25)
            predicted = _predicted(client)
        if cut < steps:
            with in_process(upstream, NARROW, store) as client:
                for step in range(cut, steps):
                    _step(client, history, step, 25)
                predicted = _predicted(client)
        return predicted

    warm, restarted = run(steps), run(11)
    assert len(warm) == steps and all(read is not None for read, _ in warm)
    assert any(read for read, _ in warm[1:])  # the model predicts reads: the figures say something
    assert restarted == warm


_BLOCK = st.builds(
    CacheBlock,
    tokens=st.integers(0, 40),
    digest=st.sampled_from("abcdef"),
    level=st.sampled_from(["tools", "system", "messages"]),
    mark=st.sampled_from([None, "5m"]),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    prompts=st.lists(st.lists(_BLOCK, max_size=12), min_size=1, max_size=6),
    params=st.sampled_from([{}, {"tool_choice": "auto"}]),
    grow=st.booleans(),
)
def test_property_hashes_through_a_memo_are_the_hashes_of_the_request_alone(
    prompts: list[list[CacheBlock]], params: dict[str, str], grow: bool
) -> None:
    """Whatever the memo hashed before (an unrelated prompt, the prompt's own prefix), a
    request's hashes through it are its hashes computed from nothing."""
    memo = prefix.HashMemo()
    level = {"tool_choice": "messages"}
    blocks: list[CacheBlock] = []
    for i, more in enumerate(prompts):
        blocks = blocks + more if grow else more
        req = CacheRequest(id=f"r{i}", blocks=tuple(blocks), params=params)
        assert prefix.block_hashes(req, "anthropic", level, memo) == prefix.block_hashes(
            req, "anthropic", level
        )


def test_blocks_converted_again_only_where_the_request_changed_are_the_blocks_converted_whole():
    from regio.content import Text, ToolUse
    from regio.layout.model import LayoutBlock, Request

    def block(text: str, message: int | None, level: str = "messages") -> LayoutBlock:
        return LayoutBlock(
            level=level, role="user", message=message, block=Text(text), tokens=3,
            digest=text, prefix_hash="", source=text,
        )  # fmt: skip

    a, b, c = block("a", 0), block("b", 1), block("tail", None, "tail")
    call = LayoutBlock(
        level="messages", role="assistant", message=2, block=ToolUse("t1", "read", {}),
        tokens=5, digest="call", prefix_hash="", source="call",
    )  # fmt: skip
    first = Request(strategy="test", blocks=(a, b, c))
    second = Request(strategy="test", blocks=(a, b, call, c))  # the tail now closes message 3
    earlier = cachebridge.cache_blocks(first, cachebridge.last_message(first))
    again, converted = cachebridge.cache_blocks(
        second, cachebridge.last_message(second), (first.blocks, earlier[0], 1)
    )
    whole, _ = cachebridge.cache_blocks(second, cachebridge.last_message(second))
    assert again == whole
    assert converted == 2  # the new call and the tail, which closes another message
    assert again[3].message == 3


def _pool() -> list[Any]:
    """Layout blocks a session's requests are made of (the same objects request after request,
    as the layout's settled prefix gives them): messages with and without markers, and tail
    blocks, whose cache block depends on the message they close."""
    from regio.content import Text
    from regio.layout.model import LayoutBlock

    out = []
    for i in range(8):
        level = "tail" if i >= 6 else "messages"
        out.append(
            LayoutBlock(
                level=level, role="user" if i % 2 else "assistant",
                message=None if level == "tail" else i, block=Text(f"b{i}"),
                tokens=600 + 100 * i, digest=f"d{i}", prefix_hash="", source=f"s{i}",
                breakpoint="5m" if i in (2, 5, 7) else None,
            )
        )  # fmt: skip
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    requests=st.lists(
        st.lists(st.integers(0, 7), min_size=1, max_size=8, unique=True), min_size=1, max_size=6
    ),
    previous=st.lists(st.integers(-1, 6), min_size=6, max_size=6),
    profile=st.sampled_from(["anthropic", "openai", "deepseek"]),
)
def test_property_a_carried_prediction_state_predicts_what_a_fresh_one_predicts(
    requests: list[list[int]], previous: list[int], profile: str
) -> None:
    """Any sequence of requests made of one session's block objects, each predicted after any
    earlier one (a rewind, a retried request) or none: the session's carried
    :class:`CachePrediction` gives the figures and the cache blocks a fresh state gives."""
    from regio.layout.model import Request
    from regio.proxy.accounting import CachePrediction, predict_blocks

    pool = _pool()
    made = [Request(strategy="test", blocks=tuple(pool[i] for i in picks)) for picks in requests]
    state = CachePrediction()
    for k, request in enumerate(made):
        j = previous[k] if previous[k] < k else k - 1
        before = (made[j], 10.0 * j, 50) if j >= 0 else None
        carried = predict_blocks(profile, before, request, 10.0 * k + 5, state)
        assert carried == predict_blocks(profile, before, request, 10.0 * k + 5)
        whole, _ = cachebridge.cache_blocks(request, cachebridge.last_message(request))
        assert state.blocks_of(request) == whole


def test_a_request_late_in_a_session_reads_as_many_cache_blocks_in_its_prediction_as_an_early_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cache model's walk over the blocks (token sums, marks, lookback positions, the
    input check) follows the blocks that changed: the reads of the converted cache blocks'
    fields during a request at turn 60 are as many as at turn 10, the first turns whose
    prefix is long enough to be cached (on a model that walks every block they grow with the
    window)."""
    reads = [0]

    class Counted(CacheBlock, frozen=True):
        def __getattribute__(self, name: str) -> Any:
            reads[0] += 1
            return super().__getattribute__(name)

    monkeypatch.setattr(cache_types, "CacheBlock", Counted)
    upstream = ScriptedUpstream([CALL] * 61)
    work: list[int] = []
    with in_process(upstream, WIDE, f"sqlite:{tempfile.mkdtemp()}/p.db") as client:
        history: list[dict[str, Any]] = [{"role": "user", "content": "Read every file."}]
        for step in range(61):
            before = reads[0]
            _step(client, history, step, 12)
            work.append(reads[0] - before)
    assert len(upstream.requests[-1]["messages"]) == 121  # the window holds the whole history
    early, late = work[10], work[60]
    assert early > 0  # the prediction reads the blocks it walks: the count says something
    assert late == early, (early, late, work[::5])


def test_converting_a_longer_request_of_a_session_looks_at_as_many_layout_blocks_as_a_short_one():
    """The session's prediction state looks at the blocks a request adds (and its tail,
    which closes the new message), not at the blocks it shares with the last request: the
    layout blocks' fields read to convert the request of turn 60 are as many as at turn 5
    (converting every block, or finding its last message by a pass over every block, reads
    a number that grows with the history)."""
    from regio.content import Text
    from regio.layout.model import LayoutBlock, Request
    from regio.proxy.accounting import CachePrediction

    reads = [0]

    class Counted(LayoutBlock, frozen=True):
        def __getattribute__(self, name: str) -> Any:
            reads[0] += 1
            return super().__getattribute__(name)

    def block(i: int | None, level: str = "messages") -> Counted:
        return Counted(
            level=level, role="user", message=i, block=Text(f"m{i}"), tokens=700,
            digest=f"d{i}", prefix_hash="", source=f"s{i}",
        )  # fmt: skip

    state = CachePrediction()
    messages: list[Counted] = []
    work = []
    for turn in range(61):
        messages.append(block(turn))
        request = Request(strategy="test", blocks=(*messages, block(None, "tail")))
        before = reads[0]
        state.blocks_of(request)
        work.append(reads[0] - before)
        whole, _ = cachebridge.cache_blocks(request, cachebridge.last_message(request))
        assert state.blocks == whole
    assert work[5] > 0
    assert work[60] == work[5], work[::10]
