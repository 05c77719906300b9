"""Snapshot, ``regio inspect`` and the async twins."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from regio.content import Entry
from regio.engine import Engine
from regio.engine._inspect import snapshot_from_file
from regio.regions import CompactHistory, Compacting, Pinned, SlidingWindow
from runtime_stubs import StubSummarizer, make_engine, words


def _engine(summarizer: object = None) -> Engine:
    engine = make_engine(
        [
            Pinned(name="S", budget=2_000, volatility="stable"),
            Compacting(name="work", budget=2_000, threshold_tokens=500),
            CompactHistory(name="hist", budget=1_000, source="work"),
            SlidingWindow(name="conversation", budget=5_000),
        ],
        summarizer=summarizer or StubSummarizer(5),
    )
    engine.write("S", words(1_500, "s"))
    engine.add_user("go")
    return engine


def test_snapshot_shows_regions_pending_work_and_cache_outcome() -> None:
    engine = _engine()
    for i in range(3):
        engine.write("work", words(200, f"n{i}_"))
    req, _ = engine.request(flush=False)
    system_end = sum(
        b.tokens for b in req.blocks if b.level in ("tools", "system") and b.region in (None, "S")
    )
    engine.observe(
        {
            "input_tokens": 10,
            "cache_read_input_tokens": system_end,
            "cache_creation_input_tokens": max(0, req.tokens - system_end - 10),
        }
    )
    snap = engine.snapshot()
    by_name = {r.name: r for r in snap.regions}
    assert by_name["work"].pending_ids and by_name["work"].pending_tokens == 600
    assert by_name["S"].cache == "read"
    assert by_name["S"].content_hash == engine.window.region("S").content_hash()
    assert snap.usage.calls == 1 and snap.used_tokens == engine.window.used_tokens


def test_inspect_prints_a_bar_per_region(tmp_path: Path, capsys: object) -> None:
    from regio.cli import main

    engine = _engine()
    engine.request()
    path = engine.save(tmp_path / "state.msgpack")
    assert snapshot_from_file(str(path)).regions[0].name == "S"
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "work" in out and "hist" in out and "█" in out
    assert main(["inspect", str(tmp_path / "missing.json")]) == 2


class AsyncStub(StubSummarizer):
    async def __call__(  # type: ignore[override]
        self, entries: Sequence[Entry], standing: str, extra: str | None
    ) -> str:
        await asyncio.sleep(0)
        return super().__call__(entries, standing, extra)


def test_aflush_and_acompact_await_an_async_summarizer() -> None:
    stub = AsyncStub(5)
    engine = _engine(stub)
    for i in range(3):
        engine.write("work", words(200, f"n{i}_"))
    result = asyncio.run(engine.aflush())
    assert result is not None and len(stub.inputs) == 1
    engine.write("work", words(200, "more"))
    assert asyncio.run(engine.acompact("keep ids", keep_tokens=0)) is not None
    assert stub.extras[-1] == "keep ids"
