"""The request log says where each request's added time went (``read_ms`` ... ``other_ms``,
:mod:`regio.proxy.requestlog`): parts that are never negative and sum to ``added_ms``; a
request that waited for its session's lease, or for the store's lock, shows the wait in its
part. ``benchmarks/proxy_waits.py`` groups such lines by their order within each session."""

from __future__ import annotations

import importlib.util
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the proxy extra (starlette) is not installed")
pytest.importorskip("httpx", reason="httpx is not installed (the proxy extra)")

from hypothesis import given
from hypothesis import strategies as st

from proxy_support import ScriptedUpstream, Step, blueprint, in_process
from regio.proxy.requestlog import ADDED_PARTS, WAIT_DETAILS

WINDOW, OUTPUT = 8000, 500
BLUEPRINT = blueprint(
    "proxy-waits", "anthropic:claude-x", window=WINDOW, output=OUTPUT, conversation=6000,
    history=1000,
)  # fmt: skip
HEADERS = {"x-api-key": "k", "x-regio-session": "s1"}


def _script() -> Any:
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "proxy_waits.py"
    spec = importlib.util.spec_from_file_location("proxy_waits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


proxy_waits = _script()


def _lines(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@contextmanager
def _logged(where: Path, steps: int) -> Iterator[tuple[Any, Path]]:
    """The proxy in process on a scripted upstream of ``steps`` answers, its store and request
    log in ``where``: ``(client, log path)``, the client on session ``s1``."""
    upstream = ScriptedUpstream([Step("noted")] * steps, WINDOW, OUTPUT)
    log = where / "requests.jsonl"
    with in_process(upstream, BLUEPRINT, f"sqlite:{where}/p.db", request_log=str(log)) as client:
        client.headers.update(HEADERS)
        yield client, log


def _session(
    client: Any,
    sizes: list[int],
    history: list[dict[str, Any]] | None = None,
    stream_every: int = 0,
) -> list[dict[str, Any]]:
    """Send one request per size (a user message of that many words) on session ``s1``,
    continuing ``history``; returns the history."""
    history = [] if history is None else history
    for n in sizes:
        i = len(history) // 2
        history.append({"role": "user", "content": f"note {i}: " + "word " * n})
        body = {"model": "claude-x", "max_tokens": 50, "messages": history}
        if stream_every and i % stream_every == stream_every - 1:
            with client.stream("POST", "/v1/messages", json={**body, "stream": True}) as r:
                assert r.status_code == 200
                r.read()
            history.append({"role": "assistant", "content": "noted"})
            continue
        response = client.post("/v1/messages", json=body, headers=HEADERS)
        assert response.status_code == 200, response.text
        history.append({"role": "assistant", "content": response.json()["content"]})
    return history


def test_every_request_log_line_splits_its_added_time_into_parts_that_sum_to_it(
    tmp_path: Path,
) -> None:
    with _logged(tmp_path, 40) as (client, log):
        _session(client, [250] * 30, stream_every=3)  # compactions beside the upstream call too
    rows = _lines(log)
    assert len(rows) == 30 and any(r["compacted"] for r in rows)
    for row in rows:
        for field in (*ADDED_PARTS, *WAIT_DETAILS):
            assert row[field] >= 0, (field, row)
        assert sum(row[p] for p in ADDED_PARTS) == pytest.approx(row["added_ms"], abs=0.01), row
        assert row["offloads"] >= 3 and 0 <= row["offloads_queued"] <= row["offloads"]
        assert row["commit_ms"] > 0 and row["committed"]
        assert row["thread_cpu_ms"] <= row["thread_ms"] + 0.5
        assert row["commit_cpu_ms"] <= row["commit_ms"] + 0.5


def _hold(take: Any, seconds: float) -> threading.Event:
    """Take something in another thread (``take()``: a context manager) for ``seconds``;
    returns the event set once it is held."""
    held = threading.Event()

    def run() -> None:
        with take():
            held.set()
            time.sleep(seconds)

    threading.Thread(target=run, daemon=True).start()
    assert held.wait(5)
    return held


def test_a_request_that_waited_for_its_sessions_lease_logs_the_wait_as_lease_wait(
    tmp_path: Path,
) -> None:
    with _logged(tmp_path, 3) as (client, log):
        history = _session(client, [5])
        store = client.app.state.proxy.store
        _hold(lambda: store.lease("s1", ttl=30, wait=0), 0.3)  # another writer
        _session(client, [5], history)
    first, waited = _lines(log)
    assert waited["lease_wait_ms"] >= 200, waited
    assert first["lease_wait_ms"] < 200
    assert sum(waited[p] for p in ADDED_PARTS) == pytest.approx(waited["added_ms"], abs=0.01)


def test_a_request_that_waited_for_the_stores_lock_logs_it_in_its_threads_time(
    tmp_path: Path,
) -> None:
    with _logged(tmp_path, 3) as (client, log):
        history = _session(client, [5])
        lock = client.app.state.proxy.store._lock
        _hold(lambda: lock, 0.3)  # another thread in the store
        _session(client, [5], history)
    first, waited = _lines(log)
    assert waited["store_lock_ms"] >= 200, waited
    assert waited["thread_ms"] + waited["commit_ms"] >= waited["store_lock_ms"]
    assert waited["thread_ms"] - waited["thread_cpu_ms"] >= 200  # blocked, not running
    assert first["store_lock_ms"] < 200


def _rows(sessions: list[list[tuple[float, ...]]], order: list[int]) -> list[dict[str, Any]]:
    """Log lines of ``sessions`` (each request's part values), interleaved by ``order`` (a
    session index per line; a session's own lines stay in order)."""
    nxt = [0] * len(sessions)
    rows = []
    for s in order:
        parts = sessions[s][nxt[s]]
        row = {"session": f"s{s}", "index": nxt[s], "released": 1000.0 + len(rows) * 0.3}
        row |= dict(zip(ADDED_PARTS, parts, strict=True)) | {"added_ms": sum(parts)}
        rows.append(row)
        nxt[s] += 1
    return rows


@st.composite
def _logs(draw: Any) -> list[dict[str, Any]]:
    part = st.floats(min_value=0, max_value=500, allow_nan=False)
    request = st.tuples(*[part] * len(ADDED_PARTS))
    sessions = draw(st.lists(st.lists(request, min_size=1, max_size=30), min_size=1, max_size=5))
    order = [s for s, lines in enumerate(sessions) for _ in lines]
    return _rows(sessions, draw(st.permutations(order)))


@given(_logs())
def test_the_waits_summary_splits_by_order_within_each_session_and_keeps_the_sum(
    rows: list[dict[str, Any]],
) -> None:
    groups = proxy_waits.split(rows)
    sizes = {r["session"]: 1 + max(x["index"] for x in rows if x["session"] == r["session"])
             for r in rows}  # fmt: skip
    tenth = {s: -(-n // 10) for s, n in sizes.items()}
    assert sorted((r["session"], r["index"]) for r in groups["first"]) == sorted(
        (s, i) for s, n in sizes.items() for i in range(tenth[s])
    )
    assert sorted((r["session"], r["index"]) for r in groups["last"]) == sorted(
        (s, i) for s, n in sizes.items() for i in range(n - tenth[s], n)
    )
    slowest = groups["slowest"]
    assert len(slowest) == -(-len(rows) // 100)
    assert min(r["added_ms"] for r in slowest) >= max(
        (r["added_ms"] for r in rows if all(r is not x for x in slowest)), default=0.0
    )
    for group in groups.values():
        means = proxy_waits.summarize(group)
        total = sum(means[p]["mean"] for p in ADDED_PARTS)
        assert total == pytest.approx(means["added_ms"]["mean"], rel=1e-9, abs=1e-6)
    windows, shared, largest = proxy_waits.clustering(rows)
    assert shared <= len(rows) and largest <= 4  # 0.3 s apart: at most 4 in one second
    assert windows >= len(rows) / 4
    assert "slowest" in proxy_waits.table(rows)
