"""Fixtures of the session store tests: engines, and a real redis-server on a loopback port."""

from __future__ import annotations

import shutil
import socket
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from regio.engine import Engine
from regio.persistence.store import RedisStore, SQLiteStore
from regio.regions import Pinned, SlidingWindow
from runtime_stubs import StubCounter, make_engine


def store_engine(session_id: str = "s") -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=2_000),
            SlidingWindow(name="conversation", budget=200_000),
        ],
        max_tokens=300_000,
        session_id=session_id,
    )


def sqlite_or_redis(request: Any, path: Any, prefix: str) -> Iterator[Any]:
    """The body of a ``store`` fixture parametrized over ``"sqlite"`` / ``"redis"``: a
    :class:`SQLiteStore` at ``path`` (closed afterwards), or a :class:`RedisStore` on the
    session's redis-server (the ``redis_url`` fixture) under key ``prefix``, emptied first."""
    if request.param == "sqlite":
        db = SQLiteStore(path)
        yield db
        db.close()
        return
    out = RedisStore.from_url(request.getfixturevalue("redis_url"), prefix=prefix)
    for sid in out.sessions():
        out.delete(sid)
    yield out


def stray_lease(store: Any, sid: str = "s") -> None:
    """A lease on ``sid`` that never expires, written by another program (Redis: a key without
    expiry) or by regio before ttl was checked (SQLite: a row expiring at infinity)."""
    if isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as db:
            db.execute("INSERT INTO leases VALUES (?, 'someone', 9e999)", (sid,))
    else:
        store.client.set(store._keys(sid)[6], "someone")


def load(store: Any, sid: str = "s") -> Engine:
    """Session ``sid`` of ``store``, loaded with no summarizer and the stub counter."""
    return Engine.load_from(store, sid, summarizer=None, token_counter=StubCounter())


def play_turn(engine: Any, turn: int, words: int = 30) -> None:
    """One user turn with a tool call and its result, then the request and its usage."""
    engine.add_user(f"turn {turn}: " + " ".join(f"u{turn}w{i}" for i in range(words)))
    engine.add_assistant(f"calling for {turn}", [_tool_use(turn)])
    engine.add_tool_result(f"call-{turn}", " ".join(f"r{turn}w{i}" for i in range(words)))
    engine.request()
    engine.observe({"input_tokens": 10 * turn, "output_tokens": 5})


def _tool_use(turn: int) -> Any:
    from regio.content import ToolUse

    return ToolUse(id=f"call-{turn}", name="read", input={"path": f"f{turn}.py"})


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A real redis-server on a free loopback port (started here; skipped with the reason when
    no binary exists)."""
    redis = pytest.importorskip("redis", reason="the redis package is not installed")
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server is not installed (apt-get install redis-server); Redis tests skip"
        print(reason)
        pytest.skip(reason)
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        else:
            reason = f"redis-server did not answer on {url}"
            print(reason)
            pytest.skip(reason)
        yield url
    finally:
        client.close()
        proc.terminate()
        proc.wait(timeout=10)


HISTORY_BLUEPRINT = """
version: 1
name: long-session
model: {provider: anthropic, name: claude-sonnet-4-6, context_window: 200000,
        max_output_tokens: 8000}
regions:
  - {name: system, kind: pinned, volatility: stable, budget: 4000,
     seed: "You are a careful engineer."}
  - {name: env_state, kind: keyed, volatility: rewritten, budget: 500}
  - {name: history, kind: compact_history, source: conversation, volatility: grows,
     budget: 3000}
  - name: conversation
    kind: sliding_window
    budget: 40000
    max_items: 60
    eviction: {strategy: compact, compact_count: 20}
"""


#: A grows region written every turn (``HistorySession(notes=True)``): its entries travel as
#: notes and settle at each compaction, so the layout state holds settled-entry lists (a
#: summary history's entries never do: a summary opens the messages, never as a note).
NOTES_REGION = """  - {name: notes, kind: temporary, volatility: grows, budget: 2000}
"""


class HistorySession:
    """A long agent session (also ``benchmarks/test_bench_session_scaling.py``'s): a
    60-message conversation compacted 20 messages at a time into a summary history, which
    fills its 3,000 tokens over the first ~1,000 turns. With ``relief``, every result is long
    and the relief chain trims it on admission (so the session keeps one relief original per
    turn)."""

    def __init__(self, *, relief: bool = False, notes: bool = False) -> None:
        from regio.engine import Engine
        from regio.policies.relief import ReliefPolicy, ToolRelief
        from regio.summarizers import ExtractiveSummarizer
        from regio.tokens import get_counter

        counter = get_counter("heuristic")
        policy = ReliefPolicy(tools={"read": ToolRelief(max_result_tokens=16)}) if relief else None
        blueprint = HISTORY_BLUEPRINT + (NOTES_REGION if notes else "")
        self.engine = Engine.from_blueprint(
            blueprint,
            token_counter=counter,
            summarizer=ExtractiveSummarizer(counter=counter, max_summary_tokens=200),
            clock=lambda: 0.0,
            relief=policy,
        )
        self.relief = relief
        self.notes = notes
        self.turns = 0

    def advance_to(self, n: int) -> None:
        """Play turns until ``n`` were played: a user message, a state write, a tool call and
        its result, a request and the answer."""
        from regio.content import ToolUse

        e = self.engine
        while self.turns < n:
            i = self.turns
            e.add_user(f"turn {i}: please check item {i} and report")
            e.write("env_state", f"cwd=/repo step={i}", key="env")
            if self.notes:
                e.write("notes", f"note {i}: item {i} is checked next")
            e.add_assistant(f"checking {i}", [ToolUse(f"c{i}", "read", {"item": i})])
            result = f"item {i}: status ok, size {i * 7}"
            if self.relief:
                result = " ".join(f"item {i} line {k} status ok" for k in range(20))
            e.add_tool_result(f"c{i}", result)
            e.request("anthropic", "claude-sonnet-4-6")
            e.add_assistant(f"item {i} checked: status ok, next {i + 1}")
            self.turns += 1
