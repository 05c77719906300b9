"""Fixtures of the session store tests: engines, and a real redis-server on a loopback port."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from regio.regions import Pinned, SlidingWindow
from runtime_stubs import make_engine


def store_engine(session_id: str = "s") -> Any:
    return make_engine(
        [
            Pinned(name="system", budget=2_000),
            SlidingWindow(name="conversation", budget=200_000),
        ],
        max_tokens=300_000,
        session_id=session_id,
    )


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
