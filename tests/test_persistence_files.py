"""Saves are atomic and leave no debris: a failed or killed save keeps the previous save intact,
and temporaries of dead savers are removed on the next save or load (never read)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from persistence_support import driven_engine
from regio.engine import Engine
from regio.persistence._statefile import TEMP_SUFFIX, stale_temporaries

TESTS = Path(__file__).resolve().parent
#: Kills of a saving process in the random-timing test (CI default; raise it for long runs).
KILLS = int(os.environ.get("REGIO_PERSISTENCE_KILLS", "4"))

CHILD = """
import os, sys, time
sys.path.insert(0, {tests!r})
from persistence_support import driven_engine
engine = driven_engine(hook=None, payload_words=40_000)
path = sys.argv[1]
engine.save(path)
if sys.argv[2] == "pause":
    real = os.replace
    def paused(src, dst):
        print("mid-save", flush=True)
        time.sleep(120)
        real(src, dst)
    os.replace = paused
    engine.add_user("a newer turn")
    engine.save(path)
else:
    print("ready", flush=True)
    for _ in range(100_000):
        engine.save(path)
"""


def _temporaries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name != "state.json")


def _saver(path: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD.format(tests=str(TESTS)), str(path), mode],
        stdout=subprocess.PIPE,
        text=True,
    )


def _kill(child: subprocess.Popen[str]) -> None:
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)


def test_a_save_killed_mid_rename_leaves_the_previous_save_and_no_debris(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    child = _saver(path, "pause")
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "mid-save"
        left = _temporaries(tmp_path)
        assert len(left) == 1 and left[0].name.endswith(TEMP_SUFFIX)
        assert f".state.json.{child.pid}." in left[0].name
    finally:
        _kill(child)
    assert stale_temporaries(path) == left
    loaded = Engine.load(path)
    assert "a newer turn" not in loaded.window.region("conversation").render_text()
    assert loaded.request()[1] == driven_engine(hook=None, payload_words=40_000).request()[1]
    assert _temporaries(tmp_path) == []


def test_saves_killed_at_random_moments_always_leave_a_loadable_previous_save(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.json"
    rng = random.Random(14)
    for _ in range(KILLS):
        child = _saver(path, "loop")
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "ready"
            time.sleep(rng.uniform(0.0, 0.3))
        finally:
            _kill(child)
        assert len(_temporaries(tmp_path)) <= 1  # at most the killed save's own
        Engine.load(path).request()
        assert _temporaries(tmp_path) == []


def test_a_failed_save_removes_its_temporary_and_keeps_the_previous_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = driven_engine(hook=None)
    path = engine.save(tmp_path / "state.json")
    before = path.read_bytes()
    engine.add_user("not saved")

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space left"):
        engine.save(path)
    assert path.read_bytes() == before
    assert _temporaries(tmp_path) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temporaries_of_dead_savers_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    engine = driven_engine(hook=None)
    path = engine.save(tmp_path / "state.json")
    dead = tmp_path / f".state.json.{_dead_pid()}.x1{TEMP_SUFFIX}"
    live = tmp_path / f".state.json.{os.getppid()}.x2{TEMP_SUFFIX}"
    own = tmp_path / f".state.json.{os.getpid()}.x3{TEMP_SUFFIX}"
    old_style = tmp_path / ".state.json.abcd1234.tmp"
    young_old_style = tmp_path / ".state.json.efgh5678.tmp"
    other_file = tmp_path / ".other.json.1.x4.regio-tmp"
    for p in (dead, live, own, old_style, young_old_style, other_file):
        p.write_bytes(b"garbage, never read")
    os.utime(old_style, (time.time() - 7200, time.time() - 7200))
    assert Engine.load(path).request()[1] == engine.request()[1]
    assert sorted(_temporaries(tmp_path)) == sorted([live, own, young_old_style, other_file])
    for p in (live, own, young_old_style, other_file):
        p.unlink()
    dead.write_bytes(b"x")
    engine.save(path)  # a save cleans up too
    assert _temporaries(tmp_path) == []
